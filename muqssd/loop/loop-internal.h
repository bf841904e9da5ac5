/* The loop's own view of the tasks, and the per-tick scratch it keeps.
 * Private to muqssd/loop/. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sched.h>
#include <sys/queue.h>

#include "loop.h"

/* The head of each CPU runs at BOOST_RUN; early-key sleepers wait at
 * BOOST_WAKE so they preempt it when they wake. The first task queued
 * behind the head waits at BOOST_QUEUED, and a sleeper whose key does
 * not beat the head's, on a CPU where hogs contend, at BOOST_NEXT: when
 * the head blocks, they run next, before the hogs, as MuQSS would pick
 * them, without a tick to see it. Armed sleepers of one CPU are ranked
 * by key within each range (sleeper.c). All are below
 * ENFORCE_DAEMON_PRIO. */
#define BOOST_NEXT ENFORCE_BOOST_PRIO_MIN
#define BOOST_NEXT_TOP (BOOST_NEXT + WAKE_BOOST_MAX - 1)
#define BOOST_QUEUED (BOOST_NEXT_TOP + 1)
#define BOOST_RUN (BOOST_QUEUED + 1)
#define BOOST_WAKE (BOOST_RUN + 1)
#define BOOST_WAKE_TOP (BOOST_WAKE + WAKE_BOOST_MAX - 1)

#define TICK_ACTIVE_NS (2ULL * 1000 * 1000)	/* the shortest */
#define TICK_BUSY_MAX_NS (10ULL * 1000 * 1000) /* while the core has work */
#define TICK_ARMED_MIN_NS (4ULL * 1000 * 1000) /* see armed_bound_ns() */
#define TICK_GATE_NS (10ULL * 1000 * 1000)	/* while an IDLEPRIO task is stopped */
/* Every wake-up of ours costs the machine a context switch: with
 * nothing for the core, look rarely. */
#define TICK_HOGS_NS (30ULL * 1000 * 1000)	/* while only the fair class has */
#define TICK_IDLE_NS (50ULL * 1000 * 1000)	/* while nothing runs */
/* While nothing is active and the sensor tells of each wakeup: a tick
 * then has nothing to read, and a wakeup or a fork pulls the next one.
 * No tick is further apart: the wake latency snapshot is the tick's. */
#define TICK_QUIET_NS (1000ULL * 1000 * 1000)
#define TICK_LATE_NS (5ULL * 1000 * 1000)	/* logged at debug level */
/* A busy tick reads what the loop acts on (tracked_task.hot); the rest,
 * whose facts only decide when it is queued, hog or IDLEPRIO gating,
 * no more often than this. Half of TICK_HOGS_NS, so the calm tick still
 * reads them all. */
#define TICK_COLD_NS (15ULL * 1000 * 1000)
/* A task a hog for HOG_SETTLED_NS, left to the kernel, is read no more
 * often than this: a read only charges it and tells whether it still
 * contends. Its sleep, or its owner's renice, is seen that much later.
 * Under TICK_HOGS_NS * 2, so the calm tick reads it every other time. */
#define TICK_HOG_READ_NS (45ULL * 1000 * 1000)
/* A tick's reads get a quarter of the time since the last tick, within
 * these bounds: any user in scope can start threads, and a tick that read
 * them all ran past the deadman's bound (and took a CPU from them). */
#define TICK_READ_SHARE 4
#define TICK_READ_MIN_NS (1ULL * 1000 * 1000)
#define TICK_READ_MAX_NS (4ULL * 1000 * 1000)
/* How long ago a task must have run to be worth a wake-up boost. Well
 * under TRACKER_IDLE_AFTER_NS: a sleeper that long quiet leaves the
 * active list, no tick visits it after, and a wait boost it still held
 * would stay until a sweep found it running. */
#define RECENT_SLEEPER_NS (500ULL * 1000 * 1000)
_Static_assert(RECENT_SLEEPER_NS + 10 * TICK_IDLE_NS <= TRACKER_IDLE_AFTER_NS,
	       "wait boosts must be dropped while the tick still visits the task");
