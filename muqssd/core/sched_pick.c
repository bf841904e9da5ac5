#include <errno.h>

#include "sched_priv.h"
#include "smt.h"

/*
 * MuQSS's earliest_deadline_task(), minus the locking. Queues are visited
 * nearest first. Interactive mode wants the earliest key system-wide and
 * looks past tasks it may not take; non-interactive mode stays local: it
 * only takes from a queue busier than where its candidate came from, gives
 * up on a remote queue at the first task it may not take, and never
 * crosses to another NUMA node once it has a candidate.
 *
 * Only keys below @limit count. @dither is NULL to skip SMT nice (used for
 * side-effect-free "would anything beat it" questions).
 */
static struct sched_task *pick_search(const struct sched *s, int cpu, uint64_t limit,
				      unsigned int *dither)
{
	const int *order = topology_order(s->topo, cpu);
	bool interactive = s->cfg.interactive;
	struct sched_task *edt = NULL;
	unsigned int best_entries = 0;
	uint64_t best_key = limit;
	int64_t sibling_bias = 0;

	if (dither && s->smt)
		sibling_bias = runqueue_sibling_bias(s, cpu);

	for (int i = 0; i < s->nr_cpus; i++) {
		const struct runqueue *other = &s->rqs[order[i]];
		unsigned int entries = other->sl.entries;

		if (!interactive) {
			if (edt && topology_locality(s->topo, cpu, other->cpu) >= LOCALITY_DISTANT)
				break;
			if (entries <= best_entries)
				continue;
		} else if (!entries) {
			continue;
		}
		/* The cached first key lets us skip a queue without walking it. */
		if (other->sl.best_key >= best_key)
			continue;

		for (struct skiplist_node *n = skiplist_first(&other->sl); n;
		     n = skiplist_next(&other->sl, n)) {
			struct sched_task *p = n->value;

			if (n->key >= best_key)
				break;
			if (dither && !smt_may_run(p, sibling_bias, dither)) {
				if (i && !interactive)
					break;
				continue;
			}
			if (!sched_task_allows(p, cpu)) {
				if (interactive || !i)
					continue;
				break;
			}
			best_entries = entries;
			best_key = n->key;
			edt = p;
			break;
		}
	}
	return edt;
}

/* Puts the running task of @rq back on its queue, as schedule() does. */
static void pick_put_prev(struct sched *s, struct runqueue *rq, uint64_t now)
{
	struct sched_task *prev = rq->curr;

	if (!prev)
		return;
	rq->curr = NULL;
	prev->running = false;
	/* BATCH gets a new deadline every time it is descheduled. */
	if (prev->dl.slice_ns < DEADLINE_RESCHED_NS || prev->class == SCHED_CLASS_BATCH)
		deadline_refill(&prev->dl, prev->nice, s->cfg.rr_interval_ms, now);
	runqueue_insert(s, rq, prev);
}

static void pick_take(struct sched *s, struct runqueue *rq, struct sched_task *t)
{
	/* A queued task keeps the key it was queued with, as in MuQSS. */
	if (t->queued)
		runqueue_remove(&s->rqs[t->cpu], t);
	else
		t->key = runqueue_task_key(s, t, rq->cpu);
	rq->curr = t;
	t->running = true;
	t->cpu = rq->cpu;
	t->last_cpu = rq->cpu;
}

struct sched_task *sched_pick_next(struct sched *s, int cpu, uint64_t now)
{
	struct runqueue *rq;
	struct sched_task *next;

	if (cpu < 0 || cpu >= s->nr_cpus)
		return NULL;
	rq = &s->rqs[cpu];
	pick_put_prev(s, rq, now);
	next = pick_search(s, cpu, SCHED_KEY_IDLE, &rq->dither);
	if (next)
		pick_take(s, rq, next);
	return next;
}

int sched_set_running(struct sched *s, int cpu, struct sched_task *t, uint64_t now)
{
	struct runqueue *rq;

	if (cpu < 0 || cpu >= s->nr_cpus)
		return -EINVAL;
	rq = &s->rqs[cpu];
	if (t == rq->curr)
		return 0;
	if (t && t->running)
		sched_dequeue(s, t);
	pick_put_prev(s, rq, now);
	if (t)
		pick_take(s, rq, t);
	return 0;
}

struct sched_task *sched_running(const struct sched *s, int cpu)
{
	if (cpu < 0 || cpu >= s->nr_cpus)
		return NULL;
	return s->rqs[cpu].curr;
}

int sched_charge(struct sched *s, int cpu, uint64_t ns, uint64_t now)
{
	struct sched_task *t;

	if (cpu < 0 || cpu >= s->nr_cpus || !s->rqs[cpu].curr)
		return -EINVAL;
	t = s->rqs[cpu].curr;
	if (!deadline_charge(&t->dl, ns, t->nice, s->cfg.rr_interval_ms, now))
		return 0;
	t->key = runqueue_task_key(s, t, cpu);
	return 1;
}

bool sched_need_resched(const struct sched *s, int cpu)
{
	const struct runqueue *rq = &s->rqs[cpu];
	uint64_t limit = runqueue_curr_key(rq);

	/* Idle work never sits beside a sibling's normal work. */
	if (rq->curr && s->smt && smt_bias(rq->curr) == 0 && !rq->curr->idle_promoted &&
	    runqueue_sibling_bias(s, cpu) > 0)
		return true;
	return pick_search(s, cpu, limit, NULL) != NULL;
}
