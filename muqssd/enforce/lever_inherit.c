/* A child forked while muqssd had changed its parent starts with our
 * settings, not its owner's. Before anyone records the child, it gets its
 * owner's back: the parent's recorded originals. */
#include "enforce-internal.h"

#include <errno.h>
#include <sys/resource.h>

#include "log.h"

int enforce_undo_inherited(struct enforcer *e, const struct enforce_target *child,
			   const struct enforce_original *orig, bool affinity, bool idle_policy,
			   uint64_t our_slice_ns, int our_nice, int owner_nice)
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
