#include "deadline.h"

#define NR_RATIOS 40

/* Built once by the same integer recurrence as the kernel, not typed in. */
static unsigned int prio_ratios[NR_RATIOS];

static void deadline_ratios_init(void)
{
	if (prio_ratios[0])
		return;
	prio_ratios[0] = 128;
	for (int i = 1; i < NR_RATIOS; i++)
		prio_ratios[i] = prio_ratios[i - 1] * 11 / 10;
}

unsigned int deadline_prio_ratio(int nice)
{
	if (nice < NICE_MIN)
		nice = NICE_MIN;
	if (nice > NICE_MAX)
		nice = NICE_MAX;
	deadline_ratios_init();
	return prio_ratios[nice - NICE_MIN];
}

uint64_t deadline_offset(int nice, unsigned int rr_interval_ms)
{
	/* The kernel's "ms" is 2^20 ns, so 2^20 / 128 = 8192 per ratio unit. */
	return (uint64_t)deadline_prio_ratio(nice) * rr_interval_ms * 8192;
}

static int64_t deadline_slice(unsigned int rr_interval_ms)
{
	return (int64_t)rr_interval_ms * 1000000;
}

void deadline_refill(struct deadline *d, int nice, unsigned int rr_interval_ms,
		     uint64_t now)
{
	d->slice_ns = deadline_slice(rr_interval_ms);
	d->deadline = now + deadline_offset(nice, rr_interval_ms);
}

bool deadline_charge(struct deadline *d, uint64_t ns, int nice,
		     unsigned int rr_interval_ms, uint64_t now)
{
	d->slice_ns -= (int64_t)ns;
	if (d->slice_ns >= DEADLINE_RESCHED_NS)
		return false;
	deadline_refill(d, nice, rr_interval_ms, now);
	return true;
}

bool deadline_fork(struct deadline *parent, struct deadline *child, int nice,
		   unsigned int rr_interval_ms, uint64_t now)
{
	parent->slice_ns /= 2;
	if (parent->slice_ns < DEADLINE_RESCHED_NS) {
		/* Too little to share: the child starts afresh instead. */
		deadline_refill(child, nice, rr_interval_ms, now);
		return true;
	}
	child->slice_ns = parent->slice_ns;
	child->deadline = parent->deadline;
	return false;
}

void deadline_renice(struct deadline *d, int old_nice, int new_nice,
		     unsigned int rr_interval_ms)
{
	d->deadline += deadline_offset(new_nice, rr_interval_ms);
	d->deadline -= deadline_offset(old_nice, rr_interval_ms);
}
