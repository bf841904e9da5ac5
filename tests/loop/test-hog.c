/* Hog detection: a task that runs a whole slice without sleeping leaves
 * the core's queues (unboosted, unpinned, its nice translated for the
 * fair class); once it sleeps it is interactive again. */
#include "check.h"
#include "fake_kernel.h"
#include "loop-internal.h" /* its constants */

#define MS 1000000ULL

static struct fake_kernel fk;

/* A nice 0 task alone on 2 CPUs: nothing contends with it, so the kernel
 * runs it at once and the loop touches nothing; it is a hog once it has
 * used its 6 ms slice, and interactive again after a sleep. */
static void test_hog_and_back(void)
{
	struct fk_task *a;
	struct fk_view v;

	fk_init(&fk, "pu:2");
	a = fk_add(&fk, 100, 100, 1, "hog");
	fk_start(&fk, 1000 * MS);
	fk_set_state(&fk, 100, 'R', 1000);

	fk_tick(&fk, 1 * MS);
	v = fk_view(&fk, 100);
	CHECK(!v.running);
	CHECK(!v.hog);
	CHECK_EQ(a->boost_prio, 0);
	CHECK(!a->pinned);
	CHECK_EQ(a->calls[FK_NICE], 0);

	/* 6 ms of CPU without a sleep: a hog. */
	for (int i = 0; i < 4; i++)
		fk_tick(&fk, 2 * MS);
	v = fk_view(&fk, 100);
	CHECK(v.hog);
	CHECK(!v.running);
	CHECK_EQ(a->boost_prio, 0);
	CHECK(!a->pinned);
	CHECK_EQ(a->calls[FK_NICE], 0); /* nice 0 keeps the kernel's weight */
	CHECK_EQ(loop_counters(fk.loop)->boosts, 0);

	/* It stays one while it keeps running, at no further cost, and is
	 * read every TICK_HOG_READ_NS once a hog for HOG_SETTLED_NS, not at
	 * every tick: busy ticks, as a sleeper beside it would ask for. */
	fk_reset_calls(&fk);
	fk_run(&fk, 200 * MS);
	CHECK(fk_view(&fk, 100).hog);
	CHECK_EQ(a->boost_prio, 0);
	CHECK_EQ(fk_calls_total(&fk), 0);
	a->reads = 0;
	for (int i = 0; i < 225; i++)
		fk_tick(&fk, 2 * MS);
	CHECK(fk_view(&fk, 100).hog);
	CHECK(a->reads >= 450 * MS / (TICK_HOG_READ_NS + 2 * MS) &&
	      a->reads <= 450 * MS / TICK_HOG_READ_NS + 1);

	/* It sleeps: interactive again, with the kernel's slice back, and
	 * it waits boosted for nothing (no one runs on its CPU). */
	CHECK_EQ(a->slice_ns, rr_slice_ns(fk.loop));
	fk_set_state(&fk, 100, 'S', 0);
	/* A settled hog is read less often: its sleep is seen that late. */
	CHECK(fk_tick_until_read(&fk, 100, 10 * MS) < TICK_HOG_READ_NS + 10 * MS);
	v = fk_view(&fk, 100);
	CHECK(!v.found);
	CHECK(!v.hog);
	CHECK_EQ(a->slice_ns, 0);
	CHECK_EQ(fk_calls_total(&fk), 1);
	fk_reset_calls(&fk);

	/* It wakes, still alone: left to the kernel. */
	fk_set_state(&fk, 100, 'R', 1000);
	fk_tick(&fk, 10 * MS);
	v = fk_view(&fk, 100);
	CHECK(!v.running);
	CHECK_EQ(a->boost_prio, 0);
	CHECK(!a->pinned);
	CHECK_EQ(fk_calls_total(&fk), 0);
	fk_done(&fk);
}

