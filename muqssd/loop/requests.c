/* What the control socket asks of the scheduler: class changes, queue
 * dumps, new tunables. */
#include "loop-internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "log.h"

struct set_class_req {
	struct loop *l;
	enum sched_class class;
	bool nice_set;
	int nice;
	int changed;
	int error;
};

static void set_class_one(struct tracked_task *tt, void *userdata)
{
	struct set_class_req *req = userdata;
	struct loop *l = req->l;
	struct managed_task *m = tt->sched_data;

	if (!m || !m->adopted || m->exempt) {
		req->error = -EPERM;
		return;
	}
	if (req->nice_set && req->nice != m->st.nice) {
		int r = managed_set_nice(l, m, req->nice);
		if (r < 0) {
			req->error = r;
			return;
		}
		sched_set_nice(l->core, &m->st, req->nice);
		tt->nice = req->nice; /* not the owner's renice */
	}
	managed_set_class(l, m, req->class);
	req->changed++;
}

int loop_set_class(struct loop *l, pid_t pid, pid_t tid, enum sched_class class, bool nice_set,
		   int nice, char *err, size_t errlen)
{
	struct set_class_req req = { l, class, nice_set, nice, 0, 0 };
	struct tracked_task *tt;

	if (class == SCHED_CLASS_RT) {
		snprintf(err, errlen, "muqssd does not grant RT; use iso");
		return -EINVAL;
	}
	if (nice_set && (nice < -20 || nice > 19)) {
		snprintf(err, errlen, "nice must be -20..19");
		return -ERANGE;
	}
	tt = l->src.ops->lookup(l->src.ctx, tid > 0 ? tid : pid);
	if (!tt || (tid > 0 && tt->tgid != pid && pid > 0)) {
		snprintf(err, errlen, "no such process in muqssd's scope: %d", (int)(tid > 0 ? tid : pid));
		return -ESRCH;
	}
	if (tid > 0)
		set_class_one(tt, &req);
	else
		l->src.ops->foreach_thread(l->src.ctx, tt->tgid, set_class_one, &req);
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

int loop_task_class(struct loop *l, pid_t tid)
{
	struct tracked_task *tt = l->src.ops->lookup(l->src.ctx, tid);
	struct managed_task *m = tt ? tt->sched_data : NULL;

	if (!tt)
		return -ESRCH;
	if (m && m->exempt)
		return SCHED_CLASS_RT;
	if (!m || !m->adopted)
		return SCHED_CLASS_NORMAL;
	return m->st.class;
}

int loop_owner_nice(struct loop *l, pid_t tid, int kernel_nice)
{
	struct tracked_task *tt = l->src.ops->lookup(l->src.ctx, tid);
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
	/* A hog as a member of a busy chatty group (chatty.c). */
	cJSON_AddBoolToObject(o, "group_hog", m && m->group_hog);
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

int loop_dump_queues(struct loop *l, int cpu, uint64_t now, cJSON *array)
{
	struct dump_ctx c = { .now = now };

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
		l->src.ops->foreach_active(l->src.ctx, dump_hog, &h);
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

void loop_config_from_tunables(const struct config_tunables *t, struct sched_config *c)
{
	sched_config_defaults(c);
	c->rr_interval_ms = t->rr_interval_ms;
	c->interactive = t->interactive;
	c->iso_cpu = t->iso_cpu;
	c->yield_type = (int)t->yield_type;
	c->iso_mode = t->iso_reading == ISO_READING_PER_CPU ? ISO_MODE_PER_CPU : ISO_MODE_MACHINE;
	c->tick_ns = TICK_ACTIVE_NS;
}

int loop_set_tunables(struct loop *l, const struct config_tunables *t)
{
	struct sched_config cfg;
	int r;

	loop_config_from_tunables(t, &cfg);
	cfg.seed = sched_get_config(l->core)->seed;
	r = sched_set_config(l->core, &cfg);
	if (r < 0)
		return log_error_errno(r, "new tunables refused by the scheduler: %m");
	l->src.ops->foreach(l->src.ctx, reslice, NULL);
	log_info("tunables: rr_interval %u ms, interactive %u, iso_cpu %u%%, iso reading %s",
		 t->rr_interval_ms, t->interactive, t->iso_cpu,
		 t->iso_reading == ISO_READING_PER_CPU ? "per-cpu" : "machine");
	return 0;
}
