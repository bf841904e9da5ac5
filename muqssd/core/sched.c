#include <errno.h>
#include <stdlib.h>

#include "sched_priv.h"
#include "tunables.h"

void sched_config_defaults(struct sched_config *cfg)
{
	cfg->rr_interval_ms = TUNABLE_RR_INTERVAL_DEFAULT;
	cfg->interactive = TUNABLE_INTERACTIVE_DEFAULT;
	cfg->iso_cpu = TUNABLE_ISO_CPU_DEFAULT;
	cfg->yield_type = TUNABLE_YIELD_TYPE_DEFAULT;
	cfg->iso_mode = ISO_MODE_MACHINE;
	cfg->tick_ns = 1000000;
	cfg->seed = 0;
}

int sched_config_check(const struct sched_config *cfg)
{
	if (cfg->rr_interval_ms < TUNABLE_RR_INTERVAL_MIN ||
	    cfg->rr_interval_ms > TUNABLE_RR_INTERVAL_MAX)
		return -EINVAL;
	if (cfg->iso_cpu > TUNABLE_ISO_CPU_MAX)
		return -EINVAL;
	if (cfg->yield_type < TUNABLE_YIELD_TYPE_MIN || cfg->yield_type > TUNABLE_YIELD_TYPE_MAX)
		return -EINVAL;
	if (cfg->iso_mode != ISO_MODE_MACHINE && cfg->iso_mode != ISO_MODE_PER_CPU)
		return -EINVAL;
	if (cfg->tick_ns == 0 || cfg->tick_ns > ISO_WINDOW_NS)
		return -EINVAL;
	return 0;
}

static void sched_iso_reset(struct sched *s)
{
	iso_init(&s->iso, iso_period(s->cfg.tick_ns, (unsigned int)s->nr_cpus));
	for (int i = 0; i < s->nr_cpus; i++)
		iso_init(&s->rqs[i].iso, iso_period(s->cfg.tick_ns, 1));
}

int sched_new(struct sched **out, hwloc_topology_t topo, const struct sched_config *cfg)
{
	struct sched *s;
	int r;

	r = sched_config_check(cfg);
	if (r < 0)
		return r;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->cfg = *cfg;
	r = topology_build(&s->topo, topo);
	if (r < 0) {
		free(s);
		return r;
	}
	s->nr_cpus = topology_nr_cpus(s->topo);
	s->rqs = calloc(s->nr_cpus, sizeof(*s->rqs));
	if (!s->rqs) {
		sched_free(s);
		return -ENOMEM;
	}
	for (int i = 0; i < s->nr_cpus; i++) {
		int nr;

		/* Distinct but reproducible PRNG streams per queue. */
		skiplist_init(&s->rqs[i].sl, cfg->seed * 1000003 + (uint64_t)i + 1);
		s->rqs[i].cpu = i;
		topology_core_cpus(s->topo, i, &nr);
		if (nr > 1)
			s->smt = true;
	}
	sched_iso_reset(s);
	*out = s;
	return 0;
}

void sched_free(struct sched *s)
{
	if (!s)
		return;
	topology_free(s->topo);
	sched_masks_free(s);
	free(s->rqs);
	free(s);
}

int sched_set_config(struct sched *s, const struct sched_config *cfg)
{
	bool reset_iso;
	int r;

	r = sched_config_check(cfg);
	if (r < 0)
		return r;
	reset_iso = cfg->tick_ns != s->cfg.tick_ns || cfg->iso_mode != s->cfg.iso_mode;
	s->cfg = *cfg;
	if (reset_iso) {
		sched_iso_reset(s);
		for (int i = 0; i < s->nr_cpus; i++)
			runqueue_rekey_iso(s, i);
	}
	return 0;
}

const struct sched_config *sched_get_config(const struct sched *s)
{
	return &s->cfg;
}

const struct topology *sched_topology(const struct sched *s)
{
	return s->topo;
}

int sched_nr_cpus(const struct sched *s)
{
	return s->nr_cpus;
}

void sched_task_init(struct sched *s, struct sched_task *t, uint64_t id, uint64_t now)
{
	*t = (struct sched_task){
		.id = id,
		.class = SCHED_CLASS_NORMAL,
		.cpu = -1,
		.last_cpu = 0,
	};
	skiplist_node_init(&t->node);
	deadline_refill(&t->dl, 0, s->cfg.rr_interval_ms, now);
	t->key = t->dl.deadline;
}

