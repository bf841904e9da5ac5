/* Percentiles of util/log2_hist.c on hand-made histograms: the bucket's
 * upper bound, the rank rounded up, an empty histogram, the last bucket;
 * and the window, which holds the last five deltas and no more. */
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "log2_hist.h"

static void test_empty(void)
{
	uint64_t h[LOG2_HIST_BUCKETS] = { 0 };

	CHECK_EQ(log2_hist_count(h), 0);
	CHECK_EQ(log2_hist_percentile(h, 50), 0);
	CHECK_EQ(log2_hist_percentile(h, 99), 0);
	CHECK_EQ(log2_hist_max(h), 0);
}

static void test_percentiles(void)
{
	uint64_t h[LOG2_HIST_BUCKETS] = { 0 };

	/* 90 values of [8192, 16384) ns, 9 of [64 µs, 128 µs), 1 of [1 ms, 2 ms). */
	h[13] = 90;
	h[16] = 9;
	h[19] = 1;
	CHECK_EQ(log2_hist_count(h), 100);
	CHECK_EQ(log2_hist_percentile(h, 50), 16384);
	CHECK_EQ(log2_hist_percentile(h, 90), 16384);
	/* The 91st value is the first past bucket 13. */
	CHECK_EQ(log2_hist_percentile(h, 91), 131072);
	CHECK_EQ(log2_hist_percentile(h, 99), 131072);
	CHECK_EQ(log2_hist_percentile(h, 100), 1 << 20);
	CHECK_EQ(log2_hist_max(h), 1 << 20);
	/* Past 100 is 100. */
	CHECK_EQ(log2_hist_percentile(h, 1000), 1 << 20);
}

static void test_rank_rounds_up(void)
{
	uint64_t h[LOG2_HIST_BUCKETS] = { 0 };

	/* p99 of 10 values is the 10th: the one slow value shows. */
	h[10] = 9;
	h[20] = 1;
	CHECK_EQ(log2_hist_percentile(h, 99), 1 << 21);
	CHECK_EQ(log2_hist_percentile(h, 50), 1 << 11);
	/* A single value is every percentile, p0 included. */
	memset(h, 0, sizeof(h));
	h[0] = 1;
	CHECK_EQ(log2_hist_percentile(h, 0), 2);
	CHECK_EQ(log2_hist_percentile(h, 50), 2);
	CHECK_EQ(log2_hist_max(h), 2);
}

static void test_last_bucket(void)
{
	uint64_t h[LOG2_HIST_BUCKETS] = { 0 };

	h[LOG2_HIST_BUCKETS - 1] = 3;
	CHECK_EQ(log2_hist_percentile(h, 50), (uint64_t)1 << LOG2_HIST_BUCKETS);
	CHECK_EQ(log2_hist_max(h), (uint64_t)1 << LOG2_HIST_BUCKETS);
}

static void test_window(void)
{
	struct log2_window w = { 0 };
	uint64_t totals[LOG2_HIST_BUCKETS] = { 0 }, sum[LOG2_HIST_BUCKETS];

	log2_window_sum(&w, sum);
	CHECK_EQ(log2_hist_count(sum), 0);
	log2_window_push(&w, totals);
	log2_window_sum(&w, sum);
	CHECK_EQ(log2_hist_count(sum), 0);
	/* Second i adds i values to bucket i: after pushes 1..5 the window
	 * holds them all (1 + ... + 5 = 15 values). */
	for (unsigned i = 1; i <= 5; i++) {
		totals[i] += i;
		log2_window_push(&w, totals);
	}
	log2_window_sum(&w, sum);
	CHECK_EQ(log2_hist_count(sum), 15);
	CHECK_EQ(sum[1], 1);
	CHECK_EQ(sum[5], 5);
	/* Seconds 6 and 7: seconds 1 and 2 leave the window. */
	for (unsigned i = 6; i <= 7; i++) {
		totals[i] += i;
		log2_window_push(&w, totals);
	}
	log2_window_sum(&w, sum);
	CHECK_EQ(sum[1], 0);
	CHECK_EQ(sum[2], 0);
	CHECK_EQ(sum[3], 3);
	CHECK_EQ(sum[7], 7);
	CHECK_EQ(log2_hist_count(sum), 3 + 4 + 5 + 6 + 7);
	CHECK_EQ(log2_hist_max(sum), 1 << 8);
	/* Quiet seconds empty it. */
	for (unsigned i = 0; i < LOG2_WINDOW_SPAN; i++)
		log2_window_push(&w, totals);
	log2_window_sum(&w, sum);
	CHECK_EQ(log2_hist_count(sum), 0);
}

int main(void)
{
	test_empty();
	test_percentiles();
	test_rank_rounds_up();
	test_last_bucket();
	test_window();
	return CHECK_EXIT();
}
