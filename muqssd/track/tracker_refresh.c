/* Keeping the per-tick facts (state, CPU and wait time) of active tasks
 * current, at a cost that follows the number of active tasks.
 *
 * Never through stat: reading /proc/.../stat takes the task's
 * exec_update_lock, which a task holds for write through most of an
 * execve. A task preempted mid-exec behind one of our FIFO boosts would
 * hold the tick in that read, and with it every boost, until the kernel's
 * RT throttling let it run. status and schedstat take no
 * lock of the task's. So the tick reads schedstat (CPU and wait time),
 * status (the state) and sched_getattr() (policy and nice, a system call
 * that waits on nothing). stat, with the start time and last CPU, is read
 * only where a task is found: a fork or an exec, off the loop thread
 * (tracker_pending.c), and a scan.
 *
 * An active task keeps its status and schedstat open and each tick
 * rereads them with pread() at offset 0, which is several times cheaper
 * than open+read+close. An open /proc fd is bound to its task: once the
 * task is gone, reads fail with ESRCH even if its tid is reused.
 *
 * Most ticks read schedstat only. Its three counters move whenever the
 * task is switched on or off a CPU (cpu_ns at switch-out and at each
 * kernel tick while it runs, wait_ns and timeslices at switch-in, wait_ns
 * when it is moved while queued). A task changes state only by running
 * (sleeping, stopping, exiting all happen on its own CPU) or by being
 * woken. So while schedstat has not moved, the state read last is still
 * the state, except that a sleeper may have been woken and be waiting for
 * its first slice; stat is reread when schedstat moves or when the last
 * stat read is TRACKER_STAT_MAX_AGE_NS old. */
#include "tracker_private.h"

#include <errno.h>
#include <sched.h>
#include <sys/resource.h>
#include <string.h>
#include <unistd.h>

#include "group_clock.h"
#include "log.h"
#include "sched_attr.h"
#include "time_util.h"

#define NSEC_PER_SEC (1000ULL * 1000 * 1000)
/* Each cached task holds two fds; leave room for everything else. */
#define FD_TASKS_MAX 256
#define FD_RESERVE 256

size_t tracker_fd_budget(void)
{
	struct rlimit rl;
	rlim_t spare;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY)
		return FD_TASKS_MAX;
	spare = rl.rlim_cur > FD_RESERVE ? (rl.rlim_cur - FD_RESERVE) / 2 : 0;
	return spare < FD_TASKS_MAX ? (size_t)spare : FD_TASKS_MAX;
}

void tracker_close_fds(struct tracker *t, struct tracked_task *task)
{
	if (task->schedstat_fd < 0)
		return;
	close(task->schedstat_fd);
	close(task->status_fd);
	task->schedstat_fd = task->status_fd = -1;
	t->nfd_tasks--;
}

/* Opens the task's fds if a slot is free. The cache is not LRU on
 * purpose: each tick walks every active task in the same order, which
 * would make an LRU cache smaller than the set miss every time. Tasks
 * that find it full read by path until a slot frees up. Returns 0 with
 * the fds open, -ENOSPC when full, -ESRCH or -errno. */
static int open_fds(struct tracker *t, struct tracked_task *task)
{
	int sfd, ssfd;

	if (task->schedstat_fd >= 0)
		return 0;
	if (t->nfd_tasks >= t->max_fd_tasks)
		return -ENOSPC;
	ssfd = procfs_task_open(task->tgid, task->tid, "schedstat");
	if (ssfd < 0)
		return ssfd;
	sfd = procfs_task_open(task->tgid, task->tid, "status");
	if (sfd < 0) {
		close(ssfd);
		return sfd;
	}
	task->schedstat_fd = ssfd;
	task->status_fd = sfd;
	/* The first read through new fds checks that they are this task's. */
	task->stat_ns = 0;
	t->nfd_tasks++;
	return 0;
}

static bool schedstat_moved(const struct tracked_task *task, const struct procfs_schedstat *ss)
{
	return ss->cpu_ns != task->cpu_ns || ss->wait_ns != task->wait_ns ||
	       (uint32_t)ss->timeslices != task->timeslices;
}

