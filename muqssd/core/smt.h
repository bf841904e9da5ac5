/*
 * SMT nice: a thread shares its core with its siblings, so a low-priority
 * task running beside a high-priority one slows it down. Each running task
 * has a bias; a task may run beside a sibling with a higher bias only one
 * time in four. Idle-priority work never runs beside a sibling's normal
 * work at all.
 */
#ifndef MUQSS_CORE_SMT_H
#define MUQSS_CORE_SMT_H

#include <stdbool.h>
#include <stdint.h>

#include "task.h"

#define SMT_BIAS_RT (INT64_C(1) << 30)
#define SMT_BIAS_ISO (INT64_C(1) << 29)

/* Bias of @t as it runs now: RT 2^30, ISO 2^29, IDLEPRIO 0, else 20 - nice. */
int64_t smt_bias(const struct sched_task *t);

/*
 * May @t run beside siblings whose best running bias is @sibling_bias (0 if
 * they are idle or run idle-priority work)? Consults and advances *dither
 * only when the one-in-four rule decides.
 */
bool smt_may_run(const struct sched_task *t, int64_t sibling_bias,
		 unsigned int *dither);

#endif
