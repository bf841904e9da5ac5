/* Wires the task tracker into the daemon: its events go to the loop. */
#include "daemon.h"

#include <errno.h>

#include "enforce.h"
#include "log.h"
#include "core/task.h"
#include "tracker.h"

static void on_recovered(struct tracker *t, void *userdata)
{
	struct daemon *d = userdata;

	d->counters.lost_event_recoveries = tracker_lost_recoveries(t);
	/* The end of a lock wait may be among what was lost. */
	daemon_loop_events_lost(d);
	daemon_notify_status(d);
}

static void on_task_new(struct tracked_task *task, void *userdata)
{
	log_debug("new tid=%d tgid=%d comm=%s", (int)task->tid, (int)task->tgid, task->comm);
	daemon_loop_task_new(userdata, task);
}

static void on_task_forked(struct tracked_task *parent, pid_t tid, pid_t tgid, uint64_t fork_ns,
			   void *userdata)
{
	daemon_loop_task_forked(userdata, parent, tid, tgid, fork_ns);
}

static void on_task_exec(struct tracked_task *task, void *userdata)
{
	daemon_loop_task_exec(userdata, task);
}

static void on_task_woke(struct tracked_task *task, void *userdata)
{
	daemon_loop_task_woke(userdata, task);
}

static void on_lock_wait(struct tracked_task *waiter, struct tracked_task *holder,
			 void *userdata)
{
	daemon_loop_lock_wait(userdata, waiter, holder);
}

static void on_task_exit(struct tracked_task *task, void *userdata)
{
	log_debug("exit tid=%d comm=%s", (int)task->tid, task->comm);
	daemon_loop_task_exit(userdata, task);
}

int daemon_track_start(struct daemon *d)
{
	static const struct tracker_callbacks cb = {
		.task_new = on_task_new,
		.task_forked = on_task_forked,
		.task_exec = on_task_exec,
		.task_exit = on_task_exit,
		.task_woke = on_task_woke,
		.lock_wait = on_lock_wait,
		.recovered = on_recovered,
	};
	int r;

	r = tracker_new(&d->tracker, d->event, &d->config, &cb, d);
	if (r < 0)
		return r;
	/* Above every boost, so a new task's read is never starved by one;
	 * below the loop, which it must never delay. */
	tracker_set_reader_priority(d->tracker, ENFORCE_DAEMON_PRIO - 1);
	r = tracker_start(d->tracker);
	if (r < 0)
		return log_error_errno(r, "cannot start task tracking: %m");
	return 0;
}

void daemon_track_stop(struct daemon *d)
{
	d->tracker = tracker_free(d->tracker);
}

/* "wake_latency": each class's over the last 5 s, classes without a
 * wakeup left out; null without the bpf sensor, which measures it. */
static int wake_latency_json(struct daemon *d, cJSON *obj)
{
	uint64_t hist[LOG2_HIST_BUCKETS];
	cJSON *w;

	if (!d->tracker || tracker_wake_window(d->tracker, 0, hist) < 0)
		return cJSON_AddNullToObject(obj, "wake_latency") ? 0 : -ENOMEM;
	w = cJSON_AddObjectToObject(obj, "wake_latency");
	if (!w)
		return -ENOMEM;
	for (int c = SCHED_CLASS_NORMAL; c <= SCHED_CLASS_RT; c++)
		if (tracker_wake_window(d->tracker, (unsigned)c, hist) == 0 && log2_hist_count(hist) &&
		    tracker_wake_json(w, sched_class_name((enum sched_class)c), hist) < 0)
			return -ENOMEM;
	return 0;
}

int daemon_tracking_status_json(struct daemon *d, cJSON *obj)
{
	cJSON *tr = cJSON_AddObjectToObject(obj, "tracking");

	if (!tr)
		return -ENOMEM;
	if (!d->tracker)
		return 0;
	cJSON_AddStringToObject(tr, "sensor", tracker_sensor(d->tracker));
	cJSON_AddNumberToObject(tr, "sensor_lost", (double)tracker_sensor_lost(d->tracker));
	cJSON_AddBoolToObject(tr, "polling", tracker_polling(d->tracker));
	cJSON_AddNumberToObject(tr, "events", (double)tracker_events(d->tracker));
	cJSON_AddNumberToObject(tr, "count", (double)tracker_count(d->tracker));
	cJSON_AddNumberToObject(tr, "active", (double)tracker_count_active(d->tracker));
	cJSON_AddNumberToObject(tr, "stat_reads_on_loop",
				(double)tracker_loop_stat_reads(d->tracker));
	cJSON_AddNumberToObject(tr, "stat_reads_deferred",
				(double)tracker_deferred_stat_reads(d->tracker));
	cJSON_AddNumberToObject(tr, "stats_told", (double)tracker_stats_told(d->tracker));
	cJSON_AddNumberToObject(tr, "reads_carried", (double)tracker_reads_carried(d->tracker));
	cJSON_AddNumberToObject(tr, "rules_undecided", (double)d->counters.rules_undecided);
	return wake_latency_json(d, obj);
}
