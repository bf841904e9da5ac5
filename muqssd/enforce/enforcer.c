/* The enforcer: which tasks we changed, their records, the guards. */
#include "enforce-internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

int enforcer_new(struct enforcer **ret, const char *state_dir)
{
	struct enforcer *e;
	int r;

	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->dir_fd = -1;
	e->self = getpid();
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

/* The guards live here, in the effector, whatever the caller checked. */
static int task_record_new(struct enforcer *e, const struct enforce_target *target,
			   const struct task_stat *st, struct enforce_task **ret)
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
	t->next = e->buckets[(unsigned)target->tid % ENFORCE_BUCKETS];
	e->buckets[(unsigned)target->tid % ENFORCE_BUCKETS] = t;
	e->count++;
	*ret = t;
	return 0;
}

int enforcer_task(struct enforcer *e, const struct enforce_target *target, bool create,
		  struct enforce_task **ret, struct task_stat *st)
{
	struct enforce_task *t;
	int r;

	*ret = NULL;
	if (target->tid <= 0 || target->tgid <= 0)
		return -EINVAL;
	if (target->tgid == 1 || target->tid == 1)
		return enforcer_refuse(e, target->tid, ENFORCE_REFUSAL_PID1);
	if (target->tgid == e->self)
		return enforcer_refuse(e, target->tid, ENFORCE_REFUSAL_SELF);
	r = task_stat_read(target->tgid, target->tid, st);
	if (r < 0)
		return r;
	if (st->start_time != target->start_time)
		return -ESRCH;

	t = enforcer_find(e, target->tid);
	if (t && (t->rec.start_time != target->start_time || t->rec.tgid != target->tgid)) {
		/* The tid was reused and we missed the exit: the old record is moot. */
		(void)state_remove(e->dir_fd, t->rec.tid);
		task_unlink(e, t);
		t = NULL;
	}
	if (!t && create) {
		r = task_record_new(e, target, st, &t);
		if (r < 0)
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

int enforce_release(struct enforcer *e, const struct enforce_target *target)
{
	struct enforce_task *t = enforcer_find(e, target->tid);
	struct state_record rec;
	int r, q;

	if (!t)
		return 0;
	/* Live, we know whether it is stopped now; the record only "ever". */
	rec = t->rec;
	rec.stopped = t->stopped;
	r = task_restore(&rec, e->slice_supported, e->default_slice_ns);
	q = state_remove(e->dir_fd, t->rec.tid);
	if (q < 0)
		log_warning_errno(q, "cannot remove the state record of task %d, ignoring: %m",
				  (int)t->rec.tid);
	task_unlink(e, t);
	return r;
}

void enforce_forget(struct enforcer *e, pid_t tid)
{
	struct enforce_task *t = enforcer_find(e, tid);

	if (!t)
		return;
	(void)state_remove(e->dir_fd, tid);
	task_unlink(e, t);
}

int enforcer_restore_all(struct enforcer *e)
{
	int ret = 0;

	for (size_t i = 0; i < ENFORCE_BUCKETS; i++)
		while (e->buckets[i]) {
			struct enforce_task *t = e->buckets[i];
			struct enforce_target target = {
				.tid = t->rec.tid,
				.tgid = t->rec.tgid,
				.start_time = t->rec.start_time,
			};
			int r = enforce_release(e, &target);

			if (r < 0 && r != -ESRCH && ret == 0)
				ret = r;
		}
	return ret;
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
	ret->tid = tid;
	ret->tgid = tgid;
	ret->start_time = st.start_time;
	return 0;
}
