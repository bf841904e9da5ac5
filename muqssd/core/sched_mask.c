/*
 * Allowed-CPU masks, shared. A mask is 128 bytes, most tasks may run on
 * every CPU and the rest share a handful of masks (what taskset and
 * cgroups hand out), so a task points at one reference-counted copy per
 * distinct mask instead of carrying its own: at 10,000 tasks that is a
 * megabyte. NULL stands for every CPU and is never stored.
 */
#include <errno.h>
#include <stdlib.h>

#include "sched_priv.h"

struct sched_mask {
	struct cpumask mask;	/* first: the tasks' pointer is to it */
	unsigned long refs;
	struct sched_mask *next;
};

/* @mask cut to the CPUs @s has; false when that leaves every one set. */
static bool mask_clip(const struct sched *s, const struct cpumask *mask, struct cpumask *out)
{
	bool full = true;

	cpumask_zero(out);
	for (int cpu = 0; cpu < s->nr_cpus; cpu++) {
		if (cpumask_test(mask, cpu))
			cpumask_set(out, cpu);
		else
			full = false;
	}
	return !full;
}

int sched_mask_get(struct sched *s, const struct cpumask *mask, const struct cpumask **out)
{
	struct sched_mask *m;
	struct cpumask clipped;

	if (!mask_clip(s, mask, &clipped)) {
		*out = NULL;
		return 0;
	}
	for (m = s->masks; m; m = m->next)
		if (memcmp(&m->mask, &clipped, sizeof(clipped)) == 0)
			break;
	if (!m) {
		m = calloc(1, sizeof(*m));
		if (!m)
			return -ENOMEM;
		m->mask = clipped;
		m->next = s->masks;
		s->masks = m;
	}
	m->refs++;
	*out = &m->mask;
	return 0;
}

void sched_mask_ref(const struct cpumask *mask)
{
	if (mask)
		((struct sched_mask *)mask)->refs++;
}

void sched_mask_put(struct sched *s, const struct cpumask *mask)
{
	struct sched_mask **p;

	if (!mask)
		return;
	for (p = &s->masks; *p; p = &(*p)->next) {
		struct sched_mask *m = *p;

		if (&m->mask != mask)
			continue;
		if (--m->refs == 0) {
			*p = m->next;
			free(m);
		}
		return;
	}
}

void sched_masks_free(struct sched *s)
{
	while (s->masks) {
		struct sched_mask *m = s->masks;

		s->masks = m->next;
		free(m);
	}
}
