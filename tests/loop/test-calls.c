/* The system calls the loop makes per tick, for a few scenes on 2 CPUs:
 * what muqssd costs a machine (issue 14, "do no harm"). Each scene warms
 * up for 0.5 s, then runs 2 s at the loop's own tick; the table shows
 * the ticks per second and the lever calls per tick and per second, and
 * each is held under a bound measured on this loop (with some room). The
 * loop's own counters (loop_counters(), what muqssctl status shows) must
 * agree with what the fake kernel saw. */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "fake_kernel.h"
#include "loop-internal.h" /* its constants */

#define MS 1000000ULL
#define S (1000 * MS)
#define US 1000ULL

static struct fake_kernel fk;

/* A task that runs work ns every period ns, from phase on. */
struct periodic {
	pid_t tid;
	uint64_t period, work, phase;
};

static struct periodic periodic[FK_MAX_TASKS];
static int nr_periodic;

static uint64_t work_done(const struct periodic *p, uint64_t t)
{
	uint64_t since, in;

	if (t < p->phase)
		return 0;
	since = t - p->phase;
	in = since % p->period;
	return since / p->period * p->work + (in < p->work ? in : p->work);
}

static uint64_t periods_begun(const struct periodic *p, uint64_t t)
{
	return t < p->phase ? 0 : (t - p->phase) / p->period;
}

static void step_periodic(struct fake_kernel *k, uint64_t now, void *userdata)
{
	(void)userdata;
	for (int i = 0; i < nr_periodic; i++) {
		const struct periodic *p = &periodic[i];
		struct fk_task *t = fk_get(k, p->tid);

		t->tt.cpu_ns += work_done(p, now) - work_done(p, k->last_refresh_ns);
		/* It sleeps once a period, seen or not. */
		t->tt.nvcsw += (uint32_t)(periods_begun(p, now) - periods_begun(p, k->last_refresh_ns));
		t->want_state = now >= p->phase && (now - p->phase) % p->period < p->work ? 'R' : 'S';
	}
}

static void add_periodic(pid_t tid, uint64_t period, uint64_t work, uint64_t phase)
{
	fk_add(&fk, tid, tid, 1, "periodic");
	periodic[nr_periodic++] = (struct periodic){ tid, period, work, phase };
}

/* The bounds, per tick and per lever; a scene that needs more has
 * become costlier. */
struct bounds {
	double ticks_per_s;
	double per_tick[FK_NR_LEVERS];
	double total_per_tick;
};

struct scene {
	const char *name;
	void (*setup)(void);
	struct bounds max;
};

static void setup_idle(void)
{
	for (int i = 0; i < 50; i++)
		fk_add(&fk, 100 + i, 100 + i, 1, "sleeper");
}

/* Two hogs and a game-like task: 3 ms of work every 16.7 ms. */
static void setup_hogs_frame(void)
{
	fk_add(&fk, 100, 100, 1, "hog");
	fk_add(&fk, 101, 101, 1, "hog");
	fk_set_state(&fk, 100, 'R', 1000);
	fk_set_state(&fk, 101, 'R', 1000);
	add_periodic(200, 16700 * US, 3 * MS, 0);
}

/* 100 chatty sleepers: 200 us of work every 20 ms each (one CPU's worth
 * in all), at spread phases. */
static void setup_chatty(void)
{
	for (int i = 0; i < 100; i++)
		add_periodic(200 + i, 20 * MS, 200 * US, (uint64_t)i * 197 * US);
}

/* Four hogs and an IDLEPRIO batch job held at the gate. */
static void setup_gated(void)
{
	for (int i = 0; i < 4; i++) {
		fk_add(&fk, 100 + i, 100 + i, 1, "hog");
		fk_set_state(&fk, 100 + i, 'R', 500);
	}
	fk_add(&fk, 300, 300, 1, "batch");
	fk_set_state(&fk, 300, 'R', 1000);
}