#define WAKE_BOOST_MAX 4	/* boosted sleepers per CPU */
_Static_assert(ENFORCE_BOOST_PRIO_MIN + 2 * WAKE_BOOST_MAX + 1 <= ENFORCE_BOOST_PRIO_NORMAL_MAX,
	       "every armed rank is a boost priority");
/* ISO work within its cap runs at one priority above every boost of
 * normal work, as MuQSS runs it at ISO_PRIO: an ISO wake-up preempts
 * any normal work, boosted or not, and no ISO task preempts another.
 * Ranked like normal work, an ISO sleeper still at last tick's BOOST_RUN
 * woke level with the head picked since and waited for it, and ISO
 * threads handing work to each other preempted each other at each
 * hand-off (bench/README, the PipeWire row). */
#define BOOST_ISO (ENFORCE_BOOST_PRIO_NORMAL_MAX + 1)
_Static_assert(BOOST_WAKE_TOP == ENFORCE_BOOST_PRIO_NORMAL_MAX,
	       "normal work's boosts end where ISO's begins");
_Static_assert(BOOST_ISO <= ENFORCE_BOOST_PRIO_MAX, "ISO's boost is a boost priority");
/* How long a task must have been a hog before it makes contention that
 * the loop acts on. Threads that hand work to each other (hackbench) are
 * hogs for a moment now and then, and queueing and boosting everything
 * around them for that moment costs more than it gains. */
#define HOG_SETTLED_NS (50ULL * 1000 * 1000)
/* A hog that has blocked at most this often in its life (the kernel
 * counts from its fork; an exec's migration is one) is CPU-bound from
 * birth, and settled at once: the wait above is for threads that hand
 * work to each other, which block thousands of times a second. */
#define HOG_BORN_NVCSW 4
/* ... and such a task is a hog once it has run this long. */
#define HOG_BORN_CPU_NS (2ULL * 1000 * 1000)
/* Until then it is read at every tick, and one still runnable this long
 * after we met it brings the tick to TICK_ACTIVE_NS, so hogs started
 * beside a frame task are found before its first frame is due (a
 * configure script's short processes are gone sooner). Not past
 * HOG_SETTLED_NS: one that waits that long for a CPU waits in a crowd. */
#define HOG_BORN_WATCH_NS TICK_ACTIVE_NS
/* A swarm: more than SWARM_PER_CPU normal tasks per CPU that are no
 * hogs ran within SWARM_WINDOW_NS, or wait for their first run
 * (hackbench, a parallel build's shells, a thread pool). The kernel
 * orders so many equals as well as the core would, and a pin and a
 * boost for each would cost more than any of them gains: normal work is
 * left to the kernel (ISO keeps its edge), and the tick slows to
 * TICK_SWARM_NS. */
#define SWARM_PER_CPU 16
#define SWARM_WINDOW_NS (50ULL * 1000 * 1000)
#define TICK_SWARM_NS (200ULL * 1000 * 1000)
#define CONTEND_NONE (-2)
#define CONTEND_FLOAT (-1)
/* A chatty group (chatty.c) is judged over windows this long. */
#define CHATTY_WINDOW_NS (50ULL * 1000 * 1000)
/* No pin this soon after an exec: launchers (taskset, numactl) set their
 * own mask right after theirs, and an owner's mask equal to our pin
 * cannot be told from it, so it would be lost at the unpin. */
#define PIN_SETTLE_NS (20ULL * 1000 * 1000)
/* PF_FORKNOEXEC in tracked_task.flags: forked, has not exec'd since. */
#define TASK_FLAG_FORKNOEXEC 0x00000040u
/* Longest we expect a fork to take from copying the parent's mask to
 * sending its event (a large process's page tables, under load). */
#define FORK_COPY_NS (100ULL * 1000 * 1000)

