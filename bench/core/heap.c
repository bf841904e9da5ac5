#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "heap.h"

int heap_init(struct heap *h, size_t cap)
{
	h->a = calloc(cap ? cap : 1, sizeof(*h->a));
	h->len = 0;
	h->cap = cap;
	h->seq = 0;
	return h->a ? 0 : -ENOMEM;
}

static bool heap_less(const struct heap_node *a, const struct heap_node *b)
{
	return a->key < b->key || (a->key == b->key && a->seq < b->seq);
}

static void heap_set(struct heap *h, size_t i, struct heap_node *n)
{
	h->a[i] = n;
	n->idx = i;
}

static void heap_up(struct heap *h, size_t i)
{
	struct heap_node *n = h->a[i];

	while (i) {
		size_t p = (i - 1) / 2;

		if (!heap_less(n, h->a[p]))
			break;
		heap_set(h, i, h->a[p]);
		i = p;
	}
	heap_set(h, i, n);
}

static void heap_down(struct heap *h, size_t i)
{
	struct heap_node *n = h->a[i];

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= h->len)
			break;
		if (c + 1 < h->len && heap_less(h->a[c + 1], h->a[c]))
			c++;
		if (!heap_less(h->a[c], n))
			break;
		heap_set(h, i, h->a[c]);
		i = c;
	}
	heap_set(h, i, n);
}

void heap_insert(struct heap *h, struct heap_node *n, uint64_t key)
{
	n->key = key;
	n->seq = h->seq++;
	heap_set(h, h->len++, n);
	heap_up(h, h->len - 1);
}

void heap_delete(struct heap *h, struct heap_node *n)
{
	size_t i = n->idx;
	struct heap_node *last = h->a[--h->len];

	if (last == n)
		return;
	heap_set(h, i, last);
	if (i && heap_less(last, h->a[(i - 1) / 2]))
		heap_up(h, i);
	else
		heap_down(h, i);
}

struct heap_node *heap_pop_min(struct heap *h)
{
	struct heap_node *n;

	if (!h->len)
		return NULL;
	n = h->a[0];
	heap_delete(h, n);
	return n;
}