/* Sleepers that only wake each other (a pipeline, hackbench) on 2 CPUs:
 * no hog, so the kernel orders them and the loop makes no call at all,
 * nor for a task that is a hog for less than HOG_SETTLED_NS. A hog
 * settles: their wake-ups are queued, pinned and boosted. It leaves:
 * every pin and boost goes back within two ticks. */
static void test_contention_comes_and_goes(void)
{
	pid_t s[6] = { 200, 201, 202, 203, 204, 205 };
	unsigned boosted = 0, pinned = 0;

	fk_init(&fk, "pu:2");
	for (int i = 0; i < 6; i++)
		fk_add(&fk, s[i], s[i], 1, "chatty");
	fk_add(&fk, 100, 100, 1, "hog");
	fk_start(&fk, 1000 * MS);
	fk_reset_calls(&fk);
	for (int round = 0; round < 50; round++) {
		/* Not even our slice: that is for hogs. */
		for (int i = 0; i < 6; i++) {
			fk_set_state(&fk, s[i], 'R', 300);
			fk_set_state(&fk, s[(i + 3) % 6], 'S', 0);
			fk_tick(&fk, 2 * MS);
		}
	}
	CHECK_EQ(fk_calls_total(&fk), 0);
	CHECK_EQ(loop_counters(fk.loop)->boosts, 0);

	/* A hog for a moment (a thread that ran a slice without blocking,
	 * then blocked) is not contention yet: like hackbench's threads, it
	 * has blocked thousands of times before. */
	fk_get(&fk, 100)->tt.nvcsw = 5000;
	fk_set_state(&fk, 100, 'R', 1000);
	for (int i = 0; i < 15; i++) {
		fk_set_state(&fk, s[i % 6], 'R', 300);
		fk_set_state(&fk, s[(i + 3) % 6], 'S', 0);
		fk_tick(&fk, 2 * MS);
	}
	CHECK(fk_view(&fk, 100).hog);
	fk_set_state(&fk, 100, 'S', 0);
	fk_tick(&fk, 2 * MS);
	CHECK(!fk_view(&fk, 100).hog);
	CHECK_EQ(fk_calls_total(&fk), fk.calls[FK_SLICE]);

	fk_set_state(&fk, 100, 'R', 1000);
	fk_run(&fk, 100 * MS);
	CHECK(fk_view(&fk, 100).hog);
	for (int round = 0; round < 5; round++)
		for (int i = 0; i < 6; i++) {
			fk_set_state(&fk, s[i], 'R', 300);
			fk_set_state(&fk, s[(i + 3) % 6], 'S', 0);
			fk_tick(&fk, 2 * MS);
			boosted += fk_get(&fk, s[i])->boost_prio != 0;
			pinned += fk_get(&fk, s[i])->pinned;
		}
	CHECK(boosted > 0);
	CHECK(pinned > 0);
	CHECK_EQ(fk_get(&fk, 100)->boost_prio, 0);

	fk_set_state(&fk, 100, 'S', 0);
	for (int i = 0; i < 6; i++)
		fk_set_state(&fk, s[i], 'R', 300);
	CHECK(fk_tick_until_read(&fk, 100, 2 * MS) < TICK_HOG_READ_NS + 2 * MS);
	fk_tick(&fk, 2 * MS);
	for (int i = 0; i < 6; i++) {
		CHECK_EQ(fk_get(&fk, s[i])->boost_prio, 0);
		CHECK(!fk_get(&fk, s[i])->pinned);
		CHECK(!fk_view(&fk, s[i]).running);
	}
	fk_done(&fk);
}

/* Ticks at the loop's pace until f waits boosted; the time it took. */
static uint64_t until_armed(struct fk_task *f, uint64_t limit)
{
	uint64_t t = 0, dt = 2 * MS;

	while (t < limit && !f->boost_prio) {
		uint64_t next = fk_tick(&fk, dt);

		t += dt;
		dt = next;
	}
	return t;
}

