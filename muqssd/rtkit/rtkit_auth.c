/* Who may ask what of rtkit, decided as rtkit-daemon does: the caller's uid
 * must own the thread. rtkit-daemon pins the thread by its start time, a
 * read of /proc's stat, which waits while the task is in an exec; we hold
 * its process by a pidfd opened before the reads instead. */
#include "rtkit.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "proc.h"
#include "task_auth.h"

#define PID_MAX_LIMIT 4194304

/* rtkit-daemon's rule: root may name any thread, a user only their own. */
static struct auth_caller caller_of(uid_t uid)
{
	return (struct auth_caller){ uid, uid == 0, RTKIT_MIN_NICE_LEVEL };
}

int rtkit_authorize(uid_t caller_uid, pid_t caller_pid, uint64_t process, uint64_t thread,
		    struct rtkit_target *ret, char *err, size_t errlen)
{
	const struct auth_caller who = caller_of(caller_uid);
	pid_t pid, tid, tgid;
	int r;

	ret->pidfd = -1;
	ret->uid = caller_uid;
	if (process == UINT64_MAX)
		process = (uint64_t)caller_pid;
	if (process == 0 || process > PID_MAX_LIMIT || thread > PID_MAX_LIMIT) {
		snprintf(err, errlen, "no such process");
		return -ESRCH;
	}
	pid = (pid_t)process;
	tid = thread ? (pid_t)thread : pid;
	/* First: what is read next is then of the process it holds, as long
	 * as that lives (rtkit_target_recheck()). */
	ret->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (ret->pidfd < 0) {
		snprintf(err, errlen, "no such process %d", (int)pid);
		return -ESRCH;
	}
	r = proc_tgid(tid, &tgid);
	if (r < 0 || tgid != pid) {
		snprintf(err, errlen, "no thread %d in process %d", (int)tid, (int)pid);
		return -ESRCH;
	}
	r = auth_owner(&who, pid, tid, err, errlen);
	if (r < 0)
		return r;
	ret->pid = pid;
	ret->tid = tid;
	return 0;
}

int rtkit_check_priority(uint32_t priority, char *err, size_t errlen)
{
	if (priority < 1 || priority > RTKIT_MAX_REALTIME_PRIORITY) {
		snprintf(err, errlen, "real-time priority %u is out of range 1..%d", priority,
			 RTKIT_MAX_REALTIME_PRIORITY);
		return -EPERM;
	}
	return 0;
}

int rtkit_check_nice(int32_t nice, char *err, size_t errlen)
{
	if (nice < RTKIT_MIN_NICE_LEVEL || nice > 19) {
		snprintf(err, errlen, "nice %d is out of range %d..19", nice, RTKIT_MIN_NICE_LEVEL);
		return -EPERM;
	}
	return 0;
}

int rtkit_target_recheck(const struct rtkit_target *t, char *err, size_t errlen)
{
	const struct auth_caller who = caller_of(t->uid);
	pid_t tgid;

	if (t->pidfd < 0 || syscall(SYS_pidfd_send_signal, t->pidfd, 0, NULL, 0) < 0 ||
	    proc_tgid(t->tid, &tgid) < 0 || tgid != t->pid) {
		snprintf(err, errlen, "thread %d is gone", (int)t->tid);
		return -ESRCH;
	}
	return auth_owner(&who, t->pid, t->tid, err, errlen);
}

const char *rtkit_error_name(int error)
{
	switch (error) {
	case -EPERM:
	case -EACCES:
	case -EBUSY:
		return "org.freedesktop.DBus.Error.AccessDenied";
	case -ENOMEM:
		return "org.freedesktop.DBus.Error.NoMemory";
	default:
		return "org.freedesktop.DBus.Error.Failed";
	}
}
