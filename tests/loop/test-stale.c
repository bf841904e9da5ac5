/* A task the source could not read this time (tracked_task.stale: its
 * state is unknown, as for a task stuck mid-exec) is never pinned or
 * boosted, and it delays nothing else: the other tasks' decisions on that tick are
 * the ones they would be had it simply gone to sleep. And after the
 * deadman dropped every boost (loop_boosts_dropped()), the next tick
 * boosts each CPU's pick again. */
#include <string.h>

#include "check.h"
#include "fake_kernel.h"
#include "loop-internal.h" /* its constants */

#define MS 1000000ULL
#define S (1000 * MS)
#define TICKS 150
#define STUCK_AT 40	/* the tick X's read first hangs */
#define STUCK_FOR 60

static struct fake_kernel fk;

struct seen {
	int boost, pin;
	bool running, hog;
};

/* What the others look like after each tick. */
static struct seen seen[2][TICKS][4];

/* The scene: X (100) starts to run before STUCK_AT; a hog (101); two tasks that run in bursts
 * (102, 103) and one sleeper that wakes often (104), on 2 CPUs. At
 * STUCK_AT X's read hangs (stale: the tracker's copy keeps saying R) or,
 * in the twin run, X sleeps. */
static void run_scene(int run, bool stale)
{
	struct fk_task *x;

	fk_init(&fk, "pu:2");
	x = fk_add(&fk, 100, 100, 1, "x");
	for (int i = 1; i < 5; i++)
		fk_add(&fk, 100 + i, 100 + i, 1, "other");
	fk_start(&fk, 1 * S);
	fk_set_state(&fk, 101, 'R', 1000);
	for (int n = 0; n < TICKS; n++) {
		bool burst = n % 20 < 12;

		fk_set_state(&fk, 102, burst ? 'R' : 'S', burst ? 400 : 0);
		fk_set_state(&fk, 103, !burst ? 'R' : 'S', !burst ? 400 : 0);
		fk_set_state(&fk, 104, n % 4 == 0 ? 'R' : 'S', n % 4 == 0 ? 200 : 0);
		if (n == STUCK_AT - 3)
			fk_set_state(&fk, 100, 'R', 300);
		if (n == STUCK_AT) {
			CHECK(fk_view(&fk, 100).running);
			CHECK_EQ(x->boost_prio, BOOST_RUN);
			if (stale)
				x->tt.stale = true;
			else
				fk_set_state(&fk, 100, 'S', 0);
			fk_reset_calls(&fk);
		}
		if (n == STUCK_AT + STUCK_FOR) {
			x->tt.stale = false;
			fk_set_state(&fk, 100, 'S', 0);
		}
		fk_tick(&fk, 2 * MS);
		if (stale && n >= STUCK_AT && n < STUCK_AT + STUCK_FOR) {
			struct fk_view v = fk_view(&fk, 100);

			CHECK(!v.running && !v.queued);
			CHECK_EQ(x->boost_prio, 0);
			CHECK_EQ(x->calls[FK_PIN] + x->calls[FK_BOOST], 0);
			/* An exec event now queues nothing. */
			CHECK(!loop_task_exec(fk.loop, &x->tt, NULL, fk.now, fk.now));
			if (n == STUCK_AT + STUCK_FOR - 1)
				CHECK_EQ(x->calls[FK_UNBOOST], 1);
		}
		for (int i = 0; i < 4; i++) {
			struct fk_task *t = fk_get(&fk, 101 + i);
			struct fk_view v = fk_view(&fk, 101 + i);

			/* Which rank an armed sleeper holds depends on who else
			 * is armed: the stuck task is not. */
			seen[run][n][i] = (struct seen){ fk_boost_level(t->boost_prio), fk_pinned_cpu(t),
							 v.running, v.hog };
		}
	}
	fk_done(&fk);
}

static void test_stale_delays_nothing(void)
{
	unsigned differ = 0, boosted = 0;

	run_scene(0, true);
	run_scene(1, false);
	for (int n = 0; n < TICKS; n++)
		for (int i = 0; i < 4; i++) {
			const struct seen *a = &seen[0][n][i], *b = &seen[1][n][i];

			if (a->boost != b->boost || a->pin != b->pin || a->running != b->running ||
			    a->hog != b->hog) {
				if (differ++ < 5)
					fprintf(stderr, "tick %d task %d: boost %d/%d pin %d/%d running %d/%d\n",
						n, 101 + i, a->boost, b->boost, a->pin, b->pin, a->running,
						b->running);
			}
			boosted += a->boost > 0;
		}
	CHECK_EQ(differ, 0);
	CHECK(boosted > TICKS); /* else the scene shows nothing */
}

