/* The deadman: a thread that ends every boost and stop muqssd granted when
 * the loop misses its deadline, with no help from the loop.
 *
 * The loop promises, with deadman_kick(), to be back by a deadline. If it
 * is not, the thread drops every FIFO boost back to the task's base policy,
 * gives back every EEVDF slice and pin we set (a long slice nobody demotes
 * would keep sleepers waiting, a pin keeps a task off a free CPU) and sends
 * SIGCONT to every process stopped, from a table preallocated
 * and locked in memory. It never reads /proc, never allocates, and shares
 * no lock with the loop: slots are published with atomics. It runs at a
 * FIFO priority above the loop.
 *
 * A trip is reported once through deadman_take_trip(); the loop then puts
 * its own view straight (enforcer_drop_all_boosts()) and goes on. */
#pragma once

#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define DEADMAN_SLOTS 1024

struct deadman;

struct deadman_trip {
	uint64_t late_ns;	/* how far past its deadline the loop was */
	unsigned unboosted;	/* boosts dropped */
	unsigned resumed;	/* processes sent SIGCONT */
	unsigned unsliced;	/* slices of ours given back */
	unsigned unpinned;	/* pins of ours given back */
	const char *phase;	/* what the loop was doing, or NULL */
};

/* Starts the thread at SCHED_FIFO fifo_prio (if permitted). */
int deadman_start(struct deadman **ret, int fifo_prio);
void deadman_stop(struct deadman *d);

/* The loop will be back by deadline_ns (CLOCK_MONOTONIC); phase (a static
 * string) names what it does meanwhile, for the report. */
void deadman_kick(struct deadman *d, uint64_t deadline_ns, const char *phase);
/* Called by the loop: true once after each trip, with what it did. */
bool deadman_take_trip(struct deadman *d, struct deadman_trip *ret);
uint64_t deadman_trips(const struct deadman *d);
/* Every slot taken: the next note gets -ENOSPC. */
bool deadman_full(const struct deadman *d);

/* Slots, filled by the enforcer before it boosts or stops a task (so a
 * trip can undo a change the loop was just making) and freed after it
 * undoes it. -ENOSPC when the table is full: then the change is not made. */
struct sched_attr_v1;
/* base: the policy, nice and slice tid goes back to. */
int deadman_note_boost(struct deadman *d, pid_t tid, const struct sched_attr_v1 *base);
/* A slice of ours_ns set on tid, whose own request was request_ns (0: the
 * kernel's default). */
int deadman_note_slice(struct deadman *d, pid_t tid, uint64_t ours_ns, uint64_t request_ns);
/* A pin to ours on tid, whose own mask was mask. */
int deadman_note_pin(struct deadman *d, pid_t tid, const cpu_set_t *ours, const cpu_set_t *mask);
/* pidfd is the process's (dup'ed into the slot; closed at release). */
int deadman_note_stop(struct deadman *d, int pidfd);
void deadman_release(struct deadman *d, int slot);
