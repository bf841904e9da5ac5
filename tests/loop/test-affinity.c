/* Owner affinity and the exec settle time: the loop pins within the mask
 * the task's owner set, takes a task off the core when a pin meets none
 * of it (the owner changed it under us) and rereads the mask; and it
 * pins nothing within PIN_SETTLE_NS of an exec, when a launcher may be
 * about to set a mask of its own. */
#include "check.h"
#include "fake_kernel.h"
#include "loop-internal.h" /* its constants */

#define MS 1000000ULL
#define S (1000 * MS)

static struct fake_kernel fk;

static bool subset(const cpu_set_t *a, const cpu_set_t *b)
{
	cpu_set_t both;

	CPU_AND(&both, a, b);
	return CPU_EQUAL(&both, a);
}

/* Tasks whose owners allow CPUs 2-3 of 4, among others allowed all:
 * whatever they do, every pin they get is within 2-3. */
static void test_pins_within_owner_mask(void)
{
	unsigned pins = 0;

	fk_init(&fk, "pu:4");
	for (int i = 0; i < 8; i++) {
		struct fk_task *t = fk_add(&fk, 100 + i, 100 + i, 1, "task");

		if (i % 2 == 0) {
			CPU_ZERO(&t->owner);
			CPU_SET(2, &t->owner);
			CPU_SET(3, &t->owner);
		}
	}
	fk_start(&fk, 1 * S);
	for (int n = 0; n < 500; n++) {
		/* Each runs a little in turn, two hog for a while in turn. */
		for (int i = 0; i < 8; i++) {
			bool run = (n + i) % 3 == 0 || (i == 4 && n % 100 < 60) ||
				   (i == 5 && n % 100 >= 40);

			fk_set_state(&fk, 100 + i, run ? 'R' : 'S', run ? 600 : 0);
		}
		fk_tick(&fk, 2 * MS);
		for (int i = 0; i < 8; i += 2) {
			struct fk_task *t = fk_get(&fk, 100 + i);

			if (t->pinned) {
				CHECK(subset(&t->asked, &t->owner));
				pins++;
			}
			CHECK_EQ(t->pin_einval, 0);
		}
	}
	CHECK(pins > 100); /* else this test shows nothing */
	CHECK(fk_get(&fk, 104)->calls[FK_PIN] > 0);
	fk_done(&fk);
}

/* Beside a hog, its owner moves a task from CPUs 0-1 to CPU 1 while it is
 * a hog too (not pinned): the loop's next pin, to CPU 0 by the stale
 * mask, fails with EINVAL, the mask is read again, and the next pin, in
 * the same tick, is within the new one: a sleeper armed there at once,
 * not left to wake unarmed until the next tick. */
static void test_einval_rereads_mask(void)
{
	struct fk_task *a;
	struct fk_view v;

	fk_init(&fk, "pu:2");
	a = fk_add(&fk, 100, 100, 1, "moved");
	a->tt.nvcsw = 10; /* it has slept before: no hog from birth */
	fk_add_hog(&fk, 900);
	fk_start(&fk, 1 * S);
	fk_run(&fk, 100 * MS);
	fk_set_state(&fk, 100, 'R', 1000);
	fk_tick(&fk, 2 * MS);
	CHECK_EQ(fk_pinned_cpu(a), 0);
	fk_run(&fk, 100 * MS);
	CHECK(fk_view(&fk, 100).hog);
	CHECK(!a->pinned);

	CPU_CLR(0, &a->owner);
	fk_set_state(&fk, 100, 'S', 0);
	fk_reset_calls(&fk);
	CHECK(fk_tick_until_read(&fk, 100, 10 * MS) < TICK_HOG_READ_NS + 10 * MS);
	/* Asleep beside the hog, it is worth a wake boost where it last ran:
	 * that pin fails, its mask is read, and it is armed within it. */
	CHECK_EQ(a->calls[FK_PIN], 2);
	CHECK_EQ(a->pin_einval, 1);
	CHECK_EQ(fk_pinned_cpu(a), 1);
	CHECK_EQ(fk_boost_level(a->boost_prio), BOOST_WAKE);

	/* It stays armed there; it wakes there. */
	fk_tick(&fk, 2 * MS);
	CHECK_EQ(fk_pinned_cpu(a), 1);
	CHECK_EQ(fk_boost_level(a->boost_prio), BOOST_WAKE);
	fk_set_state(&fk, 100, 'R', 1000);
	fk_tick(&fk, 2 * MS);
	v = fk_view(&fk, 100);
	CHECK(v.running);
	CHECK_EQ(fk_pinned_cpu(a), 1);
	CHECK_EQ(a->boost_prio, BOOST_RUN);
	CHECK_EQ(a->calls[FK_PIN], 2);
	CHECK_EQ(a->pin_einval, 1);
	fk_done(&fk);
}

/* An owner's mask with none of the loop's CPUs is no crash: the task is
 * never pinned, and the loop keeps going. */