struct managed_task {
	struct sched_task st;
	struct tracked_task *tt;
	struct enforce_target target;
	LIST_ENTRY(managed_task) idle_link; /* IDLEPRIO main threads */
	uint64_t seen_cpu_ns;
	uint32_t seen_nvcsw;	/* the source's count of its blocking switches */
	uint64_t last_ran_ns;
	uint64_t hog_since_ns;
	uint64_t stopped_since_ns;
	uint64_t cont_until_ns;	/* IDLEPRIO: not stopped again before this */
	uint64_t settle_until_ns; /* not pinned before this (PIN_SETTLE_NS) */
	uint64_t unpinned_ns;	/* our last unpin: children forked before carry the pin */
	uint64_t met_ns;	/* its exec, or when we adopted it */
	/* chatty.c: its counters as last read there; and, in a process's
	 * main thread, its group's window: since when, and how long its
	 * members ran or waited to run in it. */
	uint64_t seen_wait_ns;
	uint64_t group_from_ns, group_stamp_ns, group_ns;
	uint32_t chatty_nvcsw, seen_sib_wakes;
	int pinned_cpu;		/* logical CPU we pinned it to, or -1 */
	int arm_cpu;		/* this tick: the CPU it would wait boosted on */
	pid_t lock_holder;	/* the IDLEPRIO thread whose lock it waits on, or 0 */
	/* Small fields last, packed: there is one of these per thread in
	 * scope, 10,000 on a busy desktop. */
	uint8_t boost_prio;	/* 0 when not boosted, else 1..99 */
	uint8_t arm_prio;	/* this tick: BOOST_WAKE or BOOST_NEXT */
	int8_t kernel_nice;	/* the nice we set for a hog, or NICE_UNSET */
	int8_t seen_policy;	/* the last normal policy read or set (not our boost) */
	/* Where it counted as a settled hog, this tick and the last:
	 * CONTEND_NONE, CONTEND_FLOAT or the one CPU it may use. A task
	 * never contends with itself. */
	int16_t contend_cpu, contend_prev;
	uint16_t lock_waiters;	/* IDLEPRIO: threads waiting on a lock it holds */
	bool exempt;		/* never touched: RT by others, config exemption */
	bool adopted;		/* st is initialised */
	bool slice_set;
	bool hog;		/* used its last slice without sleeping */
	bool group_hog;		/* a hog as a member of a busy chatty group */
	bool chatty;		/* woken mostly by its own process's threads */
	bool group_busy;	/* main thread: its chatty group left no rest */
	bool slept;		/* seen asleep since its slice began */
	bool sliced;		/* a slice of it has run out since we met it */
	bool idle_policy;
	bool stopped;
	bool on_idle_list;
};

struct loop {
	struct sched *core;
	struct loop_source src;
	struct loop_levers lv;
	const struct config *config;
	struct loop_counters counters;
	uint64_t tick_ns;
	uint64_t last_tick_ns;
	/* How soon after the last tick new work brings the next one: doubled
	 * by each calm tick that new work pulled (nothing for the core to
	 * order), up to TICK_HOGS_NS, so a stream of short processes does
	 * not pull a tick each, even when each is gone by the tick it pulled;
	 * back to TICK_ACTIVE_NS after a tick with no new work, or a busy one. */
	uint64_t pull_ns;
	bool new_work;		/* something pulled the tick since the last one */
	uint64_t iso_carry_ns;
	int nr_cpus;
	bool *resched;		/* per CPU, this tick */
	unsigned *hogs;		/* per CPU: runnable hogs seen there this tick */
	unsigned *pinned_hogs;	/* per CPU: runnable hogs allowed only there */
	unsigned float_hogs;	/* runnable hogs allowed on several CPUs */
	/* The same two for settled hogs only (HOG_SETTLED_NS): counted
	 * this tick, and as the last tick left them, which is what the loop
	 * acts on (contention.c). */
	unsigned *settled_pinned, *contend_pinned;
	unsigned settled_float, contend_float;
	uint64_t next_settle_ns;	/* this tick: when the next hog settles, or 0 */
	bool born_pending;	/* this tick: a task may turn out a hog from birth */
	unsigned recent_sleepers;	/* this tick, with the never run: for the swarm test */
	bool swarm;			/* as the last tick found */
	uint64_t swarm_thin_since_ns;	/* a swarm's count low since, or 0 */
	unsigned *wake_boosts;	/* per CPU: sleepers waiting boosted this tick */
	int *os_to_cpu;		/* OS CPU number -> logical CPU */
	int nr_os_cpus;
	bool any_d_state;	/* a managed task sat in D this tick */
	unsigned lock_waits;	/* threads waiting on an IDLEPRIO thread's lock */
	bool reboost;		/* the deadman dropped our boosts: pick again */
	struct managed_task **armable; /* this tick: sleepers worth a wake boost */
	size_t nr_armable, armable_cap;
	uint64_t armed_slice_ns;	/* this tick: least slice left among them */
	LIST_HEAD(, managed_task) idleprio; /* gated every tick, even asleep */
	bool gated;		/* an IDLEPRIO task was stopped at the last tick */
};

