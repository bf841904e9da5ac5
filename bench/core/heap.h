/* A binary min-heap of node pointers with back indices, for comparison only. */
#ifndef MUQSS_BENCH_HEAP_H
#define MUQSS_BENCH_HEAP_H

#include <stddef.h>
#include <stdint.h>

struct heap_node {
	uint64_t key;
	uint64_t seq;	/* tie-break: FIFO among equal keys */
	size_t idx;
};

struct heap {
	struct heap_node **a;
	size_t len, cap;
	uint64_t seq;
};

/* 0 or -ENOMEM; free(h->a) when done. */
int heap_init(struct heap *h, size_t cap);
/* Capacity is fixed at init; the caller keeps within it. */
void heap_insert(struct heap *h, struct heap_node *n, uint64_t key);
void heap_delete(struct heap *h, struct heap_node *n);
struct heap_node *heap_pop_min(struct heap *h);

#endif
