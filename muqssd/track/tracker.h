/* The task table: every thread in scope, kept exact by the proc connector
 * (or /proc polling) plus periodic reconciliation with /proc.
 *
 * A task is a thread, identified by its tid and its start time; a reused
 * tid is a new task (the old one is reported gone first). Zombies are not
 * tracked: a thread that has exited is gone even while its process lingers.
 *
 * Freshness. Identity, comm, exe, uid and scope are kept current by events.
 * A fork's child enters the table, and an exec's new comm shows, once the
 * task's stat has been read off the loop thread (tracker_pending.c): well
 * under a millisecond as a rule, as long as an exec the task is in at
 * worst. Until then the task is unknown to callbacks.
 * State, CPU, nice, policy and last CPU are as fresh as the last
 * tracker_refresh() of that task; tracker_refresh_active() is the cheap way
 * for a periodic tick to keep them current (see there for exactly how
 * current).
 *
 * Callbacks run on the event loop, from inside tracker_start(),
 * tracker_refresh*(), tracker_flush() and event handling. task_exit is the last call for a
 * task: its memory is freed right after it returns, so drop references to
 * it (and free sched_data) there. Callbacks must not call tracker_refresh*
 * or free the tracker. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>
#include <sys/types.h>
#include <systemd/sd-event.h>
#include <cjson/cJSON.h>

#include "config.h"
#include "log2_hist.h"

struct tracker;
struct tracked_proc;

struct tracked_task {
	pid_t tid, tgid, ppid;
	uid_t uid, euid;	/* real and effective */
	gid_t gid;
	pid_t sid;		/* session */
	pid_t tracer;		/* ptrace tracer tgid, 0 when not traced */
	char comm[16];
	uint64_t start_time;	/* /proc stat field 22, clock ticks since boot */
	unsigned flags;		/* PF_* from stat */

	/* As of refreshed_ns. */
	char state;		/* R, S, D, T, t, I... */
	bool active;		/* on the active list (see tracker_refresh_active) */
	/* The last refresh could not read the task's state (a read error
	 * other than the task being gone): state, nice and policy are as
	 * before, and the loop acts on it no more until a read succeeds. */
	bool stale;
	int nice;
	int policy;		/* SCHED_* without SCHED_RESET_ON_FORK */
	int rt_priority;
	int last_cpu;
	uint64_t cpu_ns;	/* on CPU, from schedstat */
	uint64_t wait_ns;	/* runnable but waiting, from schedstat */
	uint64_t refreshed_ns;	/* CLOCK_MONOTONIC */
	uint64_t active_ns;	/* last refresh that saw it runnable or using CPU */

	void *sched_data;	/* owned by the scheduling loop */

	/* Private to the tracker; one of these per thread in scope, so no
	 * holes. */
	struct tracked_proc *proc;
	uint64_t added_ns;
	uint32_t seen_gen;	/* low bits of the rescan generation */
	uint32_t timeslices;	/* low bits, from schedstat: only compared */
	/* Low bits of its voluntary context switches (status), only
	 * compared: they grow each time it blocks, however briefly, which
	 * no sampling of its state can see. Read when schedstat moves. */
	uint32_t nvcsw;
	/* Low bits of its wakeups by another thread of its process, only
	 * compared; from the bpf sensor, else 0. */
	uint32_t sib_wakes;
	/* Set by the tracker's user: read at every refresh, or only every
	 * slow_ns rather than every cold_ns (tracker_refresh_active()). */
	bool hot, slow;
	/* Set by the tracker's user: its state is read even when its CPU
	 * clock stood still. A sleeper that woke and waits in a run queue
	 * has not run since, so without this it reads asleep until it gets
	 * a CPU. */
	bool watch;
	uint64_t stat_ns;	/* last state read; 0 forces one */
	uint64_t group_cpu_ns;	/* its process's CPU clock at its last idle probe */
	int status_fd, schedstat_fd; /* -1, or open while active (see tracker_refresh.c) */
	int pidfd;		/* -1, or open once read by counters (tracker_counters.c) */
	TAILQ_ENTRY(tracked_task) proc_link;
	TAILQ_ENTRY(tracked_task) list_link;
};

typedef void (*tracker_task_func_t)(struct tracked_task *task, void *userdata);

