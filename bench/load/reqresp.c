/* A request/response load, closed loop: a dispatcher thread wakes NWORKERS
 * threads over futexes; each walks LINES_PER_REQ cache lines of its own
 * buffer (larger than L2) and replies; once all have, the next request
 * goes out. Prints wake-to-run latency, requests per second,
 * round trip, walk time and run-queue wait (schedstat) as one JSON line;
 * -o writes every wake-to-run latency (us), one a line. */
#include <errno.h>
#include <getopt.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "load.h"

#define LINE 64
#define NWORKERS 2
#define LINES_PER_REQ 1024
#define BUF_LINES ((size_t)(4 << 20) / LINE)	/* 4 MiB */

struct worker {
	pthread_t thread;
	pid_t tid;
	_Atomic uint32_t go;     /* request number this worker may serve */
	uint64_t woke_ns;        /* when it ran after the latest go */
	uint64_t walk_ns;        /* wall time of the latest walk */
	size_t *next;            /* the buffer: a random cycle of line indexes */
	size_t pos;
};

/* Volatile, so the walk is not folded away. */
static volatile size_t walk_sink;

static struct worker workers[NWORKERS];
static _Atomic uint32_t pending;  /* replies still out for this request */
static _Atomic uint32_t done_seq; /* the dispatcher's futex: bumped by the last reply */
static _Atomic int quit;

static uint64_t now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

