/* What the control socket asks of the scheduler: class changes, queue
 * dumps, new tunables. */
#include "daemon.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "sched_loop.h"
#include "time_util.h"

struct set_class_req {
	struct daemon *d;
	enum muqss_class class;
	bool nice_set;
	int nice;
	int changed;
	int error;
};

static void set_class_one(struct tracked_task *tt, void *userdata)
{
	struct set_class_req *req = userdata;
	struct sched_loop *l = req->d->loop;
	struct managed_task *m = tt->sched_data;

	if (!m || !m->adopted || m->exempt) {
		req->error = -EPERM;
		return;
	}
	if (req->nice_set && req->nice != m->st.nice) {
		int r = enforce_set_nice(l->enf, &m->target, req->nice);
		if (r < 0) {
			req->error = r;
			return;
		}
		sched_set_nice(l->core, &m->st, req->nice);
	}
	managed_set_class(l, m, req->class);
	req->changed++;
}

int daemon_set_class(struct daemon *d, pid_t pid, pid_t tid, enum muqss_class class,
		     bool nice_set, int nice, char *err, size_t errlen)
{
	struct set_class_req req = { d, class, nice_set, nice, 0, 0 };
	struct tracked_task *tt;

	if (!d->loop) {
		snprintf(err, errlen, "the scheduler is not running");
		return -EAGAIN;
	}
	if (class == MUQSS_CLASS_RT) {
		snprintf(err, errlen, "muqssd does not grant RT; use iso");
		return -EINVAL;
	}
	if (nice_set && (nice < -20 || nice > 19)) {
		snprintf(err, errlen, "nice must be -20..19");
		return -ERANGE;
	}
	tt = tracker_lookup(d->tracker, tid > 0 ? tid : pid);
	if (!tt || (tid > 0 && tt->tgid != pid && pid > 0)) {
		snprintf(err, errlen, "no such process in muqssd's scope: %d", (int)(tid > 0 ? tid : pid));
		return -ESRCH;
	}
	if (tid > 0)
		set_class_one(tt, &req);
	else
		tracker_foreach_thread(d->tracker, tt->tgid, set_class_one, &req);
	if (!req.changed) {
		if (req.error == -EPERM)
			snprintf(err, errlen, "%d is exempt from muqssd (real-time policy or config exemption)",
				 (int)(tid > 0 ? tid : pid));
		else
			snprintf(err, errlen, "cannot change %d: %s", (int)(tid > 0 ? tid : pid),
				 strerror(-req.error));
		return req.error ? req.error : -ESRCH;
	}
	return 0;
}

enum muqss_class daemon_task_class(struct daemon *d, pid_t tid)
{
	struct tracked_task *tt = d->tracker ? tracker_lookup(d->tracker, tid) : NULL;
	struct managed_task *m = tt ? tt->sched_data : NULL;

	if (!m || !m->adopted)
		return MUQSS_CLASS_NORMAL;
	if (m->exempt)
		return MUQSS_CLASS_RT;
	return m->class;
}

int daemon_owner_nice(struct daemon *d, pid_t tid, int kernel_nice)
{
	struct tracked_task *tt = d->tracker ? tracker_lookup(d->tracker, tid) : NULL;
	struct managed_task *m = tt ? tt->sched_data : NULL;

	if (m && m->kernel_nice != NICE_UNSET && kernel_nice == m->kernel_nice)
		return m->st.nice;
	return kernel_nice;
}

struct dump_ctx {
	cJSON *queue;
	uint64_t now;
	int err;
};

