/* One tick of the live loop: read, account, pick, boost, arm, gate, and
 * choose when the next tick comes. Each step has a file of its own:
 * account.c, hog.c, contention.c, sleeper.c, idleprio_gate.c, cadence.c. */
#include "loop-internal.h"

#include <string.h>

#include "log.h"

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
	if (!managed_pin_or_drop(l, next, cpu, now))
		return;
	/* IDLEPRIO work runs SCHED_IDLE; the kernel already prefers anything
	 * else, so it needs no boost, only to be let run. */
	if (next->st.class == SCHED_CLASS_IDLEPRIO && !next->st.idle_promoted)
		managed_unboost(l, next);
	else
		managed_boost(l, next, BOOST_RUN);
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
 * the head blocks, the kernel runs the first at once, ahead of the hogs,
 * so no tick has to watch for the block; it only has to come before
 * either uses up its slice. Returns the least slice left of the first
 * tasks queued. */
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

/* The per-tick scratch, fresh; the settled hogs the last tick counted
 * become what this one acts on (contention.c). */
static void tick_reset(struct loop *l)
{
	size_t n = (size_t)l->nr_cpus;

	l->any_d_state = false;
	/* After the deadman dropped our boosts, every CPU's pick is boosted
	 * again now. */
	memset(l->resched, l->reboost, sizeof(bool) * n);
	l->reboost = false;
	memset(l->hogs, 0, sizeof(unsigned) * n);
	memset(l->pinned_hogs, 0, sizeof(unsigned) * n);
	l->float_hogs = 0;
	memcpy(l->contend_pinned, l->settled_pinned, sizeof(unsigned) * n);
	memset(l->settled_pinned, 0, sizeof(unsigned) * n);
	l->contend_float = l->settled_float;
	l->settled_float = 0;
	memset(l->wake_boosts, 0, sizeof(unsigned) * n);
}

/* ISO accounting runs in ticks of TICK_ACTIVE_NS, however long ours was. */
static void iso_catch_up(struct loop *l, uint64_t dt)
{
	l->iso_carry_ns += dt;
	for (int n = 0; l->iso_carry_ns >= TICK_ACTIVE_NS && n < 1000; n++) {
		l->iso_carry_ns -= TICK_ACTIVE_NS;
		if (sched_iso_tick(l->core))
			memset(l->resched, 1, sizeof(bool) * (size_t)l->nr_cpus);
	}
	if (l->iso_carry_ns >= TICK_ACTIVE_NS)
		l->iso_carry_ns = 0;
}

/* Switches each CPU that needs it; says whether the core has work, and
 * whether any CPU had a hog. */
static void pick_all(struct loop *l, uint64_t now, bool *core_busy, bool *hogs)
{
	for (int cpu = 0; cpu < l->nr_cpus; cpu++) {
		if (l->resched[cpu] || sched_need_resched(l->core, cpu) ||
		    (!sched_running(l->core, cpu) && sched_queue_len(l->core, cpu)))
			switch_cpu(l, cpu, now);
		if (sched_running(l->core, cpu) || sched_queue_len(l->core, cpu))
			*core_busy = true;
		*hogs |= l->hogs[cpu] > 0;
	}
}

uint64_t loop_tick_read_end_ns(const struct loop *l)
{
	return l->last_tick_ns;
}

uint64_t loop_tick(struct loop *l, uint64_t now)
{
	uint64_t dt = l->last_tick_ns ? now - l->last_tick_ns : l->tick_ns;
	unsigned budget = cadence_sweep_budget(l);
	bool core_busy = false, hogs = false;
	uint64_t queued_slice_ns, read_ns;

	l->last_tick_ns = now;
	tick_reset(l);
	read_ns = l->src.ops->refresh(l->src.ctx, now, now + cadence_read_max_ns(dt), budget,
				      TICK_COLD_NS, TICK_HOG_READ_NS);
	/* Reads held up (a slow one, a host pause): the tick decides on
	 * when they ended, or a stop would outlast its bound and a deadline
	 * be set in the past by the hold. */
	if (read_ns > now) {
		dt += read_ns - now;
		now = l->last_tick_ns = read_ns;
	}
	account_tasks(l);
	iso_catch_up(l, dt);
	pick_all(l, now, &core_busy, &hogs);
	queued_slice_ns = boost_queues(l);
	l->src.ops->foreach_active(l->src.ctx, sleeper_collect, l);
	sleeper_arm(l);
	for (int cpu = 0; cpu < l->nr_cpus; cpu++)
		core_busy |= l->wake_boosts[cpu] > 0;
	idleprio_gate(l);
	return cadence_next(l, now, core_busy, hogs, queued_slice_ns);
}
