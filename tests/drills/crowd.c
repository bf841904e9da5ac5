/* A crowd of threads in one process, for the tick's bound:
 *   crowd THREADS WAKERS PERIOD_MS DURATION_MS
 * THREADS threads in all (main included); WAKERS of them wake every
 * PERIOD_MS, spread over the period, and spin about 2 us; the rest sleep
 * in pause(). Exits after
 * DURATION_MS. Small stacks: 10,000 threads fit in a test's memory. */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define STACK_SIZE (64 * 1024)
#define SPIN_NS 2000

static long period_ms;
static volatile uint64_t spin_sink;

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void *sleeper(void *arg)
{
	for (;;)
		pause();
	return arg;
}

static void sleep_ns(long ns)
{
	struct timespec ts = { ns / 1000000000L, ns % 1000000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* Relative sleeps: a waker that waited for a CPU does not catch up by
 * running its missed periods back to back, which would make it a hog. */
static void *waker(void *arg)
{
	long offset_ns = (long)(intptr_t)arg;

	/* Spread over the period, as independent sleepers are: a herd that
	 * wakes at one instant is another test. */
	sleep_ns(offset_ns);
	for (;;) {
		uint64_t start = thread_cpu_ns();

		while (thread_cpu_ns() - start < SPIN_NS)
			spin_sink++;
		sleep_ns(period_ms * 1000000L);
	}
	return arg;
}

int main(int argc, char **argv)
{
	pthread_attr_t attr;
	long threads, wakers, duration_ms;
	if (argc != 5) {
		fprintf(stderr, "usage: crowd THREADS WAKERS PERIOD_MS DURATION_MS\n");
		return 2;
	}
	threads = atol(argv[1]);
	wakers = atol(argv[2]);
	period_ms = atol(argv[3]);
	duration_ms = atol(argv[4]);
	if (threads < 1 || wakers < 0 || wakers >= threads || period_ms < 1 || duration_ms < 0) {
		fprintf(stderr, "crowd: bad arguments\n");
		return 2;
	}
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, STACK_SIZE);
	/* Sleepers first: wakers already running would take the CPU from
	 * this thread while it starts the rest. */
	for (long i = threads - 1; i >= 1; i--) {
		pthread_t th;
		long offset_ns = wakers ? (i % wakers) * (period_ms * 1000000L / wakers) : 0;
		int r = pthread_create(&th, &attr, i <= wakers ? waker : sleeper,
				       (void *)(intptr_t)offset_ns);

		if (r != 0) {
			fprintf(stderr, "crowd: thread %ld: %s\n", i, strerror(r));
			return 1;
		}
	}
	sleep_ns(duration_ms * 1000000L);
	return 0;
}
