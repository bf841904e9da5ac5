/* pick-bench [iterations]: the cost of one sched_pick_next() at several CPU
 * and task counts on synthetic topologies (default 200000 picks each). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <hwloc.h>

#include "core/sched.h"

struct shape {
	const char *desc;
	int cpus;
};

static const struct shape shapes[] = {
	{ "pack:1 core:2 pu:1", 2 },
	{ "pack:2 l3:1 core:16 pu:2", 64 },
	{ "pack:8 l3:1 core:32 pu:2", 512 },
};

static const int task_counts[] = { 100, 100000 };

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int bench(const struct shape *sh, int nr_tasks, long iters, int interactive)
{
	struct sched_task *tasks;
	struct sched_config cfg;
	hwloc_topology_t topo;
	uint64_t now = 1000000000;
	struct sched *s;
	double t0, t;

	if (hwloc_topology_init(&topo) < 0 || hwloc_topology_set_synthetic(topo, sh->desc) < 0 ||
	    hwloc_topology_load(topo) < 0)
		return 1;
	sched_config_defaults(&cfg);
	cfg.interactive = interactive;
	if (sched_new(&s, topo, &cfg) < 0)
		return 1;
	hwloc_topology_destroy(topo);
	tasks = calloc((size_t)nr_tasks, sizeof(*tasks));
	if (!tasks)
		return 1;
	for (int i = 0; i < nr_tasks; i++) {
		sched_task_init(s, &tasks[i], (uint64_t)i, now);
		sched_set_nice(s, &tasks[i], i % 40 - 20);
		sched_enqueue(s, &tasks[i], i % sh->cpus, now);
	}
	/* Warm up: every CPU runs something. */
	for (int c = 0; c < sh->cpus; c++)
		sched_pick_next(s, c, now);

	t0 = now_ns();
	for (long i = 0; i < iters; i++) {
		int cpu = (int)(i % sh->cpus);

		now += 100000;
		/* The running task used its slice: it goes back with a new deadline. */
		if (sched_running(s, cpu))
			sched_charge(s, cpu, 6000000, now);
		sched_pick_next(s, cpu, now);
	}
	t = (now_ns() - t0) / (double)iters;
	printf("%5d %8d %12s %10.1f\n", sh->cpus, nr_tasks,
	       interactive ? "interactive" : "locality", t);
	sched_free(s);
	free(tasks);
	return 0;
}

int main(int argc, char **argv)
{
	long iters = argc > 1 ? atol(argv[1]) : 200000;

	if (iters < 1) {
		fprintf(stderr, "bad iteration count\n");
		return 2;
	}
	printf("%5s %8s %12s %10s\n", "cpus", "tasks", "mode", "ns/pick");
	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++)
		for (size_t k = 0; k < sizeof(task_counts) / sizeof(task_counts[0]); k++)
			for (int mode = 1; mode >= 0; mode--)
				if (bench(&shapes[i], task_counts[k], iters, mode))
					return 1;
	return 0;
}
