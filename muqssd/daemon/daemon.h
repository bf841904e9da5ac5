/* The daemon: one sd-event loop that owns every module. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-event.h>
#include <cjson/cJSON.h>

#include "config.h"
#include "core/task.h"
#include "latency_hist.h"

struct tracker;
struct enforcer;
struct control_server;
struct rules;
struct loop;
struct deadman;
struct rtkit_server;

struct daemon_counters {
	uint64_t lost_event_recoveries;
	uint64_t reloads;
	uint64_t ticks;
	uint64_t ticks_over_bound;	/* late or long past the deadman's bound */
	/* Of those, the ones whose own part fit the bound (its handlers'
	 * time past the due time, and the tick's CPU time unless it blocked):
	 * for the rest it was ready and waited for the kernel or the host. */
	uint64_t ticks_over_bound_held;
	uint64_t deadman_trips;
	/* A rule needed a command line no reader had read (a comm change,
	 * a rescan): the task kept its class rather than the loop read it. */
	uint64_t rules_undecided;
};

/* A tick past the deadman's bound, as status shows it. */
struct tick_over {
	uint64_t start_ns;	/* CLOCK_MONOTONIC */
	uint64_t late_ns, took_ns;
	uint64_t own_ns;	/* our handlers' part of late, and took's ours */
	bool held;
};
#define DAEMON_TICKS_OVER_KEPT 8

struct daemon {
	sd_event *event;
	struct config config;
	const char *config_path;
	bool config_missing_ok;
	int cli_log_level;		/* --log-level, kept at reloads; -1: none */
	uint64_t started_usec;	 /* CLOCK_MONOTONIC */

	struct tracker *tracker;	   /* daemon_track.c */
	struct loop *loop;		   /* daemon_loop.c */
	struct enforcer *enf;
	sd_event_source *tick;
	struct deadman *deadman;
	struct control_server *control;	   /* daemon_control.c */
	struct rtkit_server *rtkit;	   /* daemon_rtkit.c */
	struct rules *rules;
	unsigned rules_fields;		   /* of rules, kept: asked at every exec */
	bool rules_need_exe;
	struct launcher *launchers;	   /* daemon_launchers.c */
	size_t n_launchers;

	struct daemon_counters counters;
	struct latency_hist tick_lateness; /* how late each tick ran, us */
	uint64_t tick_lateness_max_us;
	uint64_t tick_took_max_us;	/* the longest tick, start to end */
	uint64_t last_late_log_ns;
	struct tick_over ticks_over[DAEMON_TICKS_OVER_KEPT]; /* the last ones, a ring */
	uint64_t tick_due_ns;
	uint64_t own_late_ns;		/* our handlers' time past tick_due_ns */
	uint64_t last_trip_log_ns;
	uint64_t test_stall_ns;		/* MUQSSD_TEST_STALL_MS: the test hook */
	bool test_stall_pending;
};

/* A tick must have finished within this of when it was due, or the
 * deadman drops every boost: max(3 x rr_interval, 20 ms). */
#define DAEMON_TICK_BOUND_MIN_NS (20ULL * 1000 * 1000)
uint64_t daemon_tick_bound_ns(const struct daemon *d);
/* Adds "tick": count, bound, lateness max and p99, trips. */
int daemon_tick_status_json(struct daemon *d, cJSON *obj);

/* Takes over *config (left zeroed). The config file is kept for reloads. */
int daemon_new(struct daemon **ret, struct config *config, const char *config_path,
	       bool config_missing_ok);
struct daemon *daemon_free(struct daemon *d);
/* Runs the loop until SIGTERM/SIGINT; returns 0 or -errno. */
int daemon_run(struct daemon *d);
/* What --check-config checks beyond the config file: the rules load,
 * the state dir and every directory above it are trusted. Logs each
 * problem; returns the first -errno. */
int daemon_check_config(const struct config *c);
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
/* Adds "tracking": polling, events, count, active. */
int daemon_tracking_status_json(struct daemon *d, cJSON *obj);

/* The live loop (daemon_loop.c). */
int daemon_loop_start(struct daemon *d);
void daemon_loop_stop(struct daemon *d);
/* Takes in tid, in scope but not yet in the table (polling lag, an event
 * not yet read), as tracker_adopt() does: with defer, its reads are made
 * off the loop and 0 means "not yet, ask again". 1 when there is no
 * tracker. */
