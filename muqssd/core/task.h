/*
 * The core's per-task state. The daemon embeds struct sched_task in its own
 * task object (intrusive, like the skip list node inside it) and points
 * @data back at that object; the core never allocates or frees tasks.
 */
#ifndef MUQSS_CORE_TASK_H
#define MUQSS_CORE_TASK_H

#include <stdbool.h>
#include <stdint.h>

#include "cpumask.h"
#include "deadline.h"
#include "skiplist.h"

enum sched_class {
	SCHED_CLASS_NORMAL = 0,
	SCHED_CLASS_BATCH,
	SCHED_CLASS_ISO,
	SCHED_CLASS_IDLEPRIO,
	SCHED_CLASS_RT,
};

/* Skip list keys below every deadline; deadlines are ns, far above these. */
#define SCHED_KEY_RT_MAX 99	/* RT key = 99 - rt_priority (1..99), as kernel prio */
#define SCHED_KEY_ISO 101
#define SCHED_KEY_IDLE (~UINT64_C(0))	/* what an idle CPU "runs" */

struct sched_task {
	uint64_t id;			/* opaque to the core: tid in the daemon */
	enum sched_class class;
	int nice;			/* -20..19 */
	int rt_priority;		/* 1..99, RT only */
	int cpu;			/* queue or CPU it runs on; -1 when neither */
	int last_cpu;			/* where it last ran or was queued */
	bool queued;
	bool running;
	bool idle_promoted;		/* IDLEPRIO keyed as nice 19 normal */
	struct deadline dl;		/* deadline and slice left */
	uint64_t key;			/* current skip list key, also while running */
	const struct cpumask *allowed;	/* shared by the core; NULL: every CPU */
	struct skiplist_node node;
	void *data;			/* owner's back pointer */
};

/* True if @t may run on @cpu (a CPU of its scheduler). */
static inline bool sched_task_allows(const struct sched_task *t, int cpu)
{
	return !t->allowed || cpumask_test(t->allowed, cpu);
}

/* Short lowercase name of a class ("normal", "iso", ...), never NULL. */
/* The one class enum of muqssd, from the core to the protocol: its names
 * ("normal", "batch", "iso", "idleprio", "rt") are the wire's and the
 * rules'. */
const char *sched_class_name(enum sched_class class);
/* The class named name, or -EINVAL. */
int sched_class_from_name(const char *name);

/* True if the task's key says it runs as ISO (not demoted over the cap). */
static inline bool sched_task_running_iso(const struct sched_task *t)
{
	return t->class == SCHED_CLASS_ISO && t->key == SCHED_KEY_ISO;
}

#endif
