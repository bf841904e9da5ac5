/* A child forked while muqssd had changed its parent starts with our
 * settings, not its owner's. Before anyone records the child, it gets its
 * owner's back: the parent's recorded originals. */
#include "enforce-internal.h"

#include <errno.h>
#include <sys/resource.h>

#include "log.h"
#include "sched_attr.h"

/* Only while it still runs one of our boost priorities: not an owner's
 * chrt since. */
static void undo_boost(pid_t tid, const struct enforce_original *orig)
{
	struct sched_attr_v1 a;

	if (sched_attr_get(tid, &a) < 0 || a.sched_policy != SCHED_FIFO ||
	    a.sched_priority < ENFORCE_BOOST_PRIO_MIN || a.sched_priority > ENFORCE_BOOST_PRIO_MAX)
		return;
	a = (struct sched_attr_v1){
		.sched_policy = (uint32_t)orig->policy,
		.sched_nice = orig->nice,
		.sched_flags = orig->reset_on_fork ? SCHED_FLAG_RESET_ON_FORK : 0,
	};
	if (sched_attr_set_leaving_rt(tid, &a) < 0)
		log_debug_errno(errno, "cannot take our boost back from %d, ignoring: %m", (int)tid);
	else
		log_info("task %d: inherited our boost through its fork, put back", (int)tid);
}

int enforce_undo_inherited(struct enforcer *e, const struct enforce_target *child,
			   const struct enforce_original *orig, bool affinity, bool idle_policy,
			   bool boost, uint64_t our_slice_ns, int our_nice, int owner_nice)
{
	bool kthread;
	pid_t tgid;
	/* status, not stat: a child just forked may be mid-exec already. */
	int r = task_status_read(child->tgid, child->tid, &tgid, &kthread);

	if (r < 0)
		return r;
	if (tgid != child->tgid || kthread)
		return -ESRCH;
	if (enforcer_find(e, child->tid))
		return 0; /* ours already: its record holds what it had */
	if (boost)
		undo_boost(child->tid, orig);
	if (affinity && sched_setaffinity(child->tid, sizeof(orig->affinity), &orig->affinity) < 0 &&
	    errno != ESRCH)
		log_debug_errno(errno, "cannot give %d its affinity back, ignoring: %m",
				(int)child->tid);
	/* The child is IDLEPRIO by inheritance all the same; its record must
	 * hold the owner's policy, not ours. */
	if (idle_policy && orig->policy != SCHED_IDLE &&
	    sched_setscheduler(child->tid, orig->policy, &(struct sched_param){ 0 }) < 0 &&
	    errno != ESRCH)
		log_debug_errno(errno, "cannot give %d its policy back, ignoring: %m", (int)child->tid);
	if (our_slice_ns)
		(void)enforce_reset_inherited_slice(e, child->tid, our_slice_ns, orig->slice_ns);
	if (our_nice != ENFORCE_NICE_NONE &&
	    setpriority(PRIO_PROCESS, (id_t)child->tid, owner_nice) < 0 && errno != ESRCH)
		log_debug_errno(errno, "cannot give %d its nice back, ignoring: %m", (int)child->tid);
	return 0;
}