/* A hog that has (almost) never blocked since its fork is CPU-bound
 * from birth: it is contention as soon as it is a hog, not
 * HOG_SETTLED_NS later, and the tick after it is found is a short one,
 * so a sleeper beside it waits boosted within a few ms. The same hog
 * with a history of blocking settles only after HOG_SETTLED_NS, and the
 * calm tick comes back for the moment it does. */
static void test_born_hog(void)
{
	for (int born = 1; born >= 0; born--) {
		struct fk_task *f;
		uint64_t t;

		fk_init(&fk, "pu:1");
		f = fk_add(&fk, 200, 200, 1, "frame");
		fk_add(&fk, 100, 100, 1, "hog")->tt.nvcsw = born ? 0 : 5000;
		fk_start(&fk, 1000 * MS);
		/* The frame task ran lately, and sleeps. */
		fk_set_state(&fk, 200, 'R', 1000);
		fk_tick(&fk, 1 * MS);
		fk_set_state(&fk, 200, 'S', 0);
		fk_set_state(&fk, 100, 'R', 1000);
		t = until_armed(f, 300 * MS);
		CHECK(fk_view(&fk, 100).hog);
		CHECK(f->boost_prio);
		/* Found a hog at the first calm tick; a short one after. */
		if (born)
			CHECK(t <= 2 * MS + TICK_HOGS_NS + TICK_ACTIVE_NS);
		else
			CHECK(t >= HOG_SETTLED_NS &&
			      t <= 2 * MS + TICK_HOGS_NS + HOG_SETTLED_NS + TICK_ACTIVE_NS);
		fk_done(&fk);
	}
}

/* Four hogs share a CPU, each using a quarter of it. Born CPU-bound, each
 * is a hog once it has run HOG_BORN_CPU_NS (8 ms in), not when its first
 * 6 ms slice runs out (24 ms in): a frame task started with them must not
 * meet them in the fair class that long. With a history of blocking, a
 * task is a hog only at the end of a slice. */
static void test_born_hog_before_its_slice(void)
{
	for (int born = 1; born >= 0; born--) {
		uint64_t start, found = 0;

		fk_init(&fk, "pu:1");
		for (int i = 0; i < 4; i++)
			fk_add(&fk, 100 + i, 100 + i, 1, "hog")->tt.nvcsw = born ? 0 : 5000;
		fk_start(&fk, 1000 * MS);
		start = fk.now;
		for (int i = 0; i < 4; i++)
			fk_set_state(&fk, 100 + i, 'R', 250);
		while (!found && fk.now - start < 100 * MS) {
			fk_tick(&fk, 2 * MS);
			if (fk_view(&fk, 100).hog)
				found = fk.now - start;
		}
		if (born)
			CHECK(found >= 8 * MS && found < 12 * MS);
		else
			CHECK(found >= 24 * MS);
		fk_done(&fk);
	}
}

/* Eight tasks CPU-bound from birth exec one a millisecond beside a calm
 * loop, each then getting a share of the two CPUs, with reads as the
 * tracker makes them (each read at its exec, then every TICK_COLD_NS
 * unless hot) and the tick driven as the daemon drives it (brought
 * forward by what loop_task_exec() returns). They are counted hogs once
 * the first has run HOG_BORN_CPU_NS, at a tick TICK_ACTIVE_NS apart: the
 * frame task started with them waits boosted before its first frame is
 * due (16.7 ms). Read only every TICK_COLD_NS, at calm ticks up to
 * TICK_BUSY_MAX_NS apart, they were counted after 20 ms and more. */
