/* Wake latency as the bpf sensor measures it in the kernel (sensor.h):
 * once a second each class's running histogram is snapshot, so the last
 * five seconds' percentiles are one subtraction away (log2_hist.h); and
 * the JSON that status and tasks --json show of it. The tick takes the
 * snapshot (it runs at least once a second): no wake-up of its own. */
#include "tracker_private.h"

#include <errno.h>
#include <stdlib.h>

#include "log.h"
#include "log2_hist.h"
#include "time_util.h"

#define WAKE_SNAP_USEC (1000 * 1000)

_Static_assert(SENSOR_WAKE_BUCKETS == LOG2_HIST_BUCKETS, "one histogram layout");

struct tracker_wake {
	uint64_t last_ns;	/* the last snapshot */
	struct log2_window window[SENSOR_WAKE_CLASSES];
};

static void snapshot(struct tracker *t, uint64_t now_ns)
{
	uint64_t totals[SENSOR_WAKE_CLASSES][SENSOR_WAKE_BUCKETS];

	t->wake->last_ns = now_ns;
	if (sensor_class_wake_hists(t->sensor, totals) < 0)
		return;
	for (unsigned c = 0; c < SENSOR_WAKE_CLASSES; c++)
		log2_window_push(&t->wake->window[c], totals[c]);
}

void tracker_wake_tick(struct tracker *t, uint64_t now_ns)
{
	/* Polling since (the sensor fell over): nothing to read. */
	if (!t->wake || !sensor_has_counters(t->sensor) ||
	    now_ns - t->wake->last_ns < WAKE_SNAP_USEC * 1000)
		return;
	snapshot(t, now_ns);
}

int tracker_wake_start(struct tracker *t)
{
	if (!sensor_has_counters(t->sensor))
		return 0;
	t->wake = calloc(1, sizeof(*t->wake));
	if (!t->wake)
		return -ENOMEM;
	snapshot(t, now_nsec(CLOCK_MONOTONIC));
	return 0;
}

void tracker_wake_stop(struct tracker *t)
{
	free(t->wake);
	t->wake = NULL;
}

int tracker_wake_window(const struct tracker *t, unsigned cls, uint64_t ret[LOG2_HIST_BUCKETS])
{
	if (!t->wake || !sensor_has_counters(t->sensor))
		return -EOPNOTSUPP;
	if (cls >= SENSOR_WAKE_CLASSES)
		return -EINVAL;
	log2_window_sum(&t->wake->window[cls], ret);
	return 0;
}

int tracker_wake_json(cJSON *parent, const char *key, const uint64_t hist[LOG2_HIST_BUCKETS])
{
	cJSON *o = cJSON_AddObjectToObject(parent, key);

	if (!o || !cJSON_AddNumberToObject(o, "p50_us", (double)log2_hist_percentile(hist, 50) / 1000) ||
	    !cJSON_AddNumberToObject(o, "p99_us", (double)log2_hist_percentile(hist, 99) / 1000) ||
	    !cJSON_AddNumberToObject(o, "max_us", (double)log2_hist_max(hist) / 1000) ||
	    !cJSON_AddNumberToObject(o, "count", (double)log2_hist_count(hist)))
		return -ENOMEM;
	return 0;
}