static void futex_wait(_Atomic uint32_t *addr, uint32_t val)
{
	syscall(SYS_futex, addr, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
}

static void futex_wake(_Atomic uint32_t *addr, int n)
{
	syscall(SYS_futex, addr, FUTEX_WAKE_PRIVATE, n, NULL, NULL, 0);
}

/* One random cycle over every line, so the walk defeats the prefetcher and
 * each step is a likely L2 miss. The next index sits at the line's start. */
static int buffer_init(struct worker *w, unsigned seed)
{
	size_t *perm = malloc(BUF_LINES * sizeof(*perm));

	w->next = aligned_alloc(LINE, BUF_LINES * LINE);
	if (!perm || !w->next) {
		free(perm);
		return -ENOMEM;
	}
	for (size_t i = 0; i < BUF_LINES; i++)
		perm[i] = i;
	for (size_t i = BUF_LINES - 1; i > 0; i--) {
		size_t j = (size_t)rand_r(&seed) % (i + 1), t = perm[i];

		perm[i] = perm[j];
		perm[j] = t;
	}
	for (size_t i = 0; i < BUF_LINES; i++)
		w->next[perm[i] * (LINE / sizeof(size_t))] = perm[(i + 1) % BUF_LINES];
	free(perm);
	return 0;
}

static void walk(struct worker *w)
{
	size_t p = w->pos;

	for (size_t i = 0; i < LINES_PER_REQ; i++) {
		size_t *line = &w->next[p * (LINE / sizeof(size_t))];

		line[1]++; /* dirty it too, as real work would */
		p = line[0];
	}
	w->pos = p;
	walk_sink += p;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	uint32_t served = 0;

	w->tid = (pid_t)syscall(SYS_gettid);
	for (;;) {
		uint32_t go;

		while ((go = atomic_load(&w->go)) == served && !atomic_load(&quit))
			futex_wait(&w->go, served);
		if (atomic_load(&quit))
			return NULL;
		w->woke_ns = now_ns();
		served = go;
		walk(w);
		w->walk_ns = now_ns() - w->woke_ns;
		if (atomic_fetch_sub(&pending, 1) == 1) {
			atomic_fetch_add(&done_seq, 1);
			futex_wake(&done_seq, 1);
		}
	}
}

static double pct(const uint64_t *v, size_t n, int p)
{
	return n ? (double)v[p == 100 ? n - 1 : (n * (size_t)p) / 100] / 1e3 : 0.0;
}

/* Run-queue wait and timeslices of one thread, from schedstat; 0 if gone. */
static void schedstat(pid_t tid, uint64_t *wait_ns, uint64_t *slices)
{
	char path[64];
	unsigned long long run, wait, n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/schedstat", (int)tid);
	f = fopen(path, "re");
	if (f && fscanf(f, "%llu %llu %llu", &run, &wait, &n) == 3) {
		*wait_ns += wait;
		*slices += n;
	}
	if (f)
		fclose(f);
}

int main(int argc, char **argv)
{
	double duration_s = 10.0;
	const char *raw_file = NULL;
	int c;

	while ((c = getopt(argc, argv, "d:o:")) >= 0) {
		switch (c) {
		case 'd': duration_s = atof(optarg); break;
		case 'o': raw_file = optarg; break;
		default:
			fprintf(stderr, "usage: reqresp [-d SECONDS] [-o RAW_FILE]\n");
			return 2;
		}
	}
	if (duration_s <= 0) {
		fprintf(stderr, "reqresp: bad arguments\n");
		return 2;
	}
	stop_on_signals();

	/* Room for a million requests' samples; a longer run keeps the first. */
	size_t max_req = 1000000, nreq = 0, nlat = 0;
	uint64_t *lat = calloc(max_req * (size_t)NWORKERS, sizeof(*lat));
	uint64_t *rtt = calloc(max_req, sizeof(*rtt));
	uint64_t *walks = calloc(max_req, sizeof(*walks));
	if (!lat || !rtt || !walks)
		return 1;
	for (int i = 0; i < NWORKERS; i++) {
		if (buffer_init(&workers[i], 1234u + (unsigned)i) < 0 ||
		    pthread_create(&workers[i].thread, NULL, worker_main, &workers[i]) != 0) {
			fprintf(stderr, "reqresp: cannot start worker %d\n", i);
			return 1;
		}
	}
	/* Fault every page in before the clock starts. */
	usleep(10000);

	uint64_t start = now_ns(), end = start + (uint64_t)(duration_s * 1e9), t = start;
	uint32_t seq = 0;
	while (!stop && t < end) {
		uint32_t before = atomic_load(&done_seq);

		atomic_store(&pending, (uint32_t)NWORKERS);
		seq++;
		uint64_t sent = now_ns();
		for (int i = 0; i < NWORKERS; i++) {
			atomic_store(&workers[i].go, seq);
			futex_wake(&workers[i].go, 1);
		}
		while (atomic_load(&done_seq) == before)
			futex_wait(&done_seq, before);
		t = now_ns();
		if (nreq < max_req) {
			for (int i = 0; i < NWORKERS; i++)
				lat[nlat++] = workers[i].woke_ns - sent;
			walks[nreq] = workers[0].walk_ns;
			rtt[nreq] = t - sent;
		}
		nreq++;
	}
	double elapsed = (double)(t - start) / 1e9;

	uint64_t wait_ns = 0, slices = 0;
	for (int i = 0; i < NWORKERS; i++)
		schedstat(workers[i].tid, &wait_ns, &slices);
	uint64_t disp_wait = 0, disp_slices = 0;
	schedstat((pid_t)syscall(SYS_gettid), &disp_wait, &disp_slices);

	atomic_store(&quit, 1);
	for (int i = 0; i < NWORKERS; i++) {
		atomic_store(&workers[i].go, seq + 1);
		futex_wake(&workers[i].go, 1);
		pthread_join(workers[i].thread, NULL);
	}
	if (raw_file) {
		FILE *f = fopen(raw_file, "we");

		for (size_t i = 0; f && i < nlat; i++)
			fprintf(f, "%.1f\n", (double)lat[i] / 1e3);
		if (!f || fclose(f) != 0)
			fprintf(stderr, "reqresp: %s: %s, ignoring\n", raw_file, strerror(errno));
	}
	size_t kept = nreq < max_req ? nreq : max_req;
	qsort(lat, nlat, sizeof(*lat), cmp_u64);
	qsort(rtt, kept, sizeof(*rtt), cmp_u64);
	qsort(walks, kept, sizeof(*walks), cmp_u64);
	printf("{\"requests\": %zu, \"rps\": %.1f, \"wake_p50_us\": %.1f, \"wake_p99_us\": %.1f, "
	       "\"wake_max_us\": %.1f, \"rtt_p50_us\": %.1f, \"rtt_p99_us\": %.1f, "
	       "\"walk_p50_us\": %.1f, \"worker_wait_us_per_req\": %.1f, "
	       "\"dispatcher_wait_us_per_req\": %.1f, \"worker_slices\": %llu}\n",
	       nreq, elapsed > 0 ? (double)nreq / elapsed : 0.0, pct(lat, nlat, 50),
	       pct(lat, nlat, 99), pct(lat, nlat, 100), pct(rtt, kept, 50), pct(rtt, kept, 99),
	       pct(walks, kept, 50), nreq ? (double)wait_ns / 1e3 / (double)nreq : 0.0,
	       nreq ? (double)disp_wait / 1e3 / (double)nreq : 0.0, (unsigned long long)slices);
	for (int i = 0; i < NWORKERS; i++)
		free(workers[i].next);
	free(lat);
	free(rtt);
	free(walks);
	return 0;
}
