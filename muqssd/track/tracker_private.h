/* Shared by tracker*.c; nothing outside the tracker includes this. */
#pragma once

#include "procfs.h"
#include "scope.h"
#include "sensor.h"
#include "stat_worker.h"
#include "tidmap.h"
#include "tracker.h"

TAILQ_HEAD(task_list, tracked_task);

/* glibc's sys/queue.h lacks it. */
#ifndef TAILQ_FOREACH_SAFE
#define TAILQ_FOREACH_SAFE(var, head, field, tvar)				\
	for ((var) = TAILQ_FIRST(head); (var) && ((tvar) = TAILQ_NEXT(var, field), 1); \
	     (var) = (tvar))
#endif

/* What a forked task inherits, taken at its fork event: its creator's
 * credentials and its process's executable (exe NULL: read it). */
struct task_origin {
	uid_t uid, euid;
	gid_t gid;
	const char *exe;
};

/* A task whose stat is being read off the loop (tracker_pending.c): one
 * not yet in the table (a fork), or one whose exec is not yet applied.
 * Events about it that come meanwhile are kept here, so that the read,
 * whenever it was taken, does not undo them. */
struct tracker_pending {
	pid_t tid, tgid;
	uint64_t cookie;	/* of the read in flight; a stale result differs */
	bool add;		/* not in the table: added once read */
	bool parent_in;		/* add: its process is in scope through its parent */
	bool verify;		/* add: a scan's check of a task the table holds */
	bool has_origin;
	bool reread;		/* an exec came after the read was asked */
	bool comm_set, sid_set, tracer_set;
	char comm[16];
	pid_t sid, tracer;
	struct task_origin origin;
	char *exe;		/* origin.exe's storage */
	uint64_t fork_ns;	/* add: the fork event's time; 0 when none */
	uint64_t exec_ns;	/* an exec to apply once read; 0 when none */
	/* Waiting for room in the reader's queue, its files opened (the
	 * fds), or not yet (-1: past DEFERRED_MAX). */
	bool deferred;
	bool opened_late;	/* its files were opened only when the reader had room */
	int deferred_fd, deferred_cmdline_fd;
	TAILQ_ENTRY(tracker_pending) link;
	TAILQ_ENTRY(tracker_pending) deferred_link;
};

TAILQ_HEAD(pending_list, tracker_pending);
TAILQ_HEAD(deferred_list, tracker_pending);

struct tracked_proc {
	pid_t tgid;
	char *exe;
	/* exe was looked up since its last exec (NULL then: unreadable).
	 * Read on first use: most execs match no rule that needs it. */
	bool exe_read;
	size_t nthreads;
	struct task_list threads;
	/* The scan generation whose listing found the kernel's thread count
	 * equal to nthreads: all its threads count as seen, untouched. */
	uint32_t confirmed_gen;
	TAILQ_ENTRY(tracked_proc) link;
};

TAILQ_HEAD(proc_list, tracked_proc);

struct tracker {
	sd_event *event;
	const struct config *config;
	struct tracker_callbacks cb;
	void *userdata;
	void (*recovered)(struct tracker *t, void *userdata);
	void *recovered_userdata;
	struct scope scope;

