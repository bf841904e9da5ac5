#include "latency_hist.h"

/* Bucket i holds values up to upper(i): 0..3 exact, then four buckets per
 * power of two. */
static uint64_t upper(unsigned i)
{
	unsigned shift = i / 4, quarter = i % 4;

	if (i < 4)
		return i;
	return ((uint64_t)(4 + quarter) << (shift - 1)) + ((uint64_t)1 << (shift - 1)) - 1;
}

static unsigned bucket_of(uint64_t us)
{
	unsigned lo = 0, hi = LATENCY_HIST_BUCKETS - 1;

	if (us >= upper(hi))
		return hi;
	while (lo < hi) {
		unsigned mid = (lo + hi) / 2;

		if (upper(mid) >= us)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

void latency_hist_add(struct latency_hist *h, uint64_t us)
{
	h->bucket[bucket_of(us)]++;
	h->count++;
}

uint64_t latency_hist_percentile(const struct latency_hist *h, unsigned pct)
{
	uint64_t want, seen = 0;

	if (!h->count)
		return 0;
	want = (h->count * pct + 99) / 100;
	if (!want)
		want = 1;
	for (unsigned i = 0; i < LATENCY_HIST_BUCKETS; i++) {
		seen += h->bucket[i];
		if (seen >= want)
			return upper(i);
	}
	return upper(LATENCY_HIST_BUCKETS - 1);
}
