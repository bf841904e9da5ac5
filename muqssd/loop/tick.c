/* One tick of the live loop: measure, charge, pick, boost. */
#include "loop-internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "sched_attr.h"

/* CFS's weight for each nice level (kernel/sched/core.c), index nice + 20. */
static const unsigned cfs_weight[40] = {
	88761, 71755, 56483, 46273, 36291, 29154, 23254, 18705, 14949, 11916,
	9548, 7620, 6100, 4904, 3906, 3121, 2501, 1991, 1586, 1277,
	1024, 820, 655, 526, 423, 335, 272, 215, 172, 137,
	110, 87, 70, 56, 45, 36, 29, 23, 18, 15,
};

/* The kernel nice whose CFS weight gives a hog MuQSS's share: under
 * MuQSS, share goes with 1 / prio_ratio^2, so the weight we want is
 * 1024 * (ratio(0) / ratio(nice))^2. */
int loop_kernel_nice(int nice)
{
	double r = (double)deadline_prio_ratio(0) / (double)deadline_prio_ratio(nice);
	double want = 1024.0 * r * r, best = 1e18;
	int pick = 0;

	for (int i = 0; i < 40; i++) {
		double diff = want > cfs_weight[i] ? want - cfs_weight[i] : cfs_weight[i] - want;

		if (diff < best) {
			best = diff;
			pick = i - 20;
		}
	}
	return pick;
}

static void become_hog(struct loop *l, struct managed_task *m, bool hog, uint64_t now)
{
	int want;

	m->hog = hog;
	log_debug("hog %d: %s", (int)m->target.tid, hog ? "yes" : "no");
	if (hog) {
		m->hog_since_ns = now;
		sched_dequeue(l->core, &m->st);
		managed_unboost(l, m);
		managed_unpin(l, m, now);
	}
	want = hog && m->st.nice != 0 ? loop_kernel_nice(m->st.nice) : m->st.nice;
	if (want == (m->kernel_nice == NICE_UNSET ? m->st.nice : m->kernel_nice))
		return;
	if (managed_set_nice(l, m, want) == 0)
		m->kernel_nice = want == m->st.nice ? NICE_UNSET : want;
}

/* Runnable, never seen blocking since its birth (HOG_BORN_NVCSW), and no
 * slice of it has run out since we met it: it may be CPU-bound from
 * birth, and is a hog once it has run HOG_BORN_CPU_NS. */
static bool born_unsliced(const struct managed_task *m)
{
	return !m->sliced && !m->slept && m->tt->state == 'R' && m->tt->nvcsw <= HOG_BORN_NVCSW;
}

/* ... and normal work not counted a hog yet: the one the loop watches. */
static bool born_candidate(const struct managed_task *m)
{
	return born_unsliced(m) && !m->hog &&
	       (m->st.class == SCHED_CLASS_NORMAL || m->st.class == SCHED_CLASS_BATCH);
}

/* A hog that contends: one for HOG_SETTLED_NS, or CPU-bound from birth. */
static bool hog_settled(const struct managed_task *m, uint64_t now)
{
	return m->hog && (now - m->hog_since_ns >= HOG_SETTLED_NS || m->tt->nvcsw <= HOG_BORN_NVCSW);
}

/* Pins m to cpu, or, when its owner no longer allows cpu, takes it off
 * the core: the next tick queues it anew on its owner's mask. */
static bool pin_or_drop(struct loop *l, struct managed_task *m, int cpu, uint64_t now)
{
	if (managed_pin(l, m, cpu, now) != -EINVAL)
		return true;
	if (m->st.running)
		l->resched[cpu] = true;
	sched_dequeue(l->core, &m->st);
	return false;
}

/* The logical CPU a task is on as far as the loop knows: where the core
 * runs or queues it, or last did. The tracker's last CPU is as old as the
 * task's exec: the tick reads no stat, which waits on a task mid-exec. */
static int task_cpu(const struct loop *l, const struct managed_task *m)
{
	int cpu = m->st.running || m->st.queued ? m->st.cpu : m->st.last_cpu;

	return cpu >= 0 && cpu < l->nr_cpus ? cpu : 0;
}

/* The one CPU a task may use, or -1 if it may use several (or none). */
static int only_cpu(const struct loop *l, const struct sched_task *st)
{
	int only = -1;

	for (int cpu = 0; cpu < l->nr_cpus; cpu++) {
		if (!sched_task_allows(st, cpu))
			continue;
		if (only >= 0)
			return -1;
		only = cpu;
	}
	return only;
}

/* Settled hogs other than m itself, as the last tick counted them:
 * allowed on several CPUs, or on cpu alone. */
static bool float_hog_besides(const struct loop *l, const struct managed_task *m)
{
	return l->contend_float > (m->contend_prev == CONTEND_FLOAT);
}

