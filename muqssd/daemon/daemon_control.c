/* Wires the control server to the daemon: each request type maps onto a
 * daemon_* call. */
#include "daemon.h"

#include <errno.h>

#include "control.h"
#include "log.h"
#include "tracker.h"

static int ctl_status(void *userdata, cJSON *obj)
{
	return daemon_status_json(userdata, obj);
}

static int ctl_task_ids(void *userdata, pid_t **ret, size_t *n)
{
	struct daemon *d = userdata;

	*n = 0;
	return d->tracker ? tracker_tids(d->tracker, ret, n) : (*ret = NULL, 0);
}

/* The tracker's object, with the class muqssd holds the task in, as
 * queues shows it. */
static int ctl_task_json(void *userdata, pid_t tid, cJSON **ret)
{
	struct daemon *d = userdata;
	int r, class;

	if (!d->tracker)
		return -ESRCH;
	r = tracker_task_json(d->tracker, tid, ret);
	if (r < 0)
		return r;
	class = daemon_task_class(d, tid);
	if (class < 0)
		class = SCHED_CLASS_NORMAL;
	if (!cJSON_AddStringToObject(*ret, "class", sched_class_name((enum sched_class)class))) {
		cJSON_Delete(*ret);
		*ret = NULL;
		return -ENOMEM;
	}
	return 0;
}

static int ctl_task_owner(void *userdata, pid_t tid, uid_t *uid, uid_t *euid)
{
	struct daemon *d = userdata;
	struct tracked_task *tt = d->tracker ? tracker_lookup(d->tracker, tid) : NULL;

	if (!tt)
		return -ESRCH;
	*uid = tt->uid;
	*euid = tt->euid;
	return 0;
}

static int ctl_dump_queues(void *userdata, int cpu, cJSON *array)
{
	return daemon_dump_queues(userdata, cpu, array);
}

/* A task new to the table is read off the loop: 0 until it is in. The
 * start time is checked against the table, which has read every event
 * queued before the request (the connector's source comes first). */
static int ctl_adopt(void *userdata, pid_t pid, pid_t tid, uint64_t start_time)
{
	struct daemon *d = userdata;
	pid_t id = tid > 0 ? tid : pid;
	struct tracked_task *tt;

	if (daemon_adopt(d, id, true) == 0)
		return 0;
	tt = d->tracker ? tracker_lookup(d->tracker, id) : NULL;
	if (tt && start_time != CONTROL_NO_START_TIME && tt->start_time != start_time)
		return -ESRCH;
	return 1;
}

static int ctl_set_class(void *userdata, pid_t pid, pid_t tid, enum sched_class class,
			 bool nice_set, int nice, char *err, size_t errlen)
{
	return daemon_set_class(userdata, pid, tid, class, nice_set, nice, err,
				errlen);
}

static void ctl_auth_view(void *userdata, struct auth_view *ret)
{
	daemon_auth_view(userdata, ret);
}

static struct config_tunables *ctl_tunables(void *userdata)
{
	struct daemon *d = userdata;

	return &d->config.tunables;
}

static void ctl_tunables_changed(void *userdata)
{
	daemon_tunables_changed(userdata);
}

static int ctl_reload(void *userdata)
{
	return daemon_reload(userdata);
}

static const struct control_ops ops = {
	.status = ctl_status,
	.task_ids = ctl_task_ids,
	.task_json = ctl_task_json,
	.task_owner = ctl_task_owner,
	.dump_queues = ctl_dump_queues,
	.adopt = ctl_adopt,
	.set_class = ctl_set_class,
	.auth_view = ctl_auth_view,
	.tunables = ctl_tunables,
	.tunables_changed = ctl_tunables_changed,
	.reload = ctl_reload,
};

int daemon_control_start(struct daemon *d)
{
	struct control_options opts = {
		.socket_path = d->config.socket_path,
		.socket_mode = d->config.socket_mode,
		.socket_group = d->config.socket_group,
		.admin_group = d->config.admin_group,
	};

	if (d->control)
		return 0;
	return control_server_new(&d->control, d->event, &opts, &ops, d);
}

void daemon_control_stop(struct daemon *d)
{
	d->control = control_server_free(d->control);
}
