/* The control socket server: framing, credentials, authorization and the
 * requests of PROTOCOL.md. What a request does to the daemon goes through
 * struct control_ops, filled in by daemon_control.c. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-event.h>
#include <cjson/cJSON.h>

#include "config.h"
#include "core/task.h"

struct auth_view;

struct control_ops {
	int (*status)(void *userdata, cJSON *obj);
	/* TASKS is sent a few tasks per loop iteration, as the client reads:
	 * the tids of every task when the request came (the caller frees
	 * *ret), then each one's object (the caller deletes it; -ESRCH once
	 * the task is gone). */
	int (*task_ids)(void *userdata, pid_t **ret, size_t *n);
	int (*task_json)(void *userdata, pid_t tid, cJSON **ret);
	/* tid's real and effective uid, by which a list under /proc's
	 * hidepid= leaves out others' tasks; -ESRCH once it is gone. NULL:
	 * such a list shows only root and the admin group any task. */
	int (*task_owner)(void *userdata, pid_t tid, uid_t *uid, uid_t *euid);
	/* The queue of CPU cpu (of every CPU when -1) into array; -EINVAL
	 * past the last CPU. */
	int (*dump_queues)(void *userdata, int cpu, cJSON *array);
	/* Called after authorization, before set_class: makes sure the
	 * daemon knows the task (tid, or pid's main thread) without waiting
	 * on it. 1: go on to set_class (which refuses a task out of scope).
	 * 0: its reads are under way: call again. -ESRCH: it is not the
	 * task started at start_time (CONTROL_NO_START_TIME: not checked).
	 * NULL: straight to set_class. */
	int (*adopt)(void *userdata, pid_t pid, pid_t tid, uint64_t start_time);
	/* Writes a reason into err on failure. */
	int (*set_class)(void *userdata, pid_t pid, pid_t tid, enum sched_class class,
			 bool nice_set, int nice, char *err, size_t errlen);
	/* What the daemon holds tasks in, for the rules of auth_task(). NULL:
	 * the kernel's view (its policy and nice) alone. */
	void (*auth_view)(void *userdata, struct auth_view *ret);
	/* The live tunables; written only after a value passed validation. */
	struct config_tunables *(*tunables)(void *userdata);
	void (*tunables_changed)(void *userdata);
	int (*reload)(void *userdata);
};

#define CONTROL_NO_START_TIME UINT64_MAX

struct control_options {
	const char *socket_path;
	unsigned socket_mode;
	const char *socket_group; /* NULL: keep root's group */
	const char *admin_group;  /* NULL: root only */
	uint64_t idle_timeout_usec; /* 0: CONTROL_IDLE_TIMEOUT_USEC */
	unsigned max_clients;	    /* 0: CONTROL_MAX_CLIENTS */
	bool no_listen;		    /* tests: clients come from control_server_add_fd() */
};

#define CONTROL_IDLE_TIMEOUT_USEC (10ULL * 1000000ULL)
#define CONTROL_MAX_CLIENTS 256U
/* A reply that would grow a client's unsent output past this drops it. */
#define CONTROL_OUTPUT_MAX (4U * 1024 * 1024)

struct control_server;

/* Takes the socket from the service manager when it passed one, else
 * binds opts->socket_path. Returns 0 or -errno (logged). */
int control_server_new(struct control_server **ret, sd_event *event,
		       const struct control_options *opts, const struct control_ops *ops,
		       void *userdata);
struct control_server *control_server_free(struct control_server *s);
/* Reads how /proc is mounted for the daemon (hidepid=, gid=), which
 * TASKS and QUEUES follow: at start, and again at each reload. 0 or
 * -ENOMEM (logged; the mode read before stays). */
int control_server_read_proc_mount(struct control_server *s);
/* Serves an already connected socket as a client (tests, socketpair). */
int control_server_add_fd(struct control_server *s, int fd);
unsigned control_server_clients(const struct control_server *s);

/* Adds tunable name (NULL or "": all of them) to obj, by its wire name.
 * -ENOENT with err set for an unknown name, -ENOMEM. */
int tunables_get(const struct config_tunables *t, const char *name, cJSON *obj, char *err,
		 size_t errlen);