static bool pinned_hog_besides(const struct loop *l, const struct managed_task *m, int cpu)
{
	return l->contend_pinned[cpu] > (m->contend_prev == cpu);
}

/* True if a settled hog may hold a CPU m may use (as the last tick saw
 * them). Only
 * then does the kernel keep a waking normal task waiting behind work
 * MuQSS would put after it: among sleepers alone, EEVDF with our slice
 * orders them as well as the core would, and a pin and a boost would
 * only cost (FIFO between threads that hand work to each other
 * serialises them; a pin keeps a thread off an idle CPU). */
static bool contended_for(const struct loop *l, const struct managed_task *m)
{
	if (l->swarm)
		return false;
	if (float_hog_besides(l, m))
		return true;
	for (int cpu = 0; cpu < l->nr_cpus; cpu++)
		if (pinned_hog_besides(l, m, cpu) && sched_task_allows(&m->st, cpu))
			return true;
	return false;
}

/* Whether the core should queue m now it runs. ISO must beat normal work
 * and IDLEPRIO must yield to it whatever the load; normal and batch
 * work only where a hog contends with it. */
static bool worth_queueing(const struct loop *l, const struct managed_task *m)
{
	return (m->st.class != SCHED_CLASS_NORMAL && m->st.class != SCHED_CLASS_BATCH) ||
	       contended_for(l, m);
}

/* Hands m back to the kernel: off the core, unboosted, unpinned. */
static void release_to_kernel(struct loop *l, struct managed_task *m, uint64_t now)
{
	if (m->st.running)
		l->resched[m->st.cpu] = true;
	if (m->st.queued || m->st.running)
		sched_dequeue(l->core, &m->st);
	managed_unboost(l, m);
	managed_unpin(l, m, now);
}

/* Someone else changed the task's policy (chrt): the new one is its base;
 * its class follows it: SCHED_BATCH is MuQSS's batch class, SCHED_OTHER
 * takes a batch or IDLEPRIO task back to normal (SCHED_IDLE becomes
 * IDLEPRIO, below). Our boost never gets here: it reads realtime. */
static void owner_policy(struct loop *l, struct managed_task *m, int policy)
{
	m->seen_policy = (int8_t)policy;
	managed_rebase(l, m);
	if (policy == SCHED_BATCH && (m->st.class == SCHED_CLASS_NORMAL || m->idle_policy))
		managed_set_class(l, m, SCHED_CLASS_BATCH);
	else if (policy == SCHED_OTHER && (m->st.class == SCHED_CLASS_BATCH || m->idle_policy))
		managed_set_class(l, m, SCHED_CLASS_NORMAL);
}

/* Brings the core's view of one task up to date with what the tracker
 * just read: charge the CPU it used, queue it if it woke, dequeue it if it
 * sleeps, and move it between the queues and the hogs. */
