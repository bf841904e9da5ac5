/* Wake boosts: recently active sleepers whose key beats what their CPU
 * runs wait boosted at BOOST_WAKE, at most WAKE_BOOST_MAX per CPU, the
 * ones that ran last first. */
#include "check.h"
#include "fake_kernel.h"
#include "loop-internal.h" /* its constants */

#define MS 1000000ULL
#define S (1000 * MS)

static struct fake_kernel fk;

static void only_cpu(struct fk_task *t, int cpu)
{
	CPU_ZERO(&t->owner);
	CPU_SET(cpu, &t->owner);
}

/* Each sleeper runs a moment in turn, then sleeps: the ones that ran
 * last are the likeliest to wake next. */
static void run_each_once(const pid_t *tids, int n)
{
	for (int i = 0; i < n; i++) {
		fk_set_state(&fk, tids[i], 'R', 100);
		fk_tick(&fk, 2 * MS);
		fk_set_state(&fk, tids[i], 'S', 0);
		fk_tick(&fk, 2 * MS);
	}
}

static unsigned boosted_at(const pid_t *tids, int n, int prio)
{
	unsigned k = 0;

	for (int i = 0; i < n; i++)
		k += fk_boost_level(fk_get(&fk, tids[i])->boost_prio) == prio;
	return k;
}

/* One CPU held by a hog (100), and six sleepers (s) that each ran once,
 * in turn; reads as the tracker makes them if tracker_reads. */
static void six_sleepers_beside_hog(const pid_t *s, bool tracker_reads)
{
	fk_init(&fk, "pu:1");
	fk.tracker_reads = tracker_reads;
	fk_add(&fk, 100, 100, 1, "hog");
	for (int i = 0; i < 6; i++)
		fk_add(&fk, s[i], s[i], 1, "sleeper");
	fk_start(&fk, 1000 * MS);
	fk_set_state(&fk, 100, 'R', 1000);
	fk_run(&fk, 100 * MS);
	CHECK(fk_view(&fk, 100).hog);
	run_each_once(s, 6);
}

/* One CPU held by a hog (outside the core, so any wake-up beats it):
 * six sleepers, four wait boosted, the four that ran last. */
static void test_cap_one_cpu(void)
{
	pid_t s[6] = { 200, 201, 202, 203, 204, 205 };

	six_sleepers_beside_hog(s, false);
	CHECK_EQ(boosted_at(s, 6, BOOST_WAKE), WAKE_BOOST_MAX);
	CHECK_EQ(boosted_at(s, 6, BOOST_RUN), 0);
	for (int i = 0; i < 6; i++) {
		struct fk_task *t = fk_get(&fk, s[i]);

		CHECK_EQ(fk_boost_level(t->boost_prio), i < 2 ? 0 : BOOST_WAKE);
		if (t->boost_prio)
			CHECK_EQ(fk_pinned_cpu(t), 0); /* waits where it will wake */
	}
	/* The hog is never boosted for them. */
	CHECK_EQ(fk_get(&fk, 100)->boost_prio, 0);

	/* The first one runs again: now it is among the last four. */
	run_each_once(s, 1);
	CHECK_EQ(boosted_at(s, 6, BOOST_WAKE), WAKE_BOOST_MAX);
	CHECK_EQ(fk_boost_level(fk_get(&fk, s[0])->boost_prio), BOOST_WAKE);
	CHECK_EQ(fk_get(&fk, s[2])->boost_prio, 0);

	/* Recent sleepers only: RECENT_SLEEPER_NS later none is worth a
	 * boost, and the boost is gone before the tracker moves them to its
	 * idle list (fk_done() checks that no boosted task ever got there). */
	fk_run(&fk, RECENT_SLEEPER_NS - 50 * MS);
	CHECK_EQ(boosted_at(s, 6, BOOST_WAKE), WAKE_BOOST_MAX);
	fk_run(&fk, 100 * MS);
	CHECK_EQ(boosted_at(s, 6, BOOST_WAKE), 0);
	fk_run(&fk, 2 * S);
	CHECK(!fk_get(&fk, s[5])->tt.active);
	fk_done(&fk);
}

/* The cap is per CPU: five sleepers on each of two CPUs (their owners
 * say so), a hog on each; four wait boosted on each. */
