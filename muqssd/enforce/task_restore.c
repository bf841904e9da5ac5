/* Putting one recorded task back, for the live daemon and for a restore
 * after a crash alike. Every step is idempotent, so a restore that is
 * itself interrupted can simply run again. */
#include "enforce-internal.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <sys/pidfd.h>
#include <sys/resource.h>
#include <unistd.h>

#include "log.h"
#include "sched_attr.h"

int task_verify(pid_t tgid, pid_t tid, uint64_t start_time)
{
	struct task_stat st;
	int r;

	r = task_stat_read(tgid, tid, &st);
	if (r < 0)
		return r;
	return st.start_time == start_time ? 0 : -ESRCH;
}

static int restore_cont(const struct state_record *rec)
{
	int fd, r;

	fd = pidfd_open(rec->tgid, 0);
	if (fd < 0)
		return -errno;
	r = task_verify(rec->tgid, rec->tid, rec->start_time);
	if (r == 0 && pidfd_send_signal(fd, SIGCONT, NULL, 0) < 0)
		r = -errno;
	close(fd);
	return r;
}

/* A realtime policy we find now is ours only if it is one of our boosts;
 * anything else was set by someone else since, and stays. */
static bool rt_is_ours(const struct state_record *rec, const struct sched_attr_v1 *cur)
{
	return rec->boosted && cur->sched_policy == SCHED_FIFO &&
	       cur->sched_priority >= ENFORCE_BOOST_PRIO_MIN &&
	       cur->sched_priority <= ENFORCE_BOOST_PRIO_MAX &&
	       (cur->sched_flags & SCHED_FLAG_RESET_ON_FORK);
}

static int restore_policy(const struct state_record *rec, bool slice_supported,
			  uint64_t default_slice_ns)
{
	struct sched_attr_v1 cur, a = {
		.sched_policy = (uint32_t)rec->policy,
		.sched_nice = rec->nice,
		.sched_flags = rec->reset_on_fork ? SCHED_FLAG_RESET_ON_FORK : 0,
	};
	int r;

	r = sched_attr_get(rec->tid, &cur);
	if (r < 0)
		return r;
	if (sched_policy_is_rt((int)cur.sched_policy) && !rt_is_ours(rec, &cur)) {
		log_info("task %d: keeps the realtime policy someone else gave it", (int)rec->tid);
		return 0;
	}
	if (slice_supported && rec->slice_ns)
		a.sched_runtime = slice_request(rec->slice_ns, default_slice_ns);
	r = task_verify(rec->tgid, rec->tid, rec->start_time);
	if (r < 0)
		return r;
	r = sched_policy_is_rt((int)cur.sched_policy) ? sched_attr_set_leaving_rt(rec->tid, &a)
						      : sched_attr_set(rec->tid, &a);
	/* sched_setattr() takes no nice with SCHED_IDLE. */
	if (r == 0 && rec->policy == SCHED_IDLE && setpriority(PRIO_PROCESS, (id_t)rec->tid, rec->nice) < 0)
		r = -errno;
	return r;
}

static int restore_affinity(const struct state_record *rec)
{
	int r;

	r = task_verify(rec->tgid, rec->tid, rec->start_time);
	if (r < 0)
		return r;
	if (sched_setaffinity(rec->tid, sizeof(rec->affinity), &rec->affinity) < 0)
		return -errno;
	return 0;
}

int task_restore(const struct state_record *rec, bool slice_supported, uint64_t default_slice_ns)
{
	int r, ret = 0;

	r = task_verify(rec->tgid, rec->tid, rec->start_time);
	if (r < 0)
		return r;
	/* Continue first: whatever fails below, nothing stays stopped. */
	if (rec->stopped) {
		r = restore_cont(rec);
		if (r < 0 && r != -ESRCH)
			ret = log_warning_errno(r, "task %d: cannot SIGCONT, ignoring: %m",
						(int)rec->tid);
	}
	if (rec->changed & STATE_CHANGED_POLICY) {
		r = restore_policy(rec, slice_supported, default_slice_ns);
		if (r == -ESRCH)
			return r;
		if (r < 0)
			ret = log_warning_errno(r, "task %d: cannot restore its policy, ignoring: %m",
						(int)rec->tid);
	}
	if (rec->changed & STATE_CHANGED_AFFINITY) {
		r = restore_affinity(rec);
		if (r == -ESRCH)
			return r;
		if (r < 0)
			ret = log_warning_errno(r, "task %d: cannot restore its affinity, ignoring: %m",
						(int)rec->tid);
	}
	return ret;
}
