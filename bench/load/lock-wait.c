/* A normal-class thread waiting on a lock an idle-class thread holds
 * (issue 35). The holder puts itself in SCHED_IDLE, then takes a
 * pthread mutex, burns -w ms of its own CPU time, lets go and sleeps 1 ms,
 * over and over. The waiter, at the process's own policy, takes the
 * same mutex every -p ms. Prints how long the waiter waited for it
 * (p50, p99, max) as one JSON line, leaving out the first -s seconds
 * (a daemon started beside it has not met it yet); -o writes every wait
 * counted (us), one a line. */
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "load.h"

#define MAX_WAITS 200000

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int quit;
static double work_ms = 2.0;

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { .tv_sec = ns / 1000000000ULL, .tv_nsec = ns % 1000000000ULL };

	nanosleep(&ts, NULL);
}

/* Burns ms of this thread's CPU time, however long that takes. */
static void burn(double ms)
{
	uint64_t end = clock_ns(CLOCK_THREAD_CPUTIME_ID) + (uint64_t)(ms * 1e6);

	while (clock_ns(CLOCK_THREAD_CPUTIME_ID) < end && !quit)
		;
}

static void *holder(void *arg)
{
	struct sched_param sp = { 0 };

	(void)arg;
	if (sched_setscheduler(0, SCHED_IDLE, &sp) < 0) {
		perror("lock-wait: SCHED_IDLE");
		exit(1);
	}
	while (!quit) {
		pthread_mutex_lock(&lock);
		burn(work_ms);
		pthread_mutex_unlock(&lock);
		sleep_ns(1000000);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	double duration = 5, period_ms = 10, settle = 0;
	const char *out = NULL;
	uint64_t *waits = calloc(MAX_WAITS, sizeof(*waits));
	size_t n = 0;
	pthread_t th;
	uint64_t start, end;
	int c;

	while ((c = getopt(argc, argv, "d:p:w:s:o:")) != -1) {
		switch (c) {
		case 'd': duration = atof(optarg); break;
		case 'p': period_ms = atof(optarg); break;
		case 'w': work_ms = atof(optarg); break;
		case 's': settle = atof(optarg); break;
		case 'o': out = optarg; break;
		default:
			fprintf(stderr, "usage: lock-wait [-d s] [-p ms] [-w ms] [-s s] [-o file]\n");
			return 2;
		}
	}
	if (!waits)
		return 1;
	stop_on_signals();
	if (pthread_create(&th, NULL, holder, NULL)) {
		fprintf(stderr, "lock-wait: no thread\n");
		return 1;
	}
	start = clock_ns(CLOCK_MONOTONIC) + (uint64_t)(settle * 1e9);
	end = start + (uint64_t)(duration * 1e9);
	while (!stop && clock_ns(CLOCK_MONOTONIC) < end && n < MAX_WAITS) {
		uint64_t t0 = clock_ns(CLOCK_MONOTONIC), t1;

		pthread_mutex_lock(&lock);
		t1 = clock_ns(CLOCK_MONOTONIC);
		if (t0 >= start)
			waits[n++] = t1 - t0;
		pthread_mutex_unlock(&lock);
		sleep_ns((uint64_t)(period_ms * 1e6));
	}
	quit = 1;
	pthread_join(th, NULL);
	if (out) {
		FILE *f = fopen(out, "w");

		for (size_t i = 0; f && i < n; i++)
			fprintf(f, "%.1f\n", waits[i] / 1e3);
		if (f)
			fclose(f);
	}
	qsort(waits, n, sizeof(*waits), cmp_u64);
	printf("{\"waits\": %zu, \"lock_wait_p50_us\": %.1f, \"lock_wait_p99_us\": %.1f, "
	       "\"lock_wait_max_us\": %.1f}\n", n, n ? waits[n / 2] / 1e3 : 0.0,
	       n ? waits[(n * 99) / 100] / 1e3 : 0.0, n ? waits[n - 1] / 1e3 : 0.0);
	free(waits);
	return 0;
}
