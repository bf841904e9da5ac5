/* How long the whole machine stops. Run at a SCHED_FIFO priority above
 * everything the bench starts (chrt -f 50): it sleeps 1 ms at a time, and
 * a wake-up more than -t ms late means no CPU could run it, which on a
 * virtual machine is mostly the host not running the guest. Each such
 * wake-up is printed as "<CLOCK_MONOTONIC s> <ms late>", as it comes.
 * Ends at SIGTERM or SIGINT. */
#include <getopt.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "load.h"

#define PERIOD_NS 1000000ULL

int main(int argc, char **argv)
{
	double threshold_ms = 10;
	uint64_t prev;
	int c;

	while ((c = getopt(argc, argv, "t:")) != -1) {
		switch (c) {
		case 't': threshold_ms = atof(optarg); break;
		default:
			fprintf(stderr, "usage: pause-probe [-t MS]\n");
			return 2;
		}
	}
	stop_on_signals();
	setvbuf(stdout, NULL, _IOLBF, 0);
	prev = clock_ns(CLOCK_MONOTONIC);
	while (!stop) {
		struct timespec ts = { 0, PERIOD_NS };
		uint64_t now;
		double late_ms;

		nanosleep(&ts, NULL);
		now = clock_ns(CLOCK_MONOTONIC);
		/* Signed: a signal ends the sleep early. */
		late_ms = ((double)(now - prev) - (double)PERIOD_NS) / 1e6;
		if (late_ms > threshold_ms)
			printf("%.6f %.3f\n", (double)now / 1e9, late_ms);
		prev = now;
	}
	return 0;
}
