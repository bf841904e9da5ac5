/* Levers that fail: EPERM (refused) and ESRCH (the task is gone, or its
 * tid was reused) break nothing. The loop does not crash, believes only
 * what succeeded, and once the levers work again its picks are pinned
 * and boosted as before. */
#include <errno.h>
#include <stdio.h>

#include "check.h"
#include "fake_kernel.h"
#include "loop-internal.h" /* its constants, and managed_task to compare */

#define MS 1000000ULL
#define S (1000 * MS)

static struct fake_kernel fk;

/* The loop's belief about a task's boost and pin, against the fake's. */
static unsigned mismatches(void)
{
	unsigned bad = 0;

	for (int i = 0; i < FK_MAX_TASKS; i++) {
		struct fk_task *t = &fk.tasks[i];
		struct managed_task *m = t->tt.sched_data;

		if (!t->used || !m || m->exempt)
			continue;
		if (m->boost_prio != t->boost_prio ||
		    (m->pinned_cpu >= 0 ? m->pinned_cpu : -1) != fk_pinned_cpu(t) ||
		    /* a stop is the process's: the loop keeps it on the main thread */
		    (t->tt.tid == t->tt.tgid && m->stopped != t->stopped) || m->idle_policy != t->idle) {
			if (bad++ < 3)
				fprintf(stderr, "tid %d: loop boost %d pin %d stopped %d idle %d, kernel %d %d %d %d\n",
					(int)t->tt.tid, m->boost_prio, m->pinned_cpu, m->stopped,
					m->idle_policy, t->boost_prio, fk_pinned_cpu(t), t->stopped, t->idle);
		}
	}
	return bad;
}

/* A busy scene on 2 CPUs: two tasks that alternate bursts and sleeps, a
 * frequent short sleeper, a hog, and an IDLEPRIO process. */
static void start(void)
{
	fk_init(&fk, "pu:2");
	for (int i = 0; i < 4; i++)
		fk_add(&fk, 100 + i, 100 + i, 1, "task");
	fk_get(&fk, 103)->tt.nice = 5; /* a hog reniced for the fair class */
	fk_add(&fk, 300, 300, 1, "idle");
	fk_add(&fk, 301, 300, 1, "idle");
	fk_start(&fk, 1 * S);
	CHECK_EQ(loop_set_class(fk.loop, 300, 0, SCHED_CLASS_IDLEPRIO, false, 0, (char[64]){ 0 }, 64), 0);
	fk_set_state(&fk, 103, 'R', 1000);
	fk_set_state(&fk, 300, 'R', 1000);
	fk_set_state(&fk, 301, 'R', 1000);
}

static void step(int n)
{
	bool burst = n % 20 < 10;

	fk_set_state(&fk, 100, burst ? 'R' : 'S', burst ? 500 : 0);
	fk_set_state(&fk, 101, !burst ? 'R' : 'S', !burst ? 500 : 0);
	fk_set_state(&fk, 102, n % 3 == 0 ? 'R' : 'S', n % 3 == 0 ? 200 : 0);
	fk_tick(&fk, 2 * MS);
}

/* One lever refused (EPERM) for every task for 1.2 s, then working
 * again: at every tick the loop believes what the kernel has. */
static void test_eperm(enum fk_lever lever)
{
	unsigned bad = 0, boosted = 0;

	start();
	for (int i = 0; i < FK_MAX_TASKS; i++)
		fk.tasks[i].fail[lever] = -EPERM;
	/* Past idleprio_stop_max_ms: a cont is due at least once. */
	for (int n = 0; n < 600; n++) {
		step(n);
		bad += mismatches();
	}
	for (int i = 0; i < FK_MAX_TASKS; i++)
		fk.tasks[i].fail[lever] = 0;
	for (int n = 0; n < 150; n++) {
		step(n);
		bad += mismatches();
		boosted += fk_get(&fk, 100)->boost_prio > 0;
	}
	printf("%s refused: %u calls, %u mismatches\n", fk_lever_name(lever), fk.calls[lever], bad);
	CHECK_EQ(bad, 0);
	CHECK(boosted > 0);
	CHECK(fk.calls[lever] > 0);
	fk_done(&fk);
}

/* Tasks vanish between the tick's read and its writes: every lever
 * answers ESRCH for one tick, then the exit event comes. */
static void test_esrch_then_exit(void)
{
	start();
	for (int n = 0; n < 50; n++)
		step(n);
	for (pid_t tid = 100; tid < 104; tid++)
		for (int l = 0; l < FK_NR_LEVERS; l++)
			fk_get(&fk, tid)->fail[l] = -ESRCH;
	for (int l = 0; l < FK_NR_LEVERS; l++)
		fk_get(&fk, 300)->fail[l] = -ESRCH;
	fk_set_state(&fk, 103, 'S', 0); /* a hog that "sleeps": unboost, nice */
	step(50);
	step(51);
	for (pid_t tid = 100; tid < 104; tid++) {
		loop_task_exit(fk.loop, &fk_get(&fk, tid)->tt);
		fk_remove(&fk, tid);
	}
	loop_task_exit(fk.loop, &fk_get(&fk, 300)->tt);
	fk_remove(&fk, 300);
	CHECK_EQ(fk.calls[FK_FORGET], 5);
	/* The rest goes on: the other thread is no longer gated as a
	 * process of its own, and a new task is handled as usual (beside a
	 * new hog, as the old ones are gone). */
	loop_task_new(fk.loop, &fk_add_hog(&fk, 900)->tt, NULL, fk.now, fk.now);
	fk_run(&fk, 100 * MS);
	fk_add(&fk, 400, 400, 1, "new");
	loop_task_new(fk.loop, &fk_get(&fk, 400)->tt, NULL, fk.now, fk.now);
	fk_set_state(&fk, 400, 'R', 300);
	for (int n = 0; n < 3; n++)
		fk_tick(&fk, 2 * MS);
	CHECK(fk_view(&fk, 400).running);
	CHECK_EQ(fk_get(&fk, 400)->boost_prio, BOOST_RUN);
	CHECK_EQ(mismatches(), 0);
	fk_done(&fk);
}

int main(void)
{
	static const enum fk_lever levers[] = { FK_BOOST, FK_UNBOOST, FK_IDLE, FK_NICE, FK_SLICE,
						FK_PIN, FK_UNPIN, FK_STOP, FK_CONT };

	for (size_t i = 0; i < sizeof(levers) / sizeof(levers[0]); i++)
		test_eperm(levers[i]);
	test_esrch_then_exit();
	return CHECK_EXIT();
}
