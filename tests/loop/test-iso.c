/* The ISO cap: an ISO task runs boosted while ISO work stays under
 * iso_cpu, becomes a hog (normal, in the fair class) once the cap trips,
 * and is boosted again once it clears. Both readings of the cap: the
 * machine's share (BFS) and each CPU's (MuQSS). */
#include <stdio.h>

#include "check.h"
#include "fake_kernel.h"
#include "loop-internal.h" /* its constants */

#define MS 1000000ULL
#define S (1000 * MS)

static struct fake_kernel fk;

struct trace {
	uint64_t tripped_ns;	/* first tick an ISO task was a hog, after start */
	uint64_t cleared_ns;	/* first tick after that it was boosted again */
	unsigned demoted_while_boosted; /* ticks a hog was still boosted */
	unsigned all_hogs;	/* ticks every ISO task was a hog */
	unsigned iso_band_ticks; /* ticks it ran at BOOST_ISO before the trip */
	unsigned nr_iso;
};

/* on_cpu1: the first task's owner allows only CPU 1, so that the
 * per-CPU figure the loop reads must be its CPU's. */
static void start_iso(const char *topology, enum iso_reading reading, unsigned iso_cpu, int nr_iso,
		      bool on_cpu1)
{
	char err[128];

	fk_init(&fk, topology);
	fk.config.tunables.iso_reading = reading;
	fk.config.tunables.iso_cpu = iso_cpu;
	for (int i = 0; i < nr_iso; i++)
		fk_add(&fk, 100 + i, 100 + i, 1, "iso");
	if (on_cpu1) {
		CPU_ZERO(&fk_get(&fk, 100)->owner);
		CPU_SET(1, &fk_get(&fk, 100)->owner);
	}
	fk_start(&fk, 1 * S);
	for (int i = 0; i < nr_iso; i++) {
		CHECK_EQ(loop_set_class(fk.loop, 100 + i, 0, SCHED_CLASS_ISO, false, 0, err, sizeof(err)), 0);
		fk_set_state(&fk, 100 + i, 'R', 1000);
	}
}

/* Ticks at the loop's pace for span, watching tid 100. */
static void watch(uint64_t span, unsigned nr_iso, struct trace *tr)
{
	uint64_t end = fk.now + span, next = 2 * MS, t0 = fk.now;
	struct fk_task *t = fk_get(&fk, 100);

	*tr = (struct trace){ .nr_iso = nr_iso };
	while (fk.now < end) {
		struct fk_view v;

		next = fk_tick(&fk, next);
		v = fk_view(&fk, 100);
		if (v.hog && fk_view(&fk, 100 + tr->nr_iso - 1).hog)
			tr->all_hogs++;
		if (v.hog && t->boost_prio)
			tr->demoted_while_boosted++;
		if (v.hog && !tr->tripped_ns)
			tr->tripped_ns = fk.now - t0;
		if (tr->tripped_ns && !tr->cleared_ns && v.running && t->boost_prio == BOOST_ISO)
			tr->cleared_ns = fk.now - t0;
		/* Before the trip an ISO task is never anything but boosted:
		 * at BOOST_ISO, or, from the tick its cap is reached until it
		 * is charged as a hog, as normal work. */
		if (!tr->tripped_ns && t->boost_prio == BOOST_ISO)
			tr->iso_band_ticks++;
		if (!tr->tripped_ns && fk.now - t0 > 10 * MS && t->boost_prio != BOOST_ISO &&
		    t->boost_prio != BOOST_RUN) {
			CHECK_FAIL("ISO task not boosted at %llu ms before the cap",
				   (unsigned long long)((fk.now - t0) / MS));
			return;
		}
	}
	CHECK(tr->iso_band_ticks > 0);
}

static void print_trace(const char *what, const struct trace *tr)
{
	printf("%-40s tripped at %6.2f s, cleared at %6.2f s\n", what, (double)tr->tripped_ns / S,
	       (double)tr->cleared_ns / S);
}

/* Per-CPU reading: one ISO task uses its CPU fully, so its CPU's figure
 * climbs to 70% in about 5 s * ln(1 / 0.3) = 6 s, trips, falls back to
 * the clear threshold (62%) in about 0.6 s and it is boosted again. */
static void test_per_cpu_trip_and_clear(void)
{
	struct trace tr;

	start_iso("pu:2", ISO_READING_PER_CPU, 70, 1, true);
	watch(10 * S, 1, &tr);
	print_trace("per-cpu, iso_cpu 70, 1 ISO task, 2 CPUs:", &tr);
	CHECK_RANGE(tr.tripped_ns, 5 * S, 7 * S);
	CHECK(tr.cleared_ns > tr.tripped_ns);
	CHECK_RANGE(tr.cleared_ns - tr.tripped_ns, 300 * MS, 1500 * MS);
	CHECK_EQ(tr.demoted_while_boosted, 0);
	CHECK_EQ(fk_get(&fk, 100)->calls[FK_NICE], 0);
	CHECK_EQ(fk_get(&fk, 100)->tt.last_cpu, 1);
	fk_done(&fk);
}

