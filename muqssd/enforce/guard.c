/* The guard every lever goes through: which task a target names now
 * (pidfd, start time), the refusals (PID 1, kernel threads, ourselves,
 * foreign RT), and the state record written before any change. */
#include "enforce-internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <unistd.h>

#include "log.h"
#include "state_dir.h"
#include "time_util.h"

const char *enforce_refusal_to_string(enum enforce_refusal r)
{
	switch (r) {
	case ENFORCE_REFUSAL_PID1: return "PID 1 is never touched";
	case ENFORCE_REFUSAL_KTHREAD: return "kernel threads are never touched";
	case ENFORCE_REFUSAL_SELF: return "muqssd does not touch itself";
	case ENFORCE_REFUSAL_FOREIGN_RT:
		return "the task has a realtime or deadline policy set by someone else";
	case ENFORCE_REFUSAL_RT_GROUP:
		return "RT group scheduling gives the task's cgroup no RT budget";
	default: return "not refused";
	}
}

int enforcer_refuse(struct enforcer *e, pid_t tid, enum enforce_refusal why)
{
	e->last_refusal = why;
	log_debug("task %d: %s, leaving it alone", (int)tid, enforce_refusal_to_string(why));
	return -EPERM;
}

void enforcer_unlink(struct enforcer *e, struct enforce_task *t)
{
	struct enforce_task **p = &e->buckets[(unsigned)t->rec.tid % ENFORCE_BUCKETS];

	for (; *p; p = &(*p)->next)
		if (*p == t) {
			enforce_dm_release(e, &t->dm_boost);
			enforce_dm_release(e, &t->dm_stop);
			enforce_dm_release(e, &t->dm_slice);
			enforce_dm_release(e, &t->dm_pin);
			if (t->pidfd >= 0)
				close(t->pidfd);
			*p = t->next;
			e->count--;
			free(t);
			return;
		}
}

struct enforce_task *enforcer_find(struct enforcer *e, pid_t tid)
{
	struct enforce_task *t = e->buckets[(unsigned)tid % ENFORCE_BUCKETS];

	while (t && t->rec.tid != tid)
		t = t->next;
	return t;
}

/* The guards live here, in the effector, whatever the caller checked.
 * pidfd (or -1) is the task's, taken by the caller, kept by the record. */
static int task_record_new(struct enforcer *e, const struct enforce_target *target,
			   const struct task_stat *st, int pidfd, struct enforce_task **ret)
{
	struct sched_attr_v1 a;
	struct enforce_task *t;
	int r;

	if (st->flags & TASK_PF_KTHREAD)
		return enforcer_refuse(e, target->tid, ENFORCE_REFUSAL_KTHREAD);
	r = sched_attr_get(target->tid, &a);
	if (r < 0)
		return r;
	if (sched_policy_is_rt((int)a.sched_policy))
		return enforcer_refuse(e, target->tid, ENFORCE_REFUSAL_FOREIGN_RT);
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	if (sched_getaffinity(target->tid, sizeof(t->rec.affinity), &t->rec.affinity) < 0) {
		r = -errno;
		free(t);
		return r;
	}
	t->rec.tid = target->tid;
	t->rec.tgid = target->tgid;
	t->rec.start_time = target->start_time;
	t->rec.created_ns = now_nsec(CLOCK_BOOTTIME);
	memcpy(t->rec.boot_id, e->boot_id, sizeof(t->rec.boot_id));
	t->rec.policy = (int)a.sched_policy;
	t->rec.nice = a.sched_nice;
	t->rec.reset_on_fork = a.sched_flags & SCHED_FLAG_RESET_ON_FORK;
	t->rec.slice_ns = e->slice_supported ? a.sched_runtime : 0;
	t->nice = t->rec.nice;
	t->slice_ns = t->rec.slice_ns;
	t->pidfd = pidfd;
	t->next = e->buckets[(unsigned)target->tid % ENFORCE_BUCKETS];
	e->buckets[(unsigned)target->tid % ENFORCE_BUCKETS] = t;
	e->count++;
	*ret = t;
	return 0;
}

/* A task not recorded yet, named without reading its stat (which waits on
 * a task mid-exec), when the caller has proof of its identity: a thread
 * pidfd first, then a read through the caller's /proc file of the task.
 * -EOPNOTSUPP without proof or thread pidfds (6.9): the caller reads
 * stat. */
void enforcer_set_identity_source(struct enforcer *e, enforce_identity_func_t fn, void *ctx)
{
	e->identity_of = fn;
	e->identity_ctx = ctx;
}

/* The sensor's proof: the pidfd's task has the target's start time and
 * process, so it is that task (a tid and a start time name one task a
 * boot). It never tells one for a kernel thread. -EOPNOTSUPP when it
 * cannot say, or says otherwise: stat is then read, the judge of record. */
static int sensor_proof(struct enforcer *e, const struct enforce_target *target, int fd)
{
	uint64_t start;
	pid_t tgid;

	if (!e->identity_of || e->identity_of(e->identity_ctx, fd, &start, &tgid) < 0 ||
	    start != target->start_time || tgid != target->tgid)
		return -EOPNOTSUPP;
	return 0;
}

static int task_identify(struct enforcer *e, const struct enforce_target *target,
			 struct task_stat *st, int *ret_fd)
{
	struct sched_attr_v1 a;
	bool kthread = false;
	pid_t tgid;
	int fd, r;

