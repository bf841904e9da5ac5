#include "ratelimit.h"

#include <limits.h>

bool ratelimit_ended(const struct ratelimit *rl, uint64_t now)
{
	return rl->num == 0 || now < rl->begin || now - rl->begin >= rl->interval;
}

unsigned ratelimit_dropped(const struct ratelimit *rl)
{
	return rl->num > rl->burst ? rl->num - rl->burst : 0;
}

bool ratelimit_below(struct ratelimit *rl, uint64_t now, unsigned *dropped)
{
	if (dropped)
		*dropped = 0;
	if (ratelimit_ended(rl, now)) {
		if (dropped)
			*dropped = ratelimit_dropped(rl);
		rl->begin = now;
		rl->num = 1;
		return rl->burst > 0;
	}
	if (rl->num < UINT_MAX)
		rl->num++;
	return rl->num <= rl->burst;
}
