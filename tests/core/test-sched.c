#include <errno.h>

#include "check.h"
#include "synth.h"

#define MS 1000000ull
#define NOW (1000 * MS)

static struct sched_task tasks[64];

static struct sched_task *mk(struct sched *s, int i, enum sched_class class, int nice)
{
	struct sched_task *t = &tasks[i];

	sched_task_init(s, t, (uint64_t)i, NOW);
	sched_set_class(s, t, class, class == SCHED_CLASS_RT ? 50 : 0);
	sched_set_nice(s, t, nice);
	return t;
}

/* A normal task on @cpu's queue with its deadline moved to exactly @deadline. */
static struct sched_task *queue_at(struct sched *s, int i, int cpu, uint64_t deadline)
{
	struct sched_task *t = mk(s, i, SCHED_CLASS_NORMAL, 0);

	t->dl.deadline = deadline;
	CHECK_EQ(sched_enqueue(s, t, cpu, NOW), 0);
	return t;
}

static void test_keys(void)
{
	struct sched *s = synth_sched("pack:1 core:2 pu:1", true);
	struct sched_task *t;
	uint64_t dl = NOW + 41091072;

	t = mk(s, 0, SCHED_CLASS_RT, 0);
	sched_enqueue(s, t, 0, NOW);
	CHECK_EQ(t->key, 49);
	t = mk(s, 1, SCHED_CLASS_ISO, 0);
	sched_enqueue(s, t, 0, NOW);
	CHECK_EQ(t->key, SCHED_KEY_ISO);
	t = mk(s, 2, SCHED_CLASS_NORMAL, 0);
	sched_enqueue(s, t, 0, NOW);
	CHECK_EQ(t->key, dl);
	t = mk(s, 3, SCHED_CLASS_BATCH, 0);
	sched_enqueue(s, t, 0, NOW);
	CHECK_EQ(t->key, dl);
	t = mk(s, 4, SCHED_CLASS_IDLEPRIO, 0);
	sched_enqueue(s, t, 0, NOW);
	CHECK(t->key == (dl | 0xF000000000000000ull));
	sched_set_idle_promoted(s, t, true);
	CHECK_EQ(t->key, dl + 250134528);
	CHECK(t->queued);

	/* Order on the queue: RT, ISO, normal, batch (FIFO tie), promoted idle. */
	{
		uint64_t want[] = { 0, 1, 2, 3, 4 };
		int i = 0;

		for (int k = 0; k < 5; k++) {
			struct sched_task *p = sched_pick_next(s, 0, NOW);

			CHECK(p != NULL);
			if (p)
				CHECK_EQ(p->id, want[i++]);
			sched_dequeue(s, p);
		}
	}

	/* Over the ISO cap an ISO task is keyed by its deadline. */
	{
		struct sched_config cfg = *sched_get_config(s);

		cfg.iso_cpu = 0;
		sched_set_config(s, &cfg);
		t = mk(s, 5, SCHED_CLASS_ISO, 0);
		sched_set_running(s, 0, t, NOW);
		CHECK_EQ(t->key, SCHED_KEY_ISO);
		CHECK(sched_iso_tick(s));
		CHECK(sched_iso_refractory(s, 0));
		CHECK_EQ(t->key, t->dl.deadline);
	}
	sched_free(s);
}

