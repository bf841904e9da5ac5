/* A chatty group: threads that wake each other in a circle through
 * futexes. Each runs a few microseconds a wake-up and then sleeps, so
 * none of them looks CPU-bound, yet the token never rests: together they
 * keep about one CPU busy. Prints the hand-offs and the CPU time used.
 *
 * ring [-n threads] [-w work_us] [-d seconds] */
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "load.h"

#define RING_MAX 64

struct member {
	_Atomic uint32_t turn; /* 1: it holds the token */
	struct member *next;
	uint64_t handoffs;
} __attribute__((aligned(64)));

static struct member ring[RING_MAX];
static uint64_t work_ns = 5000;
static _Atomic int done;

static volatile uint64_t spin_sink;

static void futex_wait(_Atomic uint32_t *word, uint32_t val)
{
	syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
}

static void futex_wake(_Atomic uint32_t *word)
{
	syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static void work(void)
{
	uint64_t end = clock_ns(CLOCK_THREAD_CPUTIME_ID) + work_ns;

	while (clock_ns(CLOCK_THREAD_CPUTIME_ID) < end)
		for (int i = 0; i < 100; i++)
			spin_sink += (uint64_t)i;
}

static void *member_main(void *arg)
{
	struct member *m = arg;

	while (!atomic_load(&done)) {
		while (atomic_load(&m->turn) == 0 && !atomic_load(&done))
			futex_wait(&m->turn, 0);
		if (atomic_load(&done))
			break;
		atomic_store(&m->turn, 0);
		work();
		m->handoffs++;
		atomic_store(&m->next->turn, 1);
		futex_wake(&m->next->turn);
	}
	/* Pass the end on, so no member is left waiting. */
	atomic_store(&m->next->turn, 1);
	futex_wake(&m->next->turn);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t threads[RING_MAX];
	double duration = 10.0;
	uint64_t total = 0, start;
	int n = 4, opt;

	while ((opt = getopt(argc, argv, "n:w:d:")) != -1) {
		switch (opt) {
		case 'n':
			n = atoi(optarg);
			break;
		case 'w':
			work_ns = (uint64_t)(atof(optarg) * 1000);
			break;
		case 'd':
			duration = atof(optarg);
			break;
		default:
			fprintf(stderr, "usage: ring [-n threads] [-w work_us] [-d seconds]\n");
			return 2;
		}
	}
	if (n < 2 || n > RING_MAX || duration <= 0) {
		fprintf(stderr, "ring: 2 to %d threads and a positive duration\n", RING_MAX);
		return 2;
	}
	stop_on_signals();
	for (int i = 0; i < n; i++)
		ring[i].next = &ring[(i + 1) % n];
	start = clock_ns(CLOCK_MONOTONIC);
	for (int i = 0; i < n; i++)
		if (pthread_create(&threads[i], NULL, member_main, &ring[i]) != 0) {
			perror("ring: pthread_create");
			return 1;
		}
	atomic_store(&ring[0].turn, 1);
	futex_wake(&ring[0].turn);
	while (!stop && clock_ns(CLOCK_MONOTONIC) - start < (uint64_t)(duration * 1e9))
		usleep(10000);
	atomic_store(&done, 1);
	for (int i = 0; i < n; i++) {
		atomic_store(&ring[i].turn, 1);
		futex_wake(&ring[i].turn);
	}
	for (int i = 0; i < n; i++) {
		pthread_join(threads[i], NULL);
		total += ring[i].handoffs;
	}
	printf("{\"handoffs\": %llu, \"cpu_s\": %.3f, \"wall_s\": %.3f}\n",
	       (unsigned long long)total, (double)clock_ns(CLOCK_PROCESS_CPUTIME_ID) / 1e9,
	       (double)(clock_ns(CLOCK_MONOTONIC) - start) / 1e9);
	return 0;
}
