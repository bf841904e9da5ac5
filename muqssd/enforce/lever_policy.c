/* Policy levers: FIFO boost, SCHED_IDLE, nice, EEVDF slice. */
#include "enforce-internal.h"

#include <errno.h>
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include "log.h"
#include "sched_attr.h"

uint64_t slice_request(uint64_t ns, uint64_t default_ns)
{
	/* 0 asks for the kernel default, so an untouched slice stays untouched
	 * (and keeps following the base_slice sysctl). */
	return ns == default_ns ? 0 : ns;
}

void enforce_base_attr(const struct enforcer *e, const struct enforce_task *t,
		       struct sched_attr_v1 *ret)
{
	*ret = (struct sched_attr_v1){
		.sched_policy = t->idle ? SCHED_IDLE : (uint32_t)t->rec.policy,
		.sched_nice = t->nice,
		.sched_flags = t->rec.reset_on_fork ? SCHED_FLAG_RESET_ON_FORK : 0,
	};
	if (e->slice_supported)
		ret->sched_runtime = slice_request(t->slice_ns, e->default_slice_ns);
}

/* The policy the task has when not boosted: original or SCHED_IDLE, with
 * the nice and slice we last set. The caller checked the start time. */
static int apply_base(struct enforcer *e, struct enforce_task *t)
{
	struct sched_attr_v1 a;
	int r;

	enforce_base_attr(e, t, &a);
	r = t->boost_prio ? sched_attr_set_leaving_rt(t->rec.tid, &a) : sched_attr_set(t->rec.tid, &a);
	/* sched_setattr() takes no nice with SCHED_IDLE: set apart, or the
	 * task would show a nice other than ours, taken for its owner's. */
	if (r == 0 && a.sched_policy == SCHED_IDLE &&
	    setpriority(PRIO_PROCESS, (id_t)t->rec.tid, t->nice) < 0)
		r = -errno;
	return r;
}

/* The policy the task has when we do not boost it. */
static int base_policy(const struct enforce_task *t)
{
	return t->idle ? SCHED_IDLE : t->rec.policy;
}

int enforce_adopt_owner_base(struct enforcer *e, struct enforce_task *t)
{
	struct sched_attr_v1 cur;
	int r, policy, nice;
	bool adopted = false;

	r = sched_attr_get(t->rec.tid, &cur);
	if (r < 0)
		return r;
	policy = (int)cur.sched_policy;
	nice = cur.sched_nice;
	if (sched_policy_is_rt(policy)) {
		/* sched_getattr() shows no nice for a realtime task. */
		errno = 0;
		nice = getpriority(PRIO_PROCESS, (id_t)t->rec.tid);
		if (nice == -1 && errno)
			return -errno;
	}
	if (nice != t->nice) {
		log_debug("task %d: reniced to %d by its owner, adopting it", (int)t->rec.tid, nice);
		t->nice = t->rec.nice = nice;
		adopted = true;
	}
	/* Our boost reads SCHED_FIFO; a realtime policy of someone else's
	 * is refused elsewhere (check_foreign_rt). */
	if (!sched_policy_is_rt(policy) && policy != base_policy(t)) {
		log_debug("task %d: policy %d set by its owner, adopting it", (int)t->rec.tid, policy);
		t->rec.policy = policy;
		t->idle = false;
		/* It replaced our boost too. */
		t->boost_prio = 0;
		enforce_dm_release(e, &t->dm_boost);
		adopted = true;
	}
	if (!adopted)
		return 0;
	r = enforcer_mark(e, t, 0, true);
	return r < 0 ? r : 1;
}

int enforce_rebase(struct enforcer *e, const struct enforce_target *target)
{
	struct enforce_task *t;
	struct task_stat st;
	int r;

	r = enforcer_task(e, target, false, &t, &st);
	if (r < 0 || !t)
		return r;
	r = enforce_adopt_owner_base(e, t);
	return r < 0 ? r : 0;
}

/* The deadman learns of a boost before it is made, so that whatever
 * happens to the loop the boost ends. No slot, no boost. */
static int dm_note_boost(struct enforcer *e, struct enforce_task *t)
{
	struct sched_attr_v1 base;
	int slot;

	if (!e->deadman || t->dm_boost)
		return 0;
	enforce_base_attr(e, t, &base);
	slot = deadman_note_boost(e->deadman, t->rec.tid, &base);
	if (slot < 0)
		return slot;
	t->dm_boost = slot + 1;
	return 0;
}

/* A policy someone else set while we were not boosting: theirs to keep. */
static int check_foreign_rt(struct enforcer *e, const struct enforce_task *t,
			    const struct task_stat *st)
{
	if (!t->boost_prio && sched_policy_is_rt((int)st->policy))
		return enforcer_refuse(e, t->rec.tid, ENFORCE_REFUSAL_FOREIGN_RT);
	return 0;
}

static int policy_task(struct enforcer *e, const struct enforce_target *target,
		       struct enforce_task **ret)
{
	struct task_stat st;
	int r;

	r = enforcer_task(e, target, true, ret, &st);
	if (r < 0)
		return r;
	r = check_foreign_rt(e, *ret, &st);
	if (r < 0)
		return r;
	r = enforce_adopt_owner_base(e, *ret);
	if (r < 0)
		return r;
	r = enforcer_mark(e, *ret, STATE_CHANGED_POLICY, false);
	if (r > 0)
		r = enforce_task_check(*ret);
	return r;
}

