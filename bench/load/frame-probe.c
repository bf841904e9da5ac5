/* A periodic probe: wakes at absolute times, burns a fixed amount of CPU per
 * period, and reports how late it woke and how many periods it missed.
 * Models a 60 Hz frame loop or an audio callback. With -o it also writes
 * every wake-up latency, in microseconds and in wake order, one a line;
 * with -t each line starts with the wake-up's due time (CLOCK_MONOTONIC,
 * us), so a stall it saw can be set beside what else ran then. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "load.h"

/* Volatile, so the busy loop is not folded away. */
static volatile uint64_t spin_sink;

static void burn_cpu(uint64_t ns)
{
	uint64_t start = clock_ns(CLOCK_THREAD_CPUTIME_ID);

	while (clock_ns(CLOCK_THREAD_CPUTIME_ID) - start < ns)
		for (int i = 0; i < 1000; i++)
			spin_sink += (uint64_t)i;
}

/* Written aside and renamed into place: readers wait for the file to
 * appear, and one read mid-write was empty (a bench round with no frames). */
static int write_raw(const char *path, const uint64_t *lat, const uint64_t *due, size_t n)
{
	char tmp[PATH_MAX];
	FILE *f;
	int r = 0;

	snprintf(tmp, sizeof(tmp), "%s.part", path);
	f = fopen(tmp, "we");
	if (!f)
		return -errno;
	for (size_t i = 0; i < n; i++) {
		if (due)
			fprintf(f, "%llu ", (unsigned long long)(due[i] / 1000));
		fprintf(f, "%.1f\n", (double)lat[i] / 1e3);
	}
	if (fclose(f) != 0 || rename(tmp, path) < 0)
		r = -errno;
	if (r < 0)
		(void)unlink(tmp);
	return r;
}

int main(int argc, char **argv)
{
	double period_ms = 1000.0 / 60.0, work_ms = 3.0, duration_s = 10.0;
	const char *raw_file = NULL;
	bool timed = false;
	int c;

	while ((c = getopt(argc, argv, "p:w:d:o:t")) >= 0) {
		switch (c) {
		case 'p': period_ms = atof(optarg); break;
		case 'w': work_ms = atof(optarg); break;
		case 'd': duration_s = atof(optarg); break;
		case 'o': raw_file = optarg; break;
		case 't': timed = true; break;
		default:
			fprintf(stderr, "usage: frame-probe [-p PERIOD_MS] [-w WORK_MS] [-d SECONDS] "
				"[-o RAW_FILE [-t]]\n");
			return 2;
		}
	}
	if (period_ms <= 0 || work_ms < 0 || duration_s <= 0) {
		fprintf(stderr, "frame-probe: bad arguments\n");
		return 2;
	}
	stop_on_signals();

	uint64_t period = (uint64_t)(period_ms * 1e6), work = (uint64_t)(work_ms * 1e6);
	size_t max = (size_t)(duration_s * 1e9 / (double)period) + 1, n = 0, missed = 0;
	uint64_t *lat = calloc(max, sizeof(*lat));
	uint64_t *due = timed ? calloc(max, sizeof(*due)) : NULL;
	if (!lat || (timed && !due))
		return 1;

	uint64_t next = clock_ns(CLOCK_MONOTONIC) + period;
	while (n < max && !stop) {
		struct timespec ts = { .tv_sec = (time_t)(next / 1000000000ULL),
				       .tv_nsec = (long)(next % 1000000000ULL) };
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR && !stop)
			;
		if (stop)
			break;
		uint64_t woke = clock_ns(CLOCK_MONOTONIC);
		if (due)
			due[n] = next;
		lat[n++] = woke - next;
		burn_cpu(work);
		uint64_t done = clock_ns(CLOCK_MONOTONIC);
		next += period;
		if (done > next) {
			/* A frame that ends after the next one was due is missed;
			 * skip the periods it overran, as a compositor would. */
			missed++;
			while (next < done)
				next += period;
		}
	}
	if (raw_file && write_raw(raw_file, lat, due, n) < 0)
		fprintf(stderr, "frame-probe: %s: %s, ignoring\n", raw_file, strerror(errno));
	qsort(lat, n, sizeof(*lat), cmp_u64);
	uint64_t p50 = n ? lat[n / 2] : 0, p99 = n ? lat[(n * 99) / 100] : 0, mx = n ? lat[n - 1] : 0;
	printf("{\"frames\": %zu, \"missed\": %zu, \"missed_pct\": %.3f, "
	       "\"wake_p50_us\": %.1f, \"wake_p99_us\": %.1f, \"wake_max_us\": %.1f}\n",
	       n, missed, n ? 100.0 * (double)missed / (double)n : 0.0,
	       (double)p50 / 1e3, (double)p99 / 1e3, (double)mx / 1e3);
	free(due);
	free(lat);
	return 0;
}
