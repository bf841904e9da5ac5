/* A periodic probe: wakes at absolute times, burns a fixed amount of CPU per
 * period, and reports how late it woke and how many periods it missed.
 * Models a 60 Hz frame loop or an audio callback. With -o it also writes
 * every wake-up latency, in microseconds and in wake order, one a line;
 * with -t every frame as "due late overran": when it was due (CLOCK_MONOTONIC,
 * us), how late it woke (us), and 1 if it ended after the next was due. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Volatile, so the busy loop is not folded away. */
static volatile uint64_t spin_sink;

static uint64_t ts_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void burn_cpu(uint64_t ns)
{
	uint64_t start = ts_ns(CLOCK_THREAD_CPUTIME_ID);

	while (ts_ns(CLOCK_THREAD_CPUTIME_ID) - start < ns)
		for (int i = 0; i < 1000; i++)
			spin_sink += (uint64_t)i;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Output files are written aside and renamed into place: readers wait for
 * the file to appear, and one read as it was being written was empty (a
 * bench round with no frames). */
static FILE *open_aside(const char *path, char *tmp, size_t size)
{
	snprintf(tmp, size, "%s.part", path);
	return fopen(tmp, "we");
}

static int put_in_place(FILE *f, const char *tmp, const char *path)
{
	int r = 0;

	if (fclose(f) != 0 || rename(tmp, path) < 0)
		r = -errno;
	if (r < 0)
		(void)unlink(tmp);
	return r;
}

static int write_raw(const char *path, const uint64_t *lat, size_t n)
{
	char tmp[PATH_MAX];
	FILE *f = open_aside(path, tmp, sizeof(tmp));

	if (!f)
		return -errno;
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%.1f\n", (double)lat[i] / 1e3);
	return put_in_place(f, tmp, path);
}

static int write_timeline(const char *path, const uint64_t *due, const uint64_t *lat,
			  const unsigned char *overran, size_t n)
{
	char tmp[PATH_MAX];
	FILE *f = open_aside(path, tmp, sizeof(tmp));

	if (!f)
		return -errno;
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%.1f %.1f %u\n", (double)due[i] / 1e3, (double)lat[i] / 1e3, overran[i]);
	return put_in_place(f, tmp, path);
}

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = 1;
}

int main(int argc, char **argv)
{
	double period_ms = 1000.0 / 60.0, work_ms = 3.0, duration_s = 10.0;
	const char *ready_file = NULL, *raw_file = NULL, *timeline_file = NULL;
	int c;

	while ((c = getopt(argc, argv, "p:w:d:r:o:t:")) >= 0) {
		switch (c) {
		case 'p': period_ms = atof(optarg); break;
		case 'w': work_ms = atof(optarg); break;
		case 'd': duration_s = atof(optarg); break;
		case 'r': ready_file = optarg; break;
		case 'o': raw_file = optarg; break;
		case 't': timeline_file = optarg; break;
		default:
			fprintf(stderr, "usage: frame-probe [-p PERIOD_MS] [-w WORK_MS] [-d SECONDS] [-r READY_FILE] [-o RAW_FILE] [-t TIMELINE_FILE]\n");
			return 2;
		}
	}
	if (period_ms <= 0 || work_ms < 0 || duration_s <= 0) {
		fprintf(stderr, "frame-probe: bad arguments\n");
		return 2;
	}
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);

	uint64_t period = (uint64_t)(period_ms * 1e6), work = (uint64_t)(work_ms * 1e6);
	size_t max = (size_t)(duration_s * 1e9 / (double)period) + 1, n = 0, missed = 0;
	uint64_t *lat = calloc(max, sizeof(*lat)), *due = calloc(max, sizeof(*due));
	unsigned char *overran = calloc(max, 1);
	if (!lat || !due || !overran)
		return 1;
	if (ready_file) {
		FILE *f = fopen(ready_file, "w");
		if (f)
			fclose(f);
	}

	uint64_t next = ts_ns(CLOCK_MONOTONIC) + period;
	while (n < max && !stop) {
		struct timespec ts = { .tv_sec = (time_t)(next / 1000000000ULL),
				       .tv_nsec = (long)(next % 1000000000ULL) };
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR && !stop)
			;
		if (stop)
			break;
		uint64_t woke = ts_ns(CLOCK_MONOTONIC);
		due[n] = next;
		lat[n++] = woke - next;
		burn_cpu(work);
		uint64_t done = ts_ns(CLOCK_MONOTONIC);
		next += period;
		if (done > next) {
			/* A frame that ends after the next one was due is missed;
			 * skip the periods it overran, as a compositor would. */
			missed++;
			overran[n - 1] = 1;
			while (next < done)
				next += period;
		}
	}
	if (raw_file && write_raw(raw_file, lat, n) < 0)
		fprintf(stderr, "frame-probe: %s: %s, ignoring\n", raw_file, strerror(errno));
	if (timeline_file && write_timeline(timeline_file, due, lat, overran, n) < 0)
		fprintf(stderr, "frame-probe: %s: %s, ignoring\n", timeline_file, strerror(errno));
	qsort(lat, n, sizeof(*lat), cmp_u64);
	uint64_t p50 = n ? lat[n / 2] : 0, p99 = n ? lat[(n * 99) / 100] : 0, mx = n ? lat[n - 1] : 0;
	printf("{\"frames\": %zu, \"missed\": %zu, \"missed_pct\": %.3f, "
	       "\"wake_p50_us\": %.1f, \"wake_p99_us\": %.1f, \"wake_max_us\": %.1f}\n",
	       n, missed, n ? 100.0 * (double)missed / (double)n : 0.0,
	       (double)p50 / 1e3, (double)p99 / 1e3, (double)mx / 1e3);
	free(lat);
	free(due);
	free(overran);
	return 0;
}