/* The stuck task was a sleeper waiting boosted: its boost goes too. */
static void test_stale_sleeper_unboosted(void)
{
	struct fk_task *s;

	fk_init(&fk, "pu:1");
	fk_add(&fk, 100, 100, 1, "hog");
	s = fk_add(&fk, 200, 200, 1, "sleeper");
	fk_start(&fk, 1 * S);
	fk_set_state(&fk, 100, 'R', 1000);
	fk_run(&fk, 100 * MS);
	fk_set_state(&fk, 200, 'R', 100);
	fk_tick(&fk, 2 * MS);
	fk_set_state(&fk, 200, 'S', 0);
	fk_tick(&fk, 2 * MS);
	CHECK_EQ(fk_boost_level(s->boost_prio), BOOST_WAKE);
	s->tt.stale = true;
	fk_tick(&fk, 2 * MS);
	CHECK_EQ(s->boost_prio, 0);
	s->tt.state = 'R'; /* what the tracker believes */
	fk_run(&fk, 100 * MS);
	CHECK_EQ(s->boost_prio, 0);
	CHECK(!fk_view(&fk, 200).found);
	fk_done(&fk);
}

/* Beside a hog, the deadman dropped every boost, slice and pin and resumed
 * every stopped task: the next tick boosts each CPU's pick again, arms the
 * sleepers again, gates the IDLEPRIO process anew (a stop, not a cont),
 * and sets the slice and the pins it still wants again. */
static void test_boosts_dropped(void)
{
	struct fk_task *a, *b, *p, *s, *h;
	unsigned pinned;

	fk_init(&fk, "pu:2");
	a = fk_add(&fk, 100, 100, 1, "a");
	b = fk_add(&fk, 101, 101, 1, "b");
	s = fk_add(&fk, 102, 102, 1, "sleeper");
	p = fk_add(&fk, 300, 300, 1, "idle");
	h = fk_add_hog(&fk, 900);
	fk_start(&fk, 1 * S);
	fk_run(&fk, 100 * MS);
	CHECK_EQ(loop_set_class(fk.loop, 300, 0, SCHED_CLASS_IDLEPRIO, false, 0, (char[64]){ 0 }, 64), 0);
	fk_set_state(&fk, 100, 'R', 100);
	fk_set_state(&fk, 101, 'R', 100);
	fk_set_state(&fk, 102, 'R', 100);
	fk_set_state(&fk, 300, 'R', 1000);
	fk_tick(&fk, 2 * MS);
	fk_set_state(&fk, 102, 'S', 0);
	fk_tick(&fk, 2 * MS);
	fk_tick(&fk, 2 * MS);
	CHECK_EQ(a->boost_prio, BOOST_RUN);
	CHECK_EQ(b->boost_prio, BOOST_RUN);
	CHECK(p->stopped);

	CHECK(h->slice_ns != 0);
	pinned = 0;
	for (int i = 0; i < FK_MAX_TASKS; i++)
		pinned += fk.tasks[i].used && fk.tasks[i].pinned;
	CHECK(pinned > 0);

	/* What the deadman does to the kernel. */
	for (int i = 0; i < FK_MAX_TASKS; i++) {
		fk.tasks[i].boost_prio = 0;
		fk.tasks[i].stopped = false;
		fk.tasks[i].slice_ns = 0;
		fk.tasks[i].pinned = false;
	}
	loop_boosts_dropped(fk.loop, fk.now);
	fk_reset_calls(&fk);
	fk_tick(&fk, 2 * MS);
	CHECK_EQ(a->boost_prio, BOOST_RUN);
	CHECK_EQ(b->boost_prio, BOOST_RUN);
	CHECK_EQ(fk.calls[FK_BOOST], 2 + (s->boost_prio != 0));
	CHECK_EQ(fk.calls[FK_CONT], 0);
	CHECK_EQ(fk.calls[FK_STOP], 1);
	CHECK(p->stopped);
	/* The slice and the pins it still wants, set again; none undone,
	 * since the loop knows the deadman did. */
	CHECK(h->slice_ns != 0);
	CHECK_EQ(fk.calls[FK_UNPIN], 0);
	CHECK_EQ(fk.calls[FK_PIN], pinned);
	fk_done(&fk);
}

int main(void)
{
	test_stale_delays_nothing();
	test_stale_sleeper_unboosted();
	test_boosts_dropped();
	return CHECK_EXIT();
}
