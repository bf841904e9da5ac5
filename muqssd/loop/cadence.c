/* Tick cadence: how soon the next tick comes, and how many sleepers a
 * tick reads. Every wake-up of ours costs the machine a context switch,
 * so the tick is as slow as the next thing that needs us allows. */
#include "loop-internal.h"

unsigned cadence_sweep_budget(const struct loop *l)
{
	size_t idle = l->src.ops->count(l->src.ctx) - l->src.ops->count_active(l->src.ctx);

	/* Sweep the sleepers about every two seconds, whatever their number. */
	return (unsigned)(idle * (l->tick_ns / 1000) / 2000000) + 1;
}

uint64_t cadence_read_max_ns(uint64_t dt)
{
	uint64_t max = dt / TICK_READ_SHARE;

	return max < TICK_READ_MIN_NS ? TICK_READ_MIN_NS : max > TICK_READ_MAX_NS ? TICK_READ_MAX_NS : max;
}

/* The next event that needs us is a boosted task (running, first in a
 * queue, or armed and asleep) using up its slice, and CPU time runs no
 * faster than the clock: a tick after the smallest slice left demotes it
 * on time. */
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

/* A stopped IDLEPRIO task is let go within TICK_GATE_NS of a CPU freeing
 * up; a task that wakes unboosted is queued within TICK_HOGS_NS (it runs
 * in the fair class meanwhile, as on a stock kernel). */
static uint64_t next_tick_ns(struct loop *l, uint64_t now, bool core_busy, bool hogs,
			     uint64_t queued_slice_ns)
{
	uint64_t tick;

	if (core_busy)
		tick = busy_tick_ns(l, queued_slice_ns);
	else if (l->gated)
		tick = TICK_GATE_NS;
	else if (l->swarm)
		tick = TICK_SWARM_NS;
	else if (hogs || l->src.ops->count_active(l->src.ctx))
		tick = calm_tick_ns(l, now);
	else if (l->src.ops->tells_wakes && l->src.ops->tells_wakes(l->src.ctx))
		tick = TICK_QUIET_NS;
	else
		tick = TICK_IDLE_NS;
	/* What new hogs change is acted on only from the next tick, which
	 * should not be a calm tick away. */
	if (!l->swarm && (contention_starts(l) || l->born_pending) && tick > TICK_ACTIVE_NS)
		tick = TICK_ACTIVE_NS;
	return tick;
}

uint64_t cadence_next(struct loop *l, uint64_t now, bool core_busy, bool hogs,
		      uint64_t queued_slice_ns)
{
	l->tick_ns = next_tick_ns(l, now, core_busy, hogs, queued_slice_ns);
	if (l->tick_ns <= TICK_BUSY_MAX_NS || !l->new_work)
		l->pull_ns = TICK_ACTIVE_NS;
	else
		l->pull_ns = l->pull_ns * 2 < TICK_HOGS_NS ? l->pull_ns * 2 : TICK_HOGS_NS;
	l->new_work = false;
	return l->tick_ns;
}

/* New work while the tick is calm (up to TICK_IDLE_NS apart) may be the
 * start of a load: a task started beside hogs would meet them in the fair
 * class until the calm tick saw them. Not in a swarm, whose tick is slow
 * on purpose, nor while the tick is busy anyway. */
uint64_t cadence_pull(struct loop *l, const struct managed_task *m)
{
	if (!m || !m->adopted || m->exempt || l->swarm || l->tick_ns <= TICK_BUSY_MAX_NS)
		return 0;
	l->new_work = true;
	return l->last_tick_ns + l->pull_ns;
}
