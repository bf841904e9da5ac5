/* The live scheduler: the core's decisions, mapped onto the kernel.
 *
 * The loop owns one struct managed_task per thread in scope and reaches the
 * kernel through two narrow doors only:
 *  - a task source (struct loop_source): task states and CPU clocks, and
 *    the new, exec and exit events the daemon forwards;
 *  - a lever set (struct loop_levers): pin, boost, nice, slice, stop.
 * The daemon plugs in the tracker and the enforcer; the unit tests plug in
 * a fake kernel (tests/loop). Time always comes in as an argument.
 *
 * Tasks that sleep before their slice runs out, and ISO tasks, sit in the
 * core's per-CPU queues. On each CPU the core's pick is pinned there and
 * boosted to SCHED_FIFO until its measured CPU time uses up its slice or it
 * sleeps. A recently active sleeper whose key beats its CPU's running task
 * waits boosted one step higher, so its wake-up preempts at once. A task
 * that uses a whole slice without sleeping is a hog: it leaves the queues
 * and shares the CPUs through the fair class, its nice translated so the
 * kernel's weights give MuQSS's shares. IDLEPRIO tasks run SCHED_IDLE and
 * are SIGSTOPped while normal work fills every CPU they may use. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sched.h>
#include <sys/types.h>
#include <cjson/cJSON.h>

#include "config.h"
#include "core/sched.h"
#include "enforce.h"
#include "tracker.h"

struct loop;
struct hwloc_topology;

/* The task source. Records are struct tracked_task; the loop keeps its own
 * state in tt->sched_data. */
struct loop_source_ops {
	/* Brings every active task's state and CPU clock up to date and
	 * probes up to idle_budget idle ones (tracker_refresh_active()).
	 * Tasks read less than cold_ns ago (slow_ns if tt->slow) may be
	 * skipped unless tt->hot. No read starts at or after until: hot
	 * tasks first, the rest carried to the next call. Returns when the
	 * reads ended (at least now): later than now by however long they
	 * were held up. */
	uint64_t (*refresh)(void *ctx, uint64_t now, uint64_t until, unsigned idle_budget,
			    uint64_t cold_ns, uint64_t slow_ns);
	void (*foreach_active)(void *ctx, tracker_task_func_t fn, void *userdata);
	void (*foreach)(void *ctx, tracker_task_func_t fn, void *userdata);
	size_t (*foreach_thread)(void *ctx, pid_t tgid, tracker_task_func_t fn, void *userdata);
	struct tracked_task *(*lookup)(void *ctx, pid_t tid);
	size_t (*count)(void *ctx);
	size_t (*count_active)(void *ctx);
	/* The executable of tt's process, or NULL. */
	const char *(*exe)(void *ctx, const struct tracked_task *tt);
	/* Optional: tt's class changed, or it came in with one other than
	 * normal (a sensor files its wake latency by class). */
	void (*set_class)(void *ctx, struct tracked_task *tt, enum sched_class class);
	/* Optional: whether a sleeper that wakes is told (loop_task_woke()),
	 * so a tick with nothing active may be TICK_QUIET_NS away. */
	bool (*tells_wakes)(void *ctx);
};

struct loop_source {
	const struct loop_source_ops *ops;
	void *ctx;
};

/* What a child forked while we had changed its parent may carry of ours,
 * to be given its owner's settings back (enforce_undo_inherited()). */
struct loop_inherited {
	bool affinity;		/* give it orig.affinity */
	bool idle_policy;	/* it runs SCHED_IDLE by us: give it orig.policy */
	uint64_t our_slice_ns;	/* non-zero: it may carry our EEVDF slice */
	int our_nice;		/* NICE_UNSET, or the kernel nice we gave the parent */
	int owner_nice;		/* what to give it instead of our_nice */
};

/* The lever set: every kernel write the loop makes. Each returns 0 or
 * -errno; -ESRCH means the task is gone (or its tid was reused). */
struct loop_lever_ops {
	int (*boost)(void *ctx, const struct enforce_target *t, int fifo_prio);
	int (*unboost)(void *ctx, const struct enforce_target *t);
	int (*set_idle)(void *ctx, const struct enforce_target *t, bool idle);
	int (*set_nice)(void *ctx, const struct enforce_target *t, int nice);
	int (*set_slice)(void *ctx, const struct enforce_target *t, uint64_t ns);
	bool (*slice_supported)(void *ctx);
	/* -EINVAL when the owner's mask and cpus do not meet. */
	int (*pin)(void *ctx, const struct enforce_target *t, const cpu_set_t *cpus);
	int (*unpin)(void *ctx, const struct enforce_target *t);
	int (*stop)(void *ctx, const struct enforce_target *t);
	int (*cont)(void *ctx, const struct enforce_target *t);
	/* Someone else reniced the task or changed its policy: what they
	 * set becomes what release and restore put back (enforce_rebase()). */
	int (*rebase)(void *ctx, const struct enforce_target *t);
	/* Everything back, record gone; forget: the task exited. */
	int (*release)(void *ctx, const struct enforce_target *t);
	void (*forget)(void *ctx, pid_t tid);
	int (*owner_affinity)(void *ctx, pid_t tid, cpu_set_t *ret);
	int (*get_original)(void *ctx, pid_t tid, struct enforce_original *ret);
	/* child is not ours yet; parent_orig is its parent's record. */
	int (*undo_inherited)(void *ctx, const struct enforce_target *child,
			      const struct enforce_original *parent_orig,
			      const struct loop_inherited *what);
	/* Puts back every task the levers changed (the way out). */
	void (*restore_all)(void *ctx);
};

