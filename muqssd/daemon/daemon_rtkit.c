/* Wires the rtkit module to the daemon: a real-time request is a class
 * change to ISO, a high-priority one a nice in the class the thread has. */
#include "daemon.h"

#include <errno.h>
#include <stdio.h>

#include "log.h"
#include "rtkit.h"
#include "task_auth.h"
#include "tracker.h"

/* A thread just created is often not in the table yet: its reads are
 * made off the loop, and the request waits for them. One out of scope is
 * left to the class change to refuse. The table's entry must be a thread
 * of the process authorized: a tid reused elsewhere is not. */
static int rt_adopt(void *userdata, pid_t pid, pid_t tid)
{
	struct daemon *d = userdata;
	struct tracked_task *tt;

	if (daemon_adopt(d, tid, true) == 0)
		return 0;
	tt = d->tracker ? tracker_lookup(d->tracker, tid) : NULL;
	return tt && tt->tgid != pid ? -ESRCH : 1;
}

/* auth_task(), the control socket's rule, for a thread rtkit_authorize()
 * let through: root is the admin, as rtkit-daemon has it, and so may take
 * a thread out of IDLEPRIO through either door. */
static int rt_authorize(struct daemon *d, uid_t uid, pid_t pid, pid_t tid, enum sched_class class,
			bool nice_set, int nice, char *err, size_t errlen)
{
	const struct auth_caller who = { .uid = uid, .admin = uid == 0,
					 .nice_grant = RTKIT_MIN_NICE_LEVEL };
	const struct auth_request q = { pid, tid, class, nice_set, nice };
	struct auth_view view;

	daemon_auth_view(d, &view);
	return auth_task(&who, &view, &q, err, errlen);
}

static int rt_make_iso(void *userdata, uid_t uid, pid_t pid, pid_t tid, char *err, size_t errlen)
{
	int r = rt_authorize(userdata, uid, pid, tid, SCHED_CLASS_ISO, false, 0, err, errlen);

	if (r < 0)
		return r;
	return daemon_set_class(userdata, pid, tid, SCHED_CLASS_ISO, false, 0, err, errlen);
}

static int rt_set_nice(void *userdata, uid_t uid, pid_t pid, pid_t tid, int nice, char *err,
		       size_t errlen)
{
	int class = daemon_task_class(userdata, tid), r;

	if (class == -ESRCH) {
		snprintf(err, errlen, "no such process in muqssd's scope: %d", (int)tid);
		return class;
	}
	if (class == SCHED_CLASS_RT) {
		snprintf(err, errlen, "thread %d runs a real-time policy muqssd leaves alone",
			 (int)tid);
		return -EPERM;
	}
	r = rt_authorize(userdata, uid, pid, tid, (enum sched_class)class, true, nice, err, errlen);
	if (r < 0)
		return r;
	return daemon_set_class(userdata, pid, tid, (enum sched_class)class, true, nice, err, errlen);
}

int daemon_rtkit_start(struct daemon *d)
{
	static const struct rtkit_ops ops = {
		.adopt = rt_adopt,
		.make_iso = rt_make_iso,
		.set_nice = rt_set_nice,
	};
	int r;

	if (!d->config.rtkit || d->rtkit)
		return 0;
	/* Audio without rtkit still plays; the scheduler is what matters. */
	r = rtkit_server_new(&d->rtkit, d->event, &ops, d);
	if (r < 0)
		log_warning_errno(r, "rtkit: not serving %s: %m, ignoring", RTKIT_BUS_NAME);
	return 0;
}

void daemon_rtkit_stop(struct daemon *d)
{
	d->rtkit = rtkit_server_free(d->rtkit);
}