static void test_pick_interactive(void)
{
	struct sched *s = synth_sched("pack:2 l3:1 core:4 pu:2", true);
	struct sched_task *p;
	struct cpumask mask;

	queue_at(s, 0, 0, NOW + 50 * MS);
	queue_at(s, 1, 3, NOW + 40 * MS);
	queue_at(s, 2, 9, NOW + 10 * MS);	/* earliest, other package */
	queue_at(s, 3, 9, NOW + 20 * MS);

	/* Global earliest deadline, even across packages. */
	p = sched_pick_next(s, 0, NOW);
	CHECK(p == &tasks[2]);
	CHECK(p->running && !p->queued && p->cpu == 0);
	CHECK(sched_running(s, 0) == p);
	CHECK_EQ(sched_queue_len(s, 9), 1);

	/* Next pick on cpu 0 puts task 2 back on cpu 0 and it is still the best. */
	p = sched_pick_next(s, 0, NOW);
	CHECK(p == &tasks[2]);

	/* Affinity: cpu 1 may not take task 3 and looks past it. */
	cpumask_zero(&mask);
	cpumask_set(&mask, 9);
	sched_set_allowed(s, &tasks[3], &mask);
	p = sched_pick_next(s, 1, NOW);
	CHECK(p == &tasks[1]);
	p = sched_pick_next(s, 9, NOW);
	CHECK(p == &tasks[3]);
	sched_free(s);
}

static void test_pick_noninteractive(void)
{
	struct sched *s = synth_sched("pack:2 l3:1 core:4 pu:2", false);
	struct sched_task *p;

	/* A remote queue no busier than ours is left alone, though earlier. */
	queue_at(s, 0, 0, NOW + 50 * MS);
	queue_at(s, 1, 2, NOW + 10 * MS);
	p = sched_pick_next(s, 0, NOW);
	CHECK(p == &tasks[0]);
	sched_dequeue(s, p);
	sched_dequeue(s, &tasks[1]);

	/* A busier one is raided for its earlier task. */
	queue_at(s, 2, 0, NOW + 50 * MS);
	queue_at(s, 3, 2, NOW + 10 * MS);
	queue_at(s, 4, 2, NOW + 60 * MS);
	p = sched_pick_next(s, 0, NOW);
	CHECK(p == &tasks[3]);
	sched_free(s);

	/* Never crosses NUMA nodes once it has a local candidate. */
	s = synth_sched("numa:2 pack:1 l3:1 core:4 pu:2", false);
	queue_at(s, 0, 0, NOW + 50 * MS);
	queue_at(s, 1, 8, NOW + 10 * MS);
	queue_at(s, 2, 8, NOW + 11 * MS);
	p = sched_pick_next(s, 0, NOW);
	CHECK(p == &tasks[0]);
	/* ... but an idle CPU with nothing local does. */
	p = sched_pick_next(s, 1, NOW);
	CHECK(p == &tasks[1]);
	sched_free(s);

	/* Interactive mode on the same layout goes for the global earliest. */
	s = synth_sched("numa:2 pack:1 l3:1 core:4 pu:2", true);
	queue_at(s, 0, 0, NOW + 50 * MS);
	queue_at(s, 1, 8, NOW + 10 * MS);
	p = sched_pick_next(s, 0, NOW);
	CHECK(p == &tasks[1]);
	sched_free(s);
}

static void test_gives_up_on_disallowed(void)
{
	struct sched *s = synth_sched("pack:1 l3:1 core:4 pu:1", false);
	struct cpumask mask;
	struct sched_task *p;

	cpumask_zero(&mask);
	cpumask_set(&mask, 1);
	queue_at(s, 0, 1, NOW + 10 * MS);
	sched_set_allowed(s, &tasks[0], &mask);
	queue_at(s, 1, 1, NOW + 20 * MS);
	/* Non-interactive: cpu 0 stops at task 0 (not allowed) and stays idle. */
	p = sched_pick_next(s, 0, NOW);
	CHECK(p == NULL);
	sched_free(s);
}

/* Tasks with equal masks share one copy; every CPU is no copy at all; a
 * copy lives while a task (or a forked child) holds it. ASan's leak check
 * catches a copy never freed. */