static void test_born_hogs_counted_early(void)
{
	uint64_t t0, next, found = 0;
	int started = 0;

	fk_init(&fk, "pu:2");
	fk.tracker_reads = true;
	fk_add(&fk, 100, 100, 1, "shell");
	fk_start(&fk, 1000 * MS);
	fk_run(&fk, 200 * MS);
	t0 = fk.now;
	next = fk.loop->last_tick_ns + fk.loop->tick_ns;
	while (!found && fk.now - t0 < 100 * MS) {
		uint64_t exec_ns = started < 8 ? t0 + (uint64_t)(started + 1) * MS : UINT64_MAX;

		if (exec_ns < next) {
			struct fk_task *t = fk_add(&fk, 300 + started, 300 + started, 100, "hog");
			uint64_t at;

			fk.now = exec_ns;
			fk_set_state(&fk, t->tt.tid, 'R', 220);
			t->tt.state = 'R';
			t->tt.refreshed_ns = t->state_read_ns = t->tt.active_ns = fk.now;
			at = loop_task_exec(fk.loop, &t->tt, NULL, fk.now, fk.now);
			if (at && at < next)
				next = at > fk.now ? at : fk.now;
			started++;
			continue;
		}
		next = fk.now + fk_tick(&fk, next - fk.now);
		for (int i = 0; i < started && !found; i++)
			if (fk_view(&fk, 300 + i).hog)
				found = fk.now - t0;
	}
	CHECK(found > 0 && found <= 12 * MS);
	fk_done(&fk);
}

/* A swarm (more than SWARM_PER_CPU chatty threads per CPU ran lately)
 * beside a settled hog: left to the kernel, at TICK_SWARM_NS, and what
 * was pinned and boosted before it formed goes back. Once it thins out,
 * the few left are queued and boosted again. */
static void test_swarm(void)
{
	enum { N = 2 * SWARM_PER_CPU + 8 };
	unsigned acted = 0;

	fk_init(&fk, "pu:2");
	fk_add_hog(&fk, 100);
	for (int i = 0; i < N; i++)
		fk_add(&fk, 200 + i, 200, 1, "chatty");
	fk_start(&fk, 1000 * MS);
	fk_run(&fk, 100 * MS);
	CHECK(fk_view(&fk, 100).hog);
	/* A few first: they are acted on. */
	for (int n = 0; n < 30; n++) {
		for (int i = 0; i < 4; i++)
			fk_set_state(&fk, 200 + i, n % 2 ? 'S' : 'R', 300);
		fk_tick(&fk, 2 * MS);
		for (int i = 0; i < 4; i++)
			acted += fk_get(&fk, 200 + i)->boost_prio != 0;
	}
	CHECK(acted > 0);
	/* Then all of them, each a moment in turn. */
	for (int n = 0; n < 200; n++) {
		for (int i = 0; i < N; i++)
			fk_set_state(&fk, 200 + i, (n + i) % 4 ? 'S' : 'R', 300);
		if (n == 20)
			fk_reset_calls(&fk);
		CHECK(fk_tick(&fk, 2 * MS) == TICK_SWARM_NS || n < 20);
	}
	CHECK_EQ(fk_calls_total(&fk), 0);
	for (int i = 0; i < N; i++) {
		CHECK_EQ(fk_get(&fk, 200 + i)->boost_prio, 0);
		CHECK(!fk_get(&fk, 200 + i)->pinned);
	}
	/* One thin tick (its reads cut short, or late) ends no swarm: each
	 * end and start costs a call for every member. */
	for (int i = 0; i < N; i++)
		fk_set_state(&fk, 200 + i, 'S', 300);
	CHECK_EQ(fk_tick(&fk, 60 * MS), TICK_SWARM_NS);
	for (int i = 0; i < N; i++)
		fk_set_state(&fk, 200 + i, i % 4 ? 'S' : 'R', 300);
	CHECK_EQ(fk_tick(&fk, 2 * MS), TICK_SWARM_NS);
	CHECK_EQ(fk_calls_total(&fk), 0);
	/* Back to a few. */
	acted = 0;
	for (int n = 0; n < 60; n++) {
		for (int i = 0; i < N; i++)
			fk_set_state(&fk, 200 + i, i < 4 && n % 2 == 0 ? 'R' : 'S', 300);
		fk_tick(&fk, 2 * MS);
		for (int i = 0; i < 4; i++)
			acted += fk_get(&fk, 200 + i)->boost_prio != 0;
	}
	CHECK(acted > 0);
	fk_done(&fk);
}