struct tracker_callbacks {
	tracker_task_func_t task_new;	/* after the start-up scan, a fork (once read) or a rescan */
	/* A fork, at its event, before the child is read (task_new comes
	 * then): parent is the forking thread, or a thread's process leader.
	 * The child may already be mid-exec; nothing of it is read yet. */
	void (*task_forked)(struct tracked_task *parent, pid_t tid, pid_t tgid, uint64_t fork_ns,
			    void *userdata);
	tracker_task_func_t task_exec;	/* comm or exe changed (exec, prctl, write to comm) */
	tracker_task_func_t task_exit;	/* gone; freed when this returns */
	tracker_task_func_t task_uid;	/* uid or euid changed */
	/* A task on the idle list woke (tracker_tells_wakes()): it is on
	 * the active list again, read from the next tick. */
	tracker_task_func_t task_woke;
	/* waiter began to wait on a lock that holder, an IDLEPRIO thread of
	 * its process, holds (bpf only); holder NULL: that wait ended. */
	void (*lock_wait)(struct tracked_task *waiter, struct tracked_task *holder,
			  void *userdata);
	/* The kernel dropped events and a rescan reconciled the table. */
	void (*recovered)(struct tracker *t, void *userdata);
};

/* config must outlive the tracker (it is read again on each timer).
 * cb->recovered and userdata stay for the tracker's life; the task
 * callbacks can be replaced with tracker_set_callbacks(). */
int tracker_new(struct tracker **ret, sd_event *event, const struct config *config,
		const struct tracker_callbacks *cb, void *userdata);
/* Calls no callback: sched_data must be released by its owner first. */
struct tracker *tracker_free(struct tracker *t);
/* At exit, before the user puts tasks back: the queued events are read,
 * and every task whose stat is still being read is read on this thread
 * and added (task_new), so a fork's child that carries a pin or slice of
 * ours is seen and undone.
 * A read may wait on a task mid-exec: at exit that is no stall. */
void tracker_finish_pending(struct tracker *t);
/* Replaces the task_* callbacks (recovered is kept). A module that hooks
 * in after tracker_start() walks the existing tasks with tracker_foreach(). */
void tracker_set_callbacks(struct tracker *t, const struct tracker_callbacks *cb,
			   void *userdata);
/* Applies every event queued on the connector now (no-op when polling),
 * and the stat reads back so far (a read still out is not waited for:
 * it may wait on an exec). For a snapshot: a dump, a test. */
int tracker_flush(struct tracker *t);
/* Applies up to a batch of queued events, as their fd's wake-up does.
 * The bpf sensor wakes nobody for a fork or an exit: the tick calls this
 * first, so its table holds them. Not from inside an event's callback. */
void tracker_receive(struct tracker *t);
/* New tasks' stat is read on threads of their own (see stat_worker.h),
 * at SCHED_FIFO fifo_prio when allowed: above the boosts, so the tasks
 * they find are not starved of news, and below the loop. Before
 * tracker_start(); 0 (the default) keeps the creator's policy. */
void tracker_set_reader_priority(struct tracker *t, int fifo_prio);
/* Opens the connector (or chooses polling), scans /proc and arms the
 * timers. When it returns, every task in scope is in the table. */
int tracker_start(struct tracker *t);

struct tracked_task *tracker_lookup(struct tracker *t, pid_t tid);
/* Takes in the task tid when the table does not hold it yet but it is in
 * scope (polling lag, or an event not yet read), with its whole process
 * (task_new called for each thread). With --scope-pid, new ancestors are
 * added on the way, up to one the table holds. Each thread is identified
 * by its start time from its stat, as a scan does.
 * 1: in the table. -ESRCH: not in scope, gone, or a kernel thread.
 * 0 (defer only): its stat, or an ancestor's, is being read off the loop
 * (a stat read waits for an exec to end); call again, each call goes a
 * step further. Without defer, or before the stat readers run, the reads
 * are made here. */
int tracker_adopt(struct tracker *t, pid_t tid, bool defer);
/* During a task_new or task_exec callback: the kernel's timestamp of the
 * fork or exec event behind it (CLOCK_MONOTONIC ns); 0 for a task or a
 * rename found by a scan, a comm change, and outside callbacks. */
uint64_t tracker_event_ns(const struct tracker *t);
/* With on, a process's command line is read with its stat off the loop
 * thread, at its fork and at its exec (reading it takes the mmap lock of
 * a program that may be loading its libraries). Off by default. */
void tracker_set_read_cmdline(struct tracker *t, bool on);
/* In task_new and task_exec: the command line read with the task's stat
 * (NULs kept), or NULL when none was (a thread, a scan, a comm change, a
 * read taken on the loop). len gets its length. */
