#include "tidmap.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

struct tidmap_slot {
	pid_t key; /* 0: empty */
	void *value;
};

#define TIDMAP_MIN 64

void tidmap_init(struct tidmap *m)
{
	m->slots = NULL;
	m->mask = 0;
	m->count = 0;
}

void tidmap_done(struct tidmap *m)
{
	free(m->slots);
	tidmap_init(m);
}

static size_t slot_of(pid_t key, size_t mask)
{
	/* Fibonacci hashing: sequential pids spread over the table. */
	return (size_t)(((uint64_t)(uint32_t)key * 11400714819323198485ULL) >> 32) & mask;
}

void *tidmap_get(const struct tidmap *m, pid_t key)
{
	if (!m->slots)
		return NULL;
	for (size_t i = slot_of(key, m->mask);; i = (i + 1) & m->mask) {
		if (m->slots[i].key == key)
			return m->slots[i].value;
		if (m->slots[i].key == 0)
			return NULL;
	}
}

static void insert_slot(struct tidmap_slot *slots, size_t mask, pid_t key, void *value)
{
	size_t i = slot_of(key, mask);

	while (slots[i].key != 0 && slots[i].key != key)
		i = (i + 1) & mask;
	slots[i].key = key;
	slots[i].value = value;
}

static int grow(struct tidmap *m)
{
	size_t cap = m->slots ? (m->mask + 1) * 2 : TIDMAP_MIN;
	struct tidmap_slot *slots;

	slots = calloc(cap, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	if (m->slots) {
		for (size_t i = 0; i <= m->mask; i++)
			if (m->slots[i].key != 0)
				insert_slot(slots, cap - 1, m->slots[i].key, m->slots[i].value);
		free(m->slots);
	}
	m->slots = slots;
	m->mask = cap - 1;
	return 0;
}

int tidmap_put(struct tidmap *m, pid_t key, void *value)
{
	size_t i;

	/* Keep the load under 3/4 so probes stay short. */
	if (!m->slots || (m->count + 1) * 4 > (m->mask + 1) * 3) {
		int r = grow(m);
		if (r < 0)
			return r;
	}
	for (i = slot_of(key, m->mask); m->slots[i].key != 0; i = (i + 1) & m->mask)
		if (m->slots[i].key == key) {
			m->slots[i].value = value;
			return 0;
		}
	m->slots[i].key = key;
	m->slots[i].value = value;
	m->count++;
	return 0;
}

void *tidmap_remove(struct tidmap *m, pid_t key)
{
	size_t i, j;
	void *value;

	if (!m->slots)
		return NULL;
	for (i = slot_of(key, m->mask); m->slots[i].key != key; i = (i + 1) & m->mask)
		if (m->slots[i].key == 0)
			return NULL;
	value = m->slots[i].value;
	m->count--;
	/* Shift later members of the probe run back into the hole. */
	for (j = (i + 1) & m->mask; m->slots[j].key != 0; j = (j + 1) & m->mask) {
		size_t home = slot_of(m->slots[j].key, m->mask);

		/* Move j into i unless its home lies cyclically in (i, j]. */
		if (i <= j ? (home <= i || home > j) : (home <= i && home > j)) {
			m->slots[i] = m->slots[j];
			i = j;
		}
	}
	m->slots[i].key = 0;
	m->slots[i].value = NULL;
	return value;
}
