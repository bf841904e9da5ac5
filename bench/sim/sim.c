#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <hwloc.h>

#include "sim.h"

struct sim_task {
	struct sched_task st;
	struct sim_task_spec spec;
	struct sim_task_stats stats;
	uint64_t cap_delays;
	bool sleeping;
	bool woken;		/* runnable since wake_at, not run yet */
	uint64_t wake_at;
	uint64_t next_wake;	/* while sleeping; SIM_NEVER until an event */
	uint64_t work_left;	/* this wake-up's work; not for hogs */
	int child;		/* SIM_SPAWNER: its child's index */
	int parent;		/* SIM_CHILD: its spawner's index */
};

#define SIM_NEVER UINT64_MAX

struct sim {
	struct sched *sched;
	struct sched_config cfg;
	int nr_cpus;
	bool *resched;
	struct sim_task *tasks;
	int nr_tasks;
	int cap_tasks;
	uint64_t now;
	uint64_t next_tick;
	uint64_t iso_flips;
	int rotor;
};

int sim_new(struct sim **out, const char *desc, const struct sched_config *cfg)
{
	hwloc_topology_t topo;
	struct sim *sim;
	int r;

	if (hwloc_topology_init(&topo) < 0)
		return -ENOMEM;
	sim = calloc(1, sizeof(*sim));
	if (hwloc_topology_set_synthetic(topo, desc) < 0 || hwloc_topology_load(topo) < 0)
		r = -EINVAL;
	else
		r = sim ? sched_new(&sim->sched, topo, cfg) : -ENOMEM;
	hwloc_topology_destroy(topo);
	if (r < 0) {
		free(sim);
		return r;
	}
	sim->cfg = *cfg;
	sim->nr_cpus = sched_nr_cpus(sim->sched);
	sim->resched = calloc(sim->nr_cpus, sizeof(*sim->resched));
	if (!sim->resched) {
		sim_free(sim);
		return -ENOMEM;
	}
	sim->next_tick = cfg->tick_ns;
	*out = sim;
	return 0;
}

void sim_free(struct sim *sim)
{
	if (!sim)
		return;
	for (int i = 0; i < sim->nr_tasks; i++)
		free(sim->tasks[i].stats.delays_ns);
	free(sim->tasks);
	free(sim->resched);
	sched_free(sim->sched);
	free(sim);
}

