/* Sleeper arming: sleepers whose wake-up should beat what their CPU runs
 * wait boosted (BOOST_WAKE, BOOST_NEXT), a few per CPU, ranked by key. */
#include "loop-internal.h"

#include <errno.h>
#include <stdlib.h>

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
	return contention_on(l, m, cpu);
}

/* How often the source reads the task. What the loop acts on is read at
 * every tick, as is a task that may be a hog from birth; the rest, which
 * at most gets queued when it wakes, every TICK_COLD_NS (a pin alone
 * does not make a sleeper hot: pinned sleepers are many under a
 * compile). A settled hog waits TICK_HOG_READ_NS, but not while an
 * IDLEPRIO task is stopped: a hog's sleep frees the CPU it waits for. */
static void mark_reads(const struct loop *l, struct tracked_task *tt, const struct managed_task *m)
{
	tt->hot = m->st.running || m->st.queued || m->boost_prio || m->stopped ||
		  hog_born_candidate(m);
	tt->slow = m->hog && !tt->hot && l->last_tick_ns - m->hog_since_ns >= HOG_SETTLED_NS &&
		   !l->gated;
}

/* BOOST_WAKE if m's wake-up would beat what runs on cpu, BOOST_NEXT if
 * it would run next, behind the head and before the hogs, else 0. */
static int arm_prio(const struct loop *l, const struct managed_task *m, int cpu)
{
	if (wake_beats(l, m, cpu))
		return BOOST_WAKE;
	if (sched_running(l->core, cpu))
		return BOOST_NEXT;
	return 0;
}

static bool armable_push(struct loop *l, struct managed_task *m)
{
	if (l->nr_armable == l->armable_cap) {
		size_t cap = l->armable_cap ? 2 * l->armable_cap : 64;
		struct managed_task **a = realloc(l->armable, cap * sizeof(*a));

		if (!a)
			return false;
		l->armable = a;
		l->armable_cap = cap;
	}
	l->armable[l->nr_armable++] = m;
	return true;
}

void sleeper_collect(struct tracked_task *tt, void *userdata)
{
	struct loop *l = userdata;
	struct managed_task *m = tt->sched_data;
	bool long_asleep;
	int cpu, prio;

	tt->slow = false;
	tt->watch = false;
	if (!m || m->exempt || !m->adopted)
		return;
	mark_reads(l, tt, m);
	if (m->st.running || m->st.queued)
		return;
	/* One asleep long enough to lose its wake-up boost goes back to its
	 * owner's mask, to wake on a free CPU as on a stock kernel. */
	long_asleep = l->last_tick_ns - m->last_ran_ns >= RECENT_SLEEPER_NS;
	if (m->pinned_cpu >= 0 && tt->state == 'S' && !m->stopped && long_asleep)
		managed_unpin(l, m, l->last_tick_ns);
	cpu = wait_cpu(l, m);
	if (m->hog || tt->stale || tt->state == 'R' || cpu < 0 || m->st.class == SCHED_CLASS_IDLEPRIO ||
	    !contention_worth_queueing(l, m) || long_asleep ||
	    m->st.dl.slice_ns <= DEADLINE_RESCHED_NS) {
		managed_unboost(l, m);
		return;
	}
	prio = arm_prio(l, m, cpu);
	if (!prio) {
		managed_unboost(l, m);
		return;
	}
	m->arm_prio = (uint8_t)prio;
	if (!armable_push(l, m)) {
		managed_unboost(l, m);
		return;
	}
	m->arm_cpu = cpu;
	tt->hot = true;
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
 * the same way on its CPU, the earliest key highest: as in MuQSS, a
 * waking task with the earlier deadline preempts, whichever woke first. */
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
 * its slice left, but no sooner than TICK_ARMED_MIN_NS, since it may not
 * wake at all; one that wakes may overrun its slice by that much. */
static uint64_t armed_bound_ns(const struct managed_task *m)
{
	uint64_t left = slice_left(&m->st);

	return left > TICK_ARMED_MIN_NS ? left : TICK_ARMED_MIN_NS;
}

/* Spreads m over the CPUs where a wake-up would win: two threads woken
 * together waiting boosted on one CPU would run one after the other, in
 * FIFO. Not a sleeper already pinned: the core placed it, and moving a
 * pin costs calls and hides an owner's mask equal to it (enforce_pin()). */
static int spread_cpu(struct loop *l, struct managed_task *m)
{
	int cpu = m->arm_cpu;

	for (int c = 0; c < l->nr_cpus && m->pinned_cpu < 0; c++)
		if ((m->arm_prio != BOOST_WAKE || l->wake_boosts[c] < l->wake_boosts[cpu]) &&
		    sched_task_allows(&m->st, c) && wake_beats(l, m, c)) {
			cpu = c;
			m->arm_prio = BOOST_WAKE;
		}
	return cpu;
}

/* The CPU m waits armed on, pinned there, or -1: no slot. A pin its
 * owner's mask no longer allows (one set since we read it: cyclictest
 * pins its thread right after creating it) is tried once more on that
 * new mask; left unarmed, it would wake behind the hogs until the next
 * tick. */
static int arm_place(struct loop *l, struct managed_task *m)
{
	for (int tries = 0; tries < 2; tries++) {
		int cpu = spread_cpu(l, m);

		if (l->wake_boosts[cpu] >= WAKE_BOOST_MAX)
			return -1;
		if (managed_pin(l, m, cpu, l->last_tick_ns) != -EINVAL)
			return cpu;
		/* managed_pin() has read the owner's new mask. */
		m->arm_cpu = wait_cpu(l, m);
		if (m->arm_cpu < 0)
			return -1;
		m->arm_prio = (uint8_t)arm_prio(l, m, m->arm_cpu);
		if (!m->arm_prio)
			return -1;
	}
	return -1;
}

/* A bounded number per CPU wait boosted: many boosted sleepers waking
 * together would hold the CPU in SCHED_FIFO past what the tick can
 * correct. The ones that ran last are the likeliest to wake next, so
 * they go first. */
void sleeper_arm(struct loop *l)
{
	size_t n = 0;

	l->armed_slice_ns = UINT64_MAX;
	if (l->nr_armable > 1) /* armable is NULL until the first one */
		qsort(l->armable, l->nr_armable, sizeof(*l->armable), by_last_ran);
	for (size_t i = 0; i < l->nr_armable; i++) {
		struct managed_task *m = l->armable[i];
		int cpu = arm_place(l, m);

		if (cpu >= 0) {
			uint64_t bound = armed_bound_ns(m);

			m->arm_cpu = cpu;
			l->armable[n++] = m; /* kept: ranked below */
			l->wake_boosts[cpu]++;
			if (bound < l->armed_slice_ns)
				l->armed_slice_ns = bound;
		} else {
			/* No slot: still read at every tick (hot), so a
			 * wake-up that waits behind the hogs is queued at the
			 * next tick, not seen only once it gets a CPU. */
			managed_unboost(l, m);
			m->tt->watch = true;
		}
	}
	boost_armed(l, n);
	l->nr_armable = 0;
}