static void test_cap_per_cpu(void)
{
	pid_t s[10];

	fk_init(&fk, "pu:2");
	for (int cpu = 0; cpu < 2; cpu++) {
		struct fk_task *h = fk_add(&fk, 100 + cpu, 100 + cpu, 1, "hog");

		only_cpu(h, cpu);
		h->tt.last_cpu = cpu;
	}
	for (int i = 0; i < 10; i++) {
		s[i] = 200 + i;
		only_cpu(fk_add(&fk, s[i], s[i], 1, "sleeper"), i / 5);
	}
	fk_start(&fk, 1000 * MS);
	fk_set_state(&fk, 100, 'R', 1000);
	fk_set_state(&fk, 101, 'R', 1000);
	fk_run(&fk, 100 * MS);
	CHECK(fk_view(&fk, 100).hog);
	CHECK(fk_view(&fk, 101).hog);

	run_each_once(s, 10);
	CHECK_EQ(boosted_at(s, 5, BOOST_WAKE), WAKE_BOOST_MAX);
	CHECK_EQ(boosted_at(s + 5, 5, BOOST_WAKE), WAKE_BOOST_MAX);
	for (int i = 0; i < 10; i++) {
		struct fk_task *t = fk_get(&fk, s[i]);

		if (t->boost_prio)
			CHECK_EQ(fk_pinned_cpu(t), i / 5);
	}
	fk_done(&fk);
}

/* A sleeper left without a slot is still watched: when it wakes and
 * waits for a CPU behind the hog, without having run (its CPU clock
 * stands still, so the tracker would read it asleep), the next tick
 * queues it and it runs. Reads as the tracker makes them. */
static void test_slot_loser_wake_seen(void)
{
	pid_t s[6] = { 200, 201, 202, 203, 204, 205 };
	struct fk_task *t;

	six_sleepers_beside_hog(s, true);
	t = fk_get(&fk, s[0]);
	CHECK_EQ(t->boost_prio, 0);
	CHECK(t->tt.hot && t->tt.watch);
	/* It wakes, and gets no CPU: the hog holds it. */
	fk_set_state(&fk, s[0], 'R', 0);
	fk_tick(&fk, 2 * MS);
	CHECK(fk_view(&fk, s[0]).running);
	CHECK_EQ(t->boost_prio, BOOST_RUN);
	/* The ones armed wake boosted, so their reads need no watch. */
	CHECK(!fk_get(&fk, s[5])->tt.watch);
	fk_done(&fk);
}

/* Two workers that last ran on CPU 0, before any hog (so never pinned),
 * then two hogs free to run anywhere settle: the workers wait boosted on
 * different CPUs, so neither would run behind the other while a hog
 * holds the other CPU. */
static void test_spread(void)
{
	pid_t w[2] = { 200, 201 };
	struct fk_task *h[2];

	fk_init(&fk, "pu:2");
	h[0] = fk_add(&fk, 100, 100, 1, "hog");
	h[1] = fk_add(&fk, 101, 101, 1, "hog");
	fk_add(&fk, w[0], w[0], 1, "worker");
	fk_add(&fk, w[1], w[0], 1, "worker");
	fk_start(&fk, 1000 * MS);
	run_each_once(w, 2);
	CHECK(!fk_get(&fk, w[0])->pinned && !fk_get(&fk, w[1])->pinned);
	for (int i = 0; i < 2; i++) {
		h[i]->keep_active = true;
		fk_set_state(&fk, 100 + i, 'R', 1000);
	}
	fk_run(&fk, 100 * MS);
	CHECK(fk_view(&fk, 100).hog);
	CHECK(fk_view(&fk, 101).hog);
	CHECK_EQ(boosted_at(w, 2, BOOST_WAKE), 2);
	CHECK(fk_pinned_cpu(fk_get(&fk, w[0])) != fk_pinned_cpu(fk_get(&fk, w[1])));
	fk_done(&fk);
}

/* An ISO sleeper beats any normal work, so it waits boosted even where
 * normal work is left to the kernel: in a swarm of chatty threads with
 * no hog. Its normal twin does not. */
