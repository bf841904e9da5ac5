/*
 * The MuQSS policy core: per-CPU skip list run queues, earliest-deadline
 * pick, wake-up CPU choice and preemption, ISO and IDLEPRIO handling, SMT
 * nice. It makes no system calls: the caller passes the clock ("now", in
 * ns of any monotonic clock) and the hwloc topology, and tells the core
 * what actually runs and how much CPU it used. The daemon and the
 * simulator drive this same code.
 *
 * Task life: sched_task_init() -> sched_wake() or sched_enqueue() ->
 * picked by sched_pick_next() (running) -> sched_charge() as it runs ->
 * sched_pick_next() again puts it back, or sched_dequeue() when it sleeps
 * or exits. A task is queued, running, or neither, never both.
 *
 * Not thread-safe: one owner calls everything (the daemon's event loop).
 */
#ifndef MUQSS_CORE_SCHED_H
#define MUQSS_CORE_SCHED_H

#include <stdbool.h>
#include <stdint.h>

#include <hwloc.h>

#include "cpumask.h"
#include "idleprio.h"
#include "iso.h"
#include "task.h"
#include "topology.h"

struct sched;

struct sched_config {
	/* Ranges and defaults of these four: tunables.h. */
	unsigned int rr_interval_ms;	/* slice length */
	bool interactive;		/* global earliest deadline */
	unsigned int iso_cpu;		/* ISO cap in % */
	int yield_type;			/* 0 nothing, 1 resched, 2 expire */
	enum iso_mode iso_mode;		/* default ISO_MODE_MACHINE, see iso.h */
	uint64_t tick_ns;		/* ISO accounting tick; default 1 ms */
	uint64_t seed;			/* skip list PRNG seed; 0 = fixed default */
};

typedef void (*sched_task_func_t)(const struct sched_task *t, void *data);

/* Fills @cfg with MuQSS's defaults. */
void sched_config_defaults(struct sched_config *cfg);

/* 0 if every field is in range, else -EINVAL. */
int sched_config_check(const struct sched_config *cfg);

/* Creates a scheduler for @topo (read once, not kept); 0 or -errno. Caller frees. */
int sched_new(struct sched **out, hwloc_topology_t topo, const struct sched_config *cfg);

/* Frees @s (NULL is fine), with the allowed masks its tasks point at.
 * Tasks are the caller's and are left untouched. */
void sched_free(struct sched *s);

/* Applies new tunables; a changed tick or iso_mode resets ISO accounting. 0 or -EINVAL. */
int sched_set_config(struct sched *s, const struct sched_config *cfg);

/* Current tunables, owned by @s. */
const struct sched_config *sched_get_config(const struct sched *s);

/* Topology read at creation, owned by @s. */
const struct topology *sched_topology(const struct sched *s);

/* Number of CPUs (run queues). */
int sched_nr_cpus(const struct sched *s);

/* Sets @t up as a NORMAL nice 0 task allowed everywhere, with a fresh slice. */
void sched_task_init(struct sched *s, struct sched_task *t, uint64_t id, uint64_t now);

/* Takes @t off the core for good (an exit): off its queue or CPU, and
 * its hold on a shared allowed mask dropped. sched_task_init() may
 * reuse it after. */
void sched_task_done(struct sched *s, struct sched_task *t);

/* Puts a runnable @t on @cpu's queue. 0, -EINVAL (bad or disallowed cpu), -EBUSY (already on). */
int sched_enqueue(struct sched *s, struct sched_task *t, int cpu, uint64_t now);

/* Takes @t off its queue or CPU (sleep, exit); no-op if it is neither. */
void sched_dequeue(struct sched *s, struct sched_task *t);

/* Chooses a CPU for waking @t, per MuQSS (idle last CPU, idle by penalty, least loaded). */
int sched_select_cpu(const struct sched *s, const struct sched_task *t);

/* CPU whose current task queued @t should preempt, or -1. */
int sched_preempt_cpu(const struct sched *s, const struct sched_task *t);

/* Wakes @t: select, enqueue, and set *preempt_cpu (-1 for none). Returns its queue's cpu or -errno. */
int sched_wake(struct sched *s, struct sched_task *t, uint64_t now, int *preempt_cpu);

/* Puts @cpu's running task back and takes the next one off the queues; NULL = idle. */
struct sched_task *sched_pick_next(struct sched *s, int cpu, uint64_t now);

/* Records that @t (NULL = idle) runs on @cpu, whatever the core would pick. 0 or -EINVAL. */
int sched_set_running(struct sched *s, int cpu, struct sched_task *t, uint64_t now);

/* Task running on @cpu, or NULL when idle. Owned by the caller as always. */
struct sched_task *sched_running(const struct sched *s, int cpu);

/* Charges @cpu's running task @ns of CPU. 1 if its slice ran out (resched), 0 if not, -EINVAL if idle. */
int sched_charge(struct sched *s, int cpu, uint64_t ns, uint64_t now);

/* True if something queued ought to replace what @cpu runs now. */
bool sched_need_resched(const struct sched *s, int cpu);

/* @child (uninitialised) inherits from @parent and shares its slice. 1 if the parent should resched, else 0. */
int sched_fork(struct sched *s, struct sched_task *parent, struct sched_task *child,
	       uint64_t child_id, uint64_t now);

/* Renices @t; its deadline moves by offset(new) - offset(old). */
void sched_set_nice(struct sched *s, struct sched_task *t, int nice);

/* Changes class (rt_priority 1..99 for RT, ignored otherwise). 0 or -EINVAL. */
int sched_set_class(struct sched *s, struct sched_task *t, enum sched_class class,
		    int rt_priority);

/* Promotes or demotes an IDLEPRIO task (see idleprio_should_promote()). */
void sched_set_idle_promoted(struct sched *s, struct sched_task *t, bool promoted);

/* New allowed CPUs (copied). 1 if @t runs on a CPU it may no longer use,
 * 0, or -EINVAL (empty), -ENOMEM. */
int sched_set_allowed(struct sched *s, struct sched_task *t, const struct cpumask *mask);

/* A sched_yield() call by @t, per yield_type. 1 if the caller should resched @t's CPU, else 0. */
int sched_yield_task(struct sched *s, struct sched_task *t, uint64_t now);

/* One ISO accounting tick on every CPU. True if ISO state flipped (resched all CPUs). */
bool sched_iso_tick(struct sched *s);

/* True if ISO tasks on @cpu currently run as normal (over the cap). */
bool sched_iso_refractory(const struct sched *s, int cpu);

/* ISO figure for @cpu (machine figure in ISO_MODE_MACHINE), in %. */
unsigned int sched_iso_percent(const struct sched *s, int cpu);

/* Number of tasks queued on @cpu (not counting the running one). */
unsigned int sched_queue_len(const struct sched *s, int cpu);

/* Calls @fn on each task queued on @cpu, earliest key first. @fn must not modify queues. */
void sched_foreach_queued(const struct sched *s, int cpu, sched_task_func_t fn, void *data);

#endif