int sched_enqueue(struct sched *s, struct sched_task *t, int cpu, uint64_t now)
{
	if (cpu < 0 || cpu >= s->nr_cpus || !sched_task_allows(t, cpu))
		return -EINVAL;
	if (t->queued || t->running)
		return -EBUSY;
	runqueue_insert(s, &s->rqs[cpu], t);
	return 0;
}

void sched_dequeue(struct sched *s, struct sched_task *t)
{
	if (t->queued)
		runqueue_remove(&s->rqs[t->cpu], t);
	if (t->running) {
		s->rqs[t->cpu].curr = NULL;
		t->running = false;
	}
	t->cpu = -1;
}

void sched_task_done(struct sched *s, struct sched_task *t)
{
	sched_dequeue(s, t);
	sched_mask_put(s, t->allowed);
	t->allowed = NULL;
}

int sched_fork(struct sched *s, struct sched_task *parent, struct sched_task *child,
	       uint64_t child_id, uint64_t now)
{
	bool expired;

	sched_task_init(s, child, child_id, now);
	child->class = parent->class;
	child->nice = parent->nice;
	child->rt_priority = parent->rt_priority;
	child->allowed = parent->allowed;
	sched_mask_ref(child->allowed);
	child->last_cpu = parent->cpu >= 0 ? parent->cpu : parent->last_cpu;
	expired = deadline_fork(&parent->dl, &child->dl, parent->nice,
				s->cfg.rr_interval_ms, now);
	child->key = runqueue_task_key(s, child, child->last_cpu);
	return expired ? 1 : 0;
}

void sched_set_nice(struct sched *s, struct sched_task *t, int nice)
{
	if (nice < NICE_MIN)
		nice = NICE_MIN;
	if (nice > NICE_MAX)
		nice = NICE_MAX;
	deadline_renice(&t->dl, t->nice, nice, s->cfg.rr_interval_ms);
	t->nice = nice;
	runqueue_rekey(s, t);
}

int sched_set_class(struct sched *s, struct sched_task *t, enum sched_class class,
		    int rt_priority)
{
	if (class < SCHED_CLASS_NORMAL || class > SCHED_CLASS_RT)
		return -EINVAL;
	if (class == SCHED_CLASS_RT && (rt_priority < 1 || rt_priority > 99))
		return -EINVAL;
	t->class = class;
	t->rt_priority = class == SCHED_CLASS_RT ? rt_priority : 0;
	if (class != SCHED_CLASS_IDLEPRIO)
		t->idle_promoted = false;
	runqueue_rekey(s, t);
	return 0;
}

void sched_set_idle_promoted(struct sched *s, struct sched_task *t, bool promoted)
{
	if (t->class != SCHED_CLASS_IDLEPRIO || t->idle_promoted == promoted)
		return;
	t->idle_promoted = promoted;
	runqueue_rekey(s, t);
}

int sched_set_allowed(struct sched *s, struct sched_task *t, const struct cpumask *mask)
{
	const struct cpumask *shared;
	bool any = false;
	int r;

	for (int i = 0; i < s->nr_cpus && !any; i++)
		any = cpumask_test(mask, i);
	if (!any)
		return -EINVAL;
	r = sched_mask_get(s, mask, &shared);
	if (r < 0)
		return r;
	sched_mask_put(s, t->allowed);
	t->allowed = shared;
	if (t->queued && !cpumask_test(mask, t->cpu)) {
		runqueue_remove(&s->rqs[t->cpu], t);
		runqueue_insert(s, &s->rqs[sched_select_cpu(s, t)], t);
	}
	return t->running && !cpumask_test(mask, t->cpu) ? 1 : 0;
}

int sched_yield_task(struct sched *s, struct sched_task *t, uint64_t now)
{
	switch (s->cfg.yield_type) {
	case 0:
		return 0;
	case 2:
		deadline_refill(&t->dl, t->nice, s->cfg.rr_interval_ms, now);
		runqueue_rekey(s, t);
		return 1;
	default:
		return 1;
	}
}

unsigned int sched_queue_len(const struct sched *s, int cpu)
{
	return s->rqs[cpu].sl.entries;
}

void sched_foreach_queued(const struct sched *s, int cpu, sched_task_func_t fn, void *data)
{
	const struct skiplist *sl = &s->rqs[cpu].sl;

	for (struct skiplist_node *n = skiplist_first(sl); n; n = skiplist_next(sl, n))
		fn(n->value, data);
}