static void account_task(struct tracked_task *tt, void *userdata)
{
	struct loop *l = userdata;
	struct managed_task *m = tt->sched_data;
	const struct sched_config *cfg = sched_get_config(l->core);
	uint64_t now = l->last_tick_ns, delta;
	bool runnable, settled, expired = false;

	if (!m || m->exempt || !m->adopted)
		return;
	m->contend_prev = m->contend_cpu;
	m->contend_cpu = CONTEND_NONE;
	/* What it does now is unknown (see tracked_task.stale): pinned or
	 * boosted on stale facts it could hold a CPU, or wait behind one,
	 * for as long. It gets neither until it reads again. */
	if (tt->stale) {
		if (m->st.running)
			l->resched[m->st.cpu] = true;
		if (m->st.queued || m->st.running)
			sched_dequeue(l->core, &m->st);
		managed_unboost(l, m);
		return;
	}
	/* Its owner may renice it (nice, renice) or change its policy
	 * (chrt, schedtool) under us: what they set is its new base. */
	if (tt->nice != (m->kernel_nice == NICE_UNSET ? m->st.nice : m->kernel_nice)) {
		sched_set_nice(l->core, &m->st, tt->nice);
		m->kernel_nice = NICE_UNSET;
		managed_rebase(l, m);
		if (m->hog)
			become_hog(l, m, true, now);
	}
	if (tt->policy != m->seen_policy && !sched_policy_is_rt(tt->policy))
		owner_policy(l, m, tt->policy);
	if (tt->policy == SCHED_IDLE && !m->idle_policy && m->st.class != SCHED_CLASS_IDLEPRIO)
		managed_set_class(l, m, SCHED_CLASS_IDLEPRIO);
	delta = tt->cpu_ns > m->seen_cpu_ns ? tt->cpu_ns - m->seen_cpu_ns : 0;
	m->seen_cpu_ns = tt->cpu_ns;
	if (delta)
		m->last_ran_ns = now;
	if (tt->state == 'D' && m->st.class != SCHED_CLASS_IDLEPRIO)
		l->any_d_state = true;
	/* As MuQSS does: IDLEPRIO work that may hold what others wait for
	 * (uninterruptible sleep) is keyed as nice 19 normal, and boosted
	 * like it when picked, until it lets go. */
	if (m->st.class == SCHED_CLASS_IDLEPRIO && (tt->state == 'D') != m->st.idle_promoted)
		sched_set_idle_promoted(l->core, &m->st, tt->state == 'D');
	runnable = tt->state == 'R';
	/* A hog is a task that used its slice without sleeping. A busy
	 * worker that blocks between requests is found R at every tick;
	 * only its voluntary switches tell that it slept. */
	if (!runnable || tt->nvcsw != m->seen_nvcsw)
		m->slept = true;
	m->seen_nvcsw = tt->nvcsw;
	if (m->st.running) {
		int cpu = m->st.cpu;

		if (delta && sched_charge(l->core, cpu, delta, now) > 0) {
			l->resched[cpu] = true;
			expired = true;
		}
		if (!runnable) {
			sched_dequeue(l->core, &m->st);
			l->resched[cpu] = true;
		}
	} else if (delta) {
		/* It ran outside the core's choice: it pays all the same. */
		expired = deadline_charge(&m->st.dl, delta, m->st.nice, cfg->rr_interval_ms, now);
		if (expired && m->st.queued) {
			int cpu = m->st.cpu;

			sched_dequeue(l->core, &m->st);
			(void)sched_enqueue(l->core, &m->st, cpu, now);
		}
	}
	/* CPU-bound from birth, it is a hog before its first slice runs out:
	 * eight such tasks on two CPUs take 30 ms to use 6 ms each, and a
	 * frame task started with them met them in the fair class meanwhile
	 * (its first frame late). */
	if (!expired && born_unsliced(m) && tt->cpu_ns >= HOG_BORN_CPU_NS)
		expired = true;
	if (expired) {
		m->sliced = true;
		/* ISO and IDLEPRIO keep their class's rules; only normal work
		 * can be a hog, and ISO work over its cap. Asked of the cap,
		 * not of the key: a hog's key is not rekeyed when the cap
		 * clears, and a hog charged on every tick would stay one. */
		bool iso_capped = m->st.class == SCHED_CLASS_ISO &&
				  sched_iso_refractory(l->core, task_cpu(l, m));
		bool hog = !m->slept && runnable && m->st.class != SCHED_CLASS_IDLEPRIO &&
			   m->st.class != SCHED_CLASS_RT &&
			   (m->st.class != SCHED_CLASS_ISO || iso_capped);
		m->slept = false;
		if (hog != m->hog)
			become_hog(l, m, hog, now);
	} else if (m->hog && (!runnable || (m->st.class == SCHED_CLASS_ISO &&
					     !sched_iso_refractory(l->core, task_cpu(l, m))))) {
		/* It slept, or it is ISO again now the cap has cleared. */
		become_hog(l, m, false, now);
	}
	if (born_candidate(m) && now - m->met_ns >= HOG_BORN_WATCH_NS &&
	    now - m->met_ns < HOG_SETTLED_NS)
		l->born_pending = true;
	/* EEVDF's slice request is the kernel's own rr_interval: ours, for
	 * settled hogs only, as MuQSS's rr_interval is how long a task that
	 * does not sleep runs before its equals get their turn. A sleeper
	 * keeps the kernel's shorter default: EEVDF gives a longer request a
	 * later deadline, so ours made every wake-up of a request/response
	 * worker wait longer (p99 1.25 times stock's, with no hog in sight).
	 * So a hog for a moment (a worker whose futex waits returned at once)
	 * gets none, and a hog that sleeps gives it back. */
	settled = hog_settled(m, now);
	if (settled != m->slice_set && l->lv.ops->slice_supported(l->lv.ctx)) {
		l->counters.calls_slice++;
		(void)l->lv.ops->set_slice(l->lv.ctx, target_of(m), settled ? rr_slice_ns(l) : 0);
		m->slice_set = settled;
	}

	if (m->hog) {
		if (runnable) {
			int only = only_cpu(l, &m->st);


			if (!settled && (!l->next_settle_ns ||
					 m->hog_since_ns + HOG_SETTLED_NS < l->next_settle_ns))
				l->next_settle_ns = m->hog_since_ns + HOG_SETTLED_NS;
			l->hogs[task_cpu(l, m)]++;
			if (only >= 0) {
				l->pinned_hogs[only]++;
				l->settled_pinned[only] += settled;
			} else {
				l->float_hogs++;
				l->settled_float += settled;
			}
			if (settled)
				m->contend_cpu = (int16_t)(only >= 0 ? only : CONTEND_FLOAT);
		}
		return;
	}
	if ((m->st.class == SCHED_CLASS_NORMAL || m->st.class == SCHED_CLASS_BATCH) &&
	    now - m->last_ran_ns < SWARM_WINDOW_NS)
		l->recent_sleepers++;
	if (!worth_queueing(l, m)) {
		/* Left to the kernel; what we pinned or boosted under
		 * contention goes back once it is over. */
		if (m->st.queued || m->st.running || m->boost_prio || m->pinned_cpu >= 0)
			release_to_kernel(l, m, now);
	} else if (runnable && !m->st.queued && !m->st.running) {
		int preempt = -1, cpu;

		cpu = sched_wake(l->core, &m->st, now, &preempt);
		if (cpu >= 0 && pin_or_drop(l, m, cpu, now) && preempt >= 0)
			l->resched[preempt] = true;
	} else if (runnable && (m->st.queued || m->st.running) && m->pinned_cpu != m->st.cpu) {
		/* Queued at its exec, between ticks (loop_queue_now), or
		 * picked while it was too young to pin (PIN_SETTLE_NS). */
		(void)pin_or_drop(l, m, m->st.cpu, now);
	} else if (!runnable && m->st.queued) {
		sched_dequeue(l->core, &m->st);
	}
}