struct loop_levers {
	const struct loop_lever_ops *ops;
	void *ctx;
};

/* No nice of ours (loop_inherited.our_nice, managed_task.kernel_nice). */
#define NICE_UNSET ENFORCE_NICE_NONE

struct loop_counters {
	uint64_t boosts;
	uint64_t stops;
	/* System calls made through each lever since start. */
	uint64_t calls_boost, calls_unboost, calls_pin, calls_unpin, calls_nice,
		calls_slice, calls_idle, calls_signal;
};

/* topo is only read during loop_new(). config must outlive the loop (its
 * exempt lists and idleprio bound are read as they are). */
int loop_new(struct loop **ret, struct hwloc_topology *topo, const struct config *config,
	     const struct loop_source *src, const struct loop_levers *levers, uint64_t now);
/* Frees memory only: call loop_restore_all() first to put tasks back. */
struct loop *loop_free(struct loop *l);
/* Releases every task (loop_levers.release) and drops the loop's records. */
void loop_restore_all(struct loop *l);

/* One tick at now (CLOCK_MONOTONIC ns). Returns how long until the next
 * one should run, in ns. */
uint64_t loop_tick(struct loop *l, uint64_t now);
/* When the last tick's task reads ended: the time it decided on. */
uint64_t loop_tick_read_end_ns(const struct loop *l);

/* What a matching rule asks for a process (rules/). */
struct loop_rule {
	enum sched_class class;
	bool nice_set;
	int nice;
};

/* Events, forwarded by the daemon with the rule that matches the task, or
 * NULL. event_ns is the kernel's time of the fork or exec behind it, or 0
 * when unknown (a scan). */
/* Both return when the next tick should come at the latest (ns, as now),
 * or 0: TICK_ACTIVE_NS after the last tick for a task queued now; for new
 * work while the tick is calm, a little later each time (see pull_ns). */
uint64_t loop_task_new(struct loop *l, struct tracked_task *tt, const struct loop_rule *rule,
		       uint64_t event_ns, uint64_t now);
/* A sleeper woke and is active again: when the next tick should come, as
 * loop_task_new(). */
uint64_t loop_task_woke(struct loop *l, struct tracked_task *tt);
uint64_t loop_task_exec(struct loop *l, struct tracked_task *tt, const struct loop_rule *rule,
			uint64_t event_ns, uint64_t now);
void loop_task_exit(struct loop *l, struct tracked_task *tt);
/* waiter began to wait on a lock IDLEPRIO holder holds, or (holder NULL)
 * its wait ended: the holder runs as nice 19 normal meanwhile. When the
 * next tick should come, as loop_task_new(). */
uint64_t loop_lock_wait(struct loop *l, struct tracked_task *waiter, struct tracked_task *holder,
			uint64_t now);
/* Events were lost: no lock wait is known any more. */
void loop_locks_forget(struct loop *l);
/* The rule for process tgid, found running when muqssd started (the loop
 * adopted its threads before any rule was known): every thread takes it. */
void loop_process_matched(struct loop *l, pid_t tgid, const struct loop_rule *rule);
/* A fork at its event, before the child is read: a pin the child copied
 * from parent goes back at once. Until its read (which waits while the
 * child is mid-exec) the child is in no table, and should muqssd die
 * meanwhile, a restore knows a child's inherited pin only while the
 * parent still has it. The rest (policy, slice, nice) waits for
 * loop_task_new(). */
void loop_task_forked(struct loop *l, struct tracked_task *parent, pid_t tid, pid_t tgid,
		      uint64_t fork_ns);

/* Puts every thread of pid (or just tid when tid > 0) in class, and sets
 * its nice when nice_set. Called after authorization. On failure writes a
 * human reason into err. */
int loop_set_class(struct loop *l, pid_t pid, pid_t tid, enum sched_class class, bool nice_set,
		   int nice, char *err, size_t errlen);
/* The class muqssd holds tid in; SCHED_CLASS_RT for a task it leaves
 * alone, -ESRCH when not in the table. */
int loop_task_class(struct loop *l, pid_t tid);
/* The nice tid's owner set, for a nice the kernel shows: a hog's
 * translated nice (loop_kernel_nice()) mapped back. */
int loop_owner_nice(struct loop *l, pid_t tid, int kernel_nice);
/* Appends one object per CPU with its queue in order; cpu < 0: all. */
int loop_dump_queues(struct loop *l, int cpu, uint64_t now, cJSON *array);
/* The deadman dropped every boost, slice and pin and resumed every
 * stopped task while the loop was held up, by now: forget them, so the
 * next tick starts clean. */
void loop_boosts_dropped(struct loop *l, uint64_t now);
/* New tunables. */
int loop_set_tunables(struct loop *l, const struct config_tunables *t);
const struct loop_counters *loop_counters(const struct loop *l);
int loop_nr_cpus(const struct loop *l);

/* The core's settings for a set of tunables. */
void loop_config_from_tunables(const struct config_tunables *t, struct sched_config *c);
/* The kernel nice whose CFS weight gives MuQSS's share for nice. */
int loop_kernel_nice(int nice);
