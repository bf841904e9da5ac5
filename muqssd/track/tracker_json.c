/* The task table as JSON, for the control socket. */
#include "tracker_private.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "time_util.h"

/* The bpf sensor's counters of the task, under "bpf" (absent with
 * another sensor, or before the task was first switched), with its wake
 * latency since it came in scope. A dump does
 * not keep a pidfd open for a task the tick does not read that way. */
static int add_counters(struct tracker *t, const struct tracked_task *task, cJSON *o)
{
	uint64_t now = now_nsec(CLOCK_MONOTONIC);
	struct sensor_counters c;
	uint64_t wake[SENSOR_WAKE_BUCKETS];
	char state[2] = "";
	cJSON *b;
	int fd = task->pidfd, r;

	if (!sensor_has_counters(t->sensor))
		return 0;
	if (fd < 0 && (fd = sensor_task_pidfd(task->tid)) < 0)
		return 0;
	r = sensor_counters(t->sensor, fd, now, &c);
	if (r == 0 && sensor_task_wake_hist(t->sensor, fd, wake) < 0)
		r = -ENOENT;
	if (fd != task->pidfd)
		close(fd);
	if (r < 0)
		return 0;
	state[0] = c.state;
	b = cJSON_AddObjectToObject(o, "bpf");
	if (!b || !cJSON_AddStringToObject(b, "state", state) ||
	    !cJSON_AddNumberToObject(b, "cpu_ns", (double)c.cpu_ns) ||
	    !cJSON_AddNumberToObject(b, "wait_ns", (double)c.wait_ns) ||
	    !cJSON_AddNumberToObject(b, "nvcsw", (double)c.nvcsw) ||
	    !cJSON_AddNumberToObject(b, "nivcsw", (double)c.nivcsw) ||
	    !cJSON_AddNumberToObject(b, "last_cpu", c.cpu) ||
	    !cJSON_AddNumberToObject(b, "wake_ago_ns", c.wake_ns ? (double)(now - c.wake_ns) : -1) ||
	    !cJSON_AddNumberToObject(b, "run_ago_ns", c.run_ns ? (double)(now - c.run_ns) : -1) ||
	    tracker_wake_json(b, "wake_latency", wake) < 0)
		return -ENOMEM;
	return 0;
}

static cJSON *task_json(const struct tracked_task *task)
{
	char state[2] = { task->state, '\0' };
	cJSON *o = cJSON_CreateObject();

	if (!o)
		return NULL;
	if (!cJSON_AddNumberToObject(o, "tid", task->tid) ||
	    !cJSON_AddNumberToObject(o, "tgid", task->tgid) ||
	    !cJSON_AddNumberToObject(o, "ppid", task->ppid) ||
	    !cJSON_AddNumberToObject(o, "uid", task->uid) ||
	    !cJSON_AddNumberToObject(o, "euid", task->euid) ||
	    !cJSON_AddNumberToObject(o, "gid", task->gid) ||
	    !cJSON_AddStringToObject(o, "comm", task->comm) ||
	    !(tracker_task_exe(task) ? cJSON_AddStringToObject(o, "exe", tracker_task_exe(task))
				     : cJSON_AddNullToObject(o, "exe")) ||
	    !cJSON_AddStringToObject(o, "state", state) ||
	    !cJSON_AddNumberToObject(o, "nice", task->nice) ||
	    !cJSON_AddNumberToObject(o, "policy", task->policy) ||
	    !cJSON_AddNumberToObject(o, "rt_priority", task->rt_priority) ||
	    !cJSON_AddNumberToObject(o, "last_cpu", task->last_cpu) ||
	    !cJSON_AddNumberToObject(o, "start_time", (double)task->start_time) ||
	    !cJSON_AddNumberToObject(o, "cpu_ns", (double)task->cpu_ns) ||
	    !cJSON_AddNumberToObject(o, "wait_ns", (double)task->wait_ns) ||
	    !cJSON_AddBoolToObject(o, "active", task->active)) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

int tracker_tids(struct tracker *t, pid_t **ret, size_t *n)
{
	struct task_list *lists[] = { &t->active, &t->idle };
	struct tracked_task *task;
	size_t i = 0, cap = tidmap_count(&t->tasks);
	pid_t *tids = malloc((cap ? cap : 1) * sizeof(*tids));

	if (!tids)
		return -ENOMEM;
	for (size_t l = 0; l < 2; l++)
		TAILQ_FOREACH(task, lists[l], list_link)
			if (i < cap)
				tids[i++] = task->tid;
	*ret = tids;
	*n = i;
	return 0;
}

int tracker_task_json(struct tracker *t, pid_t tid, cJSON **ret)
{
	struct tracked_task *task = tracker_lookup(t, tid);

	if (!task)
		return -ESRCH;
	*ret = task_json(task);
	if (*ret && add_counters(t, task, *ret) < 0) {
		cJSON_Delete(*ret);
		*ret = NULL;
	}
	return *ret ? 0 : -ENOMEM;
}