/* account.c: each active task's reading taken in, at each tick. */
void account_tasks(struct loop *l);
/* Queues a runnable task in the core between ticks (no system call):
 * the next tick pins and boosts it. Returns whether it was queued. */
bool loop_queue_now(struct loop *l, struct managed_task *m, uint64_t now);

/* hog.c: hog classification. */
/* Classifies m after its charge (expired: a slice of it ran out). */
void hog_classify(struct loop *l, struct managed_task *m, bool expired, bool runnable,
		  uint64_t now);
/* A member of a busy chatty group is a hog while it lasts; after, the
 * rules of hog_classify() take it back. */
void hog_group(struct loop *l, struct managed_task *m, bool on, uint64_t now);
/* chatty.c: takes in m's wake-ups and CPU at a tick; returns whether it
 * belongs to a busy chatty group. */
bool chatty_account(struct loop *l, struct managed_task *m, uint64_t cpu_delta, uint64_t now);
/* Its owner reniced it: a hog's kernel nice follows. */
void hog_renice(struct loop *l, struct managed_task *m, uint64_t now);
/* Normal work that may turn out a hog from birth: the loop watches it. */
bool hog_born_candidate(const struct managed_task *m);
/* A hog that contends: one for HOG_SETTLED_NS, or CPU-bound from birth. */
bool hog_settled(const struct managed_task *m, uint64_t now);
/* Our EEVDF slice request for settled hogs, the kernel's for the rest. */
void hog_ask_slice(struct loop *l, struct managed_task *m, bool settled);

/* contention.c: where settled hogs contend, as the last tick counted. */
/* Counts runnable hog m for this tick. */
void contention_count(struct loop *l, struct managed_task *m, bool settled);
/* A settled hog other than m may hold cpu. */
bool contention_on(const struct loop *l, const struct managed_task *m, int cpu);
/* Whether the core should queue m when it runs. */
bool contention_worth_queueing(const struct loop *l, const struct managed_task *m);
/* Settled hogs this tick where the last tick counted none. */
bool contention_starts(const struct loop *l);
/* Swarm or not, from this tick's recent sleepers (SWARM_PER_CPU). */
void contention_swarm(struct loop *l);

/* sleeper.c: sleepers armed with a wake-up boost. */
/* foreach_active callback: marks how often to read each task, and
 * collects the sleepers worth a wake-up boost; unboosts the rest. */
void sleeper_collect(struct tracked_task *tt, void *userdata);
/* Pins and boosts the collected sleepers, a bounded number per CPU. */
void sleeper_arm(struct loop *l);

/* idleprio_gate.c: stops or resumes each IDLEPRIO process; sets l->gated. */
void idleprio_gate(struct loop *l);

/* lock_holder.c: IDLEPRIO threads others wait on, promoted meanwhile. */
/* Promotes or demotes IDLEPRIO m: D state, or a lock others wait on. */
void lock_holder_update(struct loop *l, struct managed_task *m);
/* waiter's lock wait ended (or it is leaving): its holder may demote. */
void lock_waiter_done(struct loop *l, struct managed_task *waiter);

