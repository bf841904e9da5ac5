/*
 * A discrete-event simulator around the real scheduler core: synthetic tasks
 * on a synthetic hwloc topology; time goes from event to event, so wake-to-run
 * delays are exact. An idle CPU retries at the tick; a woken task preempts
 * the CPU the core names; a descheduled runnable task nudges idle CPUs.
 */
#ifndef MUQSS_BENCH_SIM_H
#define MUQSS_BENCH_SIM_H

#include <stdint.h>

#include "core/sched.h"

enum sim_kind {
	SIM_HOG,	/* always runnable */
	SIM_SLEEPER,	/* wakes every period_ns, runs work_ns, sleeps */
	SIM_SPAWNER,	/* a shell loop: runs work_ns, forks a child, waits for it */
	SIM_CHILD,	/* a spawner's child: runs work_ns from its fork, exits */
};

struct sim_task_spec {
	enum sim_kind kind;
	enum sched_class class;
	int nice;
	int rt_priority;	/* RT only */
	uint64_t period_ns;	/* SIM_SLEEPER */
	uint64_t work_ns;	/* SIM_SLEEPER, SIM_SPAWNER, SIM_CHILD */
	uint64_t child_work_ns;	/* SIM_SPAWNER: its child's work */
	uint64_t start_ns;	/* first wake-up */
	int cpu;		/* pin to this CPU; -1 for all */
};

struct sim_task_stats {
	uint64_t runtime_ns;
	uint64_t iso_runtime_ns;	/* while running as ISO, under the cap */
	uint64_t wakeups;
	uint64_t *delays_ns;		/* wake-to-run delay of each wake-up */
	uint64_t nr_delays;
	uint64_t max_delay_ns;
};

struct sim;

/* A simulator on hwloc synthetic topology @desc with tunables @cfg. 0 or -errno. */
int sim_new(struct sim **out, const char *desc, const struct sched_config *cfg);

void sim_free(struct sim *sim);

/* Adds a task before sim_run(); its index or -errno. A spawner also adds its
 * child, at the next index: one child lives at a time. */
int sim_add_task(struct sim *sim, const struct sim_task_spec *spec);

/* Runs the simulated machine until @duration_ns. 0 or -errno. */
int sim_run(struct sim *sim, uint64_t duration_ns);

int sim_nr_tasks(const struct sim *sim);
int sim_nr_cpus(const struct sim *sim);
/* Task @idx's stats and spec, owned by @sim. */
struct sim_task_stats *sim_task_stats(struct sim *sim, int idx);
const struct sim_task_spec *sim_task_spec(const struct sim *sim, int idx);

/* The @pct-th percentile (0..100) of the task's wake delays; 0 if none. Sorts in place. */
uint64_t sim_delay_percentile(struct sim_task_stats *stats, double pct);

/* Times the ISO cap tripped or cleared so far. */
uint64_t sim_iso_flips(const struct sim *sim);
/* Simulated time elapsed, ns. */
uint64_t sim_now(const struct sim *sim);

#endif