static void test_iso_in_swarm(void)
{
	enum { N = 2 * SWARM_PER_CPU + 8 };
	pid_t p[2] = { 300, 301 };

	fk_init(&fk, "pu:2");
	for (int i = 0; i < N; i++)
		fk_add(&fk, 200 + i, 200, 1, "chatty");
	fk_add(&fk, p[0], p[0], 1, "iso");
	fk_add(&fk, p[1], p[1], 1, "normal");
	fk_start(&fk, 1000 * MS);
	CHECK_EQ(loop_set_class(fk.loop, p[0], 0, SCHED_CLASS_ISO, false, 0, (char[64]){ 0 }, 64), 0);
	for (int n = 0; n < 100; n++) {
		for (int i = 0; i < N; i++)
			fk_set_state(&fk, 200 + i, (n + i) % 4 ? 'S' : 'R', 300);
		fk_set_state(&fk, p[0], n % 8 ? 'S' : 'R', 300);
		fk_set_state(&fk, p[1], n % 8 ? 'S' : 'R', 300);
		fk_tick(&fk, 2 * MS);
		if (n > 20 && n % 8 == 3) {
			CHECK_EQ(fk_get(&fk, p[0])->boost_prio, BOOST_ISO);
			CHECK_EQ(fk_get(&fk, p[1])->boost_prio, 0);
		}
	}
	for (int i = 0; i < N; i++)
		CHECK_EQ(fk_get(&fk, 200 + i)->boost_prio, 0);
	fk_done(&fk);
}

/* Nothing to preempt: no hog, nothing running. A sleeper waits
 * unboosted, and costs no system call while it sleeps. */
static void test_no_boost_when_idle(void)
{
	pid_t s[2] = { 200, 201 };

	fk_init(&fk, "pu:2");
	fk_add(&fk, 200, 200, 1, "sleeper");
	fk_add(&fk, 201, 201, 1, "sleeper");
	fk_start(&fk, 1000 * MS);
	run_each_once(s, 2);
	CHECK_EQ(boosted_at(s, 2, BOOST_WAKE), 0);
	fk_reset_calls(&fk);
	fk_run(&fk, 500 * MS);
	CHECK_EQ(fk_calls_total(&fk), 0);
	fk_done(&fk);
}

/* A sleeper that wakes from its wait boost runs at BOOST_RUN, on the
 * CPU it waited on, ahead of the hog. */
static void test_wake_runs(void)
{
	pid_t s[1] = { 200 };
	struct fk_task *t;

	fk_init(&fk, "pu:1");
	fk_add(&fk, 100, 100, 1, "hog");
	t = fk_add(&fk, 200, 200, 1, "sleeper");
	fk_start(&fk, 1000 * MS);
	fk_set_state(&fk, 100, 'R', 1000);
	fk_run(&fk, 100 * MS);
	run_each_once(s, 1);
	CHECK_EQ(fk_boost_level(t->boost_prio), BOOST_WAKE);
	fk_set_state(&fk, 200, 'R', 200);
	fk_tick(&fk, 2 * MS);
	CHECK(fk_view(&fk, 200).running);
	CHECK_EQ(t->boost_prio, BOOST_RUN);
	CHECK_EQ(fk_pinned_cpu(t), 0);
	fk_done(&fk);
}

/* One CPU held by a settled hog (100), and n tasks 200, 201... asleep. */
static void beside_hog(struct fk_task **t, int n)
{
	fk_init(&fk, "pu:1");
	fk_add_hog(&fk, 100);
	for (int i = 0; i < n; i++)
		t[i] = fk_add(&fk, 200 + i, 200 + i, 1, "task");
	fk_start(&fk, 1000 * MS);
	fk_run(&fk, 100 * MS);
}

/* Sleepers armed on one CPU hold distinct priorities, the earlier key
 * the higher: a later waker with the earlier deadline preempts one that
 * woke first, as in MuQSS, where one FIFO priority would run them in the
 * order they woke. */
static void test_rank_by_key(void)
{
	pid_t s[3] = { 200, 201, 202 };
	struct fk_task *t[3];

	beside_hog(t, 3);
	/* 202 uses up a slice: a new, later deadline. */
	fk_set_state(&fk, 202, 'R', 1000);
	for (int i = 0; i < 4; i++)
		fk_tick(&fk, 2 * MS);
	fk_set_state(&fk, 202, 'S', 0);
	run_each_once(s, 2);
	fk_tick(&fk, 2 * MS);
	for (int i = 0; i < 3; i++)
		CHECK_EQ(fk_boost_level(t[i]->boost_prio), BOOST_WAKE);
	CHECK(t[0]->boost_prio != t[1]->boost_prio);
	CHECK(t[0]->boost_prio > t[2]->boost_prio && t[1]->boost_prio > t[2]->boost_prio);
	CHECK_EQ(t[2]->boost_prio, BOOST_WAKE_TOP - 2);
	fk_done(&fk);
}

/* Beside a settled hog, a sleeper whose key does not beat the CPU's
 * running pick waits at BOOST_NEXT: woken, it does not preempt the pick
 * but runs before the hog once the pick blocks. One that beats it waits
 * at BOOST_WAKE. */
