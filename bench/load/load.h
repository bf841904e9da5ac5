/* What the load generators share: a clock, a stop flag that SIGTERM and
 * SIGINT set, and a sort order. */
#ifndef MUQSS_BENCH_LOAD_H
#define MUQSS_BENCH_LOAD_H

#include <signal.h>
#include <stdint.h>
#include <time.h>

static volatile sig_atomic_t stop;

static inline void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static inline void stop_on_signals(void)
{
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
}

static inline uint64_t clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static inline int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

#endif
