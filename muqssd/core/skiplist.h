/*
 * Intrusive skip list shaped like MuQSS's kernel/skip_list.c: next/prev
 * pointers per level, levels 0..3 drawn at random, equal keys kept
 * first in, first out. The caller embeds struct skiplist_node in its own
 * object; nothing here allocates.
 */
#ifndef MUQSS_CORE_SKIPLIST_H
#define MUQSS_CORE_SKIPLIST_H

#include <stdbool.h>
#include <stdint.h>

/* MuQSS declares eight levels but never draws a level above 3, and a
 * list is never taller than its tallest node: levels 4 to 7 would only
 * ever point back at the head. Four keep the same lists in half the
 * memory, and every task embeds a node. */
#define SKIPLIST_MAX_RANDOM_LEVEL 3
#define SKIPLIST_LEVELS (SKIPLIST_MAX_RANDOM_LEVEL + 1)
#define SKIPLIST_HEAD_KEY (~UINT64_C(0))

struct skiplist_node {
	uint64_t key;
	void *value;
	int level;		/* highest level this node is linked on; -1 if unlinked */
	struct skiplist_node *next[SKIPLIST_LEVELS];
	struct skiplist_node *prev[SKIPLIST_LEVELS];
};

struct skiplist {
	struct skiplist_node head;	/* key ~0; also the end sentinel */
	int level;			/* current top level in use */
	unsigned int entries;
	uint64_t best_key;		/* key of the first node, ~0 when empty */
	uint64_t rng;			/* xorshift state: deterministic per list */
};

/* Initialises an empty list; seed 0 picks a fixed default. */
void skiplist_init(struct skiplist *sl, uint64_t seed);

/* Marks a node as not linked, so skiplist_node_linked() is false. */
void skiplist_node_init(struct skiplist_node *node);

/* Links an unlinked node; O(log n), FIFO after existing equal keys. */
void skiplist_insert(struct skiplist *sl, struct skiplist_node *node,
		     uint64_t key, void *value);

/* Unlinks a linked node in O(its level). */
void skiplist_delete(struct skiplist *sl, struct skiplist_node *node);

/* Unlinks the earliest node; returns its value, or NULL when empty. */
void *skiplist_pop(struct skiplist *sl);

static inline bool skiplist_node_linked(const struct skiplist_node *node)
{
	return node->level >= 0;
}

static inline bool skiplist_empty(const struct skiplist *sl)
{
	return sl->entries == 0;
}

/* Earliest node, or NULL when empty; O(1). */
static inline struct skiplist_node *skiplist_first(const struct skiplist *sl)
{
	struct skiplist_node *n = sl->head.next[0];

	return n == &sl->head ? NULL : n;
}

/* Node after @node in key order, or NULL at the end. */
static inline struct skiplist_node *skiplist_next(const struct skiplist *sl,
						  const struct skiplist_node *node)
{
	struct skiplist_node *n = node->next[0];

	return n == &sl->head ? NULL : n;
}

#endif
