/* The crash drill's victim daemon: it keeps boosting, stopping, pinning
 * and renicing the given processes until it is SIGKILLed.
 *
 *   crash-drill STATE_DIR PID...   churn; prints "ready" once each PID has
 *                                  been boosted, stopped and pinned
 *   crash-drill --restart STATE_DIR  what a restarted daemon does first:
 *                                  enforcer_new() restores, then exit */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "enforce.h"

#define MAX_TARGETS 32

static int churn(struct enforcer *e, const struct enforce_target *t, unsigned op)
{
	cpu_set_t cpus;

	switch (op % 9) {
	case 0: return enforce_boost(e, t, ENFORCE_BOOST_PRIO_MIN + (int)(op / 9 % 10));
	case 1: return enforce_unboost(e, t);
	case 2: return enforce_stop(e, t);
	case 3: return enforce_cont(e, t);
	case 4:
		CPU_ZERO(&cpus);
		CPU_SET((int)(op / 9 % 2), &cpus);
		return enforce_pin(e, t, &cpus);
	case 5: return enforce_unpin(e, t);
	case 6: return enforce_set_nice(e, t, (int)(op / 9 % 40) - 20);
	case 7: return enforce_set_idle(e, t, op / 9 % 2);
	default:
		if (!enforce_slice_supported(e))
			return 0;
		return enforce_set_slice(e, t, 1000000 + op / 9 % 8 * 1000000);
	}
}

int main(int argc, char **argv)
{
	struct enforce_target targets[MAX_TARGETS];
	struct enforcer *e;
	int n = 0, r;

	if (argc == 3 && !strcmp(argv[1], "--restart")) {
		r = enforcer_new(&e, argv[2]);
		if (r < 0)
			return 1;
		enforcer_free(e);
		return 0;
	}
	if (argc < 3 || argc - 2 > MAX_TARGETS) {
		fprintf(stderr, "usage: crash-drill STATE_DIR PID... | --restart STATE_DIR\n");
		return 2;
	}
	alarm(20); /* never outlive a test that forgot us */
	(void)enforce_protect_self(ENFORCE_DAEMON_PRIO);
	if (enforcer_new(&e, argv[1]) < 0)
		return 1;
	/* Pinning to a CPU outside a task's own mask is -EINVAL: tolerated. */
	for (int i = 2; i < argc; i++)
		if (enforce_target_from_tid(atoi(argv[i]), &targets[n++]) < 0)
			return 1;

	/* Everything at least once, then churn at random. */
	for (int i = 0; i < n; i++)
		if (enforce_boost(e, &targets[i], 1) < 0 || enforce_stop(e, &targets[i]) < 0 ||
		    (churn(e, &targets[i], 4) < 0 && churn(e, &targets[i], 13) < 0) ||
		    enforce_set_nice(e, &targets[i], 7) < 0)
			return 1;
	printf("ready\n");
	fflush(stdout);
	srand((unsigned)getpid());
	for (;;) {
		unsigned op = (unsigned)rand();

		r = churn(e, &targets[op % (unsigned)n], op / (unsigned)n);
		if (r < 0 && r != -EINVAL) {
			fprintf(stderr, "crash-drill: lever failed: %s\n", strerror(-r));
			return 1;
		}
		nanosleep(&(struct timespec){ .tv_nsec = 50000 }, NULL);
	}
}