static void test_shared_masks(void)
{
	struct sched *s = synth_sched("pack:1 core:4 pu:1", false);
	struct sched_task *a = mk(s, 0, SCHED_CLASS_NORMAL, 0);
	struct sched_task *b = mk(s, 1, SCHED_CLASS_NORMAL, 0);
	struct sched_task *c = mk(s, 2, SCHED_CLASS_NORMAL, 0);
	struct sched_task child;
	struct cpumask one, all;

	cpumask_zero(&one);
	cpumask_set(&one, 2);
	cpumask_fill(&all, 4);
	CHECK(a->allowed == NULL);
	CHECK(sched_task_allows(a, 3));
	CHECK_EQ(sched_set_allowed(s, a, &one), 0);
	CHECK_EQ(sched_set_allowed(s, b, &one), 0);
	CHECK(a->allowed != NULL && a->allowed == b->allowed);
	CHECK(sched_task_allows(a, 2) && !sched_task_allows(a, 3));
	/* The caller's mask is copied: changing it changes nothing. */
	cpumask_set(&one, 3);
	CHECK(!sched_task_allows(b, 3));
	CHECK_EQ(sched_set_allowed(s, c, &one), 0);
	CHECK(c->allowed != a->allowed);
	/* Bits past the machine's CPUs do not make a mask distinct. */
	cpumask_set(&all, 100);
	CHECK_EQ(sched_set_allowed(s, c, &all), 0);
	CHECK(c->allowed == NULL);
	CHECK_EQ(sched_set_allowed(s, c, &(struct cpumask){ 0 }), -EINVAL);
	CHECK(c->allowed == NULL);

	CHECK_EQ(sched_fork(s, a, &child, 9, NOW), 0);
	CHECK(child.allowed == a->allowed);
	sched_task_done(s, a);
	sched_task_done(s, b);
	CHECK(a->allowed == NULL);
	/* The child still holds the copy. */
	CHECK(sched_task_allows(&child, 2) && !sched_task_allows(&child, 0));
	CHECK_EQ(sched_enqueue(s, &child, 0, NOW), -EINVAL);
	CHECK_EQ(sched_enqueue(s, &child, 2, NOW), 0);
	sched_task_done(s, &child);
	CHECK(!child.queued);
	sched_free(s);
}

static void test_charge_and_resched(void)
{
	struct sched *s = synth_sched("pack:1 core:1 pu:1", true);
	struct sched_task *a, *b, *p;
	uint64_t old;

	a = mk(s, 0, SCHED_CLASS_NORMAL, 0);
	b = mk(s, 1, SCHED_CLASS_NORMAL, 0);
	sched_enqueue(s, a, 0, NOW);
	sched_enqueue(s, b, 0, NOW);
	p = sched_pick_next(s, 0, NOW);
	CHECK(p == a);	/* FIFO among equal deadlines */
	CHECK(!sched_need_resched(s, 0));
	CHECK_EQ(sched_charge(s, 0, 3 * MS, NOW + 3 * MS), 0);
	old = a->key;
	CHECK_EQ(sched_charge(s, 0, 3 * MS, NOW + 6 * MS), 1);
	CHECK_EQ(a->key, NOW + 6 * MS + 41091072);
	CHECK(a->key > old);
	CHECK(sched_need_resched(s, 0));
	p = sched_pick_next(s, 0, NOW + 6 * MS);
	CHECK(p == b);
	CHECK(a->queued && a->cpu == 0);
	CHECK_EQ(sched_charge(s, 0, 1, NOW), 0);
	sched_dequeue(s, b);
	CHECK_EQ(sched_charge(s, 0, 1, NOW), -EINVAL);
	sched_free(s);
}

