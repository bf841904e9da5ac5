/* The enforcer: which tasks we changed, their records, the guards. */
#include "enforce-internal.h"

#include <errno.h>
#include <sys/resource.h>
#include <fcntl.h>
#include <sys/pidfd.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "inherit_repair.h"
#include "log.h"
#include "sched_attr.h"
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

enum enforce_refusal enforcer_last_refusal(const struct enforcer *e)
{
	return e->last_refusal;
}

bool enforce_slice_supported(const struct enforcer *e)
{
	return e->slice_supported;
}

size_t enforcer_count(const struct enforcer *e)
{
	return e->count;
}

/* Each recorded task holds a pidfd: the soft limit of 1024 is for
 * select(), which nothing here uses. */
static void raise_fd_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
}

int enforcer_new(struct enforcer **ret, const char *state_dir)
{
	struct enforcer *e;
	int r;

	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->dir_fd = -1;
	e->self = getpid();
	raise_fd_limit();
	e->slice_supported = sched_slice_probe(&e->default_slice_ns);
	r = state_boot_id(e->boot_id);
	if (r < 0) {
		log_error_errno(r, "cannot read /proc/sys/kernel/random/boot_id: %m");
		goto fail;
	}
	r = state_dir_open(state_dir, true, &e->dir_fd);
	if (r < 0)
		goto fail;
	r = state_dir_lock(e->dir_fd);
	if (r < 0) {
		log_error_errno(r, "%s is in use by another muqssd: %m", state_dir);
		goto fail;
	}
	r = state_restore_all(e->dir_fd);
	if (r < 0)
		log_warning_errno(r, "could not restore every task a previous muqssd left, ignoring: %m");
	log_debug("EEVDF slice requests %s", e->slice_supported ? "supported" : "not supported");
	*ret = e;
	return 0;
fail:
	enforcer_free(e);
	return r;
}

static void task_unlink(struct enforcer *e, struct enforce_task *t)
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

