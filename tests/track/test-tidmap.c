/* The tid hash map against a plain array, through growth and deletions
 * that exercise backward shifting. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "tidmap.h"

#define N 20000

static uintptr_t shadow[N + 1];

int main(void)
{
	struct tidmap m;
	unsigned seed = 1;
	size_t count = 0;

	tidmap_init(&m);
	CHECK(!tidmap_get(&m, 5) && !tidmap_remove(&m, 5));
	for (int round = 0; round < 400000; round++) {
		pid_t key;

		seed = seed * 1103515245 + 12345;
		key = (pid_t)((seed >> 8) % N) + 1;
		if ((seed >> 4) & 1) {
			if (!shadow[key])
				count++;
			shadow[key] = (uintptr_t)round + 1;
			REQUIRE(tidmap_put(&m, key, (void *)shadow[key]) >= 0);
		} else {
			void *v = tidmap_remove(&m, key);

			if ((uintptr_t)v != shadow[key]) {
				/* The first divergence is the news; the rest follows from it. */
				CHECK_FAIL("remove %d: got %p want %lu", (int)key, v,
					   (unsigned long)shadow[key]);
				return CHECK_EXIT();
			}
			if (shadow[key])
				count--;
			shadow[key] = 0;
		}
		if (tidmap_count(&m) != count) {
			CHECK_FAIL("count %zu want %zu", tidmap_count(&m), count);
			return CHECK_EXIT();
		}
	}
	for (pid_t k = 1; k <= N; k++)
		if ((uintptr_t)tidmap_get(&m, k) != shadow[k]) {
			CHECK_FAIL("get %d mismatch", (int)k);
			return CHECK_EXIT();
		}
	tidmap_done(&m);
	return CHECK_EXIT();
}
