/* Shared between the core's sched_*.c files; not part of the public API. */
#ifndef MUQSS_CORE_SCHED_PRIV_H
#define MUQSS_CORE_SCHED_PRIV_H

#include "iso.h"
#include "sched.h"
#include "skiplist.h"
#include "topology.h"

struct runqueue {
	struct skiplist sl;
	struct sched_task *curr;	/* NULL while idle */
	int cpu;
	unsigned int dither;		/* SMT nice one-in-four counter */
	struct iso iso;			/* ISO_MODE_PER_CPU */
};

struct sched {
	struct sched_config cfg;
	struct topology *topo;
	int nr_cpus;
	bool smt;			/* any core with more than one CPU */
	struct runqueue *rqs;
	struct iso iso;			/* ISO_MODE_MACHINE */
	struct sched_mask *masks;	/* the tasks' allowed masks, shared */
};

/* sched_mask.c: tasks' allowed masks, one reference-counted copy per
 * distinct mask. *out is NULL for a mask with every CPU of @s. */
int sched_mask_get(struct sched *s, const struct cpumask *mask, const struct cpumask **out);
void sched_mask_ref(const struct cpumask *mask);
void sched_mask_put(struct sched *s, const struct cpumask *mask);
void sched_masks_free(struct sched *s);

/* Tasks queued plus the running one. */
static inline unsigned int runqueue_load(const struct runqueue *rq)
{
	return rq->sl.entries + (rq->curr ? 1 : 0);
}

static inline uint64_t runqueue_curr_key(const struct runqueue *rq)
{
	return rq->curr ? rq->curr->key : SCHED_KEY_IDLE;
}

/* The key @t gets on @cpu's queue or CPU, given its class and ISO state. */
uint64_t runqueue_task_key(const struct sched *s, const struct sched_task *t, int cpu);

/* Links @t into @rq with a freshly computed key. */
void runqueue_insert(struct sched *s, struct runqueue *rq, struct sched_task *t);

/* Unlinks queued @t from @rq. */
void runqueue_remove(struct runqueue *rq, struct sched_task *t);

/* Recomputes @t's key wherever it is, moving it in its queue if needed. */
void runqueue_rekey(struct sched *s, struct sched_task *t);

/* Rekeys every ISO task queued on or running on @cpu. */
void runqueue_rekey_iso(struct sched *s, int cpu);

/* Best SMT bias running on @cpu's siblings, 0 if none. */
int64_t runqueue_sibling_bias(const struct sched *s, int cpu);

#endif
