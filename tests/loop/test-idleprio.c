/* The IDLEPRIO gate: an IDLEPRIO process runs SCHED_IDLE, is SIGSTOPped
 * while normal work fills every CPU it may use, and is let go when a CPU
 * frees up, when a managed task sits in D (it may hold what that task
 * waits for), and at the latest after idleprio_stop_max_ms. */
#include <stdio.h>

#include "check.h"
#include "fake_kernel.h"
#include "loop-internal.h" /* its constants */

#define MS 1000000ULL
#define S (1000 * MS)

static struct fake_kernel fk;

/* Two normal hogs (100, 101), an IDLEPRIO process 300 with a second
 * thread 301, and idle normal tasks 200 and 400; all runnable but
 * those two. */
static struct fk_task *start(unsigned stop_max_ms)
{
	struct fk_task *p;
	char err[128];

	fk_init(&fk, "pu:2");
	fk.config.idleprio_stop_max_ms = stop_max_ms;
	fk_add(&fk, 100, 100, 1, "hog1");
	fk_add(&fk, 101, 101, 1, "hog2");
	fk_add(&fk, 200, 200, 1, "other");
	fk_add(&fk, 400, 400, 1, "other");
	p = fk_add(&fk, 300, 300, 1, "batchjob");
	fk_add(&fk, 301, 300, 1, "batchjob");
	fk_start(&fk, 1 * S);
	CHECK_EQ(loop_set_class(fk.loop, 300, 0, SCHED_CLASS_IDLEPRIO, false, 0, err, sizeof(err)), 0);
	CHECK(p->idle);
	CHECK(fk_get(&fk, 301)->idle);
	CHECK_EQ(p->tt.policy, SCHED_IDLE);
	fk_set_state(&fk, 100, 'R', 1000);
	fk_set_state(&fk, 101, 'R', 1000);
	fk_set_state(&fk, 300, 'R', 1000);
	fk_set_state(&fk, 301, 'R', 1000);
	return p;
}

/* Ticks until p's stopped state is want, at most span. Returns the time
 * it took, or UINT64_MAX. */
static uint64_t until_stopped(struct fk_task *p, bool want, uint64_t span)
{
	uint64_t t0 = fk.now, next = 2 * MS;

	while (fk.now - t0 < span) {
		next = fk_tick(&fk, next);
		CHECK_EQ(p->boost_prio, 0); /* never boosted */
		if (p->stopped == want)
			return fk.now - t0;
	}
	return UINT64_MAX;
}

/* A sleeper wakes, runs a moment and blocks in D, between two ticks.
 * (One that blocks without running first stays on the tracker's idle
 * list, where no tick reads its state.) */
static void wake_then_block(pid_t tid)
{
	fk_get(&fk, tid)->tt.cpu_ns += 100000;
	fk_set_state(&fk, tid, 'D', 0);
}

static void test_stop_and_cont_on_free_cpu(void)
{
	struct fk_task *p = start(1000);

	/* Both CPUs filled by normal work: the whole process stops. */
	CHECK(until_stopped(p, true, 100 * MS) < 100 * MS);
	CHECK(fk_view(&fk, 100).found && !fk_view(&fk, 100).queued);
	CHECK(fk_view(&fk, 101).found && !fk_view(&fk, 101).queued);
	CHECK(fk_get(&fk, 301)->stopped);
	CHECK_EQ(p->calls[FK_STOP], 1);
	CHECK_EQ(loop_counters(fk.loop)->stops, 1);

	/* A hog sleeps: a CPU is free, it runs again within one gate tick. */
	fk_set_state(&fk, 101, 'S', 0);
	CHECK(until_stopped(p, false, 100 * MS) <= TICK_GATE_NS);
	CHECK_EQ(p->calls[FK_CONT], 1);
	CHECK(!fk_get(&fk, 301)->stopped);

	/* It stays running while a CPU stays free. */
	CHECK_EQ(until_stopped(p, true, 500 * MS), UINT64_MAX);
	CHECK_EQ(p->calls[FK_STOP], 1);

	/* The hog is back: stopped again. */
	fk_set_state(&fk, 101, 'R', 1000);
	CHECK(until_stopped(p, true, 200 * MS) < 200 * MS);
	CHECK_EQ(p->calls[FK_STOP], 2);

	/* Back to normal: resumed, and its policy back. */
	CHECK_EQ(loop_set_class(fk.loop, 300, 0, SCHED_CLASS_NORMAL, false, 0, (char[64]){ 0 }, 64), 0);
	CHECK(!p->stopped);
	CHECK(!p->idle);
	CHECK_EQ(p->tt.policy, SCHED_OTHER);
	fk_done(&fk);
}