static int explain_eperm(struct enforcer *e, const struct enforce_task *t)
{
	char path[512];

	if (geteuid() != 0 || !rt_group_no_budget(t->rec.tgid, t->rec.tid, path, sizeof(path)))
		return -EPERM;
	if (!e->rt_group_explained) {
		e->rt_group_explained = true;
		log_warning("cannot boost task %d: RT group scheduling is on and %s is 0, so "
			    "tasks in that cgroup may not run SCHED_FIFO. Give the cgroup an RT "
			    "budget (write e.g. 50000 there, after its parents), or manage tasks "
			    "in a cgroup that has one. Boosting is skipped for such tasks.",
			    (int)t->rec.tid, path);
	}
	return enforcer_refuse(e, t->rec.tid, ENFORCE_REFUSAL_RT_GROUP);
}

int enforce_boost(struct enforcer *e, const struct enforce_target *target, int fifo_prio)
{
	struct sched_attr_v1 a = {
		.sched_policy = SCHED_FIFO,
		.sched_priority = (uint32_t)fifo_prio,
		.sched_flags = SCHED_FLAG_RESET_ON_FORK,
	};
	struct enforce_task *t;
	int r;

	if (fifo_prio < ENFORCE_BOOST_PRIO_MIN || fifo_prio > ENFORCE_BOOST_PRIO_MAX)
		return -EINVAL;
	if (enforcer_no_room(e, target->tid, ENFORCE_ROOM_BOOST))
		return -ENOSPC;
	r = policy_task(e, target, &t);
	if (r < 0)
		return r;
	if (t->boost_prio == fifo_prio)
		return 0;
	if (!t->rec.boosted) {
		t->rec.boosted = true;
		r = enforcer_mark(e, t, 0, true);
		if (r < 0)
			return r;
		r = enforce_task_check(t);
		if (r < 0)
			return r;
	}
	r = dm_note_boost(e, t);
	if (r < 0)
		return r;
	r = sched_attr_set(t->rec.tid, &a);
	if (r < 0 && !t->boost_prio)
		enforce_dm_release(e, &t->dm_boost);
	if (r == -EPERM)
		return explain_eperm(e, t);
	if (r < 0)
		return r;
	t->boost_prio = fifo_prio;
	return 0;
}

static int unboost(struct enforcer *e, const struct enforce_target *target, bool adopt)
{
	struct enforce_task *t;
	struct task_stat st;
	int r;

	r = enforcer_task(e, target, false, &t, &st);
	if (r < 0 || !t || !t->boost_prio)
		return r;
	/* Its owner's renice or chrt since is the base to go back to. If
	 * that cannot be read or recorded, the boost ends all the same. */
	if (adopt)
		(void)enforce_adopt_owner_base(e, t);
	if (!t->boost_prio)
		return 0;
	r = apply_base(e, t);
	if (r < 0 && r != -ESRCH)
		return r;
	t->boost_prio = 0;
	enforce_dm_release(e, &t->dm_boost);
	return r;
}

int enforce_unboost(struct enforcer *e, const struct enforce_target *target)
{
	return unboost(e, target, true);
}

int enforce_unboost_ours(struct enforcer *e, const struct enforce_target *target)
{
	return unboost(e, target, false);
}

int enforce_set_idle(struct enforcer *e, const struct enforce_target *target, bool idle)
{
	struct enforce_task *t;
	int r;

	r = policy_task(e, target, &t);
	if (r < 0)
		return r;
	t->idle = idle;
	return t->boost_prio ? 0 : apply_base(e, t);
}

int enforce_set_nice(struct enforcer *e, const struct enforce_target *target, int nice)
{
	struct enforce_task *t;
	int r;

	if (nice < -20 || nice > 19)
		return -EINVAL;
	r = policy_task(e, target, &t);
	if (r < 0)
		return r;
	t->nice = nice;
	if (!t->boost_prio)
		return apply_base(e, t);
	/* Boosted: the nice still takes effect now (a FIFO task keeps its
	 * static priority), so the task's nice never shows a value we asked
	 * to replace, which the loop would take for its owner's renice. */
	if (setpriority(PRIO_PROCESS, (id_t)t->rec.tid, nice) < 0)
		return -errno;
	return 0;
}

int enforce_set_slice(struct enforcer *e, const struct enforce_target *target, uint64_t ns)
{
	struct enforce_task *t;
	int r, slot = 0;

	if (!e->slice_supported)
		return -EOPNOTSUPP;
	r = policy_task(e, target, &t);
	if (r < 0)
		return r;
	ns = ns ? ns : t->rec.slice_ns;
	/* The deadman learns of our slice before it is set, as of a boost:
	 * a loop held up leaves no long slice behind. No slot, no slice. */
	if (e->deadman && ns != t->rec.slice_ns) {
		slot = deadman_note_slice(e->deadman, t->rec.tid, ns,
					  slice_request(t->rec.slice_ns, e->default_slice_ns));
		if (slot < 0)
			return slot;
		slot++;
	}
	t->slice_ns = ns;
	r = t->boost_prio ? 0 : apply_base(e, t);
	enforce_dm_release(e, &t->dm_slice);
	t->dm_slice = slot;
	return r;
}

int enforce_reset_inherited_slice(struct enforcer *e, pid_t tid, uint64_t ours_ns,
				  uint64_t owner_ns)
{
	struct sched_attr_v1 a;
	int r;

	if (!e->slice_supported)
		return -EOPNOTSUPP;
	if (ours_ns == owner_ns)
		return 0;
	r = sched_attr_get(tid, &a);
	if (r < 0)
		return r;
	if (sched_policy_is_rt((int)a.sched_policy) || a.sched_runtime != ours_ns)
		return 0;
	a.sched_flags &= SCHED_FLAG_RESET_ON_FORK;
	a.sched_runtime = slice_request(owner_ns, e->default_slice_ns);
	r = sched_attr_set(tid, &a);
	return r < 0 ? r : 1;
}