bool loop_queue_now(struct loop *l, struct managed_task *m, uint64_t now)
{
	int preempt;

	/* Only what each tick reads (the active list) may be in the core:
	 * nothing else would ever be charged or demoted. */
	if (!m->adopted || m->exempt || m->hog || m->st.queued || m->st.running ||
	    m->tt->state != 'R' || !m->tt->active || m->tt->stale || !worth_queueing(l, m))
		return false;
	return sched_wake(l->core, &m->st, now, &preempt) >= 0;
}

/* Makes the kernel run what the core picked on cpu. */
static void switch_cpu(struct loop *l, int cpu, uint64_t now)
{
	struct managed_task *prev = managed_of(sched_running(l->core, cpu)), *next;

	next = managed_of(sched_pick_next(l->core, cpu, now));
	log_debug("cpu %d: %d -> %d", cpu, prev ? (int)prev->target.tid : 0,
		  next ? (int)next->target.tid : 0);
	if (prev && prev != next)
		managed_unboost(l, prev);
	if (!next)
		return;
	if (!pin_or_drop(l, next, cpu, now))
		return;
	/* IDLEPRIO work runs SCHED_IDLE; the kernel already prefers anything
	 * else, so it needs no boost, only to be let run. */
	if (next->st.class == SCHED_CLASS_IDLEPRIO && !next->st.idle_promoted)
		managed_unboost(l, next);
	else
		managed_boost(l, next, BOOST_RUN);
}

/* Where a sleeper would wake: where we pinned it, else where it last
 * ran if its owner still allows that (a task the kernel ran knows its
 * CPU only from its exec), else its first allowed CPU. */
static int wait_cpu(const struct loop *l, const struct managed_task *m)
{
	if (m->pinned_cpu >= 0)
		return m->pinned_cpu;
	if (m->st.last_cpu >= 0 && m->st.last_cpu < l->nr_cpus &&
	    sched_task_allows(&m->st, m->st.last_cpu))
		return m->st.last_cpu;
	for (int cpu = 0; cpu < l->nr_cpus; cpu++)
		if (sched_task_allows(&m->st, cpu))
			return cpu;
	return -1;
}

/* Whether m, woken on cpu, should run before what runs there: a worse
 * key, or, with nothing of the core's there, normal work that ISO beats
 * whatever it is, or only settled hogs (any wake-up beats a task that
 * used up its slice). */
static bool wake_beats(const struct loop *l, const struct managed_task *m, int cpu)
{
	struct sched_task *curr = sched_running(l->core, cpu);

	if (curr)
		return m->st.key < curr->key;
	if (m->st.class == SCHED_CLASS_ISO && !sched_iso_refractory(l->core, cpu))
		return true;
	return pinned_hog_besides(l, m, cpu) || float_hog_besides(l, m);
}

/* Collects the sleepers worth a wake-up boost: recently active ones
 * whose key beats what their CPU runs (or whose CPU runs only hogs, as
 * any wake-up beats a task that used up its slice). The rest, and hogs,
 * are unboosted. */