const char *tracker_event_cmdline(const struct tracker *t, const struct tracked_task *task,
				  size_t *len);
/* The executable of the task's process, read on the first ask after each
 * exec (a readlink of /proc); NULL when unreadable. */
const char *tracker_task_exe(const struct tracked_task *task);
/* Rereads state, nice, policy, last CPU (stat) and CPU and wait time
 * (schedstat), always both. Returns 0, or -ESRCH when the task is gone or
 * its tid was reused, in which case task_exit has been called and task is
 * freed (a reused tid shows up as a new task). */
int tracker_refresh(struct tracker *t, struct tracked_task *task);
/* The tick's refresh: keeps every task on the active list current and
 * sweeps the idle list a little. Returns the number of tasks read.
 *
 * Active tasks. When it returns, each active task's cpu_ns, wait_ns and
 * timeslices are read this call, and state is exact with one exception:
 * a task that was sleeping (S, D, T...) and has been woken but has not
 * yet been on a CPU still shows its sleeping state; it shows R from the
 * first tick after it first runs, and at the latest
 * TRACKER_STAT_MAX_AGE_NS after the last state read. nice, policy and
 * rt_priority are at most TRACKER_STAT_MAX_AGE_NS old; last_cpu is as of
 * the task's fork, exec or last scan (stat, which can wait on a task
 * mid-exec, is never read here: see tracker_refresh.c). How: schedstat
 * is read every call (through a cached fd, pread at offset 0); status
 * only when schedstat moved since the last read (the task was switched on
 * or off a CPU, or ran through a kernel tick, or was moved while queued),
 * when the last read is TRACKER_STAT_MAX_AGE_NS old, or on the first
 * read. A task changes state only on its own CPU (sleep, stop, exit),
 * which moves schedstat, or by being woken, which does not. So running
 * and waiting tasks read R, sleepers their sleep state, and a task that
 * slept or exited since the last call is seen doing so in this one.
 *
 * Active and idle. A task whose read sees it R or sees its CPU time grow
 * is active; one that has been neither for TRACKER_IDLE_AFTER_NS moves
 * to the idle list. New tasks start active. Idle tasks are not read each
 * call: up to idle_budget of them are probed, round robin, but however
 * large the budget, no faster than one sweep of the idle list per
 * TRACKER_SWEEP_MIN_NS and no more than TRACKER_SWEEP_PER_SEC probes a
 * second on average (so 1,000 sleepers are swept every 5 s, 10,000 every
 * 10 s, 50,000 every 50 s). A probe reads schedstat only, and a task whose
 * CPU time grew gets a full read and becomes active. So a sleeper that
 * wakes and runs is noticed within one sweep; one woken that has not yet
 * run is not.
 *
 * Cost per call: 1 pread per active task, +1 for those that ran or are
 * watched; 1 open+read+close per probe. Active tasks keep 2 fds open
 * each, up to 256 tasks (fewer under a low RLIMIT_NOFILE); past that
 * they read by path. */
#define TRACKER_IDLE_AFTER_NS (1000ULL * 1000 * 1000)
#define TRACKER_STAT_MAX_AGE_NS (100ULL * 1000 * 1000)
#define TRACKER_SWEEP_MIN_NS (5000ULL * 1000 * 1000)
#define TRACKER_SWEEP_PER_SEC 1000
/* With cold_ns, an active task read less than cold_ns ago (slow_ns if
 * its user marked it slow) is skipped unless its user marked it hot
 * (tracked_task.hot, .slow). No read starts at or after until_ns: hot
 * tasks are read first, and the due reads left over come first at the
 * next call (counted by tracker_reads_carried()), so no number of tasks
 * holds the caller past until_ns by more than one read. */
unsigned tracker_refresh_active(struct tracker *t, uint64_t now_ns, uint64_t until_ns,
				unsigned idle_budget, uint64_t cold_ns, uint64_t slow_ns);
uint64_t tracker_reads_carried(const struct tracker *t);

/* The bpf sensor's counters of a task, by one lookup in the kernel
 * rather than /proc reads (see sensor.h for what each holds): 0,
 * -EOPNOTSUPP (another sensor: read /proc), -EMFILE (past the pidfd
 * budget: read /proc), -ENOENT (not yet counted: it has not been switched
 * since it was seeded), -ESRCH (gone; its exit event removes it). */