/* Machine reading: one ISO task is half of 2 CPUs, under 70%, and stays
 * ISO for good. */
static void test_machine_one_task_never_trips(void)
{
	struct trace tr;

	start_iso("pu:2", ISO_READING_MACHINE, 70, 1, false);
	watch(12 * S, 1, &tr);
	print_trace("machine, iso_cpu 70, 1 ISO task, 2 CPUs:", &tr);
	CHECK_EQ(tr.tripped_ns, 0);
	CHECK_EQ(fk_get(&fk, 100)->boost_prio, BOOST_ISO);
	fk_done(&fk);
}

/* Machine reading: two ISO tasks fill both CPUs; the machine's figure
 * trips at 70% of all CPUs, both are demoted, and both come back. */
static void test_machine_two_tasks_trip_and_clear(void)
{
	struct trace tr;

	start_iso("pu:2", ISO_READING_MACHINE, 70, 2, false);
	watch(10 * S, 2, &tr);
	print_trace("machine, iso_cpu 70, 2 ISO tasks, 2 CPUs:", &tr);
	CHECK_RANGE(tr.tripped_ns, 5 * S, 7 * S);
	CHECK_RANGE(tr.cleared_ns - tr.tripped_ns, 300 * MS, 1500 * MS);
	CHECK_EQ(tr.demoted_while_boosted, 0);
	/* Both were demoted together: the figure is the machine's. */
	CHECK(tr.all_hogs > 0);
	fk_done(&fk);
}

/* Machine reading with a cap under one CPU's share: one ISO task on 2
 * CPUs trips at 40% of the machine, about 5 s * ln(50 / 10) = 8 s. */
static void test_machine_low_cap(void)
{
	struct trace tr;

	start_iso("pu:2", ISO_READING_MACHINE, 40, 1, false);
	watch(12 * S, 1, &tr);
	print_trace("machine, iso_cpu 40, 1 ISO task, 2 CPUs:", &tr);
	CHECK_RANGE(tr.tripped_ns, 6 * S, 10 * S);
	CHECK(tr.cleared_ns > tr.tripped_ns);
	fk_done(&fk);
}

/* An ISO task within its cap waits and runs above every boost of normal
 * work, whatever it was doing at the last tick: PipeWire's data thread,
 * boosted at BOOST_RUN as it ran, woke level with the normal head picked
 * since and waited for it. Beside settled hogs and normal sleepers that
 * earn wake boosts of their own, at every tick each boosted ISO task is
 * above the highest boost of normal work, and left on its owner's mask
 * for the kernel to place. */
static void test_iso_above_normal_boosts(void)
{
	unsigned iso_boosted = 0, checked = 0;
	char err[128];

	fk_init(&fk, "pu:2");
	fk_add(&fk, 100, 100, 1, "iso");
	for (pid_t tid = 200; tid < 204; tid++)
		fk_add(&fk, tid, tid, 1, "sleeper");
	fk_add_hog(&fk, 150);
	fk_add_hog(&fk, 151);
	fk_add_hog(&fk, 152);
	fk_start(&fk, 1 * S);
	CHECK_EQ(loop_set_class(fk.loop, 100, 0, SCHED_CLASS_ISO, false, 0, err, sizeof(err)), 0);
	for (int n = 0; n < 400; n++) {
		int normal_max = 0;
		struct fk_task *iso = fk_get(&fk, 100);

		fk_set_state(&fk, 100, n % 3 ? 'S' : 'R', 400);
		for (pid_t tid = 200; tid < 204; tid++)
			fk_set_state(&fk, tid, (n + tid) % 4 ? 'S' : 'R', 600);
		fk_tick(&fk, 2 * MS);
		if (n < 100)
			continue; /* the hogs settle */
		for (pid_t tid = 150; tid < 204; tid++) {
			struct fk_task *t = fk_get(&fk, tid);

			if (t && t->boost_prio > normal_max)
				normal_max = t->boost_prio;
		}
		CHECK(normal_max <= ENFORCE_BOOST_PRIO_NORMAL_MAX);
		if (!iso->boost_prio)
			continue;
		iso_boosted++;
		checked += iso->boost_prio > normal_max;
		CHECK_EQ(fk_pinned_cpu(iso), -1);
		if (iso->boost_prio <= normal_max)
			CHECK_FAIL("tick %d: ISO boosted at %d, normal work at %d", n, iso->boost_prio,
				   normal_max);
	}
	printf("ISO above normal work: boosted at %u of 300 ticks, above every normal boost at %u\n",
	       iso_boosted, checked);
	CHECK(iso_boosted > 200);
	fk_done(&fk);
}

int main(void)
{
	test_iso_above_normal_boosts();
	test_per_cpu_trip_and_clear();
	test_machine_one_task_never_trips();
	test_machine_two_tasks_trip_and_clear();
	test_machine_low_cap();
	return CHECK_EXIT();
}
