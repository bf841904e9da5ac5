/* A child forked while the loop had changed its parent carries the
 * loop's settings, not its owner's: a pin, SCHED_IDLE, an EEVDF slice, a
 * hog's translated nice. At loop_task_new() the loop asks undo_inherited
 * for exactly what the child may carry. */
#include "check.h"
#include "fake_kernel.h"
#include "loop-internal.h" /* its constants */

#define MS 1000000ULL
#define S (1000 * MS)

static struct fake_kernel fk;

/* The kernel copies the parent's mask, policy and nice into the child;
 * our boost is SCHED_FIFO with SCHED_RESET_ON_FORK, so a boosted
 * parent's child starts SCHED_OTHER at a nice of 0 or more. */
static struct fk_task *fork_child(pid_t parent, pid_t tid, pid_t tgid, uint64_t event_ns)
{
	struct fk_task *p = fk_get(&fk, parent);
	struct fk_task *c = fk_add(&fk, tid, tgid, tgid == tid ? parent : p->tt.ppid, p->tt.comm);

	if (p->pinned)
		c->owner = p->pin;
	c->tt.policy = p->boost_prio ? SCHED_OTHER : p->tt.policy;
	c->tt.nice = p->boost_prio && p->tt.nice < 0 ? 0 : p->tt.nice;
	loop_task_new(fk.loop, &c->tt, NULL, event_ns, fk.now);
	return c;
}

static bool all_cpus(const cpu_set_t *set)
{
	return CPU_COUNT(set) == fk.nr_os_cpus;
}

/* Parent 300 on 2 CPUs beside a settled hog (900), 100 ms in. */
static struct fk_task *parent_beside_hog(void)
{
	struct fk_task *p;

	fk_init(&fk, "pu:2");
	p = fk_add(&fk, 300, 300, 1, "parent");
	fk_add_hog(&fk, 900);
	fk_start(&fk, 1 * S);
	fk_run(&fk, 100 * MS);
	return p;
}

/* A hog parent runs with our slice: its child gets the slice checked.
 * Then it sleeps (the kernel's slice back) and runs pinned beside a hog:
 * a child process and a thread both get its owner's mask back. */
static void test_pin_and_slice(void)
{
	struct fk_task *p, *c, *t;

	p = parent_beside_hog();
	fk_set_state(&fk, 300, 'R', 1000);
	while (!fk_view(&fk, 300).hog)
		fk_tick(&fk, 2 * MS);
	fk_tick(&fk, 2 * MS);
	CHECK_EQ(p->slice_ns, rr_slice_ns(fk.loop));
	c = fork_child(300, 303, 303, fk.now);
	CHECK(c->undone);
	CHECK_EQ(c->undo.our_slice_ns, rr_slice_ns(fk.loop));

	fk_set_state(&fk, 300, 'S', 0);
	fk_tick(&fk, 2 * MS);
	fk_set_state(&fk, 300, 'R', 300);
	fk_tick(&fk, 2 * MS);
	CHECK(p->pinned);
	CHECK_EQ(p->slice_ns, 0);

	c = fork_child(300, 301, 301, fk.now);
	CHECK(c->undone);
	CHECK_EQ(fk.calls[FK_UNDO], 2);
	CHECK(c->undo.affinity);
	CHECK(!c->undo.idle_policy);
	CHECK_EQ(c->undo.our_slice_ns, 0);
	CHECK_EQ(c->undo.our_nice, NICE_UNSET);
	CHECK(all_cpus(&c->owner));

	t = fork_child(300, 302, 300, fk.now);
	CHECK(t->undone);
	CHECK(t->undo.affinity);
	CHECK(all_cpus(&t->owner));
	fk_done(&fk);
}

/* An untouched parent (asleep, never run): no call at all. */
static void test_untouched_parent(void)
{
	fk_init(&fk, "pu:2");
	fk_add(&fk, 300, 300, 1, "parent");
	fk_start(&fk, 1 * S);
	fk_run(&fk, 100 * MS);
	fork_child(300, 301, 301, fk.now);
	fork_child(300, 302, 300, fk.now);
	CHECK_EQ(fk.calls[FK_UNDO], 0);
	fk_done(&fk);
}

/* An IDLEPRIO parent runs SCHED_IDLE by us: its child gets the owner's
 * policy back, then IDLEPRIO from its parent, recorded as ours. */
static void test_idle_policy(void)
{
	struct fk_task *p, *c;

	fk_init(&fk, "pu:2");
	fk.slice_supported = false;
	p = fk_add(&fk, 300, 300, 1, "parent");
	fk_start(&fk, 1 * S);
	CHECK_EQ(loop_set_class(fk.loop, 300, 0, SCHED_CLASS_IDLEPRIO, false, 0, (char[64]){ 0 }, 64), 0);
	CHECK_EQ(p->tt.policy, SCHED_IDLE);

	c = fork_child(300, 301, 301, fk.now);
	CHECK(c->undone);
	CHECK(c->undo.idle_policy);
	CHECK(!c->undo.affinity);
	CHECK_EQ(c->undo.our_slice_ns, 0);
	CHECK_EQ(loop_task_class(fk.loop, 301), SCHED_CLASS_IDLEPRIO);
	CHECK(c->idle);
	CHECK(c->recorded);
	CHECK_EQ(c->orig.policy, SCHED_OTHER);
	fk_done(&fk);
}

