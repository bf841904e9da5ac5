/* Wake latency as the bpf sensor measures it in the kernel (sensor.h):
 * once a second each class's running histogram is snapshot, so the last
 * five seconds' percentiles are one subtraction away (log2_hist.h); and
 * the JSON that status and tasks --json show of it. */
#include "tracker_private.h"

#include <errno.h>
#include <stdlib.h>

#include "log.h"
#include "log2_hist.h"

#define WAKE_SNAP_USEC (1000 * 1000)

_Static_assert(SENSOR_WAKE_BUCKETS == LOG2_HIST_BUCKETS, "one histogram layout");

struct tracker_wake {
	sd_event_source *timer;
	struct log2_window window[SENSOR_WAKE_CLASSES];
};

static void snapshot(struct tracker *t)
{
	uint64_t totals[SENSOR_WAKE_BUCKETS];

	for (unsigned c = 0; c < SENSOR_WAKE_CLASSES; c++)
		if (sensor_class_wake_hist(t->sensor, c, totals) == 0)
			log2_window_push(&t->wake->window[c], totals);
}

static int on_snapshot(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct tracker *t = userdata;
	int r;

	/* Polling since (the sensor fell over): nothing to read. */
	if (!sensor_has_counters(t->sensor))
		return 0;
	snapshot(t);
	r = sd_event_source_set_time_relative(s, WAKE_SNAP_USEC);
	if (r >= 0)
		r = sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
	if (r < 0)
		log_warning_errno(r, "cannot re-arm the wake latency timer, ignoring: %m");
	return 0;
}

int tracker_wake_start(struct tracker *t)
{
	int r;

	if (!sensor_has_counters(t->sensor))
		return 0;
	t->wake = calloc(1, sizeof(*t->wake));
	if (!t->wake)
		return -ENOMEM;
	snapshot(t);
	r = sd_event_add_time_relative(t->event, &t->wake->timer, CLOCK_MONOTONIC,
				       WAKE_SNAP_USEC, 10 * 1000, on_snapshot, t);
	if (r < 0)
		return log_error_errno(r, "cannot arm the wake latency timer: %m");
	return 0;
}

void tracker_wake_stop(struct tracker *t)
{
	if (!t->wake)
		return;
	sd_event_source_disable_unref(t->wake->timer);
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