/* A crowd that has not run yet is a swarm too. Beside a settled hog,
 * more than SWARM_PER_CPU new threads a CPU, runnable and waiting for
 * their first run (a pool just started), get no pin and no boost.
 * Counted only once they ran, they were pinned one by one until the
 * deadman's table was full (CI of 4494d3e, drill-crowd-bpf). */
static void test_swarm_not_yet_run(void)
{
	enum { N = 2 * SWARM_PER_CPU + 8 };
	struct fk_task *t;

	fk_init(&fk, "pu:2");
	fk_add_hog(&fk, 100);
	fk_start(&fk, 1000 * MS);
	fk_run(&fk, 100 * MS);
	CHECK(fk_view(&fk, 100).hog);
	for (int i = 0; i < N; i++) {
		t = fk_add(&fk, 200 + i, 200, 1, "pool");
		t->tt.flags |= TASK_FLAG_FORKNOEXEC;
		fk_set_state(&fk, 200 + i, 'R', 0);
		(void)loop_task_new(fk.loop, &t->tt, NULL, fk.now, fk.now);
	}
	/* The tick that meets them judges the swarm at its end: it may
	 * boost what the core picked for each CPU (its running task and
	 * the next), and the next tick gives that back. */
	for (int n = 0; n < 50; n++) {
		unsigned boosted = 0;

		fk_tick(&fk, 2 * MS);
		CHECK(fk.loop->swarm);
		for (int i = 0; i < N; i++) {
			CHECK(!fk_get(&fk, 200 + i)->pinned);
			boosted += fk_get(&fk, 200 + i)->boost_prio != 0;
		}
		CHECK(boosted <= (n ? 0 : 2 * 2));
	}
	fk_done(&fk);
}

/* A load that starts while the tick is calm (50 ms apart) is seen at once:
 * each new task, at its fork or exec, brings the tick forward. A stream of
 * short processes (a configure script, an exec storm) finds no contention,
 * and pulls the tick a little later each time, up to TICK_HOGS_NS after
 * the last; a tick with no new work before it starts again from
 * TICK_ACTIVE_NS.
 * Not while the tick is busy anyway, nor in a swarm, whose slow tick is
 * on purpose, nor for a task we never touch. */