/* One hog on two CPUs: never stopped. */
static void test_one_hog_no_stop(void)
{
	struct fk_task *p = start(1000);

	fk_set_state(&fk, 101, 'S', 0);
	CHECK_EQ(until_stopped(p, true, 1 * S), UINT64_MAX);
	CHECK_EQ(fk.calls[FK_STOP], 0);
	fk_done(&fk);
}

/* A managed task in D may wait for something the stopped process holds:
 * it is let go at once, and not stopped again while one sits in D. It
 * is not stopped while in D itself either. */
static void test_cont_on_d_state(void)
{
	struct fk_task *p = start(1000);

	CHECK(until_stopped(p, true, 100 * MS) < 100 * MS);
	wake_then_block(200);
	CHECK(until_stopped(p, false, 100 * MS) <= TICK_GATE_NS);
	fk_reset_calls(&fk);
	CHECK_EQ(until_stopped(p, true, 300 * MS), UINT64_MAX);
	CHECK_EQ(fk.calls[FK_STOP], 0);
	fk_set_state(&fk, 200, 'S', 0);
	CHECK(until_stopped(p, true, 100 * MS) < 100 * MS);

	/* D in other IDLEPRIO work is no reason: it waits behind the gate
	 * itself. */
	CHECK(until_stopped(p, true, 2 * S) < 2 * S);
	CHECK_EQ(loop_set_class(fk.loop, 400, 0, SCHED_CLASS_IDLEPRIO, false, 0, (char[64]){ 0 }, 64), 0);
	wake_then_block(400);
	CHECK_EQ(until_stopped(p, false, 200 * MS), UINT64_MAX);

	/* Its own D: held back from a stop. */
	CHECK(until_stopped(p, false, 2 * S) < 2 * S); /* the bound */
	p->want_state = 'D';
	CHECK_EQ(until_stopped(p, true, 300 * MS), UINT64_MAX);
	fk_done(&fk);
}

/* However busy the CPUs stay, no stop lasts past the bound (plus the
 * tick it is noticed on); after a slice to run, it is stopped again. */
static void test_bound(void)
{
	struct fk_task *p = start(300);
	uint64_t stopped, running;

	CHECK(until_stopped(p, true, 100 * MS) < 100 * MS);
	for (int i = 0; i < 5; i++) {
		stopped = until_stopped(p, false, 2 * S);
		running = until_stopped(p, true, 2 * S);
		printf("bound 300 ms: stopped %.1f ms, then ran %.1f ms\n", (double)stopped / MS,
		       (double)running / MS);
		CHECK_RANGE(stopped, 300 * MS, 300 * MS + TICK_GATE_NS);
		CHECK_RANGE(running, rr_slice_ns(fk.loop), 100 * MS);
	}
	fk_done(&fk);
}

/* A tick whose reads were held up (a slow read, a host pause) decides on
 * when they ended: a stop that passed its bound meanwhile ends at that
 * tick, not at the next. */
static void test_bound_after_held_reads(void)
{
	struct fk_task *p = start(300);
	uint64_t since;

	CHECK(until_stopped(p, true, 100 * MS) < 100 * MS);
	since = fk.now;
	while (fk.now + 2 * MS - since < 290 * MS) {
		(void)fk_tick(&fk, 2 * MS);
		CHECK(p->stopped);
	}
	fk.refresh_hold_ns = 15 * MS;
	(void)fk_tick(&fk, 2 * MS);
	CHECK(fk.now - since >= 300 * MS);
	CHECK(!p->stopped);
	fk_done(&fk);
}

int main(void)
{
	test_stop_and_cont_on_free_cpu();
	test_one_hog_no_stop();
	test_cont_on_d_state();
	test_bound();
	test_bound_after_held_reads();
	return CHECK_EXIT();
}
