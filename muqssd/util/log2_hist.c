#include "log2_hist.h"

#include <string.h>

static uint64_t upper(unsigned b)
{
	return (uint64_t)1 << (b + 1);
}

uint64_t log2_hist_count(const uint64_t bucket[LOG2_HIST_BUCKETS])
{
	uint64_t n = 0;

	for (unsigned b = 0; b < LOG2_HIST_BUCKETS; b++)
		n += bucket[b];
	return n;
}

uint64_t log2_hist_percentile(const uint64_t bucket[LOG2_HIST_BUCKETS], unsigned pct)
{
	uint64_t n = log2_hist_count(bucket), want, seen = 0;

	if (!n)
		return 0;
	if (pct > 100)
		pct = 100;
	/* The rank of the percentile, rounded up: p99 of 10 values is the
	 * 10th, not the 9th. */
	want = (n * pct + 99) / 100;
	if (!want)
		want = 1;
	for (unsigned b = 0; b < LOG2_HIST_BUCKETS; b++) {
		seen += bucket[b];
		if (seen >= want)
			return upper(b);
	}
	return upper(LOG2_HIST_BUCKETS - 1);
}

uint64_t log2_hist_max(const uint64_t bucket[LOG2_HIST_BUCKETS])
{
	for (unsigned b = LOG2_HIST_BUCKETS; b-- > 0;)
		if (bucket[b])
			return upper(b);
	return 0;
}

void log2_window_push(struct log2_window *w, const uint64_t totals[LOG2_HIST_BUCKETS])
{
	memcpy(w->snap[w->head], totals, sizeof(w->snap[0]));
	w->head = (w->head + 1) % (LOG2_WINDOW_SPAN + 1);
	if (w->n < LOG2_WINDOW_SPAN + 1)
		w->n++;
}

void log2_window_sum(const struct log2_window *w, uint64_t ret[LOG2_HIST_BUCKETS])
{
	const unsigned slots = LOG2_WINDOW_SPAN + 1;
	const uint64_t *newest = w->snap[(w->head + slots - 1) % slots];
	const uint64_t *oldest = w->snap[(w->head + slots - w->n) % slots];

	memset(ret, 0, LOG2_HIST_BUCKETS * sizeof(*ret));
	if (w->n < 2)
		return;
	for (unsigned b = 0; b < LOG2_HIST_BUCKETS; b++)
		ret[b] = newest[b] >= oldest[b] ? newest[b] - oldest[b] : 0;
}
