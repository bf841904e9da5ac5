#include "smt.h"

int64_t smt_bias(const struct sched_task *t)
{
	switch (t->class) {
	case SCHED_CLASS_RT:
		return SMT_BIAS_RT;
	case SCHED_CLASS_ISO:
		if (sched_task_running_iso(t))
			return SMT_BIAS_ISO;
		break;
	case SCHED_CLASS_IDLEPRIO:
		if (!t->idle_promoted)
			return 0;
		break;
	default:
		break;
	}
	return 20 - t->nice;
}

bool smt_may_run(const struct sched_task *t, int64_t sibling_bias,
		 unsigned int *dither)
{
	int64_t bias;

	/* RT always runs, and so does idle work that may hold a lock. */
	if (t->class == SCHED_CLASS_RT || t->idle_promoted)
		return true;
	if (sibling_bias < 1)
		return true;
	bias = smt_bias(t);
	if (bias < 1)
		return false;
	if (bias >= sibling_bias)
		return true;
	/* The dither: one time in four the weaker task runs anyway. */
	return (*dither)++ % 4 == 0;
}