int daemon_adopt(struct daemon *d, pid_t tid, bool defer);
/* Puts every thread of pid (or just tid when tid > 0) in class. nice is
 * applied when nice_set. Called after authorization, and after
 * daemon_adopt() for a task that may be new. On failure writes a human
 * reason into err. */
int daemon_set_class(struct daemon *d, pid_t pid, pid_t tid, enum sched_class class,
		     bool nice_set, int nice, char *err, size_t errlen);
/* The class muqssd holds tid in (enum sched_class; SCHED_CLASS_RT for a
 * task it leaves alone), or -ESRCH. */
int daemon_task_class(struct daemon *d, pid_t tid);
/* The nice tid's owner set: a hog's translated kernel nice mapped back. */
int daemon_owner_nice(struct daemon *d, pid_t tid, int kernel_nice);
/* The daemon's view of its tasks for auth_task(), both doors' rule
 * (daemon_auth.c). */
struct auth_view;
void daemon_auth_view(struct daemon *d, struct auth_view *ret);
/* Tracker callbacks, forwarded by daemon_track.c. */
struct tracked_task;
void daemon_loop_task_new(struct daemon *d, struct tracked_task *tt);
void daemon_loop_task_exec(struct daemon *d, struct tracked_task *tt);
void daemon_loop_task_woke(struct daemon *d, struct tracked_task *tt);
void daemon_loop_lock_wait(struct daemon *d, struct tracked_task *waiter,
			   struct tracked_task *holder);
void daemon_loop_events_lost(struct daemon *d);
void daemon_loop_task_forked(struct daemon *d, struct tracked_task *parent, pid_t tid, pid_t tgid,
			     uint64_t fork_ns);
void daemon_loop_task_exit(struct daemon *d, struct tracked_task *tt);
/* Where a tick's time went, wall ns: the sensor's queued events, the
 * deadman and wake-latency upkeep, the task reads, the decisions. */
struct tick_split {
	uint64_t receive_ns, upkeep_ns, read_ns, decide_ns;
};
/* A tick due at due_ns ran at now and took took_ns, of which took_own_ns
 * it ran or blocked (not runnable and not run): counted, and logged with
 * its split when past the deadman's bound (daemon_lateness.c). */
void daemon_lateness_note(struct daemon *d, uint64_t due_ns, uint64_t now, uint64_t took_ns,
			  uint64_t took_own_ns, const struct tick_split *split);
/* Appends one object per CPU, each with its queue in order. cpu < 0: all. */
int daemon_dump_queues(struct daemon *d, int cpu, cJSON *array);
/* Applies changed tunables to the running scheduler. */
void daemon_tunables_changed(struct daemon *d);

/* Rules (daemon_rules.c). A missing rules directory is no error (no
 * rules); one file or directory that cannot be trusted or read is, and
 * nothing is read then. */
struct rule;
int daemon_rules_read(struct daemon *d, struct rules **ret);
/* Puts r (may be NULL) in place of the running rules. */
void daemon_rules_set(struct daemon *d, struct rules *r);
int daemon_rules_load(struct daemon *d);
void daemon_rules_free(struct daemon *d);
/* Launchers (daemon_launchers.c): processes that satisfy a rule's ancestor
 * keys. note: tt exec'd or forked with this command line (joined), or
 * changed its comm (NULL: the command line kept stands); tt is kept when
 * it is a launcher, dropped when no more. */
struct rule_ancestor;
int daemon_launchers_note(struct daemon *d, const struct tracked_task *tt, const char *cmdline);
/* Fills out (RULES_ANCESTOR_MAX) with tt's ancestors in the table, parent
 * first, with the command lines of those that are launchers. at_start:
 * a launcher not noted yet is read from /proc. Returns how many. */
size_t daemon_launchers_ancestors(struct daemon *d, const struct tracked_task *tt, bool at_start,
				  struct rule_ancestor *out);
void daemon_launchers_free(struct daemon *d);
const struct rule *daemon_rules_match(struct daemon *d, const struct tracked_task *tt,
				      bool at_start);

/* Control socket (daemon_control.c). */
int daemon_control_start(struct daemon *d);
void daemon_control_stop(struct daemon *d);

/* rtkit's D-Bus API, when the config turns it on (daemon_rtkit.c). A
 * failure to serve it is logged and ignored. */
int daemon_rtkit_start(struct daemon *d);
void daemon_rtkit_stop(struct daemon *d);
