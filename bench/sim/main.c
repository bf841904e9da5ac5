/* muqss-sim: run synthetic workloads through the scheduler core and report shares and delays. */
#include <errno.h>
#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

#define MAX_SPECS 256

static void usage(FILE *f)
{
	fprintf(f,
		"usage: muqss-sim [options] --task SPEC [--task SPEC ...]\n"
		"  -t, --topology DESC   hwloc synthetic topology (default \"pack:1 core:2 pu:1\")\n"
		"  -d, --duration S      simulated seconds (default 10)\n"
		"      --tick-us N       accounting tick in us (default 1000)\n"
		"      --rr MS           rr_interval in ms (default 6)\n"
		"      --interactive N   0 or 1 (default 1)\n"
		"      --iso-cpu N       ISO cap in %% (default 70)\n"
		"      --iso-mode M      machine or percpu (default machine)\n"
		"      --seed N          skip list PRNG seed\n"
		"  SPEC: hog|sleeper|spawner[,count=N][,nice=N]\n"
		"        [,class=normal|batch|iso|idleprio|rt][,prio=N][,period=MS]\n"
		"        [,work=MS][,child=MS][,start=MS][,cpu=N]\n"
		"  A spawner is a shell loop: it runs WORK, forks a child that runs\n"
		"  CHILD and exits, waits for it, and starts again.\n");
}

static const char *const kind_names[] = {
	[SIM_HOG] = "hog", [SIM_SLEEPER] = "sleeper", [SIM_SPAWNER] = "spawner", [SIM_CHILD] = "child",
};

/* Parses one --task argument into *spec and *count. */
static int parse_spec(char *arg, struct sim_task_spec *spec, int *count)
{
	static const struct { const char *key; size_t off; } ms_fields[] = {
		{ "period", offsetof(struct sim_task_spec, period_ns) },
		{ "work", offsetof(struct sim_task_spec, work_ns) },
		{ "child", offsetof(struct sim_task_spec, child_work_ns) },
		{ "start", offsetof(struct sim_task_spec, start_ns) },
	};
	char *save = NULL, *tok = strtok_r(arg, ",", &save);
	int kind, cls;

	*spec = (struct sim_task_spec){ .cpu = -1 };
	*count = 1;
	for (kind = SIM_HOG; kind < SIM_CHILD; kind++)
		if (tok && strcmp(tok, kind_names[kind]) == 0)
			break;
	if (kind == SIM_CHILD)
		return -EINVAL;
	spec->kind = kind;
	while ((tok = strtok_r(NULL, ",", &save))) {
		char *v = strchr(tok, '=');
		size_t i;

		if (!v)
			return -EINVAL;
		*v++ = '\0';
		for (i = 0; i < sizeof(ms_fields) / sizeof(ms_fields[0]); i++)
			if (strcmp(tok, ms_fields[i].key) == 0)
				break;
		if (i < sizeof(ms_fields) / sizeof(ms_fields[0]))
			*(uint64_t *)((char *)spec + ms_fields[i].off) = (uint64_t)(strtod(v, NULL) * 1e6);
		else if (strcmp(tok, "count") == 0)
			*count = atoi(v);
		else if (strcmp(tok, "nice") == 0)
			spec->nice = atoi(v);
		else if (strcmp(tok, "prio") == 0)
			spec->rt_priority = atoi(v);
		else if (strcmp(tok, "cpu") == 0)
			spec->cpu = atoi(v);
		else if (strcmp(tok, "class") == 0 && (cls = sched_class_from_name(v)) >= 0)
			spec->class = (enum sched_class)cls;
		else
			return -EINVAL;
	}
	return *count > 0 ? 0 : -EINVAL;
}

