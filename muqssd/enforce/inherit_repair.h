/* Offspring that inherited a pin, SCHED_IDLE or slice of ours from a
 * task we put back, with no record of their own (inherit_repair.c). */
#pragma once

#include <sched.h>
#include <stdbool.h>
#include <stdint.h>

#include "state_record.h"

struct inherit;

struct inherit_repair {
	bool slice_supported;	/* set by the caller */
	uint64_t default_slice_ns;
	/* Set by a live muqssd: unpins before this (CLOCK_BOOTTIME ns) had
	 * every fork around them read. 0 (after a crash): every unpin counts. */
	uint64_t unpins_after_ns;
	unsigned repaired;	/* offspring put back so far */
	struct inherit *v;
	size_t n, cap;
};

/* A /proc start time (boot-time clock ticks) from which a task may have
 * inherited what we set: created_ns is when the record was first
 * written (CLOCK_BOOTTIME), before our first change. */
uint64_t inherit_since_ticks(uint64_t created_ns);
/* Before rec's task is put back: notes whether it carries a pin,
 * SCHED_IDLE or slice of ours that its offspring born from since on may
 * have inherited. Returns 0, or -ENOMEM. */
int inherit_repair_note(struct inherit_repair *c, const struct state_record *rec, uint64_t since);
/* Once every noted task is put back: repairs their offspring, in two
 * walks 50 ms apart (a fork under way joins its parent's children late),
 * and frees the notes. Returns how many offspring were put back in all. */
unsigned inherit_repair_run(struct inherit_repair *c);