static void collect_sleeper(struct tracked_task *tt, void *userdata)
{
	struct loop *l = userdata;
	struct managed_task *m = tt->sched_data;
	bool long_asleep;
	int cpu;

	tt->slow = false;
	tt->watch = false;
	if (!m || m->exempt || !m->adopted)
		return;
	/* What the loop acts on is read at every tick, as is a task that
	 * may be a hog from birth; the rest, which at most gets queued when
	 * it wakes, every TICK_COLD_NS. A pin alone does not make a sleeper
	 * hot: under a compile, the drivers the core placed at their exec
	 * then slept a second each in wait(), pinned, and were two thirds of
	 * every tick's reads. */
	tt->hot = m->st.running || m->st.queued || m->boost_prio || m->stopped || born_candidate(m);
	/* A task a hog for HOG_SETTLED_NS can wait TICK_HOG_READ_NS for its
	 * reads (not one born a hog: that may be a frame task loading).
	 * Not while an IDLEPRIO task is stopped: a hog's sleep frees the
	 * CPU it waits for. */
	tt->slow = m->hog && !tt->hot && l->last_tick_ns - m->hog_since_ns >= HOG_SETTLED_NS &&
		   !l->gated;
	if (m->st.running || m->st.queued)
		return;
	/* A pin placed the task in the core's queue. One that has slept
	 * long enough to lose its wake-up boost goes back to its owner's
	 * mask, which lets it wake on a free CPU as on a stock kernel; it
	 * wakes seldom, so the unpin is paid once a long sleep. */
	long_asleep = l->last_tick_ns - m->last_ran_ns >= RECENT_SLEEPER_NS;
	if (m->pinned_cpu >= 0 && tt->state == 'S' && !m->stopped && long_asleep)
		managed_unpin(l, m, l->last_tick_ns);
	cpu = wait_cpu(l, m);
	if (m->hog || tt->stale || tt->state == 'R' || cpu < 0 || m->st.class == SCHED_CLASS_IDLEPRIO ||
	    !worth_queueing(l, m) || long_asleep ||
	    m->st.dl.slice_ns <= DEADLINE_RESCHED_NS) {
		managed_unboost(l, m);
		return;
	}
	if (wake_beats(l, m, cpu))
		m->arm_prio = BOOST_WAKE;
	else if (sched_running(l->core, cpu))
		m->arm_prio = BOOST_NEXT; /* behind the head, before the hogs */
	else {
		managed_unboost(l, m);
		return;
	}
	if (l->nr_armable == l->armable_cap) {
		size_t cap = l->armable_cap ? 2 * l->armable_cap : 64;
		struct managed_task **a = realloc(l->armable, cap * sizeof(*a));

		if (!a) {
			managed_unboost(l, m);
			return;
		}
		l->armable = a;
		l->armable_cap = cap;
	}
	m->arm_cpu = cpu;
	l->armable[l->nr_armable++] = m;
	tt->hot = true;
}

static uint64_t slice_left(const struct sched_task *st)
{
	return st->dl.slice_ns > 0 ? (uint64_t)st->dl.slice_ns : 0;
}

static int by_last_ran(const void *a, const void *b)
{
	const struct managed_task *x = *(struct managed_task *const *)a;
	const struct managed_task *y = *(struct managed_task *const *)b;

	return x->last_ran_ns < y->last_ran_ns ? 1 : x->last_ran_ns > y->last_ran_ns ? -1 : 0;
}

/* Armed sleepers by CPU and by how they are armed, each such group by
 * key, earliest first. */
static int by_arm_group(const void *a, const void *b)
{
	const struct managed_task *x = *(struct managed_task *const *)a;
	const struct managed_task *y = *(struct managed_task *const *)b;

	if (x->arm_cpu != y->arm_cpu)
		return x->arm_cpu < y->arm_cpu ? -1 : 1;
	if (x->arm_prio != y->arm_prio)
		return x->arm_prio < y->arm_prio ? -1 : 1;
	if (x->st.key != y->st.key)
		return x->st.key < y->st.key ? -1 : 1;
	return x->tt->tid < y->tt->tid ? -1 : x->tt->tid > y->tt->tid;
}

/* Boosts the n armed sleepers, each at its rank by key among those armed
 * the same way on its CPU, the earliest key highest, from the top of
 * BOOST_WAKE's range (it beats the head) or BOOST_NEXT's (it runs when the
 * head blocks). Two sleepers armed at one priority ran in the order they
 * woke: a storm's shell that woke first held the frame task behind it for
 * its whole burst, where MuQSS lets a waking task with the earlier
 * deadline preempt. */
static void boost_armed(struct loop *l, size_t n)
{
	int rank = 0;

	if (n > 1) /* armable is NULL until the first one */
		qsort(l->armable, n, sizeof(*l->armable), by_arm_group);
	for (size_t i = 0; i < n; i++) {
		struct managed_task *m = l->armable[i];
		const struct managed_task *prev = i > 0 ? l->armable[i - 1] : NULL;

		if (prev && prev->arm_cpu == m->arm_cpu && prev->arm_prio == m->arm_prio)
			rank++;
		else
			rank = 0;
		managed_boost(l, m, (m->arm_prio == BOOST_WAKE ? BOOST_WAKE_TOP : BOOST_NEXT_TOP) - rank);
	}
}

