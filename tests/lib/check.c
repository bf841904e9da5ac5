#include "check.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

/* Atomic: a check may fail in a test's thread. */
static int failures;

void check_failed(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s:%d: CHECK failed: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	__atomic_add_fetch(&failures, 1, __ATOMIC_RELAXED);
}

noreturn void check_fatal(const char *file, int line, const char *cond)
{
	fprintf(stderr, "%s:%d: REQUIRE failed: %s\n", file, line, cond);
	fflush(NULL);
	exit(EXIT_FAILURE);
}

int check_exit(void)
{
	int n = __atomic_load_n(&failures, __ATOMIC_RELAXED);

	if (n)
		fprintf(stderr, "%d check%s failed\n", n, n == 1 ? "" : "s");
	return n ? 1 : 0;
}
