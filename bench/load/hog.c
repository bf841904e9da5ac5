/* A CPU hog that counts its work until SIGTERM or the duration ends, or until
 * HOG_UNTIL (CLOCK_MONOTONIC s): then the hogs of one run count over the same
 * window, however late each started. Prints iterations and CPU time. */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "load.h"

/* Volatile, so the busy loop is not folded away. */
static volatile uint64_t spin_sink;

static double seconds(clockid_t clock)
{
	return (double)clock_ns(clock) / 1e9;
}

int main(int argc, char **argv)
{
	double duration = argc > 1 ? atof(argv[1]) : 10.0;
	double start = seconds(CLOCK_MONOTONIC);
	const char *until = getenv("HOG_UNTIL");

	if (until && atof(until) > 0)
		duration = atof(until) - start;
	uint64_t iterations = 0;

	stop_on_signals();
	while (!stop) {
		for (int i = 0; i < 100000; i++)
			spin_sink += (uint64_t)i;
		iterations++;
		if ((iterations & 63) == 0 && seconds(CLOCK_MONOTONIC) - start >= duration)
			break;
	}
	printf("{\"iterations\": %llu, \"cpu_s\": %.3f, \"wall_s\": %.3f}\n",
	       (unsigned long long)iterations, seconds(CLOCK_PROCESS_CPUTIME_ID),
	       seconds(CLOCK_MONOTONIC) - start);
	return 0;
}