/* How soon after this tick an armed sleeper may have used up its slice:
 * its slice left, but no sooner than TICK_ARMED_MIN_NS. It may not wake
 * at all, and one with 1 ms left held the tick at 2 ms for as long as it
 * slept (465 ticks a second, 8% of a CPU for us under a compile); one
 * that wakes may overrun its slice by that much before it is demoted. */
static uint64_t armed_bound_ns(const struct managed_task *m)
{
	uint64_t left = slice_left(&m->st);

	return left > TICK_ARMED_MIN_NS ? left : TICK_ARMED_MIN_NS;
}

/* A bounded number per CPU wait boosted: many boosted sleepers waking
 * together would hold the CPU in SCHED_FIFO past what the tick can
 * correct. The ones that ran last are the likeliest to wake next (a
 * frame loop, not a shell waiting for its child), so they go first. */
static void arm_sleepers(struct loop *l)
{
	size_t n = 0;

	l->armed_slice_ns = UINT64_MAX;
	if (l->nr_armable > 1) /* armable is NULL until the first one */
		qsort(l->armable, l->nr_armable, sizeof(*l->armable), by_last_ran);
	for (size_t i = 0; i < l->nr_armable; i++) {
		struct managed_task *m = l->armable[i];
		int cpu = m->arm_cpu;

		/* Spread over the CPUs where a wake-up would win: two
		 * threads woken together (a dispatcher's workers) waiting
		 * boosted on one CPU would run one after the other, in
		 * FIFO, while the other CPU runs a hog. Not a sleeper
		 * already pinned: the core placed it, and moving a pin back
		 * and forth costs calls and hides an owner's mask that
		 * happens to equal the new pin (enforce_pin()). */
		for (int c = 0; c < l->nr_cpus && m->pinned_cpu < 0; c++)
			if ((m->arm_prio != BOOST_WAKE || l->wake_boosts[c] < l->wake_boosts[cpu]) &&
			    sched_task_allows(&m->st, c) && wake_beats(l, m, c)) {
				cpu = c;
				m->arm_prio = BOOST_WAKE;
			}
		if (l->wake_boosts[cpu] < WAKE_BOOST_MAX &&
		    managed_pin(l, m, cpu, l->last_tick_ns) != -EINVAL) {
			uint64_t bound = armed_bound_ns(m);

			m->arm_cpu = cpu;
			l->armable[n++] = m; /* kept: ranked below */
			l->wake_boosts[cpu]++;
			if (bound < l->armed_slice_ns)
				l->armed_slice_ns = bound;
		} else {
			/* No slot: still read at every tick (collect_sleeper()
			 * made it hot), and its state with it, so a wake-up
			 * that waits behind the hogs is queued at the next
			 * tick, not seen only once it gets a CPU. */
			managed_unboost(l, m);
			m->tt->watch = true;
		}
	}
	boost_armed(l, n);
	l->nr_armable = 0;
}

/* True if normal work holds every CPU m may use. Hogs that may run on
 * several CPUs are a pool: the fair class spreads them over the CPUs
 * left free, wherever they ran last (their last CPU is up to 100 ms old,
 * and an IDLEPRIO task the core placed on a CPU is no reason for them
 * to be elsewhere). */
static bool cpus_all_busy(struct loop *l, const struct managed_task *m)
{
	unsigned free_cpus = 0;

	for (int cpu = 0; cpu < l->nr_cpus; cpu++) {
		struct sched_task *curr;

		if (!sched_task_allows(&m->st, cpu) || l->pinned_hogs[cpu])
			continue;
		curr = sched_running(l->core, cpu);
		if (!curr || curr->class == SCHED_CLASS_IDLEPRIO)
			free_cpus++;
	}
	return l->float_hogs >= free_cpus;
}

/* SIGSTOP an IDLEPRIO process while normal work fills its CPUs, SIGCONT
 * when a CPU frees up, and never leave it stopped past the bound or
 * while it may hold something others wait for. */
