/* The kernel's CFS weights, and the nice that gives a MuQSS share. */
#include "cfs_weight.h"

#include "deadline.h"

/* CFS's weight for each nice level (kernel/sched/core.c), index nice + 20. */
static const unsigned cfs_weight[40] = {
	88761, 71755, 56483, 46273, 36291, 29154, 23254, 18705, 14949, 11916,
	9548, 7620, 6100, 4904, 3906, 3121, 2501, 1991, 1586, 1277,
	1024, 820, 655, 526, 423, 335, 272, 215, 172, 137,
	110, 87, 70, 56, 45, 36, 29, 23, 18, 15,
};

/* Under MuQSS, share goes with 1 / prio_ratio^2, so the weight we want is
 * 1024 * (ratio(0) / ratio(nice))^2; the nearest CFS weight wins. */
int cfs_weight_nice(int nice)
{
	double r = (double)deadline_prio_ratio(0) / (double)deadline_prio_ratio(nice);
	double want = 1024.0 * r * r, best = 1e18;
	int pick = 0;

	for (int i = 0; i < 40; i++) {
		double diff = want > cfs_weight[i] ? want - cfs_weight[i] : cfs_weight[i] - want;

		if (diff < best) {
			best = diff;
			pick = i - 20;
		}
	}
	return pick;
}
