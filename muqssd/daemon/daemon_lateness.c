/* How late the tick runs, and how often it missed the deadman's bound:
 * muqssd is a process that can fall behind, and this says when it did. */
#include "daemon.h"

#include <errno.h>

#include "deadman.h"
#include "log.h"

uint64_t daemon_tick_bound_ns(const struct daemon *d)
{
	uint64_t rr3 = 3ULL * d->config.tunables.rr_interval_ms * 1000000ULL;

	return rr3 > DAEMON_TICK_BOUND_MIN_NS ? rr3 : DAEMON_TICK_BOUND_MIN_NS;
}

void daemon_lateness_note(struct daemon *d, uint64_t due_ns, uint64_t now, uint64_t took_ns,
			  uint64_t took_own_ns, const struct tick_split *split)
{
	uint64_t late = now > due_ns ? now - due_ns : 0, bound = daemon_tick_bound_ns(d);
	uint64_t own = d->own_late_ns;
	bool held;

	if (own > late)
		own = late;
	d->counters.ticks++;
	latency_hist_add(&d->tick_lateness, late / 1000);
	if (late / 1000 > d->tick_lateness_max_us)
		d->tick_lateness_max_us = late / 1000;
	if (took_ns / 1000 > d->tick_took_max_us)
		d->tick_took_max_us = took_ns / 1000;
	if (late + took_ns <= bound)
		return;
	held = own + took_own_ns <= bound;
	d->ticks_over[d->counters.ticks_over_bound % DAEMON_TICKS_OVER_KEPT] = (struct tick_over){
		now, late, took_ns, own + took_own_ns, held };
	d->counters.ticks_over_bound++;
	if (held)
		d->counters.ticks_over_bound_held++;
	/* Once per second at most: a stuck machine would flood the journal. */
	if (now - d->last_late_log_ns < 1000000000ULL)
		return;
	d->last_late_log_ns = now;
	log_warning("tick ran %llu us late (%llu us of it in our own work) and took %llu us "
		    "(%llu us of it ours; bound %llu us; events %llu, upkeep %llu, reads %llu, "
		    "decisions %llu us)%s%s",
		    (unsigned long long)late / 1000, (unsigned long long)own / 1000,
		    (unsigned long long)took_ns / 1000, (unsigned long long)took_own_ns / 1000,
		    (unsigned long long)bound / 1000, (unsigned long long)split->receive_ns / 1000,
		    (unsigned long long)split->upkeep_ns / 1000,
		    (unsigned long long)split->read_ns / 1000,
		    (unsigned long long)split->decide_ns / 1000,
		    held ? "; the loop was ready and waited to be run" : "",
		    d->counters.ticks_over_bound > 1 ? "" : "; boosts were unchecked meanwhile");
}

/* The last ticks past the bound, oldest first: when each ran, so a load
 * that saw the machine stall can be set beside them. */
static int recent_over_json(const struct daemon *d, cJSON *tick)
{
	cJSON *arr = cJSON_AddArrayToObject(tick, "recent_over");
	uint64_t n = d->counters.ticks_over_bound;
	uint64_t first = n > DAEMON_TICKS_OVER_KEPT ? n - DAEMON_TICKS_OVER_KEPT : 0;

	if (!arr)
		return -ENOMEM;
	for (uint64_t i = first; i < n; i++) {
		const struct tick_over *o = &d->ticks_over[i % DAEMON_TICKS_OVER_KEPT];
		cJSON *e = cJSON_CreateObject();

		if (!e || !cJSON_AddItemToArray(arr, e)) {
			cJSON_Delete(e);
			return -ENOMEM;
		}
		cJSON_AddNumberToObject(e, "at_us", (double)(o->start_ns / 1000));
		cJSON_AddNumberToObject(e, "late_us", (double)(o->late_ns / 1000));
		cJSON_AddNumberToObject(e, "took_us", (double)(o->took_ns / 1000));
		cJSON_AddNumberToObject(e, "own_us", (double)(o->own_ns / 1000));
		cJSON_AddBoolToObject(e, "held", o->held);
	}
	return 0;
}

int daemon_tick_status_json(struct daemon *d, cJSON *obj)
{
	cJSON *tick = cJSON_AddObjectToObject(obj, "tick");

	if (!tick)
		return -ENOMEM;
	cJSON_AddNumberToObject(tick, "count", (double)d->counters.ticks);
	cJSON_AddNumberToObject(tick, "bound_us", (double)(daemon_tick_bound_ns(d) / 1000));
	cJSON_AddNumberToObject(tick, "late_max_us", (double)d->tick_lateness_max_us);
	cJSON_AddNumberToObject(tick, "took_max_us", (double)d->tick_took_max_us);
	cJSON_AddNumberToObject(tick, "late_p99_us",
				(double)latency_hist_percentile(&d->tick_lateness, 99));
	cJSON_AddNumberToObject(tick, "over_bound", (double)d->counters.ticks_over_bound);
	cJSON_AddNumberToObject(tick, "over_bound_held", (double)d->counters.ticks_over_bound_held);
	/* The thread's own count: the loop learns of a trip at its next tick. */
	cJSON_AddNumberToObject(tick, "deadman_trips", (double)deadman_trips(d->deadman));
	return recent_over_json(d, tick);
}
