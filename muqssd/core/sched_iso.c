#include "sched_priv.h"

static bool sched_cpu_runs_iso(const struct runqueue *rq)
{
	const struct sched_task *t = rq->curr;

	/* RT counts too, so ISO cannot starve normal work by hiding behind it. */
	return t && (t->class == SCHED_CLASS_RT || sched_task_running_iso(t));
}

bool sched_iso_tick(struct sched *s)
{
	bool flipped = false;

	for (int i = 0; i < s->nr_cpus; i++) {
		struct runqueue *rq = &s->rqs[i];
		bool running = sched_cpu_runs_iso(rq);

		if (s->cfg.iso_mode == ISO_MODE_PER_CPU) {
			if (iso_account(&rq->iso, running, s->cfg.iso_cpu)) {
				runqueue_rekey_iso(s, i);
				flipped = true;
			}
		} else if (iso_account(&s->iso, running, s->cfg.iso_cpu)) {
			flipped = true;
		}
	}
	if (flipped && s->cfg.iso_mode == ISO_MODE_MACHINE)
		for (int i = 0; i < s->nr_cpus; i++)
			runqueue_rekey_iso(s, i);
	return flipped;
}

bool sched_iso_refractory(const struct sched *s, int cpu)
{
	if (s->cfg.iso_mode == ISO_MODE_PER_CPU)
		return s->rqs[cpu].iso.refractory;
	return s->iso.refractory;
}

unsigned int sched_iso_percent(const struct sched *s, int cpu)
{
	if (s->cfg.iso_mode == ISO_MODE_PER_CPU)
		return iso_percent(&s->rqs[cpu].iso);
	return iso_percent(&s->iso);
}
