/*
 * Virtual deadlines and time slices, in MuQSS's numbers. Every nice level
 * gets the same slice (rr_interval); CPU share comes from how far in the
 * future each nice level's deadline lands.
 */
#ifndef MUQSS_CORE_DEADLINE_H
#define MUQSS_CORE_DEADLINE_H

#include <stdbool.h>
#include <stdint.h>

#define NICE_MIN (-20)
#define NICE_MAX 19
#define DEADLINE_RESCHED_NS 100000	/* under this much slice left, refill */

struct deadline {
	uint64_t deadline;	/* absolute virtual deadline, ns of the caller's clock */
	int64_t slice_ns;	/* time slice left */
};

/* Ratio for @nice (clamped to -20..19): 128 at -20, 836 at 0, 5089 at 19. */
unsigned int deadline_prio_ratio(int nice);

/* How far after now a fresh deadline lands: ratio * rr_ms * 2^20 / 128 ns. */
uint64_t deadline_offset(int nice, unsigned int rr_interval_ms);

/* Full slice and a new deadline from @now. */
void deadline_refill(struct deadline *d, int nice, unsigned int rr_interval_ms,
		     uint64_t now);

/* Charges @ns of CPU; returns true if the slice ran out and was refilled. */
bool deadline_charge(struct deadline *d, uint64_t ns, int nice,
		     unsigned int rr_interval_ms, uint64_t now);

/* Splits the parent's slice with a new child; true if the parent ran out. */
bool deadline_fork(struct deadline *parent, struct deadline *child, int nice,
		   unsigned int rr_interval_ms, uint64_t now);

/* Moves the deadline by offset(new) - offset(old). */
void deadline_renice(struct deadline *d, int old_nice, int new_nice,
		     unsigned int rr_interval_ms);

#endif
