#include "check.h"
#include "synth.h"

#define MS 1000000ull
#define NOW (1000 * MS)

static struct sched_task busy[64];
static struct sched_task waker;

/* Makes every CPU in @cpus run a nice 0 task with deadline NOW + 20 ms. */
static void run_on(struct sched *s, const int *cpus, int nr)
{
	for (int i = 0; i < nr; i++) {
		struct sched_task *t = &busy[cpus[i]];

		sched_task_init(s, t, 100 + (uint64_t)cpus[i], NOW);
		t->dl.deadline = NOW + 20 * MS;
		sched_set_running(s, cpus[i], t, NOW);
	}
}

static void run_range(struct sched *s, int from, int to)
{
	for (int c = from; c <= to; c++)
		run_on(s, &c, 1);
}

static struct sched_task *waking(struct sched *s, int last_cpu)
{
	sched_task_init(s, &waker, 1, NOW);
	waker.last_cpu = last_cpu;
	return &waker;
}

static void test_cpu_choice_llc(void)
{
	struct sched *s = synth_sched("pack:2 l3:1 core:4 pu:2", true);
	struct sched_task *t = waking(s, 0);
	struct cpumask mask;

	/* Last CPU idle: stay there. */
	CHECK_EQ(sched_select_cpu(s, t), 0);

	/* Last CPU busy: a whole idle core under the same cache beats the sibling. */
	run_range(s, 0, 0);
	CHECK_EQ(sched_select_cpu(s, t), 2);

	/* Only siblings of busy cores left locally: an idle other package wins (8 < 21). */
	run_range(s, 2, 2);
	run_range(s, 4, 7);
	CHECK_EQ(sched_select_cpu(s, t), 8);

	/* Other package busy too: the sibling of our own busy core (21) beats cpu 3 (22). */
	run_range(s, 8, 15);
	CHECK_EQ(sched_select_cpu(s, t), 1);

	/* Allowed mask respected. */
	cpumask_zero(&mask);
	cpumask_set(&mask, 3);
	cpumask_set(&mask, 12);
	CHECK_EQ(sched_set_allowed(s, t, &mask), 0);
	CHECK_EQ(sched_select_cpu(s, t), 3);
	sched_free(s);
}

static void test_cpu_choice_numa(void)
{
	struct sched *s = synth_sched("numa:2 pack:1 l3:1 core:4 pu:2", true);
	struct sched_task *t = waking(s, 0);

	/* Node 0: every core busy on one thread; the sibling (21) beats the far node (32). */
	{
		int cpus[] = { 0, 2, 4, 6 };

		run_on(s, cpus, 4);
	}
	CHECK_EQ(sched_select_cpu(s, t), 1);
	/* Node 0 full: go to the other node. */
	{
		int cpus[] = { 1, 3, 5, 7 };

		run_on(s, cpus, 4);
	}
	CHECK_EQ(sched_select_cpu(s, t), 8);
	sched_free(s);
}

static void test_least_loaded(void)
{
	struct sched *s = synth_sched("pack:2 l3:1 core:4 pu:2", true);
	struct sched_task queued[8];
	struct sched_task *t;

	run_range(s, 0, 15);
	/* Everyone runs one; pile extra queued tasks everywhere but cpu 5 and 12. */
	for (int c = 0, k = 0; c < 16 && k < 8; c++) {
		if (c == 5 || c == 12 || c % 2)
			continue;
		sched_task_init(s, &queued[k], 200 + (uint64_t)k, NOW);
		sched_enqueue(s, &queued[k], c, NOW);
		k++;
	}
	/* Odd CPUs and 5 have load 1; nearest in locality order from cpu 4 wins: 5 (SMT). */
	t = waking(s, 4);
	CHECK_EQ(sched_select_cpu(s, t), 5);
	/* From cpu 12 itself (load 1) it stays. */
	t = waking(s, 12);
	CHECK_EQ(sched_select_cpu(s, t), 12);
	sched_free(s);
}

