/* The IDLEPRIO gate: an IDLEPRIO process runs SCHED_IDLE, is SIGSTOPped
 * while normal work fills every CPU it may use, and is let go when a CPU
 * frees up, when a managed task sits in D (it may hold what that task
 * waits for), and at the latest after idleprio_stop_max_ms. And its
 * lock holders: an IDLEPRIO thread another thread of its process waits
 * on (loop_lock_wait()) is boosted like normal work until the wait
 * ends, however it ends. */
#include <stdio.h>

#include "check.h"
#include "fake_kernel.h"
#include "loop-internal.h" /* its constants */

#define MS 1000000ULL
#define S (1000 * MS)

static struct fake_kernel fk;

/* Two normal hogs (100, 101), an IDLEPRIO process 300 with a second
 * thread 301, and idle normal tasks 200 and 400; all runnable but
 * those two. And process 500 (threads 501, 502), asleep. */
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
	/* Asleep, for the lock holder tests (start_lock()). */
	fk_add(&fk, 500, 500, 1, "app");
	fk_add(&fk, 501, 500, 1, "app-worker");
	fk_add(&fk, 502, 500, 1, "app");
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

/* Process 500: its main thread and 502 normal, 501 IDLEPRIO and runnable
 * (SCHED_IDLE, so the hogs 100 and 101 keep it off the CPUs). */
static struct fk_task *start_lock(void)
{
	char err[128];

	start(1000);
	CHECK_EQ(loop_set_class(fk.loop, 500, 501, SCHED_CLASS_IDLEPRIO, false, 0, err, sizeof(err)),
		 0);
	fk_set_state(&fk, 501, 'R', 1000);
	return fk_get(&fk, 501);
}

/* Ticks for span; returns how long h was boosted meanwhile. */
static uint64_t boosted_for(struct fk_task *h, uint64_t span)
{
	uint64_t t0 = fk.now, on = 0;

	while (fk.now - t0 < span) {
		uint64_t before = fk.now;

		fk_tick(&fk, 2 * MS);
		if (h->boost_prio)
			on += fk.now - before;
	}
	return on;
}

static void task_exit(pid_t tid)
{
	loop_task_exit(fk.loop, &fk_get(&fk, tid)->tt);
	fk_remove(&fk, tid);
}

static void lock_wait(pid_t waiter, pid_t holder)
{
	struct fk_task *h = holder ? fk_get(&fk, holder) : NULL;

	(void)loop_lock_wait(fk.loop, &fk_get(&fk, waiter)->tt, h ? &h->tt : NULL, fk.now);
}

static void test_lock_holder_promoted(void)
{
	struct fk_task *h = start_lock();

	CHECK(h->idle);
	CHECK_EQ(boosted_for(h, 200 * MS), 0);

	/* 500 waits on its lock: boosted within a tick, while it waits. */
	lock_wait(500, 501);
	(void)fk_tick(&fk, 2 * MS);
	CHECK(h->boost_prio > 0);
	CHECK(boosted_for(h, 100 * MS) >= 90 * MS);
	CHECK(h->idle); /* its own policy, under the boost */

	/* The wait ends: back to SCHED_IDLE within a tick, and stays. */
	lock_wait(500, 0);
	(void)fk_tick(&fk, 2 * MS);
	CHECK_EQ(h->boost_prio, 0);
	CHECK_EQ(boosted_for(h, 200 * MS), 0);

	/* Two waiters: it keeps the boost until the last is done. */
	lock_wait(500, 501);
	lock_wait(502, 501);
	lock_wait(500, 0);
	CHECK(boosted_for(h, 50 * MS) >= 40 * MS);
	lock_wait(502, 0);
	(void)fk_tick(&fk, 2 * MS);
	CHECK_EQ(boosted_for(h, 100 * MS), 0);
	fk_done(&fk);
}

/* A wait ends with its waiter's exit, with lost events, or with the
 * holder's exit; a thread of another process or a normal one is no
 * holder, and an IDLEPRIO waiter promotes nobody. */
static void test_lock_wait_ends(void)
{
	struct fk_task *h = start_lock();
	char err[128];

	lock_wait(502, 501);
	CHECK(boosted_for(h, 50 * MS) >= 40 * MS);
	task_exit(502);
	(void)fk_tick(&fk, 2 * MS);
	CHECK_EQ(boosted_for(h, 100 * MS), 0);

	lock_wait(500, 501);
	CHECK(boosted_for(h, 50 * MS) >= 40 * MS);
	loop_locks_forget(fk.loop);
	(void)fk_tick(&fk, 2 * MS);
	CHECK_EQ(boosted_for(h, 100 * MS), 0);

	/* Not a holder: the hog of another process, a normal thread. */
	lock_wait(500, 100);
	lock_wait(500, 500);
	CHECK_EQ(boosted_for(h, 100 * MS), 0);
	CHECK_EQ(fk_get(&fk, 100)->boost_prio, 0);

	/* An IDLEPRIO waiter: idle work waiting on idle work. */
	CHECK_EQ(loop_set_class(fk.loop, 500, 500, SCHED_CLASS_IDLEPRIO, false, 0, err, sizeof(err)),
		 0);
	lock_wait(500, 501);
	CHECK_EQ(boosted_for(h, 100 * MS), 0);

	/* The holder exits mid-wait; the wait's end finds nothing. */
	CHECK_EQ(loop_set_class(fk.loop, 500, 500, SCHED_CLASS_NORMAL, false, 0, err, sizeof(err)),
		 0);
	lock_wait(500, 501);
	CHECK(boosted_for(h, 50 * MS) >= 40 * MS);
	task_exit(501);
	(void)fk_tick(&fk, 2 * MS);
	lock_wait(500, 0);
	(void)fk_tick(&fk, 2 * MS);
	fk_done(&fk);
}

/* A stop is the whole process's: one stopped by the gate is resumed at
 * once when a thread of it waits on its IDLEPRIO main thread's lock,
 * and not stopped again until the wait ends. */
static void test_lock_wait_resumes_process(void)
{
	struct fk_task *p = start(1000);
	char err[128];

	CHECK(until_stopped(p, true, 100 * MS) < 100 * MS);
	/* 301 turns normal and waits on the main thread's lock. */
	CHECK_EQ(loop_set_class(fk.loop, 300, 301, SCHED_CLASS_NORMAL, false, 0, err, sizeof(err)),
		 0);
	CHECK(until_stopped(p, true, 100 * MS) < 100 * MS);
	lock_wait(301, 300);
	CHECK(!p->stopped);
	CHECK(boosted_for(p, 500 * MS) >= 450 * MS);
	CHECK(!p->stopped);
	lock_wait(301, 0);
	fk_set_state(&fk, 301, 'S', 0);
	CHECK(until_stopped(p, true, 200 * MS) < 200 * MS);
	fk_done(&fk);
}

int main(void)
{
	test_stop_and_cont_on_free_cpu();
	test_one_hog_no_stop();
	test_cont_on_d_state();
	test_bound();
	test_bound_after_held_reads();
	test_lock_holder_promoted();
	test_lock_wait_ends();
	test_lock_wait_resumes_process();
	return CHECK_EXIT();
}