/* A tid reused by a thread of another process reads another tgid. */
static bool gone_state(const struct tracked_task *task, const struct procfs_status *st)
{
	return st->tgid != task->tgid || tracker_gone_state(st->state);
}

/* Policy and nice, from the scheduler itself: they change only when
 * someone sets them, so every TRACKER_STAT_MAX_AGE_NS is enough. */
void tracker_read_policy(struct tracked_task *task)
{
	struct sched_attr_v1 a;

	if (sched_attr_get(task->tid, &a) < 0)
		return;
	task->policy = (int)a.sched_policy;
	task->rt_priority = (int)a.sched_priority;
	/* An RT task reports no nice: it keeps the one it had. */
	if (a.sched_policy != SCHED_FIFO && a.sched_policy != SCHED_RR)
		task->nice = a.sched_nice;
}

static void apply_reads(struct tracked_task *task, const struct procfs_status *st,
			const struct procfs_schedstat *ss, uint64_t now)
{
	if (st->state)
		task->state = st->state;
	task->nvcsw = (uint32_t)st->nvcsw;
	if (!task->stat_ns || now - task->stat_ns >= TRACKER_STAT_MAX_AGE_NS) {
		tracker_read_policy(task);
		task->stat_ns = now;
	}
	if (task->state == 'R' || ss->cpu_ns != task->cpu_ns)
		task->active_ns = now;
	task->cpu_ns = ss->cpu_ns;
	task->wait_ns = ss->wait_ns;
	task->timeslices = (uint32_t)ss->timeslices;
	task->refreshed_ns = now;
}

/* A state read's outcome: applied, the task gone (removed, -ESRCH), or
 * unknown this time (an odd read error, an unparsable file): then it is
 * stale and keeps what it had. ss NULL: the caller applies it. */
static int apply_or_mark(struct tracker *t, struct tracked_task *task, int r,
			 const struct procfs_status *st, const struct procfs_schedstat *ss,
			 uint64_t now)
{
	if (r == -ESRCH || (r == 0 && gone_state(task, st))) {
		tracker_remove(t, task);
		return -ESRCH;
	}
	if (r < 0) {
		if (!task->stale)
			log_task(LOG_LEVEL_WARNING, task->tid, task->comm, NULL, "track",
				 "cannot read /proc/%d/task/%d/status: %s, ignoring",
				 (int)task->tgid, (int)task->tid, strerror(-r));
		task->stale = true;
		return 0;
	}
	task->stale = false;
	if (ss)
		apply_reads(task, st, ss, now);
	return 0;
}

/* Without open fds: status first, so a reused tid is caught before its
 * schedstat is taken for this task's. Returns 0, or -ESRCH when the task
 * is gone (removed, task_exit called). */
static int refresh_by_path(struct tracker *t, struct tracked_task *task, uint64_t now)
{
	struct procfs_schedstat ss;
	struct procfs_status st;
	int r;

	r = procfs_task_status(task->tgid, task->tid, &st);
	if (r < 0 && r != -ESRCH) {
		(void)apply_or_mark(t, task, r, &st, NULL, now);
		return 0;
	}
	if (r < 0 || gone_state(task, &st)) {
		tracker_remove(t, task);
		return -ESRCH;
	}
	task->stale = false;
	if (procfs_task_schedstat(task->tgid, task->tid, &ss) < 0)
		ss = (struct procfs_schedstat){ task->cpu_ns, task->wait_ns, task->timeslices };
	apply_reads(task, &st, &ss, now);
	return 0;
}

/* With the bpf sensor: the kernel's counters by one lookup, no /proc.
 * -errno leaves it to the /proc path: no counters yet (not switched
 * since its seed), past the pidfd budget, or gone (the path tells). */
static int read_counters(struct tracker *t, struct tracked_task *task, uint64_t now)
{
	int r = tracker_refresh_counters(t, task, now);

	if (r < 0)
		return r;
	if (!task->stat_ns || now - task->stat_ns >= TRACKER_STAT_MAX_AGE_NS) {
		tracker_read_policy(task);
		task->stat_ns = now;
	}
	return 0;
}