static int sim_add_one(struct sim *sim, const struct sim_task_spec *spec)
{
	struct sim_task *t;

	if (spec->cpu >= sim->nr_cpus)
		return -EINVAL;
	if (sim->nr_tasks == sim->cap_tasks) {
		int cap = sim->cap_tasks ? sim->cap_tasks * 2 : 16;
		struct sim_task *n = realloc(sim->tasks, (size_t)cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		sim->tasks = n;
		sim->cap_tasks = cap;
	}
	t = &sim->tasks[sim->nr_tasks];
	memset(t, 0, sizeof(*t));
	t->spec = *spec;
	sched_task_init(sim->sched, &t->st, (uint64_t)sim->nr_tasks + 1, 0);
	sched_set_class(sim->sched, &t->st, spec->class, spec->rt_priority ? spec->rt_priority : 1);
	sched_set_nice(sim->sched, &t->st, spec->nice);
	if (spec->cpu >= 0) {
		struct cpumask mask;

		cpumask_zero(&mask);
		cpumask_set(&mask, spec->cpu);
		sched_set_allowed(sim->sched, &t->st, &mask);
		t->st.last_cpu = spec->cpu;
	}
	t->sleeping = true;
	t->next_wake = spec->kind == SIM_CHILD ? SIM_NEVER : spec->start_ns;
	return sim->nr_tasks++;
}

int sim_add_task(struct sim *sim, const struct sim_task_spec *spec)
{
	struct sim_task_spec child;
	int parent, r;

	if (spec->kind == SIM_SLEEPER && (!spec->period_ns || !spec->work_ns))
		return -EINVAL;
	if (spec->kind == SIM_SPAWNER && (!spec->work_ns || !spec->child_work_ns))
		return -EINVAL;
	if (spec->kind == SIM_CHILD)
		return -EINVAL;
	parent = sim_add_one(sim, spec);
	if (parent < 0 || spec->kind != SIM_SPAWNER)
		return parent;
	child = (struct sim_task_spec){
		.kind = SIM_CHILD,
		.class = spec->class,
		.nice = spec->nice,
		.rt_priority = spec->rt_priority,
		.work_ns = spec->child_work_ns,
		.cpu = spec->cpu,
	};
	r = sim_add_one(sim, &child);
	if (r < 0) {
		sim->nr_tasks--;
		return r;
	}
	sim->tasks[parent].child = r;
	sim->tasks[r].parent = parent;
	return parent;
}

static int sim_record_delay(struct sim_task *t, uint64_t delay)
{
	struct sim_task_stats *s = &t->stats;

	if (s->nr_delays == t->cap_delays) {
		uint64_t cap = t->cap_delays ? t->cap_delays * 2 : 64;
		uint64_t *n = realloc(s->delays_ns, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		s->delays_ns = n;
		t->cap_delays = cap;
	}
	s->delays_ns[s->nr_delays++] = delay;
	if (delay > s->max_delay_ns)
		s->max_delay_ns = delay;
	return 0;
}

static void sim_wake(struct sim *sim, struct sim_task *t)
{
	int preempt, r;

	t->sleeping = false;
	t->woken = true;
	t->wake_at = sim->now;
	t->stats.wakeups++;
	t->work_left = t->spec.work_ns;
	r = sched_wake(sim->sched, &t->st, sim->now, &preempt);
	if (r >= 0 && preempt >= 0)
		sim->resched[preempt] = true;
}

/* Picks on every flagged CPU until nothing is flagged. */
static int sim_schedule(struct sim *sim)
{
	bool again = true;

	/* CPUs whose slices end together race for the same tasks and the last
	 * keeps its own on a tie: rotating the order spreads that luck as jitter would. */
	sim->rotor = (sim->rotor + 1) % sim->nr_cpus;
	while (again) {
		again = false;
		for (int k = 0; k < sim->nr_cpus; k++) {
			int cpu = (k + sim->rotor) % sim->nr_cpus;
			struct sched_task *prev, *next;
			struct sim_task *t;

			if (!sim->resched[cpu])
				continue;
			sim->resched[cpu] = false;
			prev = sched_running(sim->sched, cpu);
			next = sched_pick_next(sim->sched, cpu, sim->now);
			if (prev && prev != next) {
				/* prev stays runnable: let idle CPUs have a go at it. */
				for (int c = 0; c < sim->nr_cpus; c++) {
					if (!sched_running(sim->sched, c) && !sim->resched[c]) {
						sim->resched[c] = true;
						again = true;
					}
				}
			}
			if (!next)
				continue;
			t = next->data;
			if (t->woken) {
				t->woken = false;
				if (sim_record_delay(t, sim->now - t->wake_at) < 0)
					return -ENOMEM;
			}
		}
	}
	return 0;
}

static uint64_t sim_next_event(struct sim *sim, uint64_t end)
{
	uint64_t ev = sim->next_tick < end ? sim->next_tick : end;

	for (int i = 0; i < sim->nr_tasks; i++) {
		struct sim_task *t = &sim->tasks[i];

		if (t->sleeping && t->next_wake < ev)
			ev = t->next_wake;
	}
	for (int cpu = 0; cpu < sim->nr_cpus; cpu++) {
		struct sched_task *st = sched_running(sim->sched, cpu);
		struct sim_task *t;
		uint64_t left;

		if (!st)
			continue;
		t = st->data;
		/* Expiry is "under 100 us left", so run until exactly that point. */
		left = st->dl.slice_ns > DEADLINE_RESCHED_NS ?
			(uint64_t)(st->dl.slice_ns - DEADLINE_RESCHED_NS) + 1 : 1;
		if (t->spec.kind != SIM_HOG && t->work_left < left)
			left = t->work_left;
		if (sim->now + left < ev)
			ev = sim->now + left;
	}
	return ev;
}

/* @t, running, has done this wake-up's work. A spawner forks its child (which
 * shares its slice and deadline, as in MuQSS) and waits; the child wakes it. */
static void sim_work_done(struct sim *sim, struct sim_task *t)
{
	struct sim_task *other;

	switch (t->spec.kind) {
	case SIM_SLEEPER:
		sched_dequeue(sim->sched, &t->st);
		t->next_wake = t->spec.start_ns +
			((sim->now - t->spec.start_ns) / t->spec.period_ns + 1) * t->spec.period_ns;
		break;
	case SIM_SPAWNER:
		other = &sim->tasks[t->child];
		sched_fork(sim->sched, &t->st, &other->st, other->st.id, sim->now);
		other->st.data = other;
		sched_dequeue(sim->sched, &t->st);
		t->next_wake = SIM_NEVER;
		sim_wake(sim, other);
		break;
	case SIM_CHILD:
		sched_task_done(sim->sched, &t->st);
		t->next_wake = SIM_NEVER;
		other = &sim->tasks[t->parent];
		other->next_wake = sim->now;
		break;
	case SIM_HOG:
		return;
	}
	t->sleeping = true;
}

/* Runs every CPU's task for @dt ending at @now. */
static void sim_advance(struct sim *sim, uint64_t dt)
{
	for (int cpu = 0; cpu < sim->nr_cpus; cpu++) {
		struct sched_task *st = sched_running(sim->sched, cpu);
		struct sim_task *t;

		if (!st || !dt)
			continue;
		t = st->data;
		t->stats.runtime_ns += dt;
		if (sched_task_running_iso(st))
			t->stats.iso_runtime_ns += dt;
		if (sched_charge(sim->sched, cpu, dt, sim->now) == 1)
			sim->resched[cpu] = true;
		if (t->spec.kind == SIM_HOG)
			continue;
		t->work_left -= dt < t->work_left ? dt : t->work_left;
		if (t->work_left)
			continue;
		sim_work_done(sim, t);
		sim->resched[cpu] = true;
	}
}

int sim_run(struct sim *sim, uint64_t duration_ns)
{
	uint64_t end = sim->now + duration_ns;

	for (int i = 0; i < sim->nr_tasks; i++)
		sim->tasks[i].st.data = &sim->tasks[i];

	while (sim->now < end) {
		uint64_t ev, dt;

		for (int i = 0; i < sim->nr_tasks; i++) {
			struct sim_task *t = &sim->tasks[i];

			/* Schedule after each wake so the next one sees busy CPUs. */
			if (t->sleeping && t->next_wake <= sim->now) {
				sim_wake(sim, t);
				if (sim_schedule(sim) < 0)
					return -ENOMEM;
			}
		}
		if (sim_schedule(sim) < 0)
			return -ENOMEM;

		ev = sim_next_event(sim, end);
		dt = ev - sim->now;
		sim->now = ev;
		sim_advance(sim, dt);
		if (sim->now >= sim->next_tick) {
			bool flipped = sched_iso_tick(sim->sched);

			sim->next_tick += sim->cfg.tick_ns;
			sim->iso_flips += flipped;
			for (int cpu = 0; cpu < sim->nr_cpus; cpu++) {
				/* ISO demotion takes effect at the tick, as in MuQSS. */
				if (flipped || !sched_running(sim->sched, cpu))
					if (sched_need_resched(sim->sched, cpu))
						sim->resched[cpu] = true;
			}
		}
	}
	return 0;
}

int sim_nr_tasks(const struct sim *sim)
{
	return sim->nr_tasks;
}

int sim_nr_cpus(const struct sim *sim)
{
	return sim->nr_cpus;
}

uint64_t sim_iso_flips(const struct sim *sim)
{
	return sim->iso_flips;
}

uint64_t sim_now(const struct sim *sim)
{
	return sim->now;
}

struct sim_task_stats *sim_task_stats(struct sim *sim, int idx)
{
	return &sim->tasks[idx].stats;
}

const struct sim_task_spec *sim_task_spec(const struct sim *sim, int idx)
{
	return &sim->tasks[idx].spec;
}

static int sim_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

uint64_t sim_delay_percentile(struct sim_task_stats *stats, double pct)
{
	uint64_t idx;

	if (!stats->nr_delays)
		return 0;
	qsort(stats->delays_ns, stats->nr_delays, sizeof(uint64_t), sim_cmp_u64);
	idx = (uint64_t)(pct / 100.0 * (double)(stats->nr_delays - 1) + 0.5);
	if (idx >= stats->nr_delays)
		idx = stats->nr_delays - 1;
	return stats->delays_ns[idx];
}
