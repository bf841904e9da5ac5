/* ISO accounting, IDLEPRIO ordering and promotion, SMT nice. */
#include "check.h"
#include "synth.h"
#include "core/smt.h"

#define MS 1000000ull
#define NOW (1000 * MS)

static void test_iso_account(void)
{
	struct iso iso;
	int ticks = 0;

	CHECK_EQ(iso_period(1000000, 1), 5000);
	CHECK_EQ(iso_period(1000000, 2), 10000);
	CHECK_EQ(iso_period(4000000, 8), 10000);

	iso_init(&iso, 100);
	/* Climb: trips once the figure passes 70 * P. */
	while (!iso_account(&iso, true, 70) && ticks < 10000)
		ticks++;
	CHECK(iso.refractory);
	CHECK(iso.ticks > 7000);
	CHECK(iso.ticks <= 7100);
	CHECK_RANGE(ticks, 100, 140);	/* ~P ln(10/3) = 120 */
	/* Running on keeps it refractory; it cannot clear while ISO runs. */
	CHECK(!iso_account(&iso, true, 70));
	/* Decay: clears under P * 62 (70 * 115 / 128), not before. */
	ticks = 0;
	while (!iso_account(&iso, false, 70) && ticks < 10000) {
		CHECK(iso.ticks >= 6200);
		ticks++;
	}
	CHECK(!iso.refractory);
	CHECK(iso.ticks < 6200);
	CHECK_EQ(iso_percent(&iso), 61);
}

/* Ticks until the ISO state flips @want times in all, or @ticks pass. */
static void tick_for(struct sched *s, int ticks, int *flips, int want)
{
	for (int i = 0; i < ticks && *flips < want; i++)
		if (sched_iso_tick(s))
			(*flips)++;
}

/*
 * Whole machine (default): one ISO task on 2 CPUs is half the machine, under
 * the 70% cap, so it is never demoted. Per CPU: its own CPU's figure trips.
 */
static void test_iso_modes(void)
{
	struct sched *s = synth_sched("pack:1 core:2 pu:1", true);
	struct sched_config cfg = *sched_get_config(s);
	struct sched_task iso, other, iso2;
	int flips = 0;

	sched_task_init(s, &iso, 1, NOW);
	sched_set_class(s, &iso, SCHED_CLASS_ISO, 0);
	sched_task_init(s, &other, 2, NOW);
	sched_set_running(s, 0, &iso, NOW);
	sched_set_running(s, 1, &other, NOW);
	tick_for(s, 60000, &flips, 1);
	CHECK_EQ(flips, 0);
	CHECK(!sched_iso_refractory(s, 0));
	CHECK_RANGE(sched_iso_percent(s, 0), 49, 50);

	/* A second ISO task makes it 100% of the machine: the cap trips. */
	sched_task_init(s, &iso2, 3, NOW);
	sched_set_class(s, &iso2, SCHED_CLASS_ISO, 0);
	sched_set_running(s, 1, &iso2, NOW);
	tick_for(s, 20000, &flips, 1);
	CHECK_EQ(flips, 1);
	CHECK(sched_iso_refractory(s, 1));
	CHECK_EQ(iso.key, iso.dl.deadline);
	CHECK_EQ(iso2.key, iso2.dl.deadline);
	CHECK(!sched_task_running_iso(&iso));
	sched_free(s);

	s = synth_sched("pack:1 core:2 pu:1", true);
	cfg.iso_mode = ISO_MODE_PER_CPU;
	CHECK_EQ(sched_set_config(s, &cfg), 0);
	sched_task_init(s, &iso, 1, NOW);
	sched_set_class(s, &iso, SCHED_CLASS_ISO, 0);
	sched_set_running(s, 0, &iso, NOW);
	flips = 0;
	tick_for(s, 20000, &flips, 1);
	CHECK_EQ(flips, 1);
	CHECK(sched_iso_refractory(s, 0));
	CHECK(!sched_iso_refractory(s, 1));
	CHECK_RANGE(sched_iso_percent(s, 0), 70, 71);
	CHECK_EQ(iso.key, iso.dl.deadline);
	/* Demoted, it stops counting: the figure decays and it is ISO again. */
	tick_for(s, 20000, &flips, 2);
	CHECK_EQ(flips, 2);
	CHECK(!sched_iso_refractory(s, 0));
	CHECK_RANGE(sched_iso_percent(s, 0), 61, 62);
	CHECK_EQ(iso.key, SCHED_KEY_ISO);
	sched_free(s);
}

