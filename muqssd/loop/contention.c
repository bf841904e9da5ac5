/* Where settled hogs contend, and which tasks that concerns: the loop
 * acts on normal work only where a hog could hold a CPU it may use. */
#include "loop-internal.h"

#include "log.h"

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

void contention_count(struct loop *l, struct managed_task *m, bool settled)
{
	int only = only_cpu(l, &m->st);

	if (!settled && (!l->next_settle_ns || m->hog_since_ns + HOG_SETTLED_NS < l->next_settle_ns))
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

bool contention_on(const struct loop *l, const struct managed_task *m, int cpu)
{
	return pinned_hog_besides(l, m, cpu) || float_hog_besides(l, m);
}

/* Only where a settled hog may hold a CPU m may use does the kernel keep
 * a waking normal task behind work MuQSS would put after it: among
 * sleepers alone EEVDF orders them as well as the core would, and a pin
 * and a boost would only cost. */
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

/* ISO must beat normal work and IDLEPRIO must yield to it whatever the
 * load; normal and batch work only where a hog contends with it. */
bool contention_worth_queueing(const struct loop *l, const struct managed_task *m)
{
	return (m->st.class != SCHED_CLASS_NORMAL && m->st.class != SCHED_CLASS_BATCH) ||
	       contended_for(l, m);
}

bool contention_starts(const struct loop *l)
{
	bool now = l->settled_float > 0, before = l->contend_float > 0;

	for (int cpu = 0; cpu < l->nr_cpus; cpu++) {
		now |= l->settled_pinned[cpu] > 0;
		before |= l->contend_pinned[cpu] > 0;
	}
	return now && !before;
}

void contention_swarm(struct loop *l)
{
	bool crowd = l->recent_sleepers > SWARM_PER_CPU * (unsigned)l->nr_cpus;
	uint64_t now = l->last_tick_ns;

	/* A swarm ends only once it stays thin for SWARM_WINDOW_NS: one tick
	 * whose reads were cut short counts few, and each end and start
	 * costs a pin or an unpin for every member. */
	if (l->swarm && !crowd) {
		if (!l->swarm_thin_since_ns)
			l->swarm_thin_since_ns = now;
		if (now - l->swarm_thin_since_ns < SWARM_WINDOW_NS)
			return;
	}
	l->swarm_thin_since_ns = 0;
	if (l->swarm == crowd)
		return;
	l->swarm = crowd;
	log_debug("swarm: %s (%u recent sleepers)", l->swarm ? "yes" : "no", l->recent_sleepers);
}
