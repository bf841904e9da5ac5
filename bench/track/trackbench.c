/* The tracker alone on an sd-event loop, for measuring its cost without
 * the scheduling loop or the enforcer.
 *   trackbench --scope-pid PID [--poll] [--tick-ms MS] [--budget N] [--debug]
 * (without --budget, the idle budget sweeps all sleepers every 2 s)
 * SIGUSR1 prints "count active events lost" to stdout; SIGTERM exits.
 * With --tick-ms, tracker_refresh_active(now, budget) runs every MS, as the
 * scheduling loop will. */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "log.h"
#include "time_util.h"
#include "tracker.h"

static unsigned tick_ms, budget, sweep_ms = 2000;
static struct tracker *tracker;

static int on_term(sd_event_source *s, const struct signalfd_siginfo *si, void *u)
{
	return sd_event_exit(sd_event_source_get_event(s), 0);
}

static int on_usr1(sd_event_source *s, const struct signalfd_siginfo *si, void *u)
{
	(void)tracker_flush(tracker);
	printf("count %zu active %zu events %llu lost %llu\n", tracker_count(tracker),
	       tracker_count_active(tracker), (unsigned long long)tracker_events(tracker),
	       (unsigned long long)tracker_lost_recoveries(tracker));
	fflush(stdout);
	return 0;
}

static int on_tick(sd_event_source *s, uint64_t usec, void *u)
{
	int r;

	unsigned b = budget;

	/* Without --budget: sweep every idle task once per sweep_ms, as the
	 * scheduling loop does. */
	if (!b)
		b = (unsigned)((tracker_count(tracker) - tracker_count_active(tracker)) * tick_ms /
			       sweep_ms) + 1;
	tracker_refresh_active(tracker, now_nsec(CLOCK_MONOTONIC), b, 0, 0);
	r = sd_event_source_set_time_relative(s, tick_ms * 1000ULL);
	return r < 0 ? r : sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "scope-pid", required_argument, NULL, 'p' },
		{ "poll", no_argument, NULL, 'P' },
		{ "tick-ms", required_argument, NULL, 't' },
		{ "budget", required_argument, NULL, 'b' },
		{ "debug", no_argument, NULL, 'd' },
		{ 0 },
	};
	struct config c;
	sd_event *e = NULL;
	sigset_t mask;
	int o, r;

	log_init("trackbench");
	config_init_defaults(&c);
	while ((o = getopt_long(argc, argv, "", opts, NULL)) >= 0)
		switch (o) {
		case 'p': c.scope = SCOPE_PID; c.scope_pid = atoi(optarg); break;
		case 'P': c.force_poll = true; break;
		case 't': tick_ms = (unsigned)atoi(optarg); break;
		case 'b': budget = (unsigned)atoi(optarg); break;
		case 'd': log_set_level(LOG_LEVEL_DEBUG); break;
		default: return 2;
		}
	if (c.scope != SCOPE_PID) {
		fprintf(stderr, "trackbench: --scope-pid is required\n");
		return 2;
	}
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGUSR1);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	if ((r = sd_event_default(&e)) < 0 ||
	    (r = sd_event_add_signal(e, NULL, SIGTERM, on_term, NULL)) < 0 ||
	    (r = sd_event_add_signal(e, NULL, SIGINT, on_term, NULL)) < 0 ||
	    (r = sd_event_add_signal(e, NULL, SIGUSR1, on_usr1, NULL)) < 0 ||
	    (r = tracker_new(&tracker, e, &c, NULL, NULL)) < 0 ||
	    (r = tracker_start(tracker)) < 0)
		return 1;
	if (tick_ms && sd_event_add_time_relative(e, NULL, CLOCK_MONOTONIC, tick_ms * 1000ULL,
						  100, on_tick, NULL) < 0)
		return 1;
	printf("ready\n");
	fflush(stdout);
	r = sd_event_loop(e);
	tracker_free(tracker);
	sd_event_unref(e);
	config_free(&c);
	return r < 0 ? 1 : 0;
}
