/* The tid hash map against a plain array, through growth and deletions
 * that exercise backward shifting. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "tidmap.h"

#define N 20000

static uintptr_t shadow[N + 1];

int main(void)
{
	struct tidmap m;
	unsigned seed = 1;
	size_t count = 0;

	tidmap_init(&m);
	if (tidmap_get(&m, 5) || tidmap_remove(&m, 5))
		return 1;
	for (int round = 0; round < 400000; round++) {
		pid_t key;

		seed = seed * 1103515245 + 12345;
		key = (pid_t)((seed >> 8) % N) + 1;
		if ((seed >> 4) & 1) {
			if (!shadow[key])
				count++;
			shadow[key] = (uintptr_t)round + 1;
			if (tidmap_put(&m, key, (void *)shadow[key]) < 0)
				return 1;
		} else {
			void *v = tidmap_remove(&m, key);

			if ((uintptr_t)v != shadow[key]) {
				fprintf(stderr, "remove %d: got %p want %lu\n", (int)key, v,
					(unsigned long)shadow[key]);
				return 1;
			}
			if (shadow[key])
				count--;
			shadow[key] = 0;
		}
		if (tidmap_count(&m) != count) {
			fprintf(stderr, "count %zu want %zu\n", tidmap_count(&m), count);
			return 1;
		}
	}
	for (pid_t k = 1; k <= N; k++)
		if ((uintptr_t)tidmap_get(&m, k) != shadow[k]) {
			fprintf(stderr, "get %d mismatch\n", (int)k);
			return 1;
		}
	tidmap_done(&m);
	return 0;
}