/* One tick's read of an active task. With force, stat is read too. */
static int refresh_task(struct tracker *t, struct tracked_task *task, uint64_t now, bool force)
{
	struct procfs_schedstat ss;
	struct procfs_status st;
	int r;

	if (read_counters(t, task, now) == 0)
		return 0;
	r = open_fds(t, task);
	if (r == -ESRCH) {
		tracker_remove(t, task);
		return -ESRCH;
	}
	if (r < 0)
		return refresh_by_path(t, task, now);
	r = procfs_schedstat_pread(task->schedstat_fd, &ss);
	if (r < 0) {
		/* -ESRCH: gone. Anything else is odd: let stat decide. */
		if (r == -ESRCH) {
			tracker_remove(t, task);
			return -ESRCH;
		}
		ss = (struct procfs_schedstat){ task->cpu_ns, task->wait_ns, task->timeslices };
		force = true;
	}
	if (!force && !task->watch && task->stat_ns && !schedstat_moved(task, &ss) &&
	    now - task->stat_ns < TRACKER_STAT_MAX_AGE_NS) {
		/* Not on a CPU since the last read: same state, or woken and
		 * still waiting for a CPU, which only a watched task is read
		 * for. */
		if (task->state == 'R')
			task->active_ns = now;
		task->refreshed_ns = now;
		return 0;
	}
	r = procfs_status_pread(task->status_fd, &st);
	return apply_or_mark(t, task, r, &st, &ss, now);
}

int tracker_refresh(struct tracker *t, struct tracked_task *task)
{
	uint64_t now = now_nsec(CLOCK_MONOTONIC);

	if (read_counters(t, task, now) == 0)
		return 0;
	if (task->schedstat_fd >= 0)
		return refresh_task(t, task, now, true);
	return refresh_by_path(t, task, now);
}

void tracker_set_active(struct tracker *t, struct tracked_task *task, bool active)
{
	if (task->active == active)
		return;
	TAILQ_REMOVE(task->active ? &t->active : &t->idle, task, list_link);
	task->active = active;
	if (active) {
		TAILQ_INSERT_TAIL(&t->active, task, list_link);
		t->nactive++;
	} else {
		tracker_close_fds(t, task);
		tracker_close_pidfd(t, task);
		TAILQ_INSERT_TAIL(&t->idle, task, list_link);
		t->nactive--;
	}
}

void tracker_wake_sleepers(struct tracker *t)
{
	struct tracked_task *task, *next;

	if (!tracker_tells_wakes(t))
		return;
	for (task = TAILQ_FIRST(&t->idle); task; task = next) {
		next = TAILQ_NEXT(task, list_link);
		tracker_set_active(t, task, true);
	}
}

/* One read (schedstat, by path: sleepers keep no fds) for a sleeper: only
 * CPU time that grew makes it worth the full refresh. Before that, its
 * process's CPU clock: while no thread of the process has run since this
 * one's last probe, this one has not either, and a process of sleepers
 * costs one clock read a thread instead of an open, read and close.
 * Returns 1 when it ran, 0 when not, -ESRCH. */
static int probe_idle(struct tracker *t, struct tracked_task *task, uint64_t now)
{
	struct procfs_schedstat ss;
	uint64_t group;
	int r;

	/* Read before schedstat: whatever runs after this read moves the
	 * clock again by the next probe. A reused tgid reads another
	 * clock, which differs, so the full read below catches it. */
	if (group_clock_cpu_ns(task->tgid, &group) == 0) {
		if (group == task->group_cpu_ns)
			return 0;
		task->group_cpu_ns = group;
	}
	r = procfs_task_schedstat(task->tgid, task->tid, &ss);
	if (r == 0 && ss.cpu_ns == task->cpu_ns)
		return 0;
	r = refresh_by_path(t, task, now);
	return r < 0 ? r : 1;
}

/* The idle probes this tick may spend: the caller's budget, held to one
 * sweep per TRACKER_SWEEP_MIN_NS and to TRACKER_SWEEP_PER_SEC. */
