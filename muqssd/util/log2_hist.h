/* Percentiles of a log2 histogram, and a sliding window of them: bucket b
 * counts values of [2^b, 2^(b+1)) (bucket 0 also 0, the last everything
 * above). The bpf sensor keeps wake latencies so (sensor.h); a value is
 * known to within a factor of two, and each figure here is the upper
 * bound of its bucket: the true value is at most it and over half of it. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#define LOG2_HIST_BUCKETS 32

uint64_t log2_hist_count(const uint64_t bucket[LOG2_HIST_BUCKETS]);
/* The upper bound (2^(b+1)) of the bucket that holds the pct-th
 * percentile (0..100] of the values; 0 when empty. */
uint64_t log2_hist_percentile(const uint64_t bucket[LOG2_HIST_BUCKETS], unsigned pct);
/* The upper bound of the highest bucket holding a value; 0 when empty. */
uint64_t log2_hist_max(const uint64_t bucket[LOG2_HIST_BUCKETS]);

/* The last LOG2_WINDOW_SPAN deltas of a histogram that only grows: each
 * push is a snapshot of its running totals (once a second, say), and the
 * window holds what came between the oldest kept snapshot and the newest
 * one. */
#define LOG2_WINDOW_SPAN 5

struct log2_window {
	uint64_t snap[LOG2_WINDOW_SPAN + 1][LOG2_HIST_BUCKETS];
	unsigned n, head; /* snapshots kept; where the next one goes */
};

void log2_window_push(struct log2_window *w, const uint64_t totals[LOG2_HIST_BUCKETS]);
/* What the window holds: the sum of its last (up to) LOG2_WINDOW_SPAN
 * deltas; all zero before two pushes. */
void log2_window_sum(const struct log2_window *w, uint64_t ret[LOG2_HIST_BUCKETS]);
