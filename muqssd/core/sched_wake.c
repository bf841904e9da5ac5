#include <errno.h>

#include "sched_priv.h"
#include "smt.h"

/* MuQSS's idle-CPU penalty flags: the lowest sum wins. */
enum {
	CPUIDLE_DIFF_THREAD = 1,
	CPUIDLE_DIFF_CORE = 2,
	CPUIDLE_CACHE_BUSY = 4,
	CPUIDLE_DIFF_CPU = 8,
	CPUIDLE_THREAD_BUSY = 16,
	CPUIDLE_DIFF_NODE = 32,
};

static bool wake_cpus_idle(const struct sched *s, const int *cpus, int nr)
{
	for (int i = 0; i < nr; i++)
		if (s->rqs[cpus[i]].curr)
			return false;
	return true;
}

static bool wake_siblings_idle(const struct sched *s, int cpu)
{
	const int *cpus;
	int nr;

	cpus = topology_core_cpus(s->topo, cpu, &nr);
	return wake_cpus_idle(s, cpus, nr);
}

static bool wake_cache_idle(const struct sched *s, int cpu)
{
	const int *cpus;
	int nr;

	cpus = topology_llc_cpus(s->topo, cpu, &nr);
	return wake_cpus_idle(s, cpus, nr);
}

static int wake_penalty(const struct sched *s, int from, int cpu)
{
	enum locality loc = topology_locality(s->topo, from, cpu);
	int rank = 0;

	if (loc == LOCALITY_DISTANT)
		rank |= CPUIDLE_DIFF_NODE;
	else if (loc >= LOCALITY_PACKAGE)
		rank |= CPUIDLE_DIFF_CPU;
	else if (loc == LOCALITY_LLC)
		rank |= CPUIDLE_DIFF_CORE;
	else if (loc == LOCALITY_SMT)
		rank |= CPUIDLE_DIFF_THREAD;
	if (!wake_cache_idle(s, cpu))
		rank |= CPUIDLE_CACHE_BUSY;
	if (!wake_siblings_idle(s, cpu))
		rank |= CPUIDLE_THREAD_BUSY;
	return rank;
}

/*
 * Whether @t could run on idle @cpu without the SMT rules holding it back.
 * A fresh dither counter of 1 refuses the one-in-four case: we want CPUs
 * where it will surely run.
 */
static bool wake_smt_ok(const struct sched *s, const struct sched_task *t, int cpu)
{
	unsigned int dither = 1;

	if (!s->smt)
		return true;
	return smt_may_run(t, runqueue_sibling_bias(s, cpu), &dither);
}

/* Best idle allowed CPU seen from @from, or -1 if none is idle. */
static int wake_best_idle(const struct sched *s, const struct sched_task *t, int from)
{
	int best = -1, best_rank = 0;

	if (!s->rqs[from].curr && sched_task_allows(t, from))
		return wake_smt_ok(s, t, from) ? from : -1;

	for (int cpu = 0; cpu < s->nr_cpus; cpu++) {
		int rank;

		if (s->rqs[cpu].curr || !sched_task_allows(t, cpu))
			continue;
		rank = wake_penalty(s, from, cpu);
		if (best < 0 || rank < best_rank) {
			best = cpu;
			best_rank = rank;
		}
	}
	if (best >= 0 && !wake_smt_ok(s, t, best))
		return -1;
	return best;
}

static int wake_from_cpu(const struct sched *s, const struct sched_task *t)
{
	int cpu = t->cpu >= 0 ? t->cpu : t->last_cpu;

	if (cpu >= 0 && cpu < s->nr_cpus && sched_task_allows(t, cpu))
		return cpu;
	for (cpu = 0; cpu < s->nr_cpus; cpu++)
		if (sched_task_allows(t, cpu))
			return cpu;
	return 0;
}

int sched_select_cpu(const struct sched *s, const struct sched_task *t)
{
	int from = wake_from_cpu(s, t);
	const int *order = topology_order(s->topo, from);
	unsigned int idlest = ~0U;
	int cpu;

	cpu = wake_best_idle(s, t, from);
	if (cpu >= 0)
		return cpu;

	cpu = from;
	for (int i = 0; i < s->nr_cpus; i++) {
		const struct runqueue *rq = &s->rqs[order[i]];

		if (!sched_task_allows(t, rq->cpu))
			continue;
		if (runqueue_load(rq) >= idlest)
			continue;
		idlest = runqueue_load(rq);
		cpu = rq->cpu;
	}
	return cpu;
}

/* MuQSS's can_preempt(): strictly better key, and BATCH never preempts normal work. */
static bool wake_can_preempt(const struct sched_task *t, const struct runqueue *rq)
{
	uint64_t curr_key = runqueue_curr_key(rq);

	if (t->key >= curr_key)
		return false;
	if (t->class == SCHED_CLASS_BATCH && rq->curr && curr_key > SCHED_KEY_ISO &&
	    curr_key < IDLEPRIO_KEY_BIAS)
		return false;
	return true;
}

int sched_preempt_cpu(const struct sched *s, const struct sched_task *t)
{
	int from = wake_from_cpu(s, t);
	const int *order = topology_order(s->topo, from);
	unsigned int this_load = runqueue_load(&s->rqs[from]);
	int cpu;

	cpu = wake_best_idle(s, t, from);
	if (cpu >= 0)
		return cpu;
	/* Idle-priority work never preempts anything but idle. */
	if (t->class == SCHED_CLASS_IDLEPRIO && !t->idle_promoted)
		return -1;

	for (int i = 0; i < s->nr_cpus; i++) {
		const struct runqueue *rq = &s->rqs[order[i]];

		if (!sched_task_allows(t, rq->cpu))
			continue;
		if (!s->cfg.interactive && rq->cpu != from && runqueue_load(rq) <= this_load)
			continue;
		if (wake_smt_ok(s, t, rq->cpu) && wake_can_preempt(t, rq))
			return rq->cpu;
	}
	return -1;
}

int sched_wake(struct sched *s, struct sched_task *t, uint64_t now, int *preempt_cpu)
{
	int cpu, r;

	*preempt_cpu = -1;
	if (t->running || t->queued)
		return t->cpu;
	cpu = sched_select_cpu(s, t);
	r = sched_enqueue(s, t, cpu, now);
	if (r < 0)
		return r;
	*preempt_cpu = sched_preempt_cpu(s, t);
	return cpu;
}