static void report(struct sim *sim)
{
	double total = (double)sim_now(sim) * sim_nr_cpus(sim);
	uint64_t iso = 0;

	printf("%4s %-8s %-8s %4s %8s %8s %8s %9s %9s %9s\n", "task", "kind", "class",
	       "nice", "cpu%", "share%", "wakeups", "p50(ms)", "p99(ms)", "max(ms)");
	for (int i = 0; i < sim_nr_tasks(sim); i++) {
		const struct sim_task_spec *sp = sim_task_spec(sim, i);
		struct sim_task_stats *st = sim_task_stats(sim, i);

		iso += st->iso_runtime_ns;
		printf("%4d %-8s %-8s %4d %8.2f %8.2f %8llu %9.3f %9.3f %9.3f\n", i,
		       kind_names[sp->kind], sched_class_name(sp->class),
		       sp->nice, 100.0 * (double)st->runtime_ns / (double)sim_now(sim),
		       100.0 * (double)st->runtime_ns / total,
		       (unsigned long long)st->wakeups,
		       (double)sim_delay_percentile(st, 50) / 1e6,
		       (double)sim_delay_percentile(st, 99) / 1e6,
		       (double)st->max_delay_ns / 1e6);
	}
	printf("iso share: %.2f%% of all CPU time\n", 100.0 * (double)iso / total);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "topology", required_argument, NULL, 't' },
		{ "duration", required_argument, NULL, 'd' },
		{ "tick-us", required_argument, NULL, 'k' },
		{ "rr", required_argument, NULL, 'r' },
		{ "interactive", required_argument, NULL, 'i' },
		{ "iso-cpu", required_argument, NULL, 'c' },
		{ "iso-mode", required_argument, NULL, 'm' },
		{ "seed", required_argument, NULL, 's' },
		{ "task", required_argument, NULL, 'T' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *desc = "pack:1 core:2 pu:1";
	struct sim_task_spec specs[MAX_SPECS];
	int counts[MAX_SPECS], nr_specs = 0, c, r;
	struct sched_config cfg;
	double duration = 10;
	struct sim *sim;

	sched_config_defaults(&cfg);
	while ((c = getopt_long(argc, argv, "t:d:h", opts, NULL)) != -1) {
		switch (c) {
		case 't': desc = optarg; break;
		case 'd': duration = strtod(optarg, NULL); break;
		case 'k': cfg.tick_ns = strtoull(optarg, NULL, 10) * 1000; break;
		case 'r': cfg.rr_interval_ms = (unsigned int)atoi(optarg); break;
		case 'i': cfg.interactive = atoi(optarg) != 0; break;
		case 'c': cfg.iso_cpu = (unsigned int)atoi(optarg); break;
		case 'm':
			cfg.iso_mode = strcmp(optarg, "percpu") == 0 ?
				ISO_MODE_PER_CPU : ISO_MODE_MACHINE;
			break;
		case 's': cfg.seed = strtoull(optarg, NULL, 10); break;
		case 'T':
			if (nr_specs == MAX_SPECS ||
			    parse_spec(optarg, &specs[nr_specs], &counts[nr_specs]) < 0) {
				fprintf(stderr, "bad --task \"%s\"\n", optarg);
				return 2;
			}
			nr_specs++;
			break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (!nr_specs || duration <= 0) {
		usage(stderr);
		return 2;
	}
	r = sim_new(&sim, desc, &cfg);
	if (r < 0) {
		fprintf(stderr, "cannot simulate \"%s\": %s\n", desc, strerror(-r));
		return 1;
	}
	for (int i = 0; i < nr_specs; i++) {
		for (int k = 0; k < counts[i]; k++) {
			r = sim_add_task(sim, &specs[i]);
			if (r < 0) {
				fprintf(stderr, "cannot add task: %s\n", strerror(-r));
				sim_free(sim);
				return 1;
			}
		}
	}
	r = sim_run(sim, (uint64_t)(duration * 1e9));
	if (r < 0) {
		fprintf(stderr, "simulation failed: %s\n", strerror(-r));
		sim_free(sim);
		return 1;
	}
	printf("topology \"%s\": %d CPUs, %.1f s simulated\n", desc, sim_nr_cpus(sim), duration);
	report(sim);
	sim_free(sim);
	return 0;
}
