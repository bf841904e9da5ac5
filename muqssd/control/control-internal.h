/* Shared by the files of the control module only. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>
#include <sys/types.h>

#include "control.h"
#include "hidepid.h"
#include "wire.h"

/* The most one client's requests and lists take of one loop iteration. */
#define CONTROL_TURN_NSEC (500ULL * 1000)
/* The most all clients together take: one turn in every 5 ms, a tenth of
 * a CPU. At a fifth, in 2 ms blocks, ten clients listing 20,000 tasks
 * held a frame task's wake-up p99 at 1.7 ms (0.5 ms in single turns). */
#define CONTROL_WINDOW_NSEC (5ULL * 1000 * 1000)
#define CONTROL_SHARE_NSEC (500ULL * 1000)

/* A SET_CLASS request, parsed and authorized. */
struct class_request {
	pid_t pid, tid;
	enum sched_class class;
	bool nice_set;
	int nice;
	uint64_t start_time; /* CONTROL_NO_START_TIME: not given */
	int pidfd;	     /* pins the process while we decide, or -1 */
	uint64_t give_up_usec;
};

struct control_client {
	struct control_server *server;
	struct control_client *prev, *next;
	int fd;
	sd_event_source *io;
	sd_event_source *timer;
	struct wire_reader in;
	struct wire_buf out;
	struct list_stream *stream; /* a list reply under way, or NULL */
	struct class_request *waiting; /* a SET_CLASS waiting for its task, or NULL */
	sd_event_source *retry;	       /* its timer */
	/* Read once at accept. */
	uid_t uid;
	gid_t gid;
	pid_t pid;
	bool admin;
	bool privileged; /* root, admin or socket group: may take a reserved slot */
	bool hello;
	bool closing; /* no more requests; close once out is flushed */
	bool dead;    /* output overflowed: close without flushing */
	bool parked;  /* io off, in the control budget's queue */
	bool granted; /* let in from that queue: the next turn is its own */
	TAILQ_ENTRY(control_client) park_link;
};

TAILQ_HEAD(park_queue, control_client);

struct control_budget {
	uint64_t window_end; /* CLOCK_MONOTONIC ns */
	uint64_t used;       /* ns taken in this window */
	uint64_t parks;      /* turns put off to a later window, since start */
	/* Oldest first; the privileged are let in first, but the others
	 * still get one turn in every BUDGET_FIRST_IN_ROW + 1. */
	struct park_queue parked_first, parked;
	unsigned first_in_row;
	sd_event_source *resume;
};

struct control_server {
	sd_event *event;
	struct control_options opts;
	struct control_ops ops;
	void *userdata;
	int listen_fd;
	bool bound; /* we created the socket file: remove it on exit */
	char *path;
	sd_event_source *listen_source;
	gid_t admin_gid; /* (gid_t)-1: none */
	gid_t socket_gid; /* (gid_t)-1: none configured */
	struct hidepid hidepid; /* of the daemon's /proc */
	struct control_client *clients;
	unsigned n_clients;
	struct control_budget budget;
};

/* client.c */
/* Serves fd; -EBUSY when there is no slot for its peer (told why, fd left
 * open for the caller to close). */
int client_new(struct control_server *s, int fd);
void client_free(struct control_client *c);
/* Renews c's idle timeout. */
void client_touch(struct control_client *c);
/* While c waits on the daemon (a turn, a task's read) it is not idle:
 * its timeout stops, and starts afresh when the wait ends. */
void client_pause_timeout(struct control_client *c);
void client_restart_timeout(struct control_client *c);
/* After a reply made outside the client's io handler: sends it, and reads
 * requests again (or closes, or frees c). */
void client_resume(struct control_client *c);
/* Sends what output fits without waiting, then frees c. */
void client_close_now(struct control_client *c);
/* reply.c */
/* Queues a reply frame; a client whose output is full is dropped later. */
int client_reply(struct control_client *c, uint16_t type, const cJSON *obj);
int client_reply_error(struct control_client *c, int error, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* admit.c */
#define CONTROL_MAX_PER_UID 16U
#define CONTROL_RESERVED 16U
/* May c (not yet in the table) have a slot? 0, possibly after closing
 * another client to make room; -EBUSY with the reason in why. */
int admit_client(struct control_server *s, const struct control_client *c, char *why,
		 size_t len);
void admit_refuse(int fd, const char *why);

/* auth.c */
void auth_read_peer(struct control_client *c, gid_t admin_gid, gid_t socket_gid);
/* Is gid among the peer's supplementary groups (SO_PEERGROUPS)? */
bool peer_in_group(int fd, gid_t gid);
/* Does /proc's hidepid= hide other users' processes from c? */
bool auth_hidepid_hides(const struct control_client *c);
/* Would /proc show c task tid, when hidden (auth_hidepid_hides()) says
 * it hides others'? Under hidepid=, only a task whose real and effective
 * uid are c's: what the daemon read of it, else /proc's status. TASKS,
 * QUEUES and SET_CLASS all ask this. */
bool auth_may_see(const struct control_client *c, bool hidden, pid_t tid);

/* budget.c */
/* When c's turn, starting at now, must end (CLOCK_MONOTONIC ns), or 0 when
 * the window's share is spent or others wait before it. */
uint64_t budget_turn_end(struct control_client *c, uint64_t now);
void budget_charge(struct control_server *s, uint64_t start, uint64_t end);
/* Turns c's io off until the next window. */
int budget_park(struct control_client *c);
/* Takes c out of the queue, as it goes. */
void budget_forget(struct control_client *c);
void budget_init(struct control_server *s);
void budget_free(struct control_server *s);

/* class_request.c */
/* Answers q, or has it wait (c->waiting) while the daemon reads its task.
 * Takes q's pidfd either way. */
void class_request_run(struct control_client *c, struct class_request *q);
void class_request_free(struct control_client *c);

/* stream.c */
/* Starts a TASKS or QUEUES reply (cpu -1: every CPU); its items go out
 * from the client's io handler, as the client reads. 0 or -ENOMEM. */
int stream_start(struct control_client *c, uint16_t type, int cpu);
/* Adds the next items until turn_end (CLOCK_MONOTONIC ns) or STREAM_HIGH
 * bytes wait unsent; at the end,
 * END (or ERROR), and c->stream is NULL again. */
void stream_continue(struct control_client *c, uint64_t turn_end);
void stream_free(struct control_client *c);

/* requests.c */
/* Handles one complete frame; takes body. */
void request_handle(struct control_client *c, const struct muqss_header *hdr, char *body);

/* json_int.c */
/* key of obj as a whole number in lo..hi (both within long's range), into
 * *ret; true also when key is absent (*ret untouched), false otherwise. */
bool json_get_int(const cJSON *obj, const char *key, double lo, double hi, long *ret);

/* tunables.c */
int tunables_set(struct config_tunables *t, const char *name, const char *value, char *err,
		 size_t errlen);
