/* check(): like assert(), but never compiled out, and it says where. */
#pragma once

#include <stdio.h>
#include <stdlib.h>

#define check(x)                                                                      \
	do {                                                                          \
		if (!(x)) {                                                           \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #x); \
			exit(EXIT_FAILURE);                                           \
		}                                                                     \
	} while (0)
