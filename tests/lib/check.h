/* The checks of every C test. CHECK records a failure (file:line and what
 * failed) and goes on, so one run shows every broken assertion; main
 * returns CHECK_EXIT(), non-zero if any failed. REQUIRE is for what the
 * rest cannot go on without (a NULL, a failed fork): it exits at once,
 * through exit(), so the tests' atexit cleanups still run. None of them is
 * ever compiled out, unlike the assert macro. */
#pragma once

#include <stdnoreturn.h>

void check_failed(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
noreturn void check_fatal(const char *file, int line, const char *cond);
int check_exit(void);

#define CHECK(cond)                                                                   \
	do {                                                                          \
		if (!(cond))                                                          \
			check_failed(__FILE__, __LINE__, "%s", #cond);                \
	} while (0)

#define CHECK_EQ(a, b)                                                                \
	do {                                                                          \
		long long check_a_ = (long long)(a), check_b_ = (long long)(b);       \
		if (check_a_ != check_b_)                                             \
			check_failed(__FILE__, __LINE__, "%s == %s (%lld != %lld)", #a, \
				     #b, check_a_, check_b_);                         \
	} while (0)

#define CHECK_RANGE(v, lo, hi)                                                        \
	do {                                                                          \
		double check_v_ = (double)(v);                                        \
		if (check_v_ < (double)(lo) || check_v_ > (double)(hi))               \
			check_failed(__FILE__, __LINE__, "%s = %g not in [%g, %g]", #v, \
				     check_v_, (double)(lo), (double)(hi));           \
	} while (0)

/* A failure that a condition alone would not explain, with a message. */
#define CHECK_FAIL(...) check_failed(__FILE__, __LINE__, __VA_ARGS__)

#define REQUIRE(cond)                                                                 \
	do {                                                                          \
		if (!(cond))                                                          \
			check_fatal(__FILE__, __LINE__, #cond);                       \
	} while (0)

/* What main returns: 0 when every check passed, 1 otherwise. */
#define CHECK_EXIT() check_exit()