static void gate_idleprio(struct loop *l, struct managed_task *m)
{
	struct tracked_task *tt = m->tt;
	uint64_t now = l->last_tick_ns;
	uint64_t bound = (uint64_t)l->config->idleprio_stop_max_ms * 1000000ULL;
	uint64_t grace = rr_slice_ns(l);

	if (m->stopped) {
		if (now - m->stopped_since_ns >= bound || l->any_d_state || !cpus_all_busy(l, m)) {
			log_debug("idleprio %d cont: %s", (int)m->target.tid,
				  now - m->stopped_since_ns >= bound ? "bound"
				  : l->any_d_state		     ? "D state"
								     : "a CPU is free");
			managed_cont(l, m);
			m->cont_until_ns = now + grace;
		}
		return;
	}
	if (now < m->cont_until_ns || tt->state == 'D' || l->any_d_state || !cpus_all_busy(l, m))
		return;
	l->counters.calls_signal++;
	if (l->lv.ops->stop(l->lv.ctx, target_of(m)) == 0) {
		log_debug("idleprio %d stopped", (int)m->target.tid);
		m->stopped = true;
		m->stopped_since_ns = now;
		l->counters.stops++;
	}
}

struct queue_walk {
	struct loop *l;
	bool first;
	uint64_t first_slice_ns;
};

static void boost_first_queued(const struct sched_task *st, void *userdata)
{
	struct queue_walk *w = userdata;
	struct managed_task *m = managed_of(st);

	/* IDLEPRIO work keys after all normal work, and the kernel already
	 * runs it last (SCHED_IDLE): it needs no boost to be next. */
	if (w->first && (st->class != SCHED_CLASS_IDLEPRIO || st->idle_promoted)) {
		w->first_slice_ns = slice_left(st);
		managed_boost(w->l, m, BOOST_QUEUED);
	} else {
		managed_unboost(w->l, m);
	}
	w->first = false;
}

/* The first task queued behind a CPU's head waits at BOOST_QUEUED, the
 * rest unboosted (a woken sleeper keeps no wake boost once queued). When
 * the head blocks, the kernel runs the first at once, ahead of the hogs;
 * the tick only has to come before either uses up its slice. Before, a
 * tick every 2 ms looked for the head's block: 465 ticks a second and 8%
 * of a CPU for us under a 4-job compile. Returns the least slice left of
 * the first tasks queued. */
static uint64_t boost_queues(struct loop *l)
{
	uint64_t least = UINT64_MAX;

	for (int cpu = 0; cpu < l->nr_cpus; cpu++) {
		struct queue_walk w = { l, true, UINT64_MAX };

		sched_foreach_queued(l->core, cpu, boost_first_queued, &w);
		if (w.first_slice_ns < least)
			least = w.first_slice_ns;
	}
	return least;
}

/* How soon the core needs looking at again: the next event that needs
 * us is a boosted task (running, first in a queue, or armed and asleep)
 * using up its slice, and CPU time runs no faster than the clock: a tick
 * after the smallest slice left demotes it on time, at a fraction of the
 * wake-ups a fixed 2 ms tick costs the machine (the kernel's own tick
 * updates schedstat only every 4 ms at HZ=250 anyway). */
static uint64_t busy_tick_ns(struct loop *l, uint64_t queued_slice_ns)
{
	uint64_t tick = l->armed_slice_ns < queued_slice_ns ? l->armed_slice_ns : queued_slice_ns;

	for (int cpu = 0; cpu < l->nr_cpus; cpu++) {
		struct sched_task *curr = sched_running(l->core, cpu);

		if (curr && slice_left(curr) < tick)
			tick = slice_left(curr);
	}
	return tick < TICK_ACTIVE_NS ? TICK_ACTIVE_NS : tick > TICK_BUSY_MAX_NS ? TICK_BUSY_MAX_NS : tick;
}

/* Settled hogs this tick where the last tick counted none: what they
 * change (queueing, arming) is acted on only from the next tick, which
 * should not be a calm tick away. */
static bool contention_starts(const struct loop *l)
{
	bool now = l->settled_float > 0, before = l->contend_float > 0;

	for (int cpu = 0; cpu < l->nr_cpus; cpu++) {
		now |= l->settled_pinned[cpu] > 0;
		before |= l->contend_pinned[cpu] > 0;
	}
	return now && !before;
}

/* The calm tick (TICK_HOGS_NS), brought forward to when the next hog
 * settles: the first tick that can act on it. */
static uint64_t calm_tick_ns(const struct loop *l, uint64_t now)
{
	uint64_t tick = TICK_HOGS_NS;

	if (l->next_settle_ns && l->next_settle_ns < now + tick)
		tick = l->next_settle_ns > now + TICK_ACTIVE_NS ? l->next_settle_ns - now
								: TICK_ACTIVE_NS;
	return tick;
}