static unsigned sweep_allowance(struct tracker *t, uint64_t now, unsigned budget)
{
	uint64_t nidle = tracker_count(t) - t->nactive, rate, per_probe, n;

	rate = nidle * NSEC_PER_SEC / TRACKER_SWEEP_MIN_NS;
	if (rate > TRACKER_SWEEP_PER_SEC)
		rate = TRACKER_SWEEP_PER_SEC;
	if (rate < 1)
		rate = 1;
	per_probe = NSEC_PER_SEC / rate;
	if (t->last_refresh_ns && now > t->last_refresh_ns)
		t->sweep_carry_ns += now - t->last_refresh_ns;
	t->last_refresh_ns = now;
	/* No burst after a long quiet spell. */
	if (t->sweep_carry_ns > NSEC_PER_SEC)
		t->sweep_carry_ns = NSEC_PER_SEC;
	n = t->sweep_carry_ns / per_probe;
	if (n > budget)
		n = budget;
	t->sweep_carry_ns -= n * per_probe;
	return (unsigned)n;
}

/* Whether an active task is due a read: hot, never read, or read longer
 * ago than its cadence. */
static bool read_due(const struct tracked_task *task, uint64_t at, uint64_t cold_ns,
		     uint64_t slow_ns)
{
	return task->hot || !task->refreshed_ns ||
	       at - task->refreshed_ns >= (task->slow ? slow_ns : cold_ns);
}

/* One walk of the active list, reading the due tasks that are hot (or
 * not) until until_ns. A task read goes to the tail, so what a walk did
 * not reach in time comes first next time. */
static unsigned read_active(struct tracker *t, uint64_t now_ns, uint64_t until_ns, bool hot,
			    uint64_t cold_ns, uint64_t slow_ns)
{
	struct tracked_task *task, *next, *last = TAILQ_LAST(&t->active, task_list);
	unsigned n = 0;
	bool end = !last;

	for (task = TAILQ_FIRST(&t->active); task && !end; task = next) {
		uint64_t at;

		next = TAILQ_NEXT(task, list_link);
		end = task == last;
		/* The other walk's: no clock read for it. */
		if (task->hot != hot)
			continue;
		/* Each read is stamped when it is taken, not when the tick
		 * began: a tick held up stamped later reads early, and the
		 * next tick took a sleeper that had not run since for idle. */
		at = now_nsec(CLOCK_MONOTONIC);
		if (at < now_ns)
			at = now_ns;
		if (!read_due(task, at, cold_ns, slow_ns))
			continue;
		if (at >= until_ns) {
			t->reads_carried++;
			continue;
		}
		n++;
		TAILQ_REMOVE(&t->active, task, list_link);
		TAILQ_INSERT_TAIL(&t->active, task, list_link);
		if (refresh_task(t, task, at, false) < 0)
			continue;
		if (at > task->active_ns + TRACKER_IDLE_AFTER_NS)
			tracker_set_active(t, task, false);
	}
	return n;
}

unsigned tracker_refresh_active(struct tracker *t, uint64_t now_ns, uint64_t until_ns,
				unsigned idle_budget, uint64_t cold_ns, uint64_t slow_ns)
{
	struct tracked_task *task, *last;
	unsigned n;

	/* Tasks that move to the idle list go to its tail, past "last". */
	last = TAILQ_LAST(&t->idle, task_list);
	n = read_active(t, now_ns, until_ns, true, cold_ns, slow_ns);
	n += read_active(t, now_ns, until_ns, false, cold_ns, slow_ns);
	/* The bpf sensor tells when a sleeper wakes (SENSOR_EVENT_WAKE):
	 * no sleeper needs a probe. */
	idle_budget = tracker_tells_wakes(t) ? 0 : sweep_allowance(t, now_ns, idle_budget);
	while (idle_budget-- > 0 && last && (task = TAILQ_FIRST(&t->idle)) &&
	       now_nsec(CLOCK_MONOTONIC) < until_ns) {
		bool end = task == last;

		n++;
		/* Rotate first so the sweep goes round even if it is removed. */
		TAILQ_REMOVE(&t->idle, task, list_link);
		TAILQ_INSERT_TAIL(&t->idle, task, list_link);
		if (probe_idle(t, task, now_nsec(CLOCK_MONOTONIC)) > 0)
			tracker_set_active(t, task, true);
		if (end)
			break;
	}
	return n;
}

uint64_t tracker_reads_carried(const struct tracker *t)
{
	return t->reads_carried;
}
