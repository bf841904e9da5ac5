/* Reconciling the table with /proc: the start-up scan, recovery after lost
 * events, the slow periodic check and the polling fallback.
 *
 * A scan lists /proc and sorts processes out through status, which waits
 * on no task. The threads of a process in scope that it must read through
 * stat (new ones, and every one when it verifies) are read off the loop
 * once the stat reader runs, as a fork's child is: a stat read waits for a
 * task's exec to finish, and a scan comes upon tasks mid-exec (an exec
 * storm's forks whose events are not read yet) as often as events do,
 * polling's scans included. At start-up (before the reader) they are read
 * here, while nothing of ours is boosted yet. */
#include "tracker_private.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "log.h"

#define RECOVERY_DELAY_USEC (20 * 1000)

void tracker_verify_task(struct tracker *t, struct tracked_task *task, const struct procfs_stat *st)
{
	bool renamed = strcmp(task->comm, st->comm) != 0;

	tracker_apply_stat(task, st);
	task->seen_gen = t->generation;
	if (renamed) {
		tracker_set_comm(task, st->comm);
		/* Only a poll or a lost event gets here: tell it like an exec. */
		tracker_forget_exe(task->proc);
		if (t->cb.task_exec)
			t->cb.task_exec(task, t->userdata);
	}
}

/* A thread to read, off the loop. One whose event's read is out already
 * is left to it: a new entry would drop that read. Listed, a known task
 * counts as seen; the read checks that it is still the same task. */
static void scan_defer(struct tracker *t, struct tracked_task *task, pid_t tgid, pid_t tid)
{
	struct tracker_pending *p;

	if (task && task->tgid == tgid)
		task->seen_gen = t->generation;
	if (tracker_pending_get(t, tid))
		return;
	p = tracker_pending_new(t, tid, tgid, true);
	if (!p)
		return;
	p->parent_in = true; /* the scan found its process in scope */
	p->verify = task && task->tgid == tgid;
	if (!p->verify)
		t->scan_added++;
	tracker_pending_read(t, p);
}

void tracker_scan_threads(struct tracker *t, pid_t tgid, bool verify, bool defer)
{
	char path[32];
	struct dirent *de;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)tgid);
	dir = opendir(path);
	if (!dir)
		return;
	while ((de = readdir(dir))) {
		pid_t tid = procfs_pid_from_name(de->d_name);
		struct tracked_task *task;
		struct procfs_stat st;
		int r;

		if (tid <= 0)
			continue;
		task = tidmap_get(&t->tasks, tid);
		if (task && task->tgid == tgid && !verify) {
			task->seen_gen = t->generation;
			continue;
		}
		if (defer && t->reader) {
			scan_defer(t, task, tgid, tid);
			continue;
		}
		/* A thread of a process in scope, read on the loop thread
		 * (see tracker_may_admit()). */
		t->loop_stat_reads++;
		r = procfs_task_stat(tgid, tid, &st);
		if (r == -EINVAL)
			log_task(LOG_LEVEL_WARNING, tid, NULL, NULL, "track",
				 "cannot parse /proc/%d/task/%d/stat, ignoring", (int)tgid, (int)tid);
		if (r < 0)
			continue;
		if (task) {
			if (task->tgid == tgid && task->start_time == st.start_time &&
			    !tracker_gone_state(st.state)) {
				tracker_verify_task(t, task, &st);
				continue;
			}
			/* The tid was reused: the old task is gone. */
			tracker_remove(t, task);
		}
		if (tracker_gone_state(st.state) || (st.flags & PF_KTHREAD_FLAG))
			continue;
		if (tracker_add(t, tgid, tid, &st, NULL))
			t->scan_added++;
	}
	closedir(dir);
}

/* Listing a process's threads costs about 2 us a thread (10 ms for
 * 5,000), all of it on the loop. A listing that only confirms what events
 * said is not worth it: the task directory's link count is the kernel's
 * thread count, one stat() that waits on no task. When it matches the
 * table, the threads count as seen, and the sweep passes them by: a walk
 * of 5,000 threads untouched for a while took 16 ms here. A difference (a
 * fork whose read is in flight, a zombie leader) falls back to the
 * listing. Lost events are healed by a verifying scan, which always
 * lists. */
