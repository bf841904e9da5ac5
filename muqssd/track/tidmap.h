/* An open-addressing hash map from a pid_t key to a pointer.
 *
 * Linear probing with backward-shift deletion, so there are no tombstones
 * and lookups stay short however many tasks come and go. Keys must be > 0. */
#pragma once

#include <stddef.h>
#include <sys/types.h>

struct tidmap {
	struct tidmap_slot *slots;
	size_t mask; /* capacity - 1; capacity is a power of two */
	size_t count;
};

void tidmap_init(struct tidmap *m);
void tidmap_done(struct tidmap *m);
void *tidmap_get(const struct tidmap *m, pid_t key);
/* Inserts or replaces. Returns 0 or -ENOMEM. */
int tidmap_put(struct tidmap *m, pid_t key, void *value);
/* Returns the removed value, or NULL when key was absent. */
void *tidmap_remove(struct tidmap *m, pid_t key);
static inline size_t tidmap_count(const struct tidmap *m)
{
	return m->count;
}
