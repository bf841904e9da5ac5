/* The owner's later word wins: a renice or chrt the loop did not make is
 * handed to the levers as the task's new base (rebase), once, and the
 * class follows the policy; our own boost and a hog's translated nice
 * are never taken for one. */
#include "check.h"
#include "fake_kernel.h"
#include "loop-internal.h" /* its constants */

#define MS 1000000ULL

static struct fake_kernel fk;

/* A nice 0 hog reniced to 15 by its owner: rebased once, then runs at
 * the translation of 15, and 15 is what goes back. */
static void test_renice_hog(void)
{
	struct fk_task *a;

	fk_init(&fk, "pu:2");
	a = fk_add(&fk, 100, 100, 1, "hog");
	fk_start(&fk, 1000 * MS);
	fk_set_state(&fk, 100, 'R', 1000);
	fk_run(&fk, 100 * MS);
	CHECK(fk_view(&fk, 100).hog);
	CHECK(a->recorded); /* pinned and boosted before it was a hog */
	CHECK_EQ(a->calls[FK_REBASE], 0);

	a->tt.nice = 15;
	fk_run(&fk, 200 * MS);
	CHECK_EQ(a->calls[FK_REBASE], 1);
	CHECK_EQ(a->orig.nice, 15);
	CHECK_EQ(a->tt.nice, loop_kernel_nice(15));
	CHECK_EQ(loop_owner_nice(fk.loop, 100, a->tt.nice), 15);
	loop_restore_all(fk.loop);
	CHECK_EQ(a->tt.nice, 15);
	fk_done(&fk);
}

/* A hog at nice 10 runs at its translation: the loop's own renice, no
 * owner's. A boosted task reads SCHED_FIFO: ours, no owner's chrt. */
static void test_ours_is_not_the_owners(void)
{
	struct fk_task *a, *b;

	fk_init(&fk, "pu:2");
	a = fk_add(&fk, 100, 100, 1, "hog");
	a->tt.nice = 10;
	b = fk_add(&fk, 101, 101, 1, "worker");
	fk_start(&fk, 1000 * MS);
	fk_set_state(&fk, 100, 'R', 1000);
	fk_set_state(&fk, 101, 'R', 300);
	for (int i = 0; i < 200; i++) {
		fk_tick(&fk, 2 * MS);
		if (i % 20 == 10)
			fk_set_state(&fk, 101, 'S', 0);
		else if (i % 20 == 0)
			fk_set_state(&fk, 101, 'R', 300);
	}
	CHECK(fk_view(&fk, 100).hog);
	CHECK_EQ(a->tt.nice, loop_kernel_nice(10));
	CHECK(b->calls[FK_BOOST] > 0);
	CHECK_EQ(fk.calls[FK_REBASE], 0);
	fk_done(&fk);
}

/* chrt -b: the batch class, SCHED_BATCH its base; chrt -o: normal again. */
static void test_chrt_batch(void)
{
	struct fk_task *a;

	fk_init(&fk, "pu:2");
	a = fk_add(&fk, 100, 100, 1, "job");
	fk_start(&fk, 1000 * MS);
	fk_set_state(&fk, 100, 'R', 1000);
	fk_run(&fk, 100 * MS);
	CHECK(fk_view(&fk, 100).hog);
	CHECK_EQ(loop_task_class(fk.loop, 100), SCHED_CLASS_NORMAL);

	a->tt.policy = SCHED_BATCH;
	fk_run(&fk, 100 * MS);
	CHECK_EQ(a->calls[FK_REBASE], 1);
	CHECK_EQ(a->orig.policy, SCHED_BATCH);
	CHECK_EQ(loop_task_class(fk.loop, 100), SCHED_CLASS_BATCH);

	a->tt.policy = SCHED_OTHER;
	fk_run(&fk, 100 * MS);
	CHECK_EQ(a->calls[FK_REBASE], 2);
	CHECK_EQ(a->orig.policy, SCHED_OTHER);
	CHECK_EQ(loop_task_class(fk.loop, 100), SCHED_CLASS_NORMAL);
	fk_done(&fk);
}

/* chrt -i: IDLEPRIO, SCHED_IDLE its base. */
static void test_chrt_idle(void)
{
	struct fk_task *a;

	fk_init(&fk, "pu:2");
	a = fk_add(&fk, 100, 100, 1, "job");
	fk_start(&fk, 1000 * MS);
	fk_set_state(&fk, 100, 'R', 1000);
	fk_run(&fk, 100 * MS);
	a->tt.policy = SCHED_IDLE;
	fk_run(&fk, 100 * MS);
	CHECK_EQ(a->calls[FK_REBASE], 1);
	CHECK_EQ(a->orig.policy, SCHED_IDLE);
	CHECK_EQ(loop_task_class(fk.loop, 100), SCHED_CLASS_IDLEPRIO);
	loop_restore_all(fk.loop);
	CHECK_EQ(a->tt.policy, SCHED_IDLE);
	fk_done(&fk);
}

int main(void)
{
	test_renice_hog();
	test_ours_is_not_the_owners();
	test_chrt_batch();
	test_chrt_idle();
	return CHECK_EXIT();
}
