/* The daemon: one sd-event loop that owns every module. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-event.h>
#include <cjson/cJSON.h>

#include "config.h"

struct tracker;
struct sched;
struct enforcer;
struct control_server;
struct rules;
struct sched_loop;

struct daemon_counters {
	uint64_t lost_event_recoveries;
	uint64_t boosts;
	uint64_t stops;
	uint64_t reloads;
};

struct daemon {
	sd_event *event;
	struct config config;
	const char *config_path;
	bool config_missing_ok;
	uint64_t started_usec;	 /* CLOCK_MONOTONIC */

	struct tracker *tracker;	   /* daemon_track.c */
	struct sched_loop *loop;	   /* daemon_sched.c */
	struct control_server *control;	   /* daemon_control.c */
	struct rules *rules;

	struct daemon_counters counters;
};

/* Scheduling classes as seen on the wire and in the config. */
enum muqss_class {
	MUQSS_CLASS_NORMAL = 0,
	MUQSS_CLASS_ISO,
	MUQSS_CLASS_IDLEPRIO,
	MUQSS_CLASS_BATCH,
	MUQSS_CLASS_RT, /* set by someone else; never granted by muqssd */
};

/* Takes over *config (left zeroed). The config file is kept for reloads. */
int daemon_new(struct daemon **ret, struct config *config, const char *config_path,
	       bool config_missing_ok);
struct daemon *daemon_free(struct daemon *d);
/* Runs the loop until SIGTERM/SIGINT; returns 0 or -errno. */
int daemon_run(struct daemon *d);
/* Reloads the config file; the old config stays if the new one is invalid.
 * Command-line scope and paths are kept. */
int daemon_reload(struct daemon *d);
/* Sends STATUS= with live counts to the service manager. */
void daemon_notify_status(struct daemon *d);
/* Fills a status object: version, uptime, tunables, scope, counters. */
int daemon_status_json(struct daemon *d, cJSON *obj);
/* CPU time the daemon has used, in microseconds. */
uint64_t daemon_cpu_usec(void);

/* Tracking (daemon_track.c). */
int daemon_track_start(struct daemon *d);
void daemon_track_stop(struct daemon *d);
/* Passes one object per tracked task to fn, as tracker_dump_each() does. */
int daemon_dump_tasks(struct daemon *d, int (*fn)(cJSON *task, void *ctx), void *ctx);

/* Scheduling and enforcement (daemon_sched.c). */
int daemon_sched_start(struct daemon *d);
void daemon_sched_stop(struct daemon *d);
/* Puts every thread of pid (or just tid when tid > 0) in class. nice is
 * applied when nice_set. Called after authorization. On failure writes a
 * human reason into err. */
int daemon_set_class(struct daemon *d, pid_t pid, pid_t tid, enum muqss_class class,
		     bool nice_set, int nice, char *err, size_t errlen);
/* The class muqssd holds tid in; MUQSS_CLASS_RT for tasks it leaves alone. */
enum muqss_class daemon_task_class(struct daemon *d, pid_t tid);
/* The nice tid's owner set: a hog's translated kernel nice mapped back. */
int daemon_owner_nice(struct daemon *d, pid_t tid, int kernel_nice);
/* Tracker callbacks, forwarded by daemon_track.c. */
struct tracked_task;
void daemon_sched_task_new(struct daemon *d, struct tracked_task *tt);
void daemon_sched_task_exec(struct daemon *d, struct tracked_task *tt);
void daemon_sched_task_exit(struct daemon *d, struct tracked_task *tt);
/* Appends one object per CPU, each with its queue in order. cpu < 0: all. */
int daemon_dump_queues(struct daemon *d, int cpu, cJSON *array);
/* Applies changed tunables to the running scheduler. */
void daemon_tunables_changed(struct daemon *d);

/* Rules (daemon_rules.c). A missing rules directory is no error. */
struct rule;
int daemon_rules_load(struct daemon *d);
void daemon_rules_free(struct daemon *d);
const struct rule *daemon_rules_match(struct daemon *d, const struct tracked_task *tt);

/* Control socket (daemon_control.c). */
int daemon_control_start(struct daemon *d);
void daemon_control_stop(struct daemon *d);