static void test_mask_outside_topology(void)
{
	struct fk_task *a;

	fk_init(&fk, "pu:2");
	a = fk_add(&fk, 100, 100, 1, "elsewhere");
	CPU_ZERO(&a->owner);
	CPU_SET(7, &a->owner);
	fk_add(&fk, 101, 101, 1, "normal");
	fk_start(&fk, 1 * S);
	fk_set_state(&fk, 100, 'R', 300);
	fk_set_state(&fk, 101, 'R', 300);
	fk_run(&fk, 200 * MS);
	CHECK(!a->pinned);
	/* Each failed pin takes it off the core; running all the same, it
	 * soon uses a slice and is a hog, and the failing pins stop. */
	CHECK(a->calls[FK_PIN] <= 10);
	CHECK_EQ(a->boost_prio, 0);
	CHECK(fk_get(&fk, 101)->boost_prio || fk_view(&fk, 101).hog);
	fk_done(&fk);
}

/* Beside a hog, a task that just exec'd is queued at once but pinned only once
 * PIN_SETTLE_NS have passed since the exec event; an exec found by a
 * scan (no event time) is pinned at the next tick. */
static void test_exec_settle(void)
{
	struct fk_task *b;
	uint64_t exec_ns;
	uint64_t queued;

	fk_init(&fk, "pu:2");
	fk_add_hog(&fk, 900);
	fk_start(&fk, 1 * S);
	fk_run(&fk, 100 * MS);

	b = fk_add(&fk, 500, 500, 1, "launcher");
	b->tt.nvcsw = 10; /* it has waited before: no hog from birth */
	loop_task_new(fk.loop, &b->tt, NULL, fk.now - 1 * MS, fk.now);
	fk_set_state(&fk, 500, 'R', 100);
	b->tt.state = 'R';
	exec_ns = fk.now - 1 * MS;
	queued = loop_task_exec(fk.loop, &b->tt, NULL, exec_ns, fk.now);
	CHECK(queued && queued <= fk.now + TICK_ACTIVE_NS);
	while (fk.now < exec_ns + PIN_SETTLE_NS - 2 * MS) {
		fk_tick(&fk, 2 * MS);
		CHECK(fk_view(&fk, 500).running);
		CHECK_EQ(b->calls[FK_PIN], 0);
	}
	fk_tick(&fk, 2 * MS);
	fk_tick(&fk, 2 * MS);
	CHECK(fk_view(&fk, 500).running);
	CHECK_EQ(b->calls[FK_PIN], 1);
	CHECK(b->pinned);

	/* Pinned, it execs again: unpinned at once, then settles again. */
	exec_ns = fk.now;
	loop_task_exec(fk.loop, &b->tt, NULL, exec_ns, fk.now);
	CHECK(!b->pinned);
	CHECK_EQ(b->calls[FK_UNPIN], 1);
	fk_tick(&fk, 2 * MS);
	CHECK(!b->pinned);

	/* Met by a scan: no event time, no settle. */
	struct fk_task *c = fk_add(&fk, 600, 600, 1, "scanned");
	fk_set_state(&fk, 600, 'R', 100);
	loop_task_new(fk.loop, &c->tt, NULL, 0, fk.now);
	CHECK(!loop_task_exec(fk.loop, &c->tt, NULL, 0, fk.now));
	fk_tick(&fk, 2 * MS);
	CHECK(c->pinned);
	fk_done(&fk);
}

/* A compile's driver: the core placed it when it ran beside a hog, then
 * it sleeps in wait() for its child. Pinned, it was read at every tick
 * for as long as it slept; once it has slept RECENT_SLEEPER_NS it goes
 * back to its owner's mask, once, and is read only now and then. */
static void test_long_sleeper_unpinned(void)
{
	struct fk_task *d;
	uint64_t slept_ns;

	fk_init(&fk, "pu:2");
	fk_add_hog(&fk, 900);
	fk_add_hog(&fk, 901);
	fk_start(&fk, 1 * S);
	fk_run(&fk, 200 * MS);

	d = fk_add(&fk, 500, 500, 1, "cc");
	loop_task_new(fk.loop, &d->tt, NULL, 0, fk.now);
	fk_set_state(&fk, 500, 'R', 300);
	for (int n = 0; n < 5 && !d->pinned; n++)
		fk_tick(&fk, 2 * MS);
	CHECK(d->pinned); /* else this test shows nothing */

	fk_set_state(&fk, 500, 'S', 0);
	slept_ns = fk.now;
	while (fk.now < slept_ns + RECENT_SLEEPER_NS - 10 * MS) {
		fk_tick(&fk, 2 * MS);
		CHECK(d->pinned);
	}
	fk_run(&fk, 100 * MS);
	CHECK(!d->pinned);
	CHECK(!d->tt.hot);
	CHECK_EQ(d->calls[FK_UNPIN], 1);
	fk_run(&fk, 500 * MS);
	CHECK(!d->pinned);
	CHECK_EQ(d->calls[FK_UNPIN], 1);
	CHECK_EQ(d->calls[FK_PIN], 1);
	fk_done(&fk);
}

int main(void)
{
	test_pins_within_owner_mask();
	test_einval_rereads_mask();
	test_mask_outside_topology();
	test_exec_settle();
	test_long_sleeper_unpinned();
	return CHECK_EXIT();
}