static void test_idleprio(void)
{
	struct sched *s = synth_sched("pack:1 core:1 pu:1", true);
	struct idleprio_facts f = { 0 };
	struct sched_task idle, normal, *p;

	CHECK(!idleprio_should_promote(&f));
	f.uninterruptible = true;
	CHECK(idleprio_should_promote(&f));
	f = (struct idleprio_facts){ .exiting = true };
	CHECK(idleprio_should_promote(&f));
	f = (struct idleprio_facts){ .signal_pending = true };
	CHECK(idleprio_should_promote(&f));
	f = (struct idleprio_facts){ .frozen = true };
	CHECK(idleprio_should_promote(&f));
	f = (struct idleprio_facts){ .blocking_others = true };
	CHECK(idleprio_should_promote(&f));

	/* An idle task with the earliest deadline still sorts after normal work. */
	sched_task_init(s, &idle, 1, NOW);
	sched_set_class(s, &idle, SCHED_CLASS_IDLEPRIO, 0);
	sched_task_init(s, &normal, 2, NOW + 500 * MS);
	sched_set_nice(s, &normal, 19);
	sched_enqueue(s, &idle, 0, NOW);
	sched_enqueue(s, &normal, 0, NOW);
	p = sched_pick_next(s, 0, NOW);
	CHECK(p == &normal);
	sched_dequeue(s, p);
	p = sched_pick_next(s, 0, NOW);
	CHECK(p == &idle);	/* nothing else: now it runs */

	/* Promoted, it competes as nice 19 normal work would: before a later normal task. */
	sched_enqueue(s, &normal, 0, NOW);
	sched_set_idle_promoted(s, &idle, true);
	CHECK_EQ(idle.key, idle.dl.deadline + deadline_offset(19, 6));
	CHECK(idle.key < normal.key);
	p = sched_pick_next(s, 0, NOW);
	CHECK(p == &idle);
	sched_set_idle_promoted(s, &idle, false);
	CHECK(sched_need_resched(s, 0));
	p = sched_pick_next(s, 0, NOW);
	CHECK(p == &normal);
	sched_free(s);
}

static int pick_count(struct sched *s, int cpu, struct sched_task *t, int tries)
{
	int got = 0;

	for (int i = 0; i < tries; i++) {
		struct sched_task *p = sched_pick_next(s, cpu, NOW);

		if (p == t) {
			got++;
			sched_dequeue(s, t);
			sched_enqueue(s, t, cpu, NOW);
		}
	}
	return got;
}

static void test_smt(void)
{
	struct sched *s = synth_sched("pack:1 core:2 pu:2", true);
	struct sched_task hi, lo, idle, rt, iso;

	sched_task_init(s, &hi, 1, NOW);
	sched_task_init(s, &lo, 2, NOW);
	sched_set_nice(s, &lo, 19);
	sched_task_init(s, &idle, 3, NOW);
	sched_set_class(s, &idle, SCHED_CLASS_IDLEPRIO, 0);
	sched_task_init(s, &rt, 4, NOW);
	sched_set_class(s, &rt, SCHED_CLASS_RT, 1);
	sched_task_init(s, &iso, 5, NOW);
	sched_set_class(s, &iso, SCHED_CLASS_ISO, 0);

	CHECK_EQ(smt_bias(&hi), 20);
	CHECK_EQ(smt_bias(&lo), 1);
	CHECK_EQ(smt_bias(&idle), 0);
	CHECK_EQ(smt_bias(&rt), 1 << 30);
	iso.key = SCHED_KEY_ISO;
	CHECK_EQ(smt_bias(&iso), 1 << 29);

	/* nice 19 beside nice 0 on the sibling: one pick in four. */
	sched_set_running(s, 0, &hi, NOW);
	sched_enqueue(s, &lo, 1, NOW);
	CHECK_EQ(pick_count(s, 1, &lo, 400), 100);
	sched_dequeue(s, &lo);

	/* Another core is not a sibling: no restriction there. */
	sched_enqueue(s, &lo, 2, NOW);
	CHECK_EQ(pick_count(s, 2, &lo, 40), 40);
	sched_dequeue(s, &lo);

	/* Idle priority never runs beside normal work... */
	sched_enqueue(s, &idle, 1, NOW);
	CHECK_EQ(pick_count(s, 1, &idle, 40), 0);
	/* ... but does beside an idle sibling. */
	sched_set_running(s, 0, NULL, NOW);
	sched_dequeue(s, &hi);
	CHECK_EQ(pick_count(s, 1, &idle, 4), 4);
	/* If normal work starts beside it, it must get off. */
	sched_pick_next(s, 1, NOW);
	sched_set_running(s, 0, &hi, NOW);
	CHECK(sched_running(s, 1) == &idle);
	CHECK(sched_need_resched(s, 1));
	sched_set_running(s, 1, NULL, NOW);
	sched_dequeue(s, &idle);

	/* RT runs regardless; a higher bias beside a lower one runs regardless. */
	sched_enqueue(s, &rt, 1, NOW);
	CHECK_EQ(pick_count(s, 1, &rt, 8), 8);
	sched_dequeue(s, &rt);
	sched_set_running(s, 0, &lo, NOW);
	sched_dequeue(s, &hi);
	sched_enqueue(s, &hi, 1, NOW);
	CHECK_EQ(pick_count(s, 1, &hi, 8), 8);
	sched_free(s);
}

int main(void)
{
	test_iso_account();
	test_iso_modes();
	test_idleprio();
	test_smt();
	return CHECK_EXIT();
}