	if (!target->has_proof && !e->identity_of)
		return -EOPNOTSUPP;
	fd = pidfd_open(target->tid, PIDFD_THREAD);
	if (fd < 0)
		return errno == ESRCH ? -ESRCH : -EOPNOTSUPP;
	if (target->has_proof) {
		/* Read after the pidfd was taken: the task that owned tid when
		 * its start time was checked still does, so the pidfd is of
		 * that task. */
		r = task_status_pread(target->proof_fd, &tgid, &kthread);
		if (r == 0 && tgid != target->tgid)
			r = -ESRCH;
	} else {
		r = sensor_proof(e, target, fd);
		if (r == -EOPNOTSUPP) {
			close(fd);
			return r;
		}
	}
	if (r == 0)
		r = sched_attr_get(target->tid, &a);
	if (r < 0) {
		close(fd);
		return r == -EBADMSG ? -EOPNOTSUPP : r;
	}
	memset(st, 0, sizeof(*st));
	st->flags = kthread ? TASK_PF_KTHREAD : 0;
	st->start_time = target->start_time;
	st->policy = a.sched_policy;
	*ret_fd = fd;
	return 0;
}

int enforcer_task(struct enforcer *e, const struct enforce_target *target, bool create,
		  struct enforce_task **ret, struct task_stat *st)
{
	struct enforce_task *t;
	int r, pidfd = -1;

	*ret = NULL;
	if (target->tid <= 0 || target->tgid <= 0)
		return -EINVAL;
	if (target->tgid == 1 || target->tid == 1)
		return enforcer_refuse(e, target->tid, ENFORCE_REFUSAL_PID1);
	if (target->tgid == e->self)
		return enforcer_refuse(e, target->tid, ENFORCE_REFUSAL_SELF);
	t = enforcer_find(e, target->tid);
	if (t && (t->rec.start_time != target->start_time || t->rec.tgid != target->tgid)) {
		/* The tid was reused and we missed the exit: the old record is moot. */
		(void)state_remove(e->dir_fd, t->rec.tid);
		enforcer_unlink(e, t);
		t = NULL;
	}
	if (t && t->pidfd >= 0) {
		/* Known, and held by a pidfd: no /proc read at all. */
		struct sched_attr_v1 a;

		r = enforce_task_check(t);
		if (r == 0)
			r = sched_attr_get(target->tid, &a);
		if (r < 0)
			return r;
		memset(st, 0, sizeof(*st));
		st->start_time = target->start_time;
		st->policy = a.sched_policy;
		*ret = t;
		return 0;
	}
	if (!t && !create)
		return 0;
	if (t) {
		/* Recorded without a pidfd: kernels before thread pidfds. */
		r = task_stat_read(target->tgid, target->tid, st);
		if (r < 0)
			return r;
		if (st->start_time != target->start_time)
			return -ESRCH;
		*ret = t;
		return 0;
	}
	r = task_identify(e, target, st, &pidfd);
	if (r == -EOPNOTSUPP) {
		/* The pidfd first: once stat shows the start time, it is of
		 * this task. */
		pidfd = pidfd_open(target->tid, PIDFD_THREAD);
		r = task_stat_read(target->tgid, target->tid, st);
		if (r == 0 && st->start_time != target->start_time)
			r = -ESRCH;
	}
	if (r < 0) {
		if (pidfd >= 0)
			close(pidfd);
		return r;
	}
	r = task_record_new(e, target, st, pidfd, &t);
	if (r < 0) {
		if (pidfd >= 0)
			close(pidfd);
		return r;
	}
	*ret = t;
	return 0;
}

bool enforcer_no_room(struct enforcer *e, pid_t tid, enum enforce_room what)
{
	const struct enforce_task *t;

	if (!e->deadman || !deadman_full(e->deadman)) {
		e->dm_full_told = false;
		return false;
	}
	/* A task already pinned (boosted) goes on: its change may need no
	 * new slot, and where it does the note itself says no. */
	t = enforcer_find(e, tid);
	if (t && (what == ENFORCE_ROOM_PIN ? t->pinned : t->dm_boost))
		return false;
	if (!e->dm_full_told) {
		e->dm_full_told = true;
		log_warning("the deadman's table is full (%d boosts, pins, slices and stops to "
			    "undo): new boosts and pins are refused until some end",
			    DEADMAN_SLOTS);
	}
	return true;
}

int enforcer_mark(struct enforcer *e, struct enforce_task *t, unsigned bits, bool force)
{
	int r;

	if ((t->rec.changed & bits) == bits && !force)
		return 0;
	t->rec.changed |= bits;
	/* A stale file of a dead tid by that number is replaced as a rewrite. */
	r = -EEXIST;
	if (!t->on_disk)
		r = state_write_new(e->dir_fd, &t->rec);
	if (r == -EEXIST)
		r = state_write(e->dir_fd, &t->rec);
	if (r == 0)
		t->on_disk = true;
	if (r < 0)
		/* No record, no change: that is what crash safety means. */
		return log_error_errno(r, "cannot write the state record of task %d: %m",
				       (int)t->rec.tid);
	return 1;
}

int enforce_task_check(const struct enforce_task *t)
{
	if (t->pidfd < 0)
		return task_verify(t->rec.tgid, t->rec.tid, t->rec.start_time);
	if (pidfd_send_signal(t->pidfd, 0, NULL, 0) < 0)
		return errno == EPERM ? 0 : -ESRCH;
	return 0;
}

void enforce_dm_release(struct enforcer *e, int *slot)
{
	if (*slot)
		deadman_release(e->deadman, *slot - 1);
	*slot = 0;
}
