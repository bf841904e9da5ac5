/* sched_setattr(2)/sched_getattr(2), which glibc 2.36 does not wrap. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#ifndef SCHED_DEADLINE
#define SCHED_DEADLINE 6
#endif
#ifndef SCHED_FLAG_RESET_ON_FORK
#define SCHED_FLAG_RESET_ON_FORK 0x01
#endif

/* struct sched_attr, SCHED_ATTR_SIZE_VER1 (with the uclamp fields). */
struct sched_attr_v1 {
	uint32_t size;
	uint32_t sched_policy;
	uint64_t sched_flags;
	int32_t sched_nice;
	uint32_t sched_priority;
	uint64_t sched_runtime;
	uint64_t sched_deadline;
	uint64_t sched_period;
	uint32_t sched_util_min;
	uint32_t sched_util_max;
};

int sched_attr_get(pid_t tid, struct sched_attr_v1 *ret);
int sched_attr_set(pid_t tid, const struct sched_attr_v1 *attr);
/* sched_attr_set() for a task that leaves a realtime policy of ours (set
 * with reset-on-fork): no child it forks meanwhile keeps that policy. */
int sched_attr_set_leaving_rt(pid_t tid, const struct sched_attr_v1 *attr);

/* FIFO, RR or DEADLINE: the policies muqssd never takes from anyone. */
static inline bool sched_policy_is_rt(int policy)
{
	return policy == 1 /* FIFO */ || policy == 2 /* RR */ || policy == SCHED_DEADLINE;
}

/* Whether the kernel reports (and so takes) an EEVDF slice request for
 * normal tasks, and the default slice it gives a task that set none.
 * Probed on the calling thread. */
bool sched_slice_probe(uint64_t *default_ns);