struct enforcer *enforcer_free(struct enforcer *e)
{
	if (!e)
		return NULL;
	for (size_t i = 0; i < ENFORCE_BUCKETS; i++)
		while (e->buckets[i]) {
			struct enforce_task *t = e->buckets[i];

			e->buckets[i] = t->next;
			if (t->pidfd >= 0)
				close(t->pidfd);
			free(t);
		}
	if (e->dir_fd >= 0)
		close(e->dir_fd);
	free(e);
	return NULL;
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
static int task_identify(const struct enforce_target *target, struct task_stat *st, int *ret_fd)
{
	struct sched_attr_v1 a;
	bool kthread;
	pid_t tgid;
	int fd, r;

	if (!target->has_proof)
		return -EOPNOTSUPP;
	fd = pidfd_open(target->tid, PIDFD_THREAD);
	if (fd < 0)
		return errno == ESRCH ? -ESRCH : -EOPNOTSUPP;
	/* Read after the pidfd was taken: the task that owned tid when its
	 * start time was checked still does, so the pidfd is of that task. */
	r = task_status_pread(target->proof_fd, &tgid, &kthread);
	if (r == 0 && tgid != target->tgid)
		r = -ESRCH;
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
		task_unlink(e, t);
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
	r = task_identify(target, st, &pidfd);
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

int enforcer_mark(struct enforcer *e, struct enforce_task *t, unsigned bits, bool force)
{
	int r;

	if ((t->rec.changed & bits) == bits && !force)
		return 0;
	t->rec.changed |= bits;
	r = state_write(e->dir_fd, &t->rec);
	if (r < 0)
		/* No record, no change: that is what crash safety means. */
		return log_error_errno(r, "cannot write the state record of task %d: %m",
				       (int)t->rec.tid);
	return 1;
}

/* With inherit, what the task's offspring may have inherited from it is
 * noted for inherit_repair_run(). */
static int release(struct enforcer *e, const struct enforce_target *target,
		   struct inherit_repair *inherit)
{
	struct enforce_task *t = enforcer_find(e, target->tid);
	struct state_record rec;
	int r, q;

	if (!t)
		return 0;
	/* What its owner set since our last change is what goes back. A
	 * task gone fails these, and task_restore() then says so. */
	if (enforce_task_check(t) == 0) {
		(void)enforce_adopt_owner_base(e, t);
		if (t->pinned)
			(void)enforce_adopt_owner_mask(e, t);
	}
	/* Live, we know whether it is stopped now; the record only "ever". */
	rec = t->rec;
	rec.stopped = t->stopped;
	if (inherit && rec.created_ns)
		(void)inherit_repair_note(inherit, &rec, inherit_since_ticks(rec.created_ns));
	r = task_restore(&rec, e->slice_supported, e->default_slice_ns);
	q = state_remove(e->dir_fd, t->rec.tid);
	if (q < 0)
		log_warning_errno(q, "cannot remove the state record of task %d, ignoring: %m",
				  (int)t->rec.tid);
	task_unlink(e, t);
	return r;
}

int enforce_release(struct enforcer *e, const struct enforce_target *target)
{
	return release(e, target, NULL);
}

void enforce_forget(struct enforcer *e, pid_t tid)
{
	struct enforce_task *t = enforcer_find(e, tid);

	if (!t)
		return;
	(void)state_remove(e->dir_fd, tid);
	task_unlink(e, t);
}

/* On our way out. A task may fork between the last fork event we read
 * and its own restore here, and the child inherits our pin, SCHED_IDLE
 * or slice with no record and no event read: so, as a restore after a
 * crash does, each task's offspring are repaired once all are back (the
 * crash drill left one pinned about once in five runs). */
int enforcer_restore_all(struct enforcer *e)
{
	uint64_t now = now_nsec(CLOCK_BOOTTIME);
	/* Live, we read the forks around an unpin within about this. */
	struct inherit_repair inherit = { .slice_supported = e->slice_supported,
					  .default_slice_ns = e->default_slice_ns,
					  .unpins_after_ns = now > 1000000000ULL ? now - 1000000000ULL : 0 };
	unsigned repaired;
	int ret = 0, ag;

	for (size_t i = 0; i < ENFORCE_BUCKETS; i++)
		while (e->buckets[i]) {
			struct enforce_task *t = e->buckets[i];
			struct enforce_target target = {
				.tid = t->rec.tid,
				.tgid = t->rec.tgid,
				.start_time = t->rec.start_time,
			};
			int r = release(e, &target, &inherit);

			if (r < 0 && r != -ESRCH && ret == 0)
				ret = r;
		}
	repaired = inherit_repair_run(&inherit);
	if (repaired)
		log_info("put back %u task(s) that had inherited a pin, SCHED_IDLE or a slice "
			 "as we stopped", repaired);
	ag = autogroup_restore(e->dir_fd);
	return ret ? ret : ag;
}

int enforce_task_check(const struct enforce_task *t)
{
	if (t->pidfd < 0)
		return task_verify(t->rec.tgid, t->rec.tid, t->rec.start_time);
	if (pidfd_send_signal(t->pidfd, 0, NULL, 0) < 0)
		return errno == EPERM ? 0 : -ESRCH;
	return 0;
}

void enforcer_set_deadman(struct enforcer *e, struct deadman *d)
{
	e->deadman = d;
}

void enforce_dm_release(struct enforcer *e, int *slot)
{
	if (*slot)
		deadman_release(e->deadman, *slot - 1);
	*slot = 0;
}

void enforcer_drop_all_boosts(struct enforcer *e)
{
	for (size_t i = 0; i < ENFORCE_BUCKETS; i++)
		for (struct enforce_task *t = e->buckets[i]; t; t = t->next) {
			struct enforce_target target = { .tid = t->rec.tid, .tgid = t->rec.tgid,
							 .start_time = t->rec.start_time };

			/* The deadman undid these already; again from here, in
			 * case the loop was making one of them as it tripped. */
			if (t->boost_prio)
				(void)enforce_unboost_ours(e, &target);
			if (t->stopped)
				(void)enforce_cont(e, &target);
			t->boost_prio = 0;
			t->stopped = false;
			enforce_dm_release(e, &t->dm_boost);
			enforce_dm_release(e, &t->dm_stop);
			/* The deadman gave our slice and pin back: the loop
			 * sets them again where it still wants them. */
			if (t->dm_slice)
				(void)enforce_set_slice(e, &target, 0);
			if (t->pinned)
				(void)enforce_unpin(e, &target);
		}
}

int enforce_get_original(const struct enforcer *e, pid_t tid, struct enforce_original *ret)
{
	struct enforce_task *t = enforcer_find((struct enforcer *)e, tid);

	if (!t)
		return -ENOENT;
	ret->policy = t->rec.policy;
	ret->nice = t->rec.nice;
	ret->reset_on_fork = t->rec.reset_on_fork;
	ret->slice_ns = t->rec.slice_ns;
	ret->affinity = t->rec.affinity;
	return 0;
}

int enforce_target_from_tid(pid_t tid, struct enforce_target *ret)
{
	struct task_stat st;
	pid_t tgid;
	int r;

	r = task_read_tgid(tid, &tgid);
	if (r < 0)
		return r;
	r = task_stat_read(tgid, tid, &st);
	if (r < 0)
		return r;
	*ret = (struct enforce_target){ .tid = tid, .tgid = tgid, .start_time = st.start_time };
	return 0;
}