static bool threads_match(struct tracker *t, struct tracked_proc *proc)
{
	char path[32];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)proc->tgid);
	if (stat(path, &st) < 0 || st.st_nlink < 2 ||
	    (size_t)st.st_nlink - 2 != proc->nthreads)
		return false;
	proc->confirmed_gen = t->generation;
	return true;
}

struct pending {
	pid_t tgid, ppid;
};

/* A descendant may be listed before its parent (pids wrap), so processes
 * whose parent is not yet known wait until the parent is. */
static int scan_pending(struct tracker *t, struct pending *p, size_t n, bool verify)
{
	bool changed = true;

	while (changed) {
		changed = false;
		for (size_t i = 0; i < n; i++) {
			if (p[i].tgid == 0 || !tracker_proc_known(t, p[i].ppid))
				continue;
			tracker_scan_threads(t, p[i].tgid, verify, true);
			p[i].tgid = 0;
			changed = true;
		}
	}
	return 0;
}

/* Drops the threads the scan did not see, process by process. The last
 * thread's removal frees its process, so the next is taken first. */
static void sweep(struct tracker *t)
{
	struct tracked_proc *proc, *next_proc;

	TAILQ_FOREACH_SAFE(proc, &t->proc_list, link, next_proc) {
		struct tracked_task *task, *next;

		if (proc->confirmed_gen == t->generation)
			continue;
		TAILQ_FOREACH_SAFE(task, &proc->threads, proc_link, next)
			if (task->seen_gen != t->generation)
				tracker_remove(t, task);
	}
}

int tracker_scan(struct tracker *t, bool verify)
{
	struct pending *pending = NULL;
	size_t npending = 0, cap = 0;
	struct dirent *de;
	DIR *dir;
	int r = 0;

	dir = opendir("/proc");
	if (!dir)
		return log_error_errno(errno, "cannot open /proc: %m");
	t->generation++;
	while ((de = readdir(dir))) {
		pid_t tgid = procfs_pid_from_name(de->d_name), ppid;
		struct tracked_proc *proc;

		if (tgid <= 1 || tgid == t->scope.kthreadd || tgid == t->scope.self)
			continue;
		proc = tidmap_get(&t->procs, tgid);
		if (proc) {
			if (verify || !threads_match(t, proc))
				tracker_scan_threads(t, tgid, verify, true);
			continue;
		}
		/* The rest of the machine is sorted out through status: only
		 * a process in scope is read through stat. */
		if (!tracker_may_admit(t, tgid, &ppid))
			continue;
		if (t->scope.kind == SCOPE_PID && tgid != t->scope.pid && !tracker_proc_known(t, ppid)) {
			if (npending == cap) {
				struct pending *p;

				cap = cap ? cap * 2 : 64;
				p = realloc(pending, cap * sizeof(*p));
				if (!p) {
					r = log_error_errno(ENOMEM, "cannot scan /proc: %m");
					goto out;
				}
				pending = p;
			}
			pending[npending++] = (struct pending){ tgid, ppid };
			continue;
		}
		tracker_scan_threads(t, tgid, verify, true);
	}
	if (t->scope.kind == SCOPE_PID)
		scan_pending(t, pending, npending, verify);
	sweep(t);
out:
	free(pending);
	closedir(dir);
	return r;
}

int tracker_rescan(struct tracker *t)
{
	return tracker_scan(t, true);
}

static int on_recovery(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct tracker *t = userdata;

	t->lost_recoveries++;
	/* Their exit events may be among the lost: a reused pid must not
	 * pass for one. */
	tracker_ghosts_age(t, true);
	log_info("the %s sensor dropped events, reconciled with /proc (%llu recoveries)",
		 tracker_sensor(t), (unsigned long long)t->lost_recoveries);
	(void)tracker_scan(t, true);
	tracker_wake_sleepers(t);
	if (t->recovered)
		t->recovered(t, t->recovered_userdata);
	return 0;
}

