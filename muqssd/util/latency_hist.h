/* A fixed-size histogram of latencies in microseconds, for percentiles
 * over the daemon's life: buckets grow by a quarter power of two, so a
 * percentile is exact to within 19%, in 1 KiB whatever the count. */
#pragma once

#include <stdint.h>

#define LATENCY_HIST_BUCKETS 128

struct latency_hist {
	uint64_t count;
	uint64_t bucket[LATENCY_HIST_BUCKETS];
};

void latency_hist_add(struct latency_hist *h, uint64_t us);
/* The upper bound of the bucket holding the given percentile (0..100);
 * 0 when empty. */
uint64_t latency_hist_percentile(const struct latency_hist *h, unsigned pct);
