/* Shares and latencies of the real core, measured in the simulator. */
#include "check.h"
#include "sim.h"

#define MS 1000000ull
#define SEC 1000000000ull

static struct sim *mk(const char *desc, enum iso_mode mode)
{
	struct sched_config cfg;
	struct sim *sim;

	sched_config_defaults(&cfg);
	cfg.iso_mode = mode;
	if (sim_new(&sim, desc, &cfg) < 0) {
		fprintf(stderr, "sim_new \"%s\" failed\n", desc);
		exit(1);
	}
	return sim;
}

static int add(struct sim *sim, enum sim_kind kind, enum sched_class class, int nice)
{
	struct sim_task_spec spec = { .kind = kind, .class = class, .nice = nice, .cpu = -1 };

	if (kind == SIM_SLEEPER) {
		spec.period_ns = 16700000;
		spec.work_ns = 3 * MS;
	}
	return sim_add_task(sim, &spec);
}

static double share(struct sim *sim, int idx)
{
	return 100.0 * (double)sim_task_stats(sim, idx)->runtime_ns /
	       ((double)sim_now(sim) * sim_nr_cpus(sim));
}

static double iso_share(struct sim *sim)
{
	uint64_t iso = 0;

	for (int i = 0; i < sim_nr_tasks(sim); i++)
		iso += sim_task_stats(sim, i)->iso_runtime_ns;
	return 100.0 * (double)iso / ((double)sim_now(sim) * sim_nr_cpus(sim));
}

/* nice 19 against nice 0 on one CPU: about 3% (2.7% by the deadline arithmetic). */
static void test_nice_19(void)
{
	struct sim *sim = mk("pack:1 core:1 pu:1", ISO_MODE_MACHINE);
	int a = add(sim, SIM_HOG, SCHED_CLASS_NORMAL, 0);
	int b = add(sim, SIM_HOG, SCHED_CLASS_NORMAL, 19);

	CHECK_EQ(sim_run(sim, 60 * SEC), 0);
	CHECK_RANGE(share(sim, b), 2, 4);
	CHECK_RANGE(share(sim, a), 96, 98);
	sim_free(sim);
}

/* Equal nice: each gets its fair share within 2 points, on 1 and on 4 CPUs. */
static void test_equal_nice(void)
{
	const char *descs[] = { "pack:1 core:1 pu:1", "pack:1 core:4 pu:1", "pack:1 core:2 pu:2" };
	const int hogs[] = { 3, 10, 6 };

	for (int d = 0; d < 3; d++) {
		struct sim *sim = mk(descs[d], ISO_MODE_MACHINE);
		double fair;

		for (int i = 0; i < hogs[d]; i++)
			add(sim, SIM_HOG, SCHED_CLASS_NORMAL, 5);
		CHECK_EQ(sim_run(sim, 30 * SEC), 0);
		fair = 100.0 / hogs[d];
		for (int i = 0; i < hogs[d]; i++)
			CHECK_RANGE(share(sim, i), fair - 2, fair + 2);
		sim_free(sim);
	}
}

/*
 * A 60 fps-like sleeper (3 ms every 16.7 ms) among hogs. With one hog per
 * CPU (two runnable tasks, the range MuQSS claims its bound for) it never
 * waits longer than rr_interval and never misses a period. With four hogs
 * per CPU almost every wake-up is immediate (p99 within rr_interval), but
 * when its slice runs out mid-burst it takes a fresh deadline 41 ms out and
 * waits behind every hog: the worst case is one slice per hog.
 */
static void test_sleeper(void)
{
	struct sim *sim;
	struct sim_task_stats *st;
	int s;

	sim = mk("pack:1 core:2 pu:1", ISO_MODE_MACHINE);
	for (int i = 0; i < 2; i++)
		add(sim, SIM_HOG, SCHED_CLASS_NORMAL, 0);
	s = add(sim, SIM_SLEEPER, SCHED_CLASS_NORMAL, 0);
	CHECK_EQ(sim_run(sim, 60 * SEC), 0);
	st = sim_task_stats(sim, s);
	CHECK(st->max_delay_ns <= 6 * MS);
	CHECK_RANGE(st->wakeups, 3590, 3594);
	sim_free(sim);

	sim = mk("pack:1 core:2 pu:1", ISO_MODE_MACHINE);
	for (int i = 0; i < 8; i++)
		add(sim, SIM_HOG, SCHED_CLASS_NORMAL, 0);
	s = add(sim, SIM_SLEEPER, SCHED_CLASS_NORMAL, 0);
	CHECK_EQ(sim_run(sim, 60 * SEC), 0);
	st = sim_task_stats(sim, s);
	CHECK(sim_delay_percentile(st, 99) <= 6 * MS);
	CHECK(st->max_delay_ns <= 4 * 6 * MS);
	sim_free(sim);
}

/*
 * issue 13's stall load, as MuQSS itself orders it: the frame task beside
 * eight hogs and an exec storm (two shell loops, each forking a short
 * child and waiting for it: bash's 0.14 ms and the child's 0.5-0.6 ms, as
 * measured with perf stat on /bin/true and sh -c true). The woken frame
 * task preempts the CPU whose task has the latest deadline, which is a
 * hog's while the storm's short children hold at most one CPU each: its
 * wake-up p99 is zero. So a live p99 of milliseconds is ours, not
 * MuQSS's order. (Without wake-up preemption it is 5.5 ms.)
 */
