/* A count of events in a fixed window that opens at the first event after
 * the last window ended, as rtkit-daemon's burst and systemd's RateLimit
 * count. Time comes in as an argument (any unit, the same as interval), so
 * the logic is tested without a clock. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

struct ratelimit {
	uint64_t interval;
	unsigned burst;
	/* The window: */
	uint64_t begin;
	unsigned num; /* events in it, refused ones too; 0 before the first */
};

#define RATELIMIT_INIT(interval_, burst_) { .interval = (interval_), .burst = (burst_) }

/* Counts one event at now: true while its window holds no more than burst.
 * When the event opens a new window and dropped is not NULL, *dropped gets
 * how many the window before refused (else 0), for a line that says so. */
bool ratelimit_below(struct ratelimit *rl, uint64_t now, unsigned *dropped);
/* How many the current window refused so far. */
unsigned ratelimit_dropped(const struct ratelimit *rl);
/* Has the window ended by now (or never begun)? */
bool ratelimit_ended(const struct ratelimit *rl, uint64_t now);