struct sensor_counters;
int tracker_task_counters(struct tracker *t, struct tracked_task *task, uint64_t now_ns,
			  struct sensor_counters *ret);
/* What tracker_refresh_active() reads from /proc for an active task,
 * taken from those counters instead: state (exact, a woken task reads R
 * at once), cpu_ns and wait_ns (up to now_ns), last_cpu, nvcsw,
 * timeslices (switches); active_ns and refreshed_ns as a read does.
 * nice and policy are not counters: tracker_read_policy() as before.
 * Returns as tracker_task_counters(); on error the task is unchanged. */
int tracker_refresh_counters(struct tracker *t, struct tracked_task *task, uint64_t now_ns);
/* Tells the bpf sensor the task's class (an enum sched_class), which
 * picks the histogram its wake latencies go to; its children inherit it
 * in the kernel. 0, or -errno (-EOPNOTSUPP without bpf). */
int tracker_set_task_class(struct tracker *t, struct tracked_task *task, unsigned cls);
/* sensor_task_identity() of the tracker's sensor. */
int tracker_pidfd_identity(struct tracker *t, int pidfd, uint64_t *ret_start, pid_t *ret_tgid);
/* Class cls's wake latency histogram over the last 5 s (sensor.h,
 * log2_hist.h): -EOPNOTSUPP without the bpf sensor. */
int tracker_wake_window(const struct tracker *t, unsigned cls,
			uint64_t ret[LOG2_HIST_BUCKETS]);
/* For the tick, which comes at least once a second: a snapshot of the
 * histograms when a second has passed since the last. */
void tracker_wake_tick(struct tracker *t, uint64_t now_ns);
/* Adds key: {"p50_us", "p99_us", "max_us", "count"} of hist to parent:
 * each figure the upper bound of its log2 bucket. 0 or -ENOMEM. */
int tracker_wake_json(cJSON *parent, const char *key, const uint64_t hist[LOG2_HIST_BUCKETS]);

/* fn may not remove tasks (so: no tracker_refresh inside). */
void tracker_foreach(struct tracker *t, tracker_task_func_t fn, void *userdata);
void tracker_foreach_active(struct tracker *t, tracker_task_func_t fn, void *userdata);
/* Every tracked thread of process tgid. Returns how many. */
size_t tracker_foreach_thread(struct tracker *t, pid_t tgid, tracker_task_func_t fn,
			      void *userdata);

size_t tracker_count(const struct tracker *t);
size_t tracker_count_active(const struct tracker *t);
uint64_t tracker_lost_recoveries(const struct tracker *t);
uint64_t tracker_events(const struct tracker *t);
/* stat reads on the loop thread, which can wait on a task mid-exec: a
 * scan's of tasks in scope (the rest of the machine is sorted out through
 * status), and new tasks' when there is no reader (at exit) or more than
 * 256 already wait for room in its queue. */
uint64_t tracker_loop_stat_reads(const struct tracker *t);
/* New tasks' stat reads that waited for room in the reader's queue. */
uint64_t tracker_deferred_stat_reads(const struct tracker *t);
/* New tasks whose stat came with their event (bpf), with no read. */
uint64_t tracker_stats_told(const struct tracker *t);
bool tracker_polling(const struct tracker *t);
/* The sensor in use: "bpf", "connector" or "poll". */
const char *tracker_sensor(const struct tracker *t);
/* Whether the sensor tells when a sleeper wakes (task_woke), so that no
 * tick needs to probe the idle list: the bpf sensor. */
bool tracker_tells_wakes(const struct tracker *t);
/* Events the sensor lost (bpf: a full ring buffer), each healed by a
 * rescan (tracker_lost_recoveries()); 0 for the others. */
uint64_t tracker_sensor_lost(const struct tracker *t);
/* Reconciles the table with /proc now (what ENOBUFS and the timer do). */
int tracker_rescan(struct tracker *t);

/* The table as JSON, a task at a time, for a reply sent over many loop
 * iterations: the tids of every task now (active first; the caller frees
 * *ret), then the object of one (tid, tgid, ppid, uid, euid, gid, comm,
 * exe, state, nice, policy, rt_priority, last_cpu, start_time, cpu_ns,
 * wait_ns, active; the caller deletes it), -ESRCH once it is gone. */
int tracker_tids(struct tracker *t, pid_t **ret, size_t *n);
int tracker_task_json(struct tracker *t, pid_t tid, cJSON **ret);
