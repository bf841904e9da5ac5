/* A tiny assert for the core's test programs: report and count, exit 1 at the end. */
#ifndef MUQSS_TESTS_CHECK_H
#define MUQSS_TESTS_CHECK_H

#include <stdio.h>

static int check_failures;

#define CHECK(cond) do { \
	if (!(cond)) { \
		fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
		check_failures++; \
	} \
} while (0)

#define CHECK_EQ(a, b) do { \
	long long check_a_ = (long long)(a), check_b_ = (long long)(b); \
	if (check_a_ != check_b_) { \
		fprintf(stderr, "%s:%d: CHECK failed: %s == %s (%lld != %lld)\n", \
			__FILE__, __LINE__, #a, #b, check_a_, check_b_); \
		check_failures++; \
	} \
} while (0)

#define CHECK_RANGE(v, lo, hi) do { \
	double check_v_ = (double)(v); \
	if (check_v_ < (double)(lo) || check_v_ > (double)(hi)) { \
		fprintf(stderr, "%s:%d: CHECK failed: %s = %g not in [%g, %g]\n", \
			__FILE__, __LINE__, #v, check_v_, (double)(lo), (double)(hi)); \
		check_failures++; \
	} \
} while (0)

#define CHECK_EXIT() (check_failures ? 1 : 0)

#endif
