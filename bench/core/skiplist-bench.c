/* skiplist-bench [N ...]: the core's skip list against a red-black tree and a
 * binary heap at N entries (default 100 10000 1000000): pop the earliest
 * deadline and reinsert it later, and delete arbitrary entries (a task sleeps). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "core/skiplist.h"
#include "heap.h"
#include "rbtree.h"

#define SPAN (UINT64_C(250) << 20)	/* keys spread like nice 19's deadline window */

struct item {
	struct skiplist_node sl;
	struct rb_node rb;
	struct heap_node hp;
};

struct result {
	double insert, pop, del;
};

enum { SKIPLIST, RBTREE, HEAP, NR_KINDS };
static const char *const kind_names[] = { "skiplist", "rbtree", "heap" };

static uint64_t rng = 0x2545f4914f6cdd1dull;

static uint64_t next_random(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

struct bench {
	int kind;
	size_t n;
	struct item *items;
	struct item **batch;
	size_t *victims;
	uint64_t *keys;		/* the same key stream for every structure */
	size_t nkeys;
	struct skiplist sl;
	struct rb_tree rb;
	struct heap hp;
};

static void b_insert(struct bench *b, struct item *it, uint64_t key)
{
	if (b->kind == SKIPLIST)
		skiplist_insert(&b->sl, &it->sl, key, it);
	else if (b->kind == RBTREE)
		rb_insert(&b->rb, &it->rb, key);
	else
		heap_insert(&b->hp, &it->hp, key);
}

static struct item *b_pop(struct bench *b)
{
	if (b->kind == SKIPLIST)
		return skiplist_pop(&b->sl);
	if (b->kind == RBTREE) {
		struct rb_node *n = rb_pop_min(&b->rb);

		return n ? (struct item *)((char *)n - offsetof(struct item, rb)) : NULL;
	}
	struct heap_node *n = heap_pop_min(&b->hp);

	return n ? (struct item *)((char *)n - offsetof(struct item, hp)) : NULL;
}

static void b_delete(struct bench *b, struct item *it)
{
	if (b->kind == SKIPLIST)
		skiplist_delete(&b->sl, &it->sl);
	else if (b->kind == RBTREE)
		rb_delete(&b->rb, &it->rb);
	else
		heap_delete(&b->hp, &it->hp);
}

static void run_one(struct bench *b, int kind, struct result *res)
{
	size_t m = b->n / 2 ? b->n / 2 : 1, k = 0, rounds;
	double t0, pop = 0, ins = 0, del = 0;
	uint64_t now = 0;
	size_t ops = 0;

	b->kind = kind;
	skiplist_init(&b->sl, 42);
	b->rb = (struct rb_tree){ 0 };
	b->hp.len = 0;
	/* Descending keys: the skip list, whose levels stop at 3 as in MuQSS,
	 * would insert in O(n / 64) at the tail of a long list. */
	for (size_t i = 0; i < b->n; i++) {
		skiplist_node_init(&b->items[i].sl);
		b_insert(b, &b->items[i], SPAN - (uint64_t)i * (SPAN / b->n));
	}

	/* A million entries: fewer operations, or the skip list takes minutes. */
	ops = b->n >= 1000000 ? 20000 : 2000000;
	if (m > 50000)
		m = 50000;
	if (m > ops)
		m = ops;
	rounds = (ops + m - 1) / m;
	ops = 0;
	for (size_t r = 0; r < rounds; r++) {
		t0 = now_ns();
		for (size_t i = 0; i < m; i++)
			b->batch[i] = b_pop(b);
		pop += now_ns() - t0;

		t0 = now_ns();
		for (size_t i = 0; i < m; i++) {
			now += SPAN / b->n + 1;
			b_insert(b, b->batch[i], now + b->keys[k++ % b->nkeys]);
		}
		ins += now_ns() - t0;

		t0 = now_ns();
		for (size_t i = 0; i < m; i++)
			b_delete(b, &b->items[b->victims[(r * m + i) % b->n]]);
		del += now_ns() - t0;
		for (size_t i = 0; i < m; i++)
			b_insert(b, &b->items[b->victims[(r * m + i) % b->n]],
				 now + b->keys[k++ % b->nkeys]);
		ops += m;
	}
	res->insert = ins / (double)ops;
	res->pop = pop / (double)ops;
	res->del = del / (double)ops;
}

static int bench_size(size_t n)
{
	struct result res[NR_KINDS];
	struct bench b = { .n = n };

	b.nkeys = 1 << 20;
	b.items = calloc(n, sizeof(*b.items));
	b.batch = calloc(n, sizeof(*b.batch));
	b.victims = calloc(n, sizeof(*b.victims));
	b.keys = calloc(b.nkeys, sizeof(*b.keys));
	if (!b.items || !b.batch || !b.victims || !b.keys || heap_init(&b.hp, n) < 0) {
		fprintf(stderr, "out of memory at %zu entries\n", n);
		return 1;
	}
	for (size_t i = 0; i < b.nkeys; i++)
		b.keys[i] = next_random() % SPAN;
	/* Distinct victims per round: a shuffled permutation. */
	for (size_t i = 0; i < n; i++)
		b.victims[i] = i;
	for (size_t i = n; i > 1; i--) {
		size_t j = next_random() % i, tmp = b.victims[i - 1];

		b.victims[i - 1] = b.victims[j];
		b.victims[j] = tmp;
	}

	for (int kind = 0; kind < NR_KINDS; kind++)
		run_one(&b, kind, &res[kind]);
	for (int kind = 0; kind < NR_KINDS; kind++)
		printf("%9zu %-9s %10.1f %10.1f %10.1f\n", n, kind_names[kind],
		       res[kind].insert, res[kind].pop, res[kind].del);
	for (int kind = RBTREE; kind < NR_KINDS; kind++)
		printf("%9zu sl/%-6s %10.2f %10.2f %10.2f\n", n, kind == RBTREE ? "rb" : "heap",
		       res[0].insert / res[kind].insert, res[0].pop / res[kind].pop,
		       res[0].del / res[kind].del);

	free(b.hp.a);
	free(b.items);
	free(b.batch);
	free(b.victims);
	free(b.keys);
	return 0;
}

int main(int argc, char **argv)
{
	static const size_t defaults[] = { 100, 10000, 1000000 };

	printf("%9s %-9s %10s %10s %10s   (ns per operation)\n", "entries", "structure",
	       "insert", "pop-min", "delete");
	if (argc < 2) {
		for (size_t i = 0; i < sizeof(defaults) / sizeof(defaults[0]); i++)
			if (bench_size(defaults[i]))
				return 1;
		return 0;
	}
	for (int i = 1; i < argc; i++) {
		long n = atol(argv[i]);

		if (n < 2) {
			fprintf(stderr, "bad size \"%s\"\n", argv[i]);
			return 2;
		}
		if (bench_size((size_t)n))
			return 1;
	}
	return 0;
}