	struct tidmap tasks; /* tid -> tracked_task */
	struct tidmap procs; /* tgid -> tracked_proc, the processes in scope */
	struct proc_list proc_list; /* the same, for a scan's sweep */
	/* SCOPE_PID: processes in scope that left the table before their
	 * events were all read (see tracker_ghost.c); two generations. */
	struct tidmap ghosts, old_ghosts;
	struct task_list active, idle;
	size_t nactive;
	/* tid -> tracker_pending, and all of them for walks by process. */
	struct tidmap pending;
	struct pending_list pending_list;
	/* Reads the reader's full queue could not take yet, oldest first. */
	struct deferred_list deferred;
	size_t ndeferred, ndeferred_open;
	uint64_t deferred_reads;
	struct stat_worker *reader;
	int reader_prio;
	uint64_t cookies;
	/* stat reads on the loop thread: a scan's of tasks in scope while
	 * there is no reader (start-up) or for a control request, and new
	 * tasks' when there is no reader (at exit) */
	uint64_t loop_stat_reads;
	/* New tasks' stats the sensor told with their event: no read */
	uint64_t stats_told;
	/* Active tasks keep their stat and schedstat open, up to this many. */
	size_t nfd_tasks, max_fd_tasks;
	/* Tasks holding a pidfd for the bpf sensor's counters. */
	size_t npidfds, max_pidfds;
	uint64_t last_refresh_ns;
	uint64_t sweep_carry_ns; /* time not yet spent on idle probes */
	uint64_t reads_carried;  /* due reads left to a later refresh for time */

	struct sensor *sensor;	/* NULL when polling */
	struct tracker_wake *wake; /* NULL without the bpf sensor */
	sd_event_source *io_source;
	sd_event_source *reconcile_timer;
	sd_event_source *poll_timer;
	sd_event_source *rescan_timer; /* coalesces rescans after ENOBUFS */
	bool polling;

	uint32_t generation;	/* of rescans; wraps, only compared */
	uint64_t event_ns;	/* see tracker_event_ns() */
	bool read_cmdline;	/* see tracker_set_read_cmdline() */
	/* While a read's result is applied: the command line read with it. */
	pid_t event_cmdline_tid;
	const char *event_cmdline;
	size_t event_cmdline_len;
	uint64_t lost_recoveries;
	uint64_t events;
	/* For the silence check at each reconciliation. */
	uint64_t events_at_reconcile;
	size_t scan_added;
};

/* A state read that says the task has exited: a zombie, or dead. */
static inline bool tracker_gone_state(char state)
{
	return state == 'Z' || state == 'X';
}

/* tracker.c */
/* Adds a task read from /proc. origin, when given, lends its credentials
 * and executable (a fork copies them) so no status read is needed.
 * Returns the task, NULL when it could not be read (gone) or on -ENOMEM
 * (logged). */
struct tracked_task *tracker_add(struct tracker *t, pid_t tgid, pid_t tid,
				 const struct procfs_stat *st, const struct task_origin *origin);
/* A live task's origin, for its children; exe NULL when it may be stale. */
void tracker_origin_of(const struct tracked_task *task, bool exe, struct task_origin *ret);
void tracker_remove(struct tracker *t, struct tracked_task *task);
/* Updates the facts that stat carries, but comm: a new name is news for
 * task_exec, which only events and scans deliver (a tick's read that took
 * it silently hid an exec whose event was lost from the next scan). */
void tracker_apply_stat(struct tracked_task *task, const struct procfs_stat *st);
void tracker_set_comm(struct tracked_task *task, const char *comm);
/* At an exec: the next tracker_task_exe() reads it again. */
void tracker_forget_exe(struct tracked_proc *proc);
/* Is a process that is not yet in the table in scope? st is its leader's. */
bool tracker_admits(struct tracker *t, pid_t tgid, const struct procfs_stat *st);
/* The same test for a process not in the table, from its status, which
 * takes no lock of the task's where stat waits on a task mid-exec
 * (bench/README.md, "The stall"): a scan reads the rest of the machine
 * this way and only what is in scope through stat. Under --scope-pid it
 * does not check the parent, which it returns in *ppid. */
bool tracker_may_admit(struct tracker *t, pid_t tgid, pid_t *ppid);

/* tracker_ghost.c */
void tracker_ghost_add(struct tracker *t, pid_t tgid);
bool tracker_is_ghost(const struct tracker *t, pid_t tgid);
void tracker_ghost_forget(struct tracker *t, pid_t tgid);
/* Ghosts older than one call are dropped; all = every ghost. */
void tracker_ghosts_age(struct tracker *t, bool all);