static void test_next_behind_head(void)
{
	pid_t s[1] = { 202 };
	struct fk_task *t[3], *head, *early, *late;

	beside_hog(t, 3);
	head = t[0];
	early = t[1];
	late = t[2];
	/* early runs a moment, and sleeps: the earliest key. head, then
	 * late, use up a slice: each gets a new deadline, late's last. */
	run_each_once(&early->tt.tid, 1);
	for (pid_t tid = 200; tid <= 202; tid += 2) {
		fk_set_state(&fk, tid, 'R', 1000);
		for (int i = 0; i < 4; i++)
			fk_tick(&fk, 2 * MS);
		fk_set_state(&fk, tid, 'S', 0);
		fk_tick(&fk, 2 * MS);
	}
	run_each_once(s, 1);
	fk_set_state(&fk, 200, 'R', 300);
	fk_tick(&fk, 2 * MS);
	fk_tick(&fk, 2 * MS);
	CHECK(fk_view(&fk, 200).running);
	CHECK_EQ(head->boost_prio, BOOST_RUN);
	CHECK_EQ(fk_boost_level(late->boost_prio), BOOST_NEXT);
	CHECK_EQ(fk_boost_level(early->boost_prio), BOOST_WAKE);
	/* The pick blocks: late, woken, runs and is picked next. */
	fk_set_state(&fk, 200, 'S', 0);
	fk_set_state(&fk, 202, 'R', 200);
	fk_tick(&fk, 2 * MS);
	CHECK(fk_view(&fk, 202).running);
	CHECK_EQ(late->boost_prio, BOOST_RUN);
	fk_done(&fk);
}

/* Behind the CPU's pick, the first task queued waits at BOOST_QUEUED (it
 * runs at once when the pick blocks, ahead of the hog), the next one
 * unboosted; the tick comes when a slice may run out, not every 2 ms.
 * The pick blocks: the first queued is picked and runs at BOOST_RUN. */
static void test_first_queued(void)
{
	struct fk_task *t[3], *a, *b, *c;
	uint64_t tick;

	beside_hog(t, 3);
	a = t[0];
	b = t[1];
	c = t[2];
	fk_set_state(&fk, 200, 'R', 300);
	fk_tick(&fk, 2 * MS);
	CHECK(fk_view(&fk, 200).running);
	fk_set_state(&fk, 201, 'R', 300);
	fk_set_state(&fk, 202, 'R', 300);
	tick = fk_tick(&fk, 2 * MS);
	CHECK(fk_view(&fk, 200).running);
	CHECK(fk_view(&fk, 201).queued && fk_view(&fk, 202).queued);
	CHECK_EQ(a->boost_prio, BOOST_RUN);
	CHECK_EQ(b->boost_prio + c->boost_prio, BOOST_QUEUED);
	CHECK(tick > TICK_ACTIVE_NS);
	fk_set_state(&fk, 200, 'S', 0);
	fk_tick(&fk, 2 * MS);
	CHECK(fk_view(&fk, 201).running || fk_view(&fk, 202).running);
	CHECK(b->boost_prio == BOOST_RUN || c->boost_prio == BOOST_RUN);
	CHECK(b->boost_prio == BOOST_QUEUED || c->boost_prio == BOOST_QUEUED);
	fk_done(&fk);
}

/* A sleeper armed with 1 ms of slice left does not hold the tick at
 * 2 ms while it sleeps: TICK_ARMED_MIN_NS. */
static void test_armed_tick(void)
{
	struct fk_task *t;
	uint64_t tick = 0;

	beside_hog(&t, 1);
	/* 5 ms of its 6 ms slice, then sleep. */
	fk_set_state(&fk, 200, 'R', 1000);
	fk_tick(&fk, 5 * MS);
	fk_set_state(&fk, 200, 'S', 0);
	for (int i = 0; i < 5; i++)
		tick = fk_tick(&fk, tick ? tick : 2 * MS);
	CHECK_EQ(fk_boost_level(t->boost_prio), BOOST_WAKE);
	CHECK(tick > TICK_ACTIVE_NS && tick >= TICK_ARMED_MIN_NS);
	fk_done(&fk);
}

int main(void)
{
	test_cap_one_cpu();
	test_cap_per_cpu();
	test_slot_loser_wake_seen();
	test_spread();
	test_iso_in_swarm();
	test_no_boost_when_idle();
	test_wake_runs();
	test_rank_by_key();
	test_next_behind_head();
	test_first_queued();
	test_armed_tick();
	return CHECK_EXIT();
}
