/* A plain intrusive red-black tree with a cached minimum, for comparison only. */
#ifndef MUQSS_BENCH_RBTREE_H
#define MUQSS_BENCH_RBTREE_H

#include <stdbool.h>
#include <stdint.h>

struct rb_node {
	uint64_t key;
	struct rb_node *child[2], *parent;	/* left, right */
	bool red;
};

struct rb_tree {		/* empty when zeroed */
	struct rb_node *root;
	struct rb_node *min;	/* leftmost, as Linux's rb_root_cached */
};

/* Equal keys go right, so they come out first in, first out. */
void rb_insert(struct rb_tree *t, struct rb_node *n, uint64_t key);
void rb_delete(struct rb_tree *t, struct rb_node *n);
/* Removes and returns the minimum, or NULL. */
struct rb_node *rb_pop_min(struct rb_tree *t);

#endif
