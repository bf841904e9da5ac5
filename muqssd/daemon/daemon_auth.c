/* The daemon's side of auth_task(): which class it holds a task in and the
 * nice its owner set, for both doors (daemon_control.c, daemon_rtkit.c). */
#include "daemon.h"

#include <errno.h>

#include "loop.h"
#include "task_auth.h"
#include "tracker.h"

struct idle_check {
	struct loop *loop;
	int found;
};

static void idle_one(struct tracked_task *tt, void *userdata)
{
	struct idle_check *c = userdata;

	if (loop_task_class(c->loop, tt->tid) == SCHED_CLASS_IDLEPRIO)
		c->found = 1;
}

/* What muqssd holds the task in, not the kernel policy it shows. */
static int view_is_idleprio(void *userdata, pid_t pid, pid_t tid)
{
	struct daemon *d = userdata;
	struct idle_check c = { d->loop, 0 };
	int r;

	if (!d->loop)
		return -EOPNOTSUPP;
	if (tid > 0) {
		r = loop_task_class(d->loop, tid);
		return r < 0 ? r : r == SCHED_CLASS_IDLEPRIO;
	}
	if (!tracker_foreach_thread(d->tracker, pid, idle_one, &c))
		return -ESRCH;
	return c.found;
}

static int view_owner_nice(void *userdata, pid_t tid, int kernel_nice)
{
	return daemon_owner_nice(userdata, tid, kernel_nice);
}

void daemon_auth_view(struct daemon *d, struct auth_view *ret)
{
	*ret = (struct auth_view){ view_is_idleprio, view_owner_nice, d };
}