static void test_new_work_pulls_calm_tick(void)
{
	enum { N = 2 * SWARM_PER_CPU + 8 };
	uint64_t tick, at, gap = 0;
	struct fk_task *t;

	fk_init(&fk, "pu:2");
	fk_add(&fk, 100, 100, 1, "shell");
	fk_set_state(&fk, 100, 'S', 0);
	fk_start(&fk, 1000 * MS);
	fk_run(&fk, 200 * MS);
	CHECK_EQ(fk.loop->tick_ns, TICK_IDLE_NS);
	t = fk_add(&fk, 200, 200, 100, "game");
	at = loop_task_new(fk.loop, &t->tt, NULL, fk.now, fk.now);
	CHECK(at && at <= fk.now + TICK_ACTIVE_NS);
	t = fk_add(&fk, 201, 201, 100, "hog");
	CHECK(loop_task_exec(fk.loop, &t->tt, NULL, fk.now, fk.now));
	/* Someone else's realtime task: nothing to act on. */
	t = fk_add(&fk, 202, 202, 100, "rt");
	t->tt.policy = SCHED_FIFO;
	t->tt.rt_priority = 50;
	CHECK(!loop_task_new(fk.loop, &t->tt, NULL, fk.now, fk.now));
	fk_done(&fk);

	/* The stream: each short process pulls, later and later. */
	fk_init(&fk, "pu:2");
	fk_add(&fk, 100, 100, 1, "configure")->tt.nvcsw = 100;
	fk_start(&fk, 1000 * MS);
	fk_run(&fk, 200 * MS);
	for (int i = 0; i < 20; i++) {
		/* The shell waits for each of its children. */
		fk_set_state(&fk, 100, i % 2 ? 'S' : 'R', 300);
		t = fk_add(&fk, 300 + i, 300 + i, 100, "true");
		t->tt.state = 'R';
		fk_set_state(&fk, 300 + i, 'R', 100);
		at = loop_task_new(fk.loop, &t->tt, NULL, fk.now, fk.now);
		CHECK(at > fk.loop->last_tick_ns);
		CHECK(at <= fk.loop->last_tick_ns + TICK_HOGS_NS);
		gap = at - fk.loop->last_tick_ns;
		/* Gone before the tick, as /bin/true is (0.5 ms). */
		loop_task_exit(fk.loop, &t->tt);
		fk_remove(&fk, 300 + i);
		fk_tick(&fk, at > fk.now ? at - fk.now : 1 * MS);
	}
	CHECK_EQ(gap, TICK_HOGS_NS);
	/* A tick with nothing new, then new work: pulled soon again. */
	fk_tick(&fk, TICK_HOGS_NS);
	t = fk_add(&fk, 400, 400, 100, "true");
	t->tt.state = 'R';
	at = loop_task_new(fk.loop, &t->tt, NULL, fk.now, fk.now);
	CHECK(at && at <= fk.loop->last_tick_ns + TICK_ACTIVE_NS);
	fk_done(&fk);

	/* Busy: a sleeper beside three hogs, the tick is short already. */
	fk_init(&fk, "pu:2");
	for (int i = 0; i < 3; i++)
		fk_add_hog(&fk, 100 + i);
	fk_add(&fk, 150, 150, 1, "sleeper");
	fk_start(&fk, 1000 * MS);
	fk_run(&fk, 200 * MS);
	for (int n = 0; n < 20; n++) {
		fk_set_state(&fk, 150, n % 2 ? 'S' : 'R', 300);
		fk_tick(&fk, 2 * MS);
	}
	CHECK(fk.loop->tick_ns <= TICK_BUSY_MAX_NS);
	t = fk_add(&fk, 200, 200, 1, "new");
	CHECK(!loop_task_new(fk.loop, &t->tt, NULL, fk.now, fk.now));
	fk_done(&fk);

	/* A swarm. */
	fk_init(&fk, "pu:2");
	for (int i = 0; i < N; i++)
		fk_add(&fk, 200 + i, 200, 1, "chatty");
	fk_start(&fk, 1000 * MS);
	for (int n = 0; n < 100; n++) {
		for (int i = 0; i < N; i++)
			fk_set_state(&fk, 200 + i, (n + i) % 4 ? 'S' : 'R', 300);
		tick = fk_tick(&fk, 2 * MS);
	}
	CHECK_EQ(tick, TICK_SWARM_NS);
	t = fk_add(&fk, 300, 300, 1, "new");
	CHECK(!loop_task_new(fk.loop, &t->tt, NULL, fk.now, fk.now));
	fk_done(&fk);
}

/* A worker that blocks between requests, beside a hog on one CPU: each
 * tick finds it R and it uses 80% of the CPU, but its voluntary switches
 * grow, so it never is a hog and its wake-ups stay queued ahead of the
 * hog's. */
static void test_busy_worker_is_no_hog(void)
{
	struct fk_task *w;

	fk_init(&fk, "pu:1");
	fk_add_hog(&fk, 100);
	w = fk_add(&fk, 200, 200, 1, "worker");
	w->blocks = true;
	fk_start(&fk, 1000 * MS);
	fk_run(&fk, 100 * MS);
	CHECK(fk_view(&fk, 100).hog);
	fk_set_state(&fk, 200, 'R', 800);
	fk_run(&fk, 300 * MS);
	CHECK(!fk_view(&fk, 200).hog);
	CHECK(fk_view(&fk, 200).running);
	CHECK_EQ(w->boost_prio, BOOST_RUN);

	/* The same without blocking: a hog within a slice. */
	w->blocks = false;
	fk_run(&fk, 100 * MS);
	CHECK(fk_view(&fk, 200).hog);
	CHECK_EQ(w->boost_prio, 0);
	fk_done(&fk);
}

