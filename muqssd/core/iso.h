/*
 * SCHED_ISO accounting: a rolling average of how much of the window RT and
 * ISO work used, kept as "iso ticks" scaled by 100 per accounting event:
 *
 *   running RT/ISO:  iso = iso * (P - 1) / P + 100
 *   otherwise:       iso = iso * (P - 1) / P
 *
 * so iso / P approaches the percentage of events that ran RT/ISO. The cap
 * trips above P * iso_cpu and clears below P * (iso_cpu * 115 / 128),
 * about 62% at the default 70.
 *
 * Two readings of "the window", chosen by enum iso_mode:
 *
 * ISO_MODE_MACHINE (the default, BFS's reading): one figure for the whole
 * machine. Every CPU's tick is one event and P = 5 s of ticks * nr_cpus, so
 * iso_cpu is a share of the total capacity of all CPUs. With iso_cpu = 70
 * on 2 CPUs, ISO work together may use 1.4 CPUs; a single ISO task can use
 * at most one CPU, which is 50% of the machine, so it never trips the cap
 * and keeps running as ISO indefinitely. That is what "one ISO task on 2
 * CPUs can use at most 50% of total capacity" means: the bound comes from
 * the task being one thread, not from the cap.
 *
 * ISO_MODE_PER_CPU (MuQSS's reading): each CPU keeps its own figure over
 * P = 5 s of its own ticks, so every CPU caps its own ISO time at iso_cpu
 * regardless of what the other CPUs do.
 *
 * Long run, a permanently runnable ISO task spends its time as ISO between
 * the clear and trip thresholds (66% at iso_cpu 70 and a 5 s window: it
 * climbs 62 -> 70 in 5 ln(38/30) s, falls back in 5 ln(70/62) s).
 */
#ifndef MUQSS_CORE_ISO_H
#define MUQSS_CORE_ISO_H

#include <stdbool.h>
#include <stdint.h>

#define ISO_WINDOW_NS UINT64_C(5000000000)

enum iso_mode {
	ISO_MODE_MACHINE = 0,
	ISO_MODE_PER_CPU = 1,
};

struct iso {
	uint64_t period;	/* P: accounting events per window */
	uint64_t ticks;		/* the rolling figure, 100 per RT/ISO event */
	bool refractory;	/* over the cap: ISO tasks run as normal */
};

/* Events per window: 5 s of @tick_ns ticks, times @nr_cpus (>= 1). */
uint64_t iso_period(uint64_t tick_ns, unsigned int nr_cpus);

/* Starts empty and not refractory. */
void iso_init(struct iso *iso, uint64_t period);

/* One accounting event; returns true if refractory flipped. */
bool iso_account(struct iso *iso, bool running_iso, unsigned int iso_cpu);

/* The current figure as a percentage of the window (0..100). */
unsigned int iso_percent(const struct iso *iso);

#endif