static void run_scene(const struct scene *sc)
{
	const struct loop_counters *lc;
	struct loop_counters before;
	unsigned ticks, total;
	double secs = 2.0;

	fk_init(&fk, "pu:2");
	nr_periodic = 0;
	fk.step = step_periodic;
	sc->setup();
	fk_start(&fk, 1 * S);
	if (sc->setup == setup_gated)
		CHECK_EQ(loop_set_class(fk.loop, 300, 0, SCHED_CLASS_IDLEPRIO, false, 0, (char[64]){ 0 }, 64), 0);
	fk_run(&fk, 500 * MS);
	fk_reset_calls(&fk);
	lc = loop_counters(fk.loop);
	before = *lc;
	ticks = fk_run(&fk, 2 * S);
	total = fk_calls_total(&fk);

	printf("%-34s %6.0f %6.2f", sc->name, ticks / secs, (double)total / ticks);
	for (int i = 0; i < FK_NR_LEVERS; i++)
		if (i != FK_RELEASE && i != FK_FORGET && i != FK_UNDO)
			printf(" %6.2f", (double)fk.calls[i] / ticks);
	printf(" %7.0f\n", total / secs);

	CHECK(ticks / secs <= sc->max.ticks_per_s);
	CHECK((double)total / ticks <= sc->max.total_per_tick);
	for (int i = 0; i < FK_NR_LEVERS; i++)
		if ((double)fk.calls[i] / ticks > sc->max.per_tick[i])
			CHECK_FAIL("%s: %s %.2f per tick, over %.2f", sc->name, fk_lever_name(i),
				   (double)fk.calls[i] / ticks, sc->max.per_tick[i]);
	/* The loop's own count of its system calls is right. */
	CHECK_EQ(lc->calls_boost - before.calls_boost, fk.calls[FK_BOOST]);
	CHECK_EQ(lc->calls_unboost - before.calls_unboost, fk.calls[FK_UNBOOST]);
	CHECK_EQ(lc->calls_pin - before.calls_pin, fk.calls[FK_PIN]);
	CHECK_EQ(lc->calls_unpin - before.calls_unpin, fk.calls[FK_UNPIN]);
	CHECK_EQ(lc->calls_nice - before.calls_nice, fk.calls[FK_NICE]);
	CHECK_EQ(lc->calls_slice - before.calls_slice, fk.calls[FK_SLICE]);
	CHECK_EQ(lc->calls_idle - before.calls_idle, fk.calls[FK_IDLE]);
	CHECK_EQ(lc->calls_signal - before.calls_signal, fk.calls[FK_STOP] + fk.calls[FK_CONT]);
	fk_done(&fk);
}

/* The bounds: measured on the loop of d2a765a with this branch's two
 * loop fixes (figures in the comments), with about 15% room.
 * per tick: boost unboost idle nice slice pin unpin stop cont release forget undo */
static const struct scene scenes[] = {
	/* 20 ticks/s, no call at all */
	{ "idle: 50 sleepers", setup_idle,
	  { 21, { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 }, 0 } },
	/* 256 ticks/s; 0.35 boosts a tick (90/s), nothing else */
	{ "2 hogs + 1 frame (16.7 ms, 3 ms)", setup_hogs_frame,
	  { 300, { 0.4, 0.05, 0, 0, 0, 0.05, 0.05, 0, 0, 0, 0, 0 }, 0.45 } },
	/* 10 ticks/s, no call: a swarm and no hog, so the kernel orders
	 * them (it was 312 ticks/s and 9.5 calls a tick, 2,965/s, while the
	 * loop queued, pinned and boosted every wake-up) */
	{ "100 chatty (20 ms, 0.2 ms)", setup_chatty,
	  { 12, { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 }, 0 } },
	/* 99 ticks/s; a stop and a cont each second (the 1 s bound) */
	{ "4 hogs + gated IDLEPRIO job", setup_gated,
	  { 110, { 0, 0, 0, 0, 0, 0, 0, 0.015, 0.015, 0, 0, 0 }, 0.03 } },
};

int main(void)
{
	printf("%-34s %6s %6s", "scene (2 CPUs)", "tick/s", "sys/t");
	for (int i = 0; i < FK_NR_LEVERS; i++)
		if (i != FK_RELEASE && i != FK_FORGET && i != FK_UNDO)
			printf(" %6s", fk_lever_name(i));
	printf(" %7s\n", "sys/s");
	for (size_t i = 0; i < sizeof(scenes) / sizeof(scenes[0]); i++)
		run_scene(&scenes[i]);
	return CHECK_EXIT();
}