/* cadence.c: when the next tick comes. */
/* How many sleepers this tick's sweep reads. */
unsigned cadence_sweep_budget(const struct loop *l);
/* How long this tick's reads may take, dt after the last tick. */
uint64_t cadence_read_max_ns(uint64_t dt);
/* Sets and returns l->tick_ns (and l->pull_ns) after a tick. */
uint64_t cadence_next(struct loop *l, uint64_t now, bool core_busy, bool hogs,
		      uint64_t queued_slice_ns);
/* When new work m brings the next tick, or 0: no sooner than planned. */
uint64_t cadence_pull(struct loop *l, const struct managed_task *m);

/* levers.c: the levers for one task, with their failures logged once. */
void managed_boost(struct loop *l, struct managed_task *m, int prio);
void managed_unboost(struct loop *l, struct managed_task *m);
/* 0 (also when too young to pin: PIN_SETTLE_NS), or -errno; -EINVAL
 * when its owner no longer allows cpu, and m->st.allowed is refreshed. */
int managed_pin(struct loop *l, struct managed_task *m, int cpu, uint64_t now);
/* Pins m to cpu, or, when its owner no longer allows cpu, takes it off
 * the core (false): the next tick queues it anew on its owner's mask. */
bool managed_pin_or_drop(struct loop *l, struct managed_task *m, int cpu, uint64_t now);
/* m->st.allowed from what its owner allows. */
void managed_read_allowed(struct loop *l, struct managed_task *m);
void managed_unpin(struct loop *l, struct managed_task *m, uint64_t now);
void managed_cont(struct loop *l, struct managed_task *m);
int managed_set_nice(struct loop *l, struct managed_task *m, int nice);
/* Its owner's renice or chrt becomes what goes back at the end. */
void managed_rebase(struct loop *l, struct managed_task *m);
/* managed.c: class change with its kernel side (SCHED_IDLE, SIGCONT). */
void managed_set_class(struct loop *l, struct managed_task *m, enum sched_class class);

/* The EEVDF slice we ask for: the kernel's own rr_interval. */
static inline uint64_t rr_slice_ns(const struct loop *l)
{
	return (uint64_t)sched_get_config(l->core)->rr_interval_ms * 1000000ULL;
}

/* The task as the levers name it, with the source's open /proc file of it
 * as proof of identity: the enforcer then reads no stat, which waits on a
 * task mid-exec. */
static inline const struct enforce_target *target_of(struct managed_task *m)
{
	m->target.has_proof = m->tt->status_fd >= 0;
	m->target.proof_fd = m->tt->status_fd;
	return &m->target;
}

static inline struct managed_task *managed_of(const struct sched_task *st)
{
	return st ? (struct managed_task *)st->data : NULL;
}

/* The main thread of m's process, where process-wide state lives (a
 * stop, a chatty group's window), or NULL when the loop holds none. */
static inline struct managed_task *managed_leader(struct loop *l, struct managed_task *m)
{
	struct tracked_task *lt;

	if (m->tt->tid == m->tt->tgid)
		return m;
	lt = l->src.ops->lookup(l->src.ctx, m->tt->tgid);
	return lt && lt->tgid == m->tt->tgid ? lt->sched_data : NULL;
}

/* The logical CPU a task is on as far as the loop knows: where the core
 * runs or queues it, or last did. The tracker's last CPU is as old as the
 * task's exec: the tick reads no stat, which waits on a task mid-exec. */
static inline int task_cpu(const struct loop *l, const struct managed_task *m)
{
	int cpu = m->st.running || m->st.queued ? m->st.cpu : m->st.last_cpu;

	return cpu >= 0 && cpu < l->nr_cpus ? cpu : 0;
}

/* ISO within its cap on its CPU, which keeps its class's edge over
 * normal work. */
static inline bool iso_within_cap(const struct loop *l, const struct managed_task *m)
{
	return m->st.class == SCHED_CLASS_ISO && !sched_iso_refractory(l->core, task_cpu(l, m));
}

static inline uint64_t slice_left(const struct sched_task *st)
{
	return st->dl.slice_ns > 0 ? (uint64_t)st->dl.slice_ns : 0;
}
