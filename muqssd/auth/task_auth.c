/* The rules of task_auth.h, read from /proc's status and limits, which
 * never wait on the task (the doors call this on the daemon's loop). */
#include "task_auth.h"

#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "proc.h"

struct check {
	const struct auth_caller *who;
	const struct auth_view *view;
	const struct auth_request *q;
	unsigned long rlimit_nice;
	char *err;
	size_t errlen;
};

typedef int (*thread_check_func_t)(struct check *c, pid_t tid);

/* fn on the request's thread, or on every thread of its process: the
 * first non-zero answer. A thread gone midway (fn's -ESRCH) is passed
 * over, as it changes nothing. */
static int each_thread(struct check *c, thread_check_func_t fn)
{
	pid_t pid = c->q->pid, tid = c->q->tid;
	char path[64];
	struct dirent *de;
	DIR *dir;
	int r = 0;

	if (tid > 0)
		return fn(c, tid);
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	if (!dir) {
		snprintf(c->err, c->errlen, "no such process: %d", (int)pid);
		return -ESRCH;
	}
	while (r == 0 && (de = readdir(dir))) {
		int t = atoi(de->d_name);

		if (t > 0) {
			r = fn(c, t);
			if (r == -ESRCH && t != pid)
				r = 0;
		}
	}
	closedir(dir);
	return r;
}

int auth_owner(const struct auth_caller *who, pid_t pid, pid_t tid, char *err, size_t errlen)
{
	pid_t target = tid > 0 ? tid : pid;
	uid_t owner;
	int r;

	r = proc_real_uid(pid, tid, &owner);
	if (r < 0) {
		snprintf(err, errlen, "no such process: %d", (int)target);
		return -ESRCH;
	}
	if (who->admin || owner == who->uid)
		return 0;
	if (tid > 0 && tid != pid)
		snprintf(err, errlen, "permission denied: thread %d of pid %d belongs to uid %u",
			 (int)tid, (int)pid, (unsigned)owner);
	else
		snprintf(err, errlen, "permission denied: pid %d belongs to uid %u", (int)pid,
			 (unsigned)owner);
	return -EPERM;
}

static int check_owner(struct check *c, pid_t tid)
{
	return auth_owner(c->who, c->q->pid, tid, c->err, c->errlen);
}

/* The kernel's view, when the daemon has none: 1 when SCHED_IDLE. */
static int check_kernel_idle(struct check *c, pid_t tid)
{
	int p = sched_getscheduler(tid);

	if (p < 0)
		return -errno;
	return (p & ~SCHED_RESET_ON_FORK) == SCHED_IDLE;
}

static int is_idleprio(struct check *c)
{
	const struct auth_view *v = c->view;
	int r = v && v->is_idleprio ? v->is_idleprio(v->userdata, c->q->pid, c->q->tid)
				    : -EOPNOTSUPP;

	return r == -EOPNOTSUPP ? each_thread(c, check_kernel_idle) : r;
}

/* What setpriority(2) would allow the owner for one thread: raising its
 * nice always, lowering it only as far as the process's RLIMIT_NICE (or
 * the door's grant). The thread's nice is the one its owner set, not the
 * daemon's translation. */
static int check_nice(struct check *c, pid_t tid)
{
	const struct auth_view *v = c->view;
	unsigned long rlim = c->rlimit_nice;
	int nice = c->q->nice, cur;

	errno = 0;
	cur = getpriority(PRIO_PROCESS, (id_t)tid);
	if (cur == -1 && errno)
		return 0; /* gone (ESRCH): nothing to renice */
	if (v && v->owner_nice)
		cur = v->owner_nice(v->userdata, tid, cur);
	if (nice >= cur || (unsigned long)(20 - nice) <= rlim || nice >= c->who->nice_grant)
		return 0;
	snprintf(c->err, c->errlen,
		 "permission denied: lowering nice of thread %d from %d to %d needs root "
		 "(RLIMIT_NICE %lu allows %d)", (int)tid, cur, nice, rlim,
		 rlim >= 40 ? -20 : 20 - (int)rlim);
	return -EPERM;
}

int auth_task(const struct auth_caller *who, const struct auth_view *view,
	      const struct auth_request *q, char *err, size_t errlen)
{
	struct check c = { who, view, q, 0, err, errlen };
	pid_t target = q->tid > 0 ? q->tid : q->pid;
	int r;

	if (who->admin)
		return 0;
	r = each_thread(&c, check_owner);
	if (r < 0)
		return r;
	/* As in MuQSS: anyone may drop to IDLEPRIO, only root may climb out. */
	if (q->class != SCHED_CLASS_IDLEPRIO) {
		r = is_idleprio(&c);
		if (r == -ESRCH) {
			snprintf(err, errlen, "no such process: %d", (int)target);
			return r;
		}
		if (r < 0) {
			snprintf(err, errlen, "cannot tell whether %d is in idleprio", (int)target);
			return r;
		}
		if (r > 0) {
			snprintf(err, errlen, "permission denied: leaving idleprio needs root (pid %d)",
				 (int)target);
			return -EPERM;
		}
	}
	if (!q->nice_set)
		return 0;
	if (proc_rlimit_nice(q->pid, &c.rlimit_nice) < 0) {
		snprintf(err, errlen, "no such process: %d", (int)target);
		return -ESRCH;
	}
	return each_thread(&c, check_nice);
}