/* A nice 5 hog runs at the kernel nice whose CFS weight gives MuQSS's
 * share, and gets its own nice back when it sleeps. */
static void test_hog_nice(void)
{
	struct fk_task *a;
	int kn = loop_kernel_nice(5);

	CHECK(kn != 5); /* else this test shows nothing */
	fk_init(&fk, "pu:2");
	a = fk_add(&fk, 100, 100, 1, "nicehog");
	a->tt.nice = 5;
	fk_start(&fk, 1000 * MS);
	fk_set_state(&fk, 100, 'R', 1000);
	fk_run(&fk, 100 * MS);
	CHECK(fk_view(&fk, 100).hog);
	CHECK_EQ(a->tt.nice, kn);
	CHECK_EQ(a->calls[FK_NICE], 1);

	fk_set_state(&fk, 100, 'S', 0);
	CHECK(fk_tick_until_read(&fk, 100, 10 * MS) < TICK_HOG_READ_NS + 10 * MS);
	CHECK(!fk_view(&fk, 100).hog);
	CHECK_EQ(a->tt.nice, 5);
	CHECK_EQ(a->calls[FK_NICE], 2);

	/* Its owner renices it while it is a hog: the loop follows. */
	fk_set_state(&fk, 100, 'R', 1000);
	fk_run(&fk, 100 * MS);
	CHECK(fk_view(&fk, 100).hog);
	a->tt.nice = 10;
	fk_tick(&fk, 10 * MS);
	CHECK(fk_view(&fk, 100).hog);
	CHECK_EQ(a->tt.nice, loop_kernel_nice(10));
	fk_done(&fk);
}

/* Two hogs and a short sleeper on one CPU: the sleeper's wake-ups are
 * queued and boosted ahead of them; the hogs never are. */
static void test_sleeper_beside_hogs(void)
{
	struct fk_task *h1, *h2, *s;

	fk_init(&fk, "pu:1");
	h1 = fk_add(&fk, 100, 100, 1, "hog1");
	h2 = fk_add(&fk, 101, 101, 1, "hog2");
	s = fk_add(&fk, 200, 200, 1, "sleeper");
	fk_start(&fk, 1000 * MS);
	fk_set_state(&fk, 100, 'R', 500);
	fk_set_state(&fk, 101, 'R', 500);
	fk_run(&fk, 100 * MS);
	CHECK(fk_view(&fk, 100).hog);
	CHECK(fk_view(&fk, 101).hog);

	for (int i = 0; i < 10; i++) {
		fk_set_state(&fk, 200, 'R', 300);
		fk_tick(&fk, 2 * MS);
		CHECK(fk_view(&fk, 200).running);
		CHECK_EQ(s->boost_prio, BOOST_RUN);
		fk_set_state(&fk, 200, 'S', 0);
		fk_tick(&fk, 2 * MS);
		CHECK(!fk_view(&fk, 200).hog);
		CHECK_EQ(h1->boost_prio + h2->boost_prio, 0);
	}
	fk_done(&fk);
}

/* The ring's script: each refresh, its members (tids 301-304 of process
 * 300) shared `share` permille of the interval on a CPU, in wake-ups of
 * which `sib` in four came from each other. */
struct ring {
	unsigned share, sib;
	uint64_t last;
};

static void ring_step(struct fake_kernel *f, uint64_t now, void *userdata)
{
	struct ring *r = userdata;
	uint64_t dt = r->last ? now - r->last : 0;

	r->last = now;
	for (pid_t tid = 301; tid <= 304; tid++) {
		struct tracked_task *tt = &fk_get(f, tid)->tt;

		if (!r->share)
			continue;
		tt->cpu_ns += dt * r->share / 1000 / 4;
		tt->last_cpu = tid % 2;
		tt->nvcsw += 40;
		tt->sib_wakes += 10 * r->sib;
	}
}