static void dump_task(const struct sched_task *st, void *userdata)
{
	struct dump_ctx *c = userdata;
	const struct managed_task *m = st->data;
	cJSON *o = cJSON_CreateObject();

	if (!o || !cJSON_AddItemToArray(c->queue, o)) {
		cJSON_Delete(o);
		c->err = -ENOMEM;
		return;
	}
	cJSON_AddNumberToObject(o, "tid", (double)st->id);
	cJSON_AddNumberToObject(o, "pid", m ? m->target.tgid : 0);
	cJSON_AddStringToObject(o, "comm", m && m->tt ? m->tt->comm : "");
	cJSON_AddStringToObject(o, "class", sched_class_name(st->class));
	cJSON_AddBoolToObject(o, "running", st->running);
	cJSON_AddBoolToObject(o, "boosted", m && m->boost_prio > 0);
	cJSON_AddBoolToObject(o, "hog", m && m->hog);
	cJSON_AddNumberToObject(o, "key", (double)st->key);
	cJSON_AddNumberToObject(o, "deadline_rel_ns", (double)((int64_t)(st->dl.deadline - c->now)));
	cJSON_AddNumberToObject(o, "slice_left_ns", (double)st->dl.slice_ns);
	cJSON_AddNumberToObject(o, "nice", st->nice);
}

struct hog_ctx {
	struct dump_ctx *c;
	int cpu;
};

/* Hogs share through the fair class, outside the core's queues; they are
 * listed after the queue, on the CPU they last ran on. */
static void dump_hog(struct tracked_task *tt, void *userdata)
{
	struct hog_ctx *h = userdata;
	struct managed_task *m = tt->sched_data;

	if (m && m->adopted && !m->exempt && m->hog && tt->last_cpu == h->cpu)
		dump_task(&m->st, h->c);
}

int daemon_dump_queues(struct daemon *d, int cpu, cJSON *array)
{
	struct sched_loop *l = d->loop;
	struct dump_ctx c = { .now = now_nsec(CLOCK_MONOTONIC) };

	if (!l)
		return 0;
	if (cpu >= l->nr_cpus)
		return -EINVAL;
	for (int i = 0; i < l->nr_cpus; i++) {
		struct sched_task *curr;
		cJSON *o;

		if (cpu >= 0 && i != cpu)
			continue;
		o = cJSON_CreateObject();
		if (!o || !cJSON_AddItemToArray(array, o)) {
			cJSON_Delete(o);
			return -ENOMEM;
		}
		cJSON_AddNumberToObject(o, "cpu", (double)topology_os_index(sched_topology(l->core), i));
		cJSON_AddNumberToObject(o, "iso_percent", sched_iso_percent(l->core, i));
		c.queue = cJSON_AddArrayToObject(o, "queue");
		if (!c.queue)
			return -ENOMEM;
		curr = sched_running(l->core, i);
		if (curr)
			dump_task(curr, &c);
		sched_foreach_queued(l->core, i, dump_task, &c);
		struct hog_ctx h = { &c, (int)topology_os_index(sched_topology(l->core), i) };
		tracker_foreach_active(d->tracker, dump_hog, &h);
		if (c.err)
			return c.err;
	}
	return 0;
}

static void reslice(struct tracked_task *tt, void *userdata)
{
	struct managed_task *m = tt->sched_data;

	if (m)
		m->slice_set = false;
}

void daemon_tunables_changed(struct daemon *d)
{
	struct sched_loop *l = d->loop;
	const struct config_tunables *t = &d->config.tunables;
	struct sched_config cfg;
	int r;

	if (!l)
		return;
	cfg = *sched_get_config(l->core);
	cfg.rr_interval_ms = t->rr_interval_ms;
	cfg.interactive = t->interactive;
	cfg.iso_cpu = t->iso_cpu;
	cfg.yield_type = (int)t->yield_type;
	cfg.iso_mode = t->iso_reading == ISO_READING_PER_CPU ? ISO_MODE_PER_CPU : ISO_MODE_MACHINE;
	r = sched_set_config(l->core, &cfg);
	tracker_foreach(d->tracker, reslice, NULL);
	if (r < 0)
		log_error_errno(r, "new tunables refused by the scheduler: %m");
	else
		log_info("tunables: rr_interval %u ms, interactive %u, iso_cpu %u%%, iso reading %s",
			 t->rr_interval_ms, t->interactive, t->iso_cpu,
			 t->iso_reading == ISO_READING_PER_CPU ? "per-cpu" : "machine");
}