/* tracker_refresh.c */
/* How many tasks may keep fds open, from RLIMIT_NOFILE. */
size_t tracker_fd_budget(void);
void tracker_close_fds(struct tracker *t, struct tracked_task *task);
/* Policy, RT priority and nice, by sched_getattr(): they are the loop's to
 * compare with its own boosts, so read them as of now, never from a stat
 * read taken off the loop, which may predate a boost or its end. */
void tracker_read_policy(struct tracked_task *task);
/* Moves task between the active and idle lists. */
void tracker_set_active(struct tracker *t, struct tracked_task *task, bool active);
/* Makes active every sleeper that waits for the sensor's wake event
 * rather than the sweep: after lost events, one may have been its. */
void tracker_wake_sleepers(struct tracker *t);
/* Sizes the pidfd budget and the fd table for it, once, at start. */
void tracker_reserve_pidfds(struct tracker *t);

/* tracker_scan.c */
/* Reconciles with /proc. With verify, every known task's stat is reread
 * to catch reused tids; without, only new tids are read. */
int tracker_scan(struct tracker *t, bool verify);
/* Adds or verifies the threads of one process, as a scan does. With
 * defer, and a stat reader running, the reads are taken off the loop and
 * applied as they come back (tracker_pending.c); without, here. */
void tracker_scan_threads(struct tracker *t, pid_t tgid, bool verify, bool defer);
/* A scan's read of a task the table holds, with its identity checked:
 * the facts stat carries, and a new name told like an exec. */
void tracker_verify_task(struct tracker *t, struct tracked_task *task, const struct procfs_stat *st);
int tracker_arm_timers(struct tracker *t);
/* Rescans soon, once however often it is asked before then. */
void tracker_schedule_recovery(struct tracker *t);
/* Closes the sensor and polls from now on. */
int tracker_start_polling(struct tracker *t);

/* tracker_events.c */
int tracker_attach_sensor(struct tracker *t);

/* tracker_counters.c */
void tracker_close_pidfd(struct tracker *t, struct tracked_task *task);

/* tracker_wake.c: with the bpf sensor, snapshots its wake latency
 * histograms once a second (tracker_wake_tick()); a no-op otherwise. */
int tracker_wake_start(struct tracker *t);
void tracker_wake_stop(struct tracker *t);

/* tracker_pending.c */
int tracker_pending_start(struct tracker *t);
/* Waits for reads in progress, forgets every pending task. */
void tracker_pending_stop(struct tracker *t);
struct tracker_pending *tracker_pending_get(struct tracker *t, pid_t tid);
/* A process in scope: in the table, or on its way in (an add whose read
 * is out, in scope through its parent). */
bool tracker_proc_known(struct tracker *t, pid_t tgid);
/* A new entry for tid, replacing any; NULL on -ENOMEM (logged). */
struct tracker_pending *tracker_pending_new(struct tracker *t, pid_t tid, pid_t tgid, bool add);
void tracker_pending_drop(struct tracker *t, struct tracker_pending *p);
/* Drops the adds of tgid's threads but its leader: an exec killed them. */
void tracker_pending_drop_threads(struct tracker *t, pid_t tgid);
/* Records a setsid() of tgid for its pending tasks. */
void tracker_pending_sid(struct tracker *t, pid_t tgid);
/* Asks for p's stat; its outcome is applied when the read is back, which
 * may be right away (no worker, the task already gone): p
 * may be freed on return. */
void tracker_pending_read(struct tracker *t, struct tracker_pending *p);
/* The same, but the stat the sensor told with p's event (NULL: none)
 * stands for the read when nothing else is needed: applied now. */
void tracker_pending_take(struct tracker *t, struct tracker_pending *p,
			  const struct procfs_stat *told);
/* Applies the reads finished so far. */
void tracker_pending_flush(struct tracker *t);
