/* IDLEPRIO gating: SIGSTOP an IDLEPRIO process while normal work fills
 * its CPUs, SIGCONT it when a CPU frees up. */
#include "loop-internal.h"

#include "log.h"

/* True if normal work holds every CPU m may use. Hogs that may run on
 * several CPUs are a pool: the fair class spreads them over the CPUs
 * left free, wherever they ran last (an IDLEPRIO task the core placed
 * on a CPU is no reason for them to be elsewhere). */
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

/* Never left stopped past the bound, or while it or anyone may hold
 * something others wait for (D state, a lock: a stop is the whole
 * process's, the holder may be any thread of it). */
static void gate_one(struct loop *l, struct managed_task *m)
{
	struct tracked_task *tt = m->tt;
	uint64_t now = l->last_tick_ns;
	uint64_t bound = (uint64_t)l->config->idleprio_stop_max_ms * 1000000ULL;
	uint64_t grace = rr_slice_ns(l);

	if (m->stopped) {
		if (now - m->stopped_since_ns >= bound || l->any_d_state || l->lock_waits ||
		    !cpus_all_busy(l, m)) {
			log_debug("idleprio %d cont: %s", (int)m->target.tid,
				  now - m->stopped_since_ns >= bound ? "bound"
				  : l->any_d_state		     ? "D state"
				  : l->lock_waits			     ? "a lock wait"
								     : "a CPU is free");
			managed_cont(l, m);
			m->cont_until_ns = now + grace;
		}
		return;
	}
	if (now < m->cont_until_ns || tt->state == 'D' || l->any_d_state || l->lock_waits ||
	    !cpus_all_busy(l, m))
		return;
	l->counters.calls_signal++;
	if (l->lv.ops->stop(l->lv.ctx, target_of(m)) == 0) {
		log_debug("idleprio %d stopped", (int)m->target.tid);
		m->stopped = true;
		m->stopped_since_ns = now;
		l->counters.stops++;
	}
}

void idleprio_gate(struct loop *l)
{
	struct managed_task *m;
	bool gated = false;

	LIST_FOREACH(m, &l->idleprio, idle_link) {
		gate_one(l, m);
		gated |= m->stopped;
	}
	l->gated = gated;
}
