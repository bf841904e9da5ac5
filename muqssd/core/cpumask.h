/* Fixed-size CPU bitmap. Tasks share them (sched_mask.c). */
#ifndef MUQSS_CORE_CPUMASK_H
#define MUQSS_CORE_CPUMASK_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define CPUMASK_MAX_CPUS 1024

struct cpumask {
	uint64_t bits[CPUMASK_MAX_CPUS / 64];
};

static inline void cpumask_zero(struct cpumask *m)
{
	memset(m, 0, sizeof(*m));
}

/* Sets CPUs 0 .. nr - 1. */
static inline void cpumask_fill(struct cpumask *m, int nr)
{
	cpumask_zero(m);
	for (int i = 0; i < nr && i < CPUMASK_MAX_CPUS; i++)
		m->bits[i / 64] |= UINT64_C(1) << (i % 64);
}

static inline void cpumask_set(struct cpumask *m, int cpu)
{
	if (cpu >= 0 && cpu < CPUMASK_MAX_CPUS)
		m->bits[cpu / 64] |= UINT64_C(1) << (cpu % 64);
}

static inline void cpumask_clear(struct cpumask *m, int cpu)
{
	if (cpu >= 0 && cpu < CPUMASK_MAX_CPUS)
		m->bits[cpu / 64] &= ~(UINT64_C(1) << (cpu % 64));
}

static inline bool cpumask_test(const struct cpumask *m, int cpu)
{
	if (cpu < 0 || cpu >= CPUMASK_MAX_CPUS)
		return false;
	return m->bits[cpu / 64] & (UINT64_C(1) << (cpu % 64));
}

#endif
