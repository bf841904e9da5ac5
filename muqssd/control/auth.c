/* Who is calling, read once at accept, and what they may do to a task. */
#include "control-internal.h"
#include "auth.h"

#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "log.h"
#include "proc.h"

bool peer_in_group(int fd, gid_t gid)
{
	gid_t groups[256];
	socklen_t len = sizeof(groups);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) < 0)
		return false;
	for (size_t i = 0; i < len / sizeof(gid_t); i++)
		if (groups[i] == gid)
			return true;
	return false;
}

void auth_read_peer(struct control_client *c, gid_t admin_gid, gid_t socket_gid)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	/* Unknown credentials get nobody's rights. */
	c->uid = (uid_t)-1;
	c->gid = (gid_t)-1;
	if (getsockopt(c->fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0) {
		c->uid = cred.uid;
		c->gid = cred.gid;
		c->pid = cred.pid;
	} else {
		log_warning_errno(errno, "cannot read a control client's credentials: %m, ignoring");
	}
	c->admin = c->uid == 0 ||
		   (admin_gid != (gid_t)-1 && (c->gid == admin_gid || peer_in_group(c->fd, admin_gid)));
	c->privileged = c->admin || (socket_gid != (gid_t)-1 && (c->gid == socket_gid ||
								  peer_in_group(c->fd, socket_gid)));
}

/* The kernel's view, when the daemon cannot tell: any thread SCHED_IDLE. */
static int kernel_is_idle(pid_t pid, pid_t tid)
{
	char path[64];
	struct dirent *de;
	DIR *dir;
	int r = 0;

	if (tid > 0) {
		r = sched_getscheduler(tid);
		if (r < 0)
			return -errno;
		return (r & ~SCHED_RESET_ON_FORK) == SCHED_IDLE;
	}
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	if (!dir)
		return errno == ENOENT ? -ESRCH : -errno;
	while ((de = readdir(dir))) {
		int t = atoi(de->d_name), p;
		if (t <= 0)
			continue;
		p = sched_getscheduler(t);
		if (p >= 0 && (p & ~SCHED_RESET_ON_FORK) == SCHED_IDLE) {
			r = 1;
			break;
		}
	}
	closedir(dir);
	return r;
}

/* What setpriority(2) would allow the owner for one thread: raising its
 * nice always, lowering it only as far as the process's RLIMIT_NICE. The
 * thread's nice is the one its owner set, not the daemon's translation. */
static int check_thread_nice(struct control_client *c, pid_t tid, int nice,
			     unsigned long rlim, char *err, size_t errlen)
{
	struct control_server *s = c->server;
	int cur;

	errno = 0;
	cur = getpriority(PRIO_PROCESS, (id_t)tid);
	if (cur == -1 && errno)
		return 0; /* gone (ESRCH): nothing to renice */
	if (s->ops.owner_nice)
		cur = s->ops.owner_nice(s->userdata, tid, cur);
	if (nice >= cur || (unsigned long)(20 - nice) <= rlim)
		return 0;
	snprintf(err, errlen,
		 "permission denied: lowering nice of thread %d from %d to %d needs root "
		 "(RLIMIT_NICE %lu allows %d)", (int)tid, cur, nice, rlim,
		 rlim >= 40 ? -20 : 20 - (int)rlim);
	return -EPERM;
}

static int check_nice(struct control_client *c, pid_t pid, pid_t tid, int nice, char *err,
		      size_t errlen)
{
	char path[64];
	unsigned long rlim;
	struct dirent *de;
	DIR *dir;
	int r;

	r = proc_rlimit_nice(pid, &rlim);
	if (r < 0) {
		snprintf(err, errlen, "no such process: %d", (int)(tid > 0 ? tid : pid));
		return -ESRCH;
	}
	if (tid > 0)
		return check_thread_nice(c, tid, nice, rlim, err, errlen);
	/* A whole-process request renices every thread: each must allow it. */
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	if (!dir) {
		snprintf(err, errlen, "no such process: %d", (int)pid);
		return -ESRCH;
	}
	r = 0;
	while (r == 0 && (de = readdir(dir))) {
		int t = atoi(de->d_name);

		if (t > 0)
			r = check_thread_nice(c, t, nice, rlim, err, errlen);
	}
	closedir(dir);
	return r;
}

int auth_set_class(struct control_client *c, pid_t pid, pid_t tid, enum sched_class class,
		   bool nice_set, int nice, char *err, size_t errlen)
{
	struct control_server *s = c->server;
	pid_t target = tid > 0 ? tid : pid;
	uid_t owner;
	int r;

	if (c->admin)
		return 0;
	r = proc_real_uid(pid, tid, &owner);
	if (r < 0) {
		snprintf(err, errlen, "no such process: %d", (int)target);
		return r == -ESRCH ? -ESRCH : r;
	}
	if (owner != c->uid) {
		snprintf(err, errlen, "permission denied: pid %d belongs to uid %u", (int)target,
			 (unsigned)owner);
		return -EPERM;
	}
	/* As in MuQSS: anyone may drop to IDLEPRIO, only root may climb out. */
	if (class != SCHED_CLASS_IDLEPRIO) {
		r = s->ops.is_idleprio ? s->ops.is_idleprio(s->userdata, pid, tid) : -EOPNOTSUPP;
		if (r == -EOPNOTSUPP)
			r = kernel_is_idle(pid, tid);
		if (r == -ESRCH) {
			snprintf(err, errlen, "no such process: %d", (int)target);
			return r;
		}
		if (r > 0) {
			snprintf(err, errlen, "permission denied: leaving idleprio needs root (pid %d)",
				 (int)target);
			return -EPERM;
		}
	}
	if (nice_set)
		return check_nice(c, pid, tid, nice, err, errlen);
	return 0;
}
