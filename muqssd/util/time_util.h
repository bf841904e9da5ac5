/* Clock readings in the units the rest of the code uses. */
#pragma once

#include <stdint.h>
#include <sys/resource.h>
#include <time.h>

static inline uint64_t now_nsec(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static inline uint64_t now_usec(clockid_t clock)
{
	return now_nsec(clock) / 1000ULL;
}

/* User and system time of a getrusage() reading. */
static inline uint64_t rusage_cpu_usec(const struct rusage *ru)
{
	return (uint64_t)(ru->ru_utime.tv_sec + ru->ru_stime.tv_sec) * 1000000ULL +
	       (uint64_t)(ru->ru_utime.tv_usec + ru->ru_stime.tv_usec);
}