void tracker_schedule_recovery(struct tracker *t)
{
	int r;

	if (t->rescan_timer) {
		int enabled = SD_EVENT_OFF;

		(void)sd_event_source_get_enabled(t->rescan_timer, &enabled);
		if (enabled != SD_EVENT_OFF)
			return;
		r = sd_event_source_set_time_relative(t->rescan_timer, RECOVERY_DELAY_USEC);
		if (r >= 0)
			r = sd_event_source_set_enabled(t->rescan_timer, SD_EVENT_ONESHOT);
	} else
		r = sd_event_add_time_relative(t->event, &t->rescan_timer, CLOCK_MONOTONIC,
					       RECOVERY_DELAY_USEC, 1000, on_recovery, t);
	if (r < 0) {
		log_warning_errno(r, "cannot schedule a rescan, rescanning now: %m");
		(void)on_recovery(NULL, 0, t);
	}
}

static int rearm(sd_event_source *s, unsigned interval_ms)
{
	int r = sd_event_source_set_time_relative(s, (uint64_t)interval_ms * 1000);

	if (r >= 0)
		r = sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
	if (r < 0)
		log_error_errno(r, "cannot re-arm a tracker timer: %m");
	return 0;
}

/* A connector can go silent after a good start (a listener from a PID
 * namespace that the start-up probe missed, a kernel that stops sending):
 * then tasks appear in /proc and no event ever comes, even about tasks
 * outside the scope. The scan's new tasks are checked against the events
 * once the queue is drained: a fork's event is sent right after the child
 * shows in /proc. */
static void check_silence(struct tracker *t)
{
	size_t added = t->scan_added;

	/* The bpf sensor hears only the scope: its silence says nothing. */
	if (t->polling || !added || sensor_kind_of(t->sensor) != SENSOR_CONNECTOR)
		goto out;
	(void)tracker_flush(t);
	if (t->events != t->events_at_reconcile)
		goto out;
	log_notice("proc connector silent: %zu new tasks in /proc and no event for %u ms; "
		   "polling /proc every %u ms from now on", added,
		   t->config->reconcile_interval_ms ?: 10000, t->config->poll_interval_ms ?: 250);
	(void)tracker_start_polling(t);
out:
	t->events_at_reconcile = t->events;
}

static int on_reconcile(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct tracker *t = userdata;

	/* With events flowing, a listing is enough: it finds what was
	 * missed and what left. Polling rereads everything anyway. */
	t->scan_added = 0;
	(void)tracker_scan(t, t->polling);
	check_silence(t);
	tracker_ghosts_age(t, false);
	return rearm(s, t->config->reconcile_interval_ms ?: 10000);
}

static int on_poll(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct tracker *t = userdata;

	/* Polling must also see renames and reused tids: reread everything. */
	(void)tracker_scan(t, true);
	return rearm(s, t->config->poll_interval_ms ?: 250);
}

int tracker_start_polling(struct tracker *t)
{
	unsigned poll = t->config->poll_interval_ms ?: 250;
	int r;

	t->io_source = sd_event_source_disable_unref(t->io_source);
	t->sensor = sensor_free(t->sensor);
	t->polling = true;
	tracker_ghosts_age(t, true);
	r = sd_event_add_time_relative(t->event, &t->poll_timer, CLOCK_MONOTONIC,
				       (uint64_t)poll * 1000, 1000, on_poll, t);
	if (r < 0)
		return log_error_errno(r, "cannot arm the polling timer: %m");
	return 0;
}

int tracker_arm_timers(struct tracker *t)
{
	unsigned reconcile = t->config->reconcile_interval_ms ?: 10000;
	unsigned poll = t->config->poll_interval_ms ?: 250;
	int r;

	r = sd_event_add_time_relative(t->event, &t->reconcile_timer, CLOCK_MONOTONIC,
				       (uint64_t)reconcile * 1000, 100 * 1000, on_reconcile, t);
	if (r >= 0 && t->polling)
		r = sd_event_add_time_relative(t->event, &t->poll_timer, CLOCK_MONOTONIC,
					       (uint64_t)poll * 1000, 1000, on_poll, t);
	if (r < 0)
		return log_error_errno(r, "cannot arm the tracker's timers: %m");
	return 0;
}
