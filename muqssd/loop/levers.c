/* The levers for one managed task: each call goes through the lever set,
 * is counted, and its failure is logged once, here. ESRCH is no failure:
 * tasks vanish between a read and a write all the time. */
#include "loop-internal.h"

#include <errno.h>
#include <string.h>

#include "log.h"

static void lever_failed(struct managed_task *m, const char *lever, int r)
{
	if (r != -ESRCH)
		log_task(LOG_LEVEL_WARNING, m->target.tid, m->tt->comm, sched_class_name(m->st.class),
			 lever, "cannot %s: %s, ignoring", lever, strerror(-r));
}

void managed_boost(struct loop *l, struct managed_task *m, int prio)
{
	int r;

	if (iso_within_cap(l, m))
		prio = BOOST_ISO;
	if (m->boost_prio == prio)
		return;
	l->counters.calls_boost++;
	r = l->lv.ops->boost(l->lv.ctx, target_of(m), prio);
	if (r < 0) {
		lever_failed(m, "boost", r);
		return;
	}
	if (!m->boost_prio)
		l->counters.boosts++;
	m->boost_prio = (uint8_t)prio;
}

/* The undoing levers (unboost, unpin, cont) forget what they undo only
 * when it is undone, or the task gone: a refused one is tried again at
 * the next call, instead of leaving a task SCHED_FIFO, pinned or stopped
 * behind the loop's back. */
void managed_unboost(struct loop *l, struct managed_task *m)
{
	int r;

	if (!m->boost_prio)
		return;
	l->counters.calls_unboost++;
	r = l->lv.ops->unboost(l->lv.ctx, target_of(m));
	if (r < 0 && r != -ESRCH) {
		lever_failed(m, "unboost", r);
		return;
	}
	m->boost_prio = 0;
}

void managed_read_allowed(struct loop *l, struct managed_task *m)
{
	const struct topology *topo = sched_topology(l->core);
	struct cpumask allowed;
	cpu_set_t set;

	cpumask_fill(&allowed, l->nr_cpus);
	if (l->lv.ops->owner_affinity(l->lv.ctx, m->target.tid, &set) == 0) {
		cpumask_zero(&allowed);
		for (int cpu = 0; cpu < l->nr_cpus; cpu++)
			if (CPU_ISSET(topology_os_index(topo, cpu), &set))
				cpumask_set(&allowed, cpu);
	}
	/* An owner's mask with none of our CPUs: the task stays where it
	 * was, and the pin there fails and takes it off the core. */
	(void)sched_set_allowed(l->core, &m->st, &allowed);
}

int managed_pin(struct loop *l, struct managed_task *m, int cpu, uint64_t now)
{
	cpu_set_t set;
	int r;

	/* Above all normal work, ISO needs no CPU of the core's: the
	 * kernel's RT balancing wakes it where nothing of its rank runs,
	 * and a pin would only keep it waiting behind one (our own tick,
	 * another ISO task) or move it between CPUs from tick to tick. */
	if (iso_within_cap(l, m)) {
		managed_unpin(l, m, now);
		return 0;
	}
	if (m->pinned_cpu == cpu || now < m->settle_until_ns)
		return 0;
	CPU_ZERO(&set);
	CPU_SET(topology_os_index(sched_topology(l->core), cpu), &set);
	l->counters.calls_pin++;
	r = l->lv.ops->pin(l->lv.ctx, target_of(m), &set);
	if (r == -EINVAL) {
		/* Its owner has since taken this CPU from it: the core's
		 * mask is stale. */
		managed_read_allowed(l, m);
		return r;
	}
	if (r < 0)
		lever_failed(m, "pin", r);
	else
		m->pinned_cpu = cpu;
	return r;
}

bool managed_pin_or_drop(struct loop *l, struct managed_task *m, int cpu, uint64_t now)
{
	if (managed_pin(l, m, cpu, now) != -EINVAL)
		return true;
	if (m->st.running)
		l->resched[cpu] = true;
	sched_dequeue(l->core, &m->st);
	return false;
}

void managed_unpin(struct loop *l, struct managed_task *m, uint64_t now)
{
	int r;

	if (m->pinned_cpu < 0)
		return;
	l->counters.calls_unpin++;
	r = l->lv.ops->unpin(l->lv.ctx, target_of(m));
	if (r < 0 && r != -ESRCH) {
		lever_failed(m, "unpin", r);
		return;
	}
	m->pinned_cpu = -1;
	m->unpinned_ns = now;
}

void managed_cont(struct loop *l, struct managed_task *m)
{
	int r;

	if (!m->stopped)
		return;
	l->counters.calls_signal++;
	r = l->lv.ops->cont(l->lv.ctx, target_of(m));
	if (r < 0 && r != -ESRCH) {
		lever_failed(m, "resume", r);
		return;
	}
	m->stopped = false;
}

void managed_rebase(struct loop *l, struct managed_task *m)
{
	int r = l->lv.ops->rebase(l->lv.ctx, target_of(m));

	if (r < 0)
		lever_failed(m, "rebase", r);
}

int managed_set_nice(struct loop *l, struct managed_task *m, int nice)
{
	int r;

	l->counters.calls_nice++;
	r = l->lv.ops->set_nice(l->lv.ctx, target_of(m), nice);
	if (r < 0)
		lever_failed(m, "renice", r);
	else
		/* The source rereads nice only now and then: until it does,
		 * what we set is no owner's renice. */
		m->tt->nice = nice;
	return r;
}