/* A pin that ended less than FORK_COPY_NS before the fork event may
 * have been copied: the child's mask is put back. One that ended long
 * before, not. */
static void test_recent_unpin(void)
{
	struct fk_task *p, *c;
	uint64_t unpinned;

	fk_init(&fk, "pu:2");
	fk.slice_supported = false;
	p = fk_add(&fk, 300, 300, 1, "parent");
	p->tt.nvcsw = 10; /* it has slept before: no hog from birth */
	fk_add_hog(&fk, 900);
	fk_start(&fk, 1 * S);
	fk_run(&fk, 100 * MS);
	fk_set_state(&fk, 300, 'R', 1000);
	fk_tick(&fk, 2 * MS);
	CHECK(p->pinned); /* queued beside the hog */
	while (!fk_view(&fk, 300).hog)
		fk_tick(&fk, 2 * MS);
	CHECK(!p->pinned);
	unpinned = fk.now;

	c = fork_child(300, 301, 301, unpinned + FORK_COPY_NS / 2);
	CHECK(c->undone);
	CHECK(c->undo.affinity);
	c = fork_child(300, 302, 302, unpinned + FORK_COPY_NS + 10 * MS);
	CHECK(!c->undone);
	/* From a scan (no event time) only a pin held now counts. */
	c = fork_child(300, 303, 303, 0);
	CHECK(!c->undone);
	fk_done(&fk);
}

/* A nice 5 hog runs at a translated kernel nice; a child that still has
 * it gets 5, and the loop starts it at 5. */
static void test_hog_nice(void)
{
	struct fk_task *p, *c;
	int kn = loop_kernel_nice(5);

	fk_init(&fk, "pu:2");
	fk.slice_supported = false;
	p = fk_add(&fk, 300, 300, 1, "parent");
	p->tt.nice = 5;
	fk_start(&fk, 1 * S);
	fk_set_state(&fk, 300, 'R', 1000);
	fk_run(&fk, 200 * MS);
	CHECK(fk_view(&fk, 300).hog);
	CHECK_EQ(p->tt.nice, kn);

	c = fork_child(300, 301, 301, fk.now - FORK_COPY_NS - 1);
	CHECK(c->undone);
	CHECK(!c->undo.affinity);
	CHECK_EQ(c->undo.our_nice, kn);
	CHECK_EQ(c->undo.owner_nice, 5);
	CHECK_EQ(c->tt.nice, 5);
	/* It runs as a nice 5 task: as a hog, the same translation. */
	fk_set_state(&fk, 301, 'R', 1000);
	fk_run(&fk, 200 * MS);
	CHECK(fk_view(&fk, 301).hog);
	CHECK_EQ(c->tt.nice, kn);

	/* A child whose owner reniced it since (not ours): left alone. */
	p->tt.nice = kn;
	c = fk_add(&fk, 302, 302, 300, "parent");
	c->tt.nice = 7;
	loop_task_new(fk.loop, &c->tt, NULL, fk.now - FORK_COPY_NS - 1, fk.now);
	CHECK(!c->undone);
	fk_done(&fk);
}

/* A parent the loop leaves alone (its own RT policy) passes nothing. */
static void test_exempt_parent(void)
{
	struct fk_task *p;

	fk_init(&fk, "pu:2");
	p = fk_add(&fk, 300, 300, 1, "audio");
	p->tt.policy = SCHED_FIFO;
	fk_start(&fk, 1 * S);
	fk_set_state(&fk, 300, 'R', 500);
	fk_run(&fk, 100 * MS);
	CHECK_EQ(fk_calls_total(&fk), 0);
	fork_child(300, 301, 301, fk.now);
	CHECK_EQ(fk.calls[FK_UNDO], 0);
	fk_done(&fk);
}

/* At the fork's event, before the child is read (its read waits while
 * it is mid-exec, and a restore after a crash meanwhile would not know
 * the child's pin once the parent's moved): the pin goes back at once,
 * and nothing else is asked. A parent we never pinned: no call. */
static void test_pin_back_at_fork_event(void)
{
	struct fk_task *p, *c;

	p = parent_beside_hog();
	fk_set_state(&fk, 300, 'R', 300);
	fk_tick(&fk, 2 * MS);
	CHECK(p->pinned);
	c = fk_add(&fk, 301, 301, 300, "child");
	c->owner = p->pin;
	loop_task_forked(fk.loop, &p->tt, 301, 301, fk.now);
	CHECK(c->undone);
	CHECK(c->undo.affinity && !c->undo.idle_policy && !c->undo.our_slice_ns);
	CHECK(all_cpus(&c->owner));
	fk_done(&fk);

	fk_init(&fk, "pu:2");
	p = fk_add(&fk, 300, 300, 1, "parent");
	fk_start(&fk, 1 * S);
	c = fk_add(&fk, 301, 301, 300, "child");
	loop_task_forked(fk.loop, &p->tt, 301, 301, fk.now);
	CHECK(!c->undone);
	CHECK_EQ(fk.calls[FK_UNDO], 0);
	fk_done(&fk);
}

int main(void)
{
	test_pin_and_slice();
	test_untouched_parent();
	test_idle_policy();
	test_recent_unpin();
	test_hog_nice();
	test_exempt_parent();
	test_pin_back_at_fork_event();
	return CHECK_EXIT();
}
