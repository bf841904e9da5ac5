#include <errno.h>
#include <string.h>

#include "idleprio.h"
#include "sched_priv.h"
#include "smt.h"

const char *sched_class_name(enum sched_class class)
{
	switch (class) {
	case SCHED_CLASS_NORMAL:
		return "normal";
	case SCHED_CLASS_BATCH:
		return "batch";
	case SCHED_CLASS_ISO:
		return "iso";
	case SCHED_CLASS_IDLEPRIO:
		return "idleprio";
	case SCHED_CLASS_RT:
		return "rt";
	}
	return "unknown";
}

int sched_class_from_name(const char *name)
{
	for (int c = SCHED_CLASS_NORMAL; c <= SCHED_CLASS_RT; c++)
		if (name && strcmp(name, sched_class_name((enum sched_class)c)) == 0)
			return c;
	return -EINVAL;
}

static bool runqueue_iso_ok(const struct sched *s, int cpu)
{
	if (s->cfg.iso_mode == ISO_MODE_PER_CPU)
		return !s->rqs[cpu].iso.refractory;
	return !s->iso.refractory;
}

uint64_t runqueue_task_key(const struct sched *s, const struct sched_task *t, int cpu)
{
	switch (t->class) {
	case SCHED_CLASS_RT:
		return (uint64_t)(SCHED_KEY_RT_MAX - t->rt_priority);
	case SCHED_CLASS_ISO:
		/* Over the cap an ISO task is just a normal task with its deadline. */
		if (runqueue_iso_ok(s, cpu))
			return SCHED_KEY_ISO;
		return t->dl.deadline;
	case SCHED_CLASS_IDLEPRIO:
		if (t->idle_promoted)
			return t->dl.deadline + deadline_offset(NICE_MAX, s->cfg.rr_interval_ms);
		return t->dl.deadline | IDLEPRIO_KEY_BIAS;
	case SCHED_CLASS_NORMAL:
	case SCHED_CLASS_BATCH:
		break;
	}
	return t->dl.deadline;
}

void runqueue_insert(struct sched *s, struct runqueue *rq, struct sched_task *t)
{
	t->key = runqueue_task_key(s, t, rq->cpu);
	skiplist_insert(&rq->sl, &t->node, t->key, t);
	t->queued = true;
	t->cpu = rq->cpu;
	t->last_cpu = rq->cpu;
}

void runqueue_remove(struct runqueue *rq, struct sched_task *t)
{
	skiplist_delete(&rq->sl, &t->node);
	t->queued = false;
}

void runqueue_rekey(struct sched *s, struct sched_task *t)
{
	uint64_t key;

	if (t->cpu < 0)
		return;
	key = runqueue_task_key(s, t, t->cpu);
	if (t->queued && key != t->key) {
		struct runqueue *rq = &s->rqs[t->cpu];

		runqueue_remove(rq, t);
		runqueue_insert(s, rq, t);
	}
	t->key = key;
}

void runqueue_rekey_iso(struct sched *s, int cpu)
{
	struct runqueue *rq = &s->rqs[cpu];
	struct skiplist_node *n = skiplist_first(&rq->sl);

	/*
	 * A moved task lands either before the cursor (key 101) or after it
	 * with its final key, so meeting it again changes nothing and the walk
	 * ends.
	 */
	while (n) {
		struct skiplist_node *next = skiplist_next(&rq->sl, n);
		struct sched_task *t = n->value;

		if (t->class == SCHED_CLASS_ISO)
			runqueue_rekey(s, t);
		n = next;
	}
	if (rq->curr && rq->curr->class == SCHED_CLASS_ISO)
		runqueue_rekey(s, rq->curr);
}

int64_t runqueue_sibling_bias(const struct sched *s, int cpu)
{
	int64_t best = 0;
	const int *cpus;
	int nr;

	cpus = topology_core_cpus(s->topo, cpu, &nr);
	for (int i = 0; i < nr; i++) {
		const struct sched_task *curr = s->rqs[cpus[i]].curr;

		if (cpus[i] == cpu || !curr)
			continue;
		if (smt_bias(curr) > best)
			best = smt_bias(curr);
	}
	return best;
}