static void test_fork_renice_yield(void)
{
	struct sched *s = synth_sched("pack:1 core:2 pu:1", true);
	struct sched_task *parent, child, *p;

	parent = mk(s, 0, SCHED_CLASS_NORMAL, 3);
	sched_enqueue(s, parent, 1, NOW);
	p = sched_pick_next(s, 1, NOW);
	CHECK(p == parent);
	sched_charge(s, 1, 2 * MS, NOW + 2 * MS);
	CHECK_EQ(sched_fork(s, parent, &child, 99, NOW + 2 * MS), 0);
	CHECK_EQ(parent->dl.slice_ns, 2 * MS);
	CHECK_EQ(child.dl.slice_ns, 2 * MS);
	CHECK_EQ(child.dl.deadline, parent->dl.deadline);
	CHECK_EQ(child.nice, 3);
	CHECK_EQ(child.last_cpu, 1);
	CHECK(!child.queued && !child.running);

	/* Renice a queued task: it moves behind a nice 0 task queued later. */
	queue_at(s, 1, 0, NOW + 30 * MS);
	queue_at(s, 2, 0, NOW + 31 * MS);
	sched_set_nice(s, &tasks[1], 1);
	CHECK_EQ(tasks[1].dl.deadline, NOW + 30 * MS + (919 - 836) * 6 * 8192);
	p = sched_pick_next(s, 0, NOW);
	CHECK(p == &tasks[2]);

	/* yield_type 1 keeps the deadline, 2 expires it. */
	{
		struct sched_config cfg = *sched_get_config(s);
		uint64_t dl = p->dl.deadline;

		CHECK_EQ(sched_yield_task(s, p, NOW + 5 * MS), 1);
		CHECK_EQ(p->dl.deadline, dl);
		cfg.yield_type = 2;
		sched_set_config(s, &cfg);
		CHECK_EQ(sched_yield_task(s, p, NOW + 5 * MS), 1);
		CHECK_EQ(p->dl.deadline, NOW + 5 * MS + 41091072);
		cfg.yield_type = 0;
		sched_set_config(s, &cfg);
		CHECK_EQ(sched_yield_task(s, p, NOW + 5 * MS), 0);
	}
	sched_free(s);
}

static void count_queued(const struct sched_task *t, void *data)
{
	uint64_t *last = data;

	CHECK(t->key >= last[0]);
	last[0] = t->key;
	last[1]++;
}

static void test_foreach_and_config(void)
{
	struct sched *s = synth_sched("pack:1 core:2 pu:1", true);
	struct sched_config cfg;
	uint64_t acc[2] = { 0, 0 };

	for (int i = 0; i < 10; i++)
		queue_at(s, i, 1, NOW + (uint64_t)(10 - i) * MS);
	sched_foreach_queued(s, 1, count_queued, acc);
	CHECK_EQ(acc[1], 10);

	sched_config_defaults(&cfg);
	CHECK_EQ(cfg.rr_interval_ms, 6);
	CHECK(cfg.interactive);
	CHECK_EQ(cfg.iso_cpu, 70);
	CHECK_EQ(cfg.yield_type, 1);
	CHECK_EQ(cfg.iso_mode, ISO_MODE_MACHINE);
	cfg.rr_interval_ms = 0;
	CHECK_EQ(sched_config_check(&cfg), -EINVAL);
	cfg.rr_interval_ms = 1001;
	CHECK_EQ(sched_set_config(s, &cfg), -EINVAL);
	cfg.rr_interval_ms = 6;
	cfg.iso_cpu = 101;
	CHECK_EQ(sched_config_check(&cfg), -EINVAL);
	cfg.iso_cpu = 70;
	cfg.yield_type = 3;
	CHECK_EQ(sched_config_check(&cfg), -EINVAL);
	CHECK_EQ(sched_enqueue(s, &tasks[0], 0, NOW), -EBUSY);
	CHECK_EQ(sched_enqueue(s, &tasks[20], 5, NOW), -EINVAL);
	CHECK_EQ(sched_set_class(s, &tasks[0], SCHED_CLASS_RT, 0), -EINVAL);
	sched_free(s);
}

int main(void)
{
	test_keys();
	test_pick_interactive();
	test_pick_noninteractive();
	test_gives_up_on_disallowed();
	test_shared_masks();
	test_charge_and_resched();
	test_fork_renice_yield();
	test_foreach_and_config();
	return CHECK_EXIT();
}