static bool ring_is_hog(void)
{
	for (pid_t tid = 301; tid <= 304; tid++)
		if (!fk_view(&fk, tid).hog || fk_get(&fk, tid)->boost_prio || fk_get(&fk, tid)->pinned)
			return false;
	return true;
}

static unsigned ring_boosted(void)
{
	unsigned n = 0;

	for (pid_t tid = 301; tid <= 304; tid++)
		n += fk_get(&fk, tid)->boost_prio != 0;
	return n;
}

/* Four threads that wake each other in a circle, each a few us a
 * wake-up, keep a CPU busy beside a game-like hog: none is a hog, so
 * each waits armed, ahead of the game. Woken by each other and never
 * all at rest, they are charged as one hog while it lasts; a sleeper of
 * another process keeps its boost. Neither a group that rests half the
 * time nor threads woken by others are charged so. */
static void test_chatty_group(void)
{
	struct ring ring = { 0 };
	struct fk_task *x;
	unsigned armed = 0;

	fk_init(&fk, "pu:2");
	fk_add(&fk, 100, 100, 1, "game");
	fk_add(&fk, 300, 300, 1, "ring");
	for (pid_t tid = 301; tid <= 304; tid++)
		fk_add(&fk, tid, 300, 1, "ring");
	x = fk_add(&fk, 400, 400, 1, "x-like");
	fk.step = ring_step;
	fk.step_data = &ring;
	fk_start(&fk, 1000 * MS);
	fk_set_state(&fk, 100, 'R', 1000);
	for (pid_t tid = 300; tid <= 304; tid++)
		fk_set_state(&fk, tid, 'S', 0);
	fk_run(&fk, 100 * MS);
	CHECK(fk_view(&fk, 100).hog);

	/* Busy half the time, woken by each other: armed as sleepers. */
	ring.share = 500;
	ring.sib = 4;
	fk_run(&fk, 200 * MS);
	CHECK(!fk_view(&fk, 301).hog);
	CHECK(ring_boosted() > 0);

	/* Busy all the time, but each woken by something else. */
	ring.share = 1000;
	ring.sib = 0;
	fk_run(&fk, 200 * MS);
	CHECK(!fk_view(&fk, 301).hog);
	CHECK(ring_boosted() > 0);

	/* The chatty group: within two windows, all four are hogs, neither
	 * boosted nor pinned, and stay so; the x-like sleeper is still armed
	 * and picked ahead of the game. */
	ring.sib = 4;
	fk_run(&fk, 2 * CHATTY_WINDOW_NS + 10 * MS);
	CHECK(ring_is_hog());
	CHECK(!fk_view(&fk, 300).hog);
	for (int i = 0; i < 20; i++) {
		fk_set_state(&fk, 400, 'R', 300);
		fk_tick(&fk, 2 * MS);
		armed += x->boost_prio != 0;
		fk_set_state(&fk, 400, 'S', 0);
		fk_tick(&fk, 2 * MS);
		CHECK(ring_is_hog());
	}
	CHECK(armed >= 10);
	CHECK_EQ(fk_get(&fk, 100)->boost_prio, 0);

	/* The group rests: its members are no hogs once it has for a window. */
	ring.share = 0;
	fk_run(&fk, 2 * CHATTY_WINDOW_NS + 10 * MS);
	for (pid_t tid = 301; tid <= 304; tid++)
		CHECK(!fk_view(&fk, tid).hog);
	fk_done(&fk);
}

int main(void)
{
	test_hog_and_back();
	test_contention_comes_and_goes();
	test_born_hog();
	test_born_hog_before_its_slice();
	test_born_hogs_counted_early();
	test_busy_worker_is_no_hog();
	test_swarm();
	test_swarm_not_yet_run();
	test_new_work_pulls_calm_tick();
	test_hog_nice();
	test_sleeper_beside_hogs();
	test_chatty_group();
	return CHECK_EXIT();
}