static void test_preempt(void)
{
	struct sched *s = synth_sched("pack:2 l3:1 core:4 pu:2", true);
	struct sched_task *t;
	int preempt = -2, cpu;

	run_range(s, 0, 15);
	busy[9].dl.deadline = NOW + 40 * MS;
	sched_set_running(s, 9, NULL, NOW);
	sched_set_running(s, 9, &busy[9], NOW);

	/* Earlier than only cpu 9: that one is preempted. */
	t = waking(s, 0);
	t->dl.deadline = NOW + 30 * MS;
	cpu = sched_wake(s, t, NOW, &preempt);
	CHECK(cpu >= 0);
	CHECK_EQ(preempt, 9);
	sched_dequeue(s, t);

	/* Earlier than everyone: the first in locality order from its CPU. */
	t = waking(s, 6);
	t->dl.deadline = NOW + 1 * MS;
	sched_enqueue(s, t, 6, NOW);
	CHECK_EQ(sched_preempt_cpu(s, t), 6);
	sched_dequeue(s, t);

	/* Later than everyone: nobody. */
	t = waking(s, 0);
	t->dl.deadline = NOW + 50 * MS;
	sched_enqueue(s, t, 0, NOW);
	CHECK_EQ(sched_preempt_cpu(s, t), 9 == 9 ? -1 : -1);
	sched_dequeue(s, t);

	/* BATCH never preempts normal work, even with an earlier deadline. */
	t = waking(s, 0);
	sched_set_class(s, t, SCHED_CLASS_BATCH, 0);
	t->dl.deadline = NOW + 1 * MS;
	sched_enqueue(s, t, 0, NOW);
	CHECK_EQ(sched_preempt_cpu(s, t), -1);
	sched_dequeue(s, t);

	/* IDLEPRIO preempts nothing but idle; RT preempts normal. */
	t = waking(s, 0);
	sched_set_class(s, t, SCHED_CLASS_IDLEPRIO, 0);
	sched_enqueue(s, t, 0, NOW);
	CHECK_EQ(sched_preempt_cpu(s, t), -1);
	sched_dequeue(s, t);
	t = waking(s, 3);
	sched_set_class(s, t, SCHED_CLASS_RT, 10);
	sched_enqueue(s, t, 3, NOW);
	CHECK_EQ(sched_preempt_cpu(s, t), 3);
	sched_dequeue(s, t);

	/* An idle allowed CPU is the answer when there is one. */
	sched_set_running(s, 14, NULL, NOW);
	t = waking(s, 0);
	t->dl.deadline = NOW + 50 * MS;
	cpu = sched_wake(s, t, NOW, &preempt);
	CHECK_EQ(cpu, 14);
	CHECK_EQ(preempt, 14);
	sched_free(s);
}

static void test_preempt_noninteractive(void)
{
	struct sched *s = synth_sched("pack:1 l3:1 core:4 pu:1", false);
	struct sched_task extra, *t;

	run_range(s, 0, 3);
	busy[2].dl.deadline = NOW + 40 * MS;
	sched_set_running(s, 2, NULL, NOW);
	sched_set_running(s, 2, &busy[2], NOW);
	/* cpu 2 is no busier than ours: left alone. */
	t = waking(s, 0);
	t->dl.deadline = NOW + 30 * MS;
	sched_enqueue(s, t, 0, NOW);
	CHECK_EQ(sched_preempt_cpu(s, t), -1);
	/* Once cpu 2 has a queue longer than ours, it is fair game. */
	sched_task_init(s, &extra, 7, NOW);
	sched_enqueue(s, &extra, 2, NOW);
	extra.dl.deadline = NOW;
	CHECK_EQ(sched_preempt_cpu(s, t), -1);	/* ours has 2 (running + t), cpu 2 has 2 */
	sched_task_init(s, &busy[40], 8, NOW);
	sched_enqueue(s, &busy[40], 2, NOW);
	CHECK_EQ(sched_preempt_cpu(s, t), 2);
	sched_free(s);
}

int main(void)
{
	test_cpu_choice_llc();
	test_cpu_choice_numa();
	test_least_loaded();
	test_preempt();
	test_preempt_noninteractive();
	return CHECK_EXIT();
}