uint64_t loop_tick(struct loop *l, uint64_t now)
{
	uint64_t dt = l->last_tick_ns ? now - l->last_tick_ns : l->tick_ns;
	size_t idle = l->src.ops->count(l->src.ctx) - l->src.ops->count_active(l->src.ctx);
	/* Sweep the sleepers about every two seconds, whatever their number. */
	unsigned budget = (unsigned)(idle * (l->tick_ns / 1000) / 2000000) + 1;
	bool core_busy = false, hogs = false;
	uint64_t queued_slice_ns, read_ns;

	l->last_tick_ns = now;
	l->any_d_state = false;
	/* After the deadman dropped our boosts, every CPU's pick is boosted
	 * again now. */
	memset(l->resched, l->reboost, sizeof(bool) * (size_t)l->nr_cpus);
	l->reboost = false;
	memset(l->hogs, 0, sizeof(unsigned) * (size_t)l->nr_cpus);
	memset(l->pinned_hogs, 0, sizeof(unsigned) * (size_t)l->nr_cpus);
	l->float_hogs = 0;
	memcpy(l->contend_pinned, l->settled_pinned, sizeof(unsigned) * (size_t)l->nr_cpus);
	memset(l->settled_pinned, 0, sizeof(unsigned) * (size_t)l->nr_cpus);
	l->contend_float = l->settled_float;
	l->settled_float = 0;
	memset(l->wake_boosts, 0, sizeof(unsigned) * (size_t)l->nr_cpus);
	read_ns = l->src.ops->refresh(l->src.ctx, now, budget, TICK_COLD_NS, TICK_HOG_READ_NS);
	/* Reads held up (a slow one, a host pause): the tick decides on
	 * when they ended, or a stop would outlast its bound and a deadline
	 * be set in the past by the hold. */
	if (read_ns > now) {
		dt += read_ns - now;
		now = l->last_tick_ns = read_ns;
	}
	l->recent_sleepers = 0;
	l->next_settle_ns = 0;
	l->born_pending = false;
	l->src.ops->foreach_active(l->src.ctx, account_task, l);
	if (l->swarm != (l->recent_sleepers > SWARM_PER_CPU * (unsigned)l->nr_cpus)) {
		l->swarm = !l->swarm;
		log_debug("swarm: %s (%u recent sleepers)", l->swarm ? "yes" : "no", l->recent_sleepers);
	}

	/* ISO accounting runs in ticks of TICK_ACTIVE_NS, however long ours was. */
	l->iso_carry_ns += dt;
	for (int n = 0; l->iso_carry_ns >= TICK_ACTIVE_NS && n < 1000; n++) {
		l->iso_carry_ns -= TICK_ACTIVE_NS;
		if (sched_iso_tick(l->core))
			memset(l->resched, 1, sizeof(bool) * (size_t)l->nr_cpus);
	}
	if (l->iso_carry_ns >= TICK_ACTIVE_NS)
		l->iso_carry_ns = 0;

	for (int cpu = 0; cpu < l->nr_cpus; cpu++) {
		if (l->resched[cpu] || sched_need_resched(l->core, cpu) ||
		    (!sched_running(l->core, cpu) && sched_queue_len(l->core, cpu)))
			switch_cpu(l, cpu, now);
		if (sched_running(l->core, cpu) || sched_queue_len(l->core, cpu))
			core_busy = true;
		hogs |= l->hogs[cpu] > 0;
	}
	queued_slice_ns = boost_queues(l);
	l->src.ops->foreach_active(l->src.ctx, collect_sleeper, l);
	arm_sleepers(l);
	for (int cpu = 0; cpu < l->nr_cpus; cpu++)
		core_busy |= l->wake_boosts[cpu] > 0;
	struct managed_task *m;
	bool gated = false;
	LIST_FOREACH(m, &l->idleprio, idle_link) {
		gate_idleprio(l, m);
		gated |= m->stopped;
	}
	l->gated = gated;
	/* A stopped IDLEPRIO task is let go within 10 ms of a CPU freeing
	 * up; a task that wakes unboosted is queued within 30 ms (it runs
	 * in the fair class meanwhile, as on a stock kernel). */
	if (core_busy)
		l->tick_ns = busy_tick_ns(l, queued_slice_ns);
	else if (gated)
		l->tick_ns = TICK_GATE_NS;
	else if (l->swarm)
		l->tick_ns = TICK_SWARM_NS;
	else if (hogs || l->src.ops->count_active(l->src.ctx))
		l->tick_ns = calm_tick_ns(l, now);
	else
		l->tick_ns = TICK_IDLE_NS;
	if (!l->swarm && (contention_starts(l) || l->born_pending) && l->tick_ns > TICK_ACTIVE_NS)
		l->tick_ns = TICK_ACTIVE_NS;
	if (l->tick_ns <= TICK_BUSY_MAX_NS || l->tick_ns == TICK_IDLE_NS)
		l->pull_ns = TICK_ACTIVE_NS;
	else
		l->pull_ns = l->pull_ns * 2 < TICK_BUSY_MAX_NS ? l->pull_ns * 2 : TICK_BUSY_MAX_NS;
	return l->tick_ns;
}
