#include <stddef.h>

#include "skiplist.h"

/* xorshift64: cheap, seedable, and identical on every run for a given seed. */
static uint64_t skiplist_random(struct skiplist *sl)
{
	uint64_t x = sl->rng;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	sl->rng = x;
	return x;
}

/*
 * Each extra level has a 1 in 4 chance, up to level 3, and never more than
 * one above the current top so a short list does not grow tall towers.
 */
static int skiplist_random_level(struct skiplist *sl)
{
	uint64_t r = skiplist_random(sl);
	int level = 0;

	while (level < SKIPLIST_MAX_RANDOM_LEVEL && (r & 3) == 0) {
		level++;
		r >>= 2;
	}
	if (level > sl->level + 1)
		level = sl->level + 1;
	return level;
}

void skiplist_init(struct skiplist *sl, uint64_t seed)
{
	sl->head.key = SKIPLIST_HEAD_KEY;
	sl->head.value = NULL;
	sl->head.level = SKIPLIST_LEVELS - 1;
	for (int i = 0; i < SKIPLIST_LEVELS; i++) {
		sl->head.next[i] = &sl->head;
		sl->head.prev[i] = &sl->head;
	}
	sl->level = 0;
	sl->entries = 0;
	sl->best_key = SKIPLIST_HEAD_KEY;
	sl->rng = seed ? seed : UINT64_C(0x9e3779b97f4a7c15);
}

void skiplist_node_init(struct skiplist_node *node)
{
	node->key = 0;
	node->value = NULL;
	node->level = -1;
	for (int i = 0; i < SKIPLIST_LEVELS; i++)
		node->next[i] = node->prev[i] = NULL;
}

void skiplist_insert(struct skiplist *sl, struct skiplist_node *node,
		     uint64_t key, void *value)
{
	struct skiplist_node *update[SKIPLIST_LEVELS];
	struct skiplist_node *p = &sl->head;
	int level;

	for (int i = sl->level; i >= 0; i--) {
		/* "<=" walks past equal keys: that is what keeps them FIFO. */
		while (p->next[i] != &sl->head && p->next[i]->key <= key)
			p = p->next[i];
		update[i] = p;
	}

	level = skiplist_random_level(sl);
	if (level > sl->level) {
		update[level] = &sl->head;
		sl->level = level;
	}

	node->key = key;
	node->value = value;
	node->level = level;
	for (int i = 0; i <= level; i++) {
		node->next[i] = update[i]->next[i];
		node->prev[i] = update[i];
		update[i]->next[i]->prev[i] = node;
		update[i]->next[i] = node;
	}
	sl->entries++;
	sl->best_key = sl->head.next[0]->key;
}

void skiplist_delete(struct skiplist *sl, struct skiplist_node *node)
{
	for (int i = 0; i <= node->level; i++) {
		node->prev[i]->next[i] = node->next[i];
		node->next[i]->prev[i] = node->prev[i];
		node->next[i] = node->prev[i] = NULL;
	}
	node->level = -1;
	while (sl->level > 0 && sl->head.next[sl->level] == &sl->head)
		sl->level--;
	sl->entries--;
	sl->best_key = sl->head.next[0]->key;
}

void *skiplist_pop(struct skiplist *sl)
{
	struct skiplist_node *first = skiplist_first(sl);

	if (!first)
		return NULL;
	skiplist_delete(sl, first);
	return first->value;
}
