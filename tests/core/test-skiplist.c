#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "core/skiplist.h"

#define POOL 1024
#define OPS 200000

struct item {
	struct skiplist_node node;
	uint64_t seq;		/* insertion order, for the FIFO reference */
};

struct ref {
	uint64_t key;
	uint64_t seq;
	struct item *item;
};

static uint64_t rng = 88172645463325252ull;

static uint64_t next_random(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Every level's next/prev agree and run in key order. */
static void check_links(const struct skiplist *sl)
{
	for (int l = 0; l < SKIPLIST_LEVELS; l++) {
		const struct skiplist_node *p = &sl->head;
		unsigned int n = 0;

		do {
			const struct skiplist_node *q = p->next[l];

			CHECK(q->prev[l] == p);
			if (q != &sl->head && p != &sl->head)
				CHECK(p->key <= q->key);
			if (q != &sl->head) {
				CHECK(q->level >= l && q->level <= SKIPLIST_MAX_RANDOM_LEVEL);
				n++;
			}
			p = q;
		} while (p != &sl->head);
		if (l == 0)
			CHECK_EQ(n, sl->entries);
		if (l > sl->level)
			CHECK_EQ(n, 0);
	}
}

static void test_empty(void)
{
	struct skiplist sl;

	skiplist_init(&sl, 1);
	CHECK(skiplist_empty(&sl));
	CHECK(skiplist_first(&sl) == NULL);
	CHECK(skiplist_pop(&sl) == NULL);
	CHECK(sl.best_key == SKIPLIST_HEAD_KEY);
	check_links(&sl);
}

static void test_fifo(void)
{
	static struct item items[300];
	struct skiplist sl;
	uint64_t last_key = 0, last_seq = 0;

	skiplist_init(&sl, 7);
	for (int i = 0; i < 300; i++) {
		skiplist_node_init(&items[i].node);
		items[i].seq = (uint64_t)i;
		skiplist_insert(&sl, &items[i].node, next_random() % 3, &items[i]);
	}
	for (int i = 0; i < 300; i++) {
		struct item *it = skiplist_pop(&sl);

		CHECK(it != NULL);
		if (!it)
			return;
		if (i && it->node.key == last_key)
			CHECK(it->seq > last_seq);
		CHECK(it->node.key >= last_key);
		last_key = it->node.key;
		last_seq = it->seq;
		CHECK(!skiplist_node_linked(&it->node));
	}
	CHECK(skiplist_empty(&sl));
}

static void test_delete_positions(void)
{
	struct item items[10];
	struct skiplist sl;

	skiplist_init(&sl, 3);
	for (int i = 0; i < 10; i++) {
		skiplist_node_init(&items[i].node);
		skiplist_insert(&sl, &items[i].node, (uint64_t)(i + 1) * 10, &items[i]);
	}
	skiplist_delete(&sl, &items[0].node);	/* head */
	CHECK_EQ(sl.best_key, 20);
	skiplist_delete(&sl, &items[5].node);	/* middle */
	skiplist_delete(&sl, &items[9].node);	/* tail */
	CHECK_EQ(sl.entries, 7);
	check_links(&sl);
	{
		uint64_t want[] = { 20, 30, 40, 50, 70, 80, 90 };
		int i = 0;

		for (struct skiplist_node *n = skiplist_first(&sl); n; n = skiplist_next(&sl, n))
			CHECK_EQ(n->key, want[i++]);
		CHECK_EQ(i, 7);
	}
	for (int i = 1; i < 9; i++)
		if (skiplist_node_linked(&items[i].node))
			skiplist_delete(&sl, &items[i].node);
	CHECK(skiplist_empty(&sl));
	CHECK_EQ(sl.level, 0);
	CHECK(sl.best_key == SKIPLIST_HEAD_KEY);
}

static int ref_cmp(const struct ref *a, const struct ref *b)
{
	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* Mixed insert/delete/pop against a sorted array, checking order throughout. */
static void test_differential(void)
{
	static struct item items[POOL];
	static struct ref ref[POOL];
	struct skiplist sl;
	int nref = 0, mismatches = 0;
	uint64_t seq = 0;

	skiplist_init(&sl, 12345);
	for (int i = 0; i < POOL; i++)
		skiplist_node_init(&items[i].node);

	for (int op = 0; op < OPS; op++) {
		unsigned int what = next_random() % 10;

		if (what < 5) {
			struct item *it = &items[next_random() % POOL];
			struct ref r;
			int pos;

			if (skiplist_node_linked(&it->node))
				continue;
			/* Narrow key range half the time so ties are common. */
			r.key = next_random() % (what < 2 ? 16 : 1000000);
			r.seq = it->seq = seq++;
			r.item = it;
			skiplist_insert(&sl, &it->node, r.key, it);
			for (pos = nref; pos > 0 && ref_cmp(&ref[pos - 1], &r) > 0; pos--)
				ref[pos] = ref[pos - 1];
			ref[pos] = r;
			nref++;
		} else if (what < 8 && nref) {
			int pos = (int)(next_random() % (uint64_t)nref);

			skiplist_delete(&sl, &ref[pos].item->node);
			for (int i = pos; i < nref - 1; i++)
				ref[i] = ref[i + 1];
			nref--;
		} else if (nref) {
			struct item *it = skiplist_pop(&sl);

			if (it != ref[0].item)
				mismatches++;
			for (int i = 0; i < nref - 1; i++)
				ref[i] = ref[i + 1];
			nref--;
		}

		if (sl.entries != (unsigned int)nref ||
		    sl.best_key != (nref ? ref[0].key : SKIPLIST_HEAD_KEY))
			mismatches++;
		if (op % 5000 == 0) {
			struct skiplist_node *n = skiplist_first(&sl);

			for (int i = 0; i < nref; i++, n = skiplist_next(&sl, n))
				if (!n || n->value != ref[i].item)
					mismatches++;
			check_links(&sl);
		}
	}
	CHECK_EQ(mismatches, 0);
}

int main(void)
{
	test_empty();
	test_fifo();
	test_delete_positions();
	test_differential();
	return CHECK_EXIT();
}