static void test_sleeper_beside_storm(void)
{
	struct sim_task_spec storm = { .kind = SIM_SPAWNER, .work_ns = 140000, .cpu = -1 };
	struct sim_task_stats *st;
	struct sim *sim;
	int s, sp[2];

	sim = mk("pack:1 core:2 pu:1", ISO_MODE_MACHINE);
	for (int i = 0; i < 8; i++)
		add(sim, SIM_HOG, SCHED_CLASS_NORMAL, 0);
	s = add(sim, SIM_SLEEPER, SCHED_CLASS_NORMAL, 0);
	storm.child_work_ns = 500000;
	sp[0] = sim_add_task(sim, &storm);
	storm.child_work_ns = 600000;
	sp[1] = sim_add_task(sim, &storm);
	CHECK(sp[0] >= 0 && sp[1] >= 0);
	CHECK_EQ(sim_run(sim, 20 * SEC), 0);
	st = sim_task_stats(sim, s);
	CHECK(sim_delay_percentile(st, 99) <= 100000);
	for (int i = 0; i < 2; i++) {
		/* Each loop forked and reaped a child at a time. */
		uint64_t forks = sim_task_stats(sim, sp[i])->wakeups;

		CHECK(forks > 500);
		CHECK_RANGE(sim_task_stats(sim, sp[i] + 1)->wakeups, forks - 1, forks);
		CHECK_EQ(sim_task_spec(sim, sp[i] + 1)->kind, SIM_CHILD);
	}
	sim_free(sim);
}

/*
 * A permanently runnable ISO task beside a hog on one CPU: over 60 s its ISO
 * share is iso_cpu within 2 points; it was demoted and re-promoted many times
 * (each cycle climbs 62 -> 70 and decays back: about 1.8 s).
 */
static void test_iso_share(void)
{
	struct sim *sim = mk("pack:1 core:1 pu:1", ISO_MODE_PER_CPU);

	add(sim, SIM_HOG, SCHED_CLASS_ISO, 0);
	add(sim, SIM_HOG, SCHED_CLASS_NORMAL, 0);
	CHECK_EQ(sim_run(sim, 60 * SEC), 0);
	CHECK_RANGE(iso_share(sim), 68, 72);
	CHECK_RANGE(sim_iso_flips(sim), 50, 70);
	/* Steady state sits between the clear and trip thresholds. */
	CHECK_EQ(sim_run(sim, 240 * SEC), 0);
	CHECK_RANGE(iso_share(sim), 62, 70);
	sim_free(sim);

	/* Whole machine: 2 ISO tasks on 2 CPUs share a 70% cap of the machine. */
	sim = mk("pack:1 core:2 pu:1", ISO_MODE_MACHINE);
	add(sim, SIM_HOG, SCHED_CLASS_ISO, 0);
	add(sim, SIM_HOG, SCHED_CLASS_ISO, 0);
	add(sim, SIM_HOG, SCHED_CLASS_NORMAL, 0);
	add(sim, SIM_HOG, SCHED_CLASS_NORMAL, 0);
	CHECK_EQ(sim_run(sim, 60 * SEC), 0);
	CHECK_RANGE(iso_share(sim), 68, 72);
	sim_free(sim);

	/* Whole machine: one ISO task on 2 CPUs is 50% of it, under the cap: never demoted. */
	sim = mk("pack:1 core:2 pu:1", ISO_MODE_MACHINE);
	add(sim, SIM_HOG, SCHED_CLASS_ISO, 0);
	add(sim, SIM_HOG, SCHED_CLASS_NORMAL, 0);
	add(sim, SIM_HOG, SCHED_CLASS_NORMAL, 0);
	CHECK_EQ(sim_run(sim, 60 * SEC), 0);
	CHECK_RANGE(iso_share(sim), 49.5, 50);
	CHECK_EQ(sim_iso_flips(sim), 0);
	sim_free(sim);
}

/* IDLEPRIO only soaks up what normal work leaves. */
static void test_idleprio(void)
{
	struct sim *sim = mk("pack:1 core:1 pu:1", ISO_MODE_MACHINE);
	struct sim_task_spec sleeper = {
		.kind = SIM_SLEEPER, .period_ns = 10 * MS, .work_ns = 4 * MS, .cpu = -1,
	};
	int idle = add(sim, SIM_HOG, SCHED_CLASS_IDLEPRIO, 0);
	int s = sim_add_task(sim, &sleeper);

	CHECK_EQ(sim_run(sim, 10 * SEC), 0);
	CHECK_RANGE(share(sim, s), 39.9, 40.1);
	CHECK_RANGE(share(sim, idle), 59.9, 60.1);
	CHECK_EQ(sim_task_stats(sim, s)->max_delay_ns, 0);
	sim_free(sim);
}

int main(void)
{
	test_nice_19();
	test_equal_nice();
	test_sleeper();
	test_sleeper_beside_storm();
	test_iso_share();
	test_idleprio();
	return CHECK_EXIT();
}
