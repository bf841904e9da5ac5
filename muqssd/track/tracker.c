/* The table itself: adding, removing, refreshing and walking tasks. */
#include "tracker_private.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "time_util.h"

int tracker_new(struct tracker **ret, sd_event *event, const struct config *config,
		const struct tracker_callbacks *cb, void *userdata)
{
	struct tracker *t;
	int r;

	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->event = sd_event_ref(event);
	t->config = config;
	if (cb) {
		t->cb = *cb;
		t->recovered = cb->recovered;
	}
	t->userdata = t->recovered_userdata = userdata;
	tidmap_init(&t->tasks);
	tidmap_init(&t->procs);
	TAILQ_INIT(&t->proc_list);
	tidmap_init(&t->ghosts);
	tidmap_init(&t->old_ghosts);
	TAILQ_INIT(&t->active);
	TAILQ_INIT(&t->idle);
	tidmap_init(&t->pending);
	TAILQ_INIT(&t->pending_list);
	TAILQ_INIT(&t->deferred);
	t->max_fd_tasks = tracker_fd_budget();
	r = scope_init(&t->scope, config);
	if (r < 0) {
		log_error_errno(r, "cannot resolve scope cgroup %s: %m",
				config->scope_cgroup ? config->scope_cgroup : "");
		tracker_free(t);
		return r;
	}
	*ret = t;
	return 0;
}

/* A process with no thread left in the table leaves it. */
static void drop_proc(struct tracker *t, struct tracked_proc *proc)
{
	(void)tidmap_remove(&t->procs, proc->tgid);
	TAILQ_REMOVE(&t->proc_list, proc, link);
	free(proc->exe);
	free(proc);
}

static void remove_task(struct tracker *t, struct tracked_task *task, bool notify)
{
	struct tracked_proc *proc = task->proc;

	if (notify && t->cb.task_exit)
		t->cb.task_exit(task, t->userdata);
	tracker_close_fds(t, task);
	tracker_close_pidfd(t, task);
	TAILQ_REMOVE(task->active ? &t->active : &t->idle, task, list_link);
	if (task->active)
		t->nactive--;
	(void)tidmap_remove(&t->tasks, task->tid);
	TAILQ_REMOVE(&proc->threads, task, proc_link);
	if (--proc->nthreads == 0) {
		/* Its children's fork events may still be queued. */
		if (notify)
			tracker_ghost_add(t, proc->tgid);
		drop_proc(t, proc);
	}
	free(task);
}

void tracker_remove(struct tracker *t, struct tracked_task *task)
{
	remove_task(t, task, true);
}

struct tracker *tracker_free(struct tracker *t)
{
	struct tracked_task *task;

	if (!t)
		return NULL;
	sd_event_source_disable_unref(t->io_source);
	sd_event_source_disable_unref(t->reconcile_timer);
	sd_event_source_disable_unref(t->poll_timer);
	sd_event_source_disable_unref(t->rescan_timer);
	tracker_wake_stop(t);
	sensor_free(t->sensor);
	tracker_pending_stop(t);
	/* No task_exit here: the daemon is going away, not the tasks. */
	while ((task = TAILQ_FIRST(&t->active)))
		remove_task(t, task, false);
	while ((task = TAILQ_FIRST(&t->idle)))
		remove_task(t, task, false);
	tidmap_done(&t->tasks);
	tidmap_done(&t->procs);
	tracker_ghosts_age(t, true);
	sd_event_unref(t->event);
	free(t);
	return NULL;
}

int tracker_start(struct tracker *t)
{
	int r;

	r = sensor_open(t->config->force_poll ? SENSOR_POLL : t->config->sensor,
			&t->scope, t->config->poll_interval_ms, TRACKER_IDLE_AFTER_NS, &t->sensor);
	if (r < 0)
		return log_error_errno(r, "cannot open a sensor: %m");
	t->polling = !t->sensor;
	tracker_reserve_pidfds(t);
	/* The sensor is open before the scan, so nothing that starts
	 * during the scan is missed; events about scanned tasks are
	 * idempotent. */
	r = tracker_scan(t, false);
	if (r < 0)
		return r;
	if (sensor_needs_seed(t->sensor)) {
		/* A task forked by a scanned one before its seed has no
		 * mark in the kernel: it shows in /proc now. */
		r = tracker_scan(t, false);
		if (r < 0)
			return r;
	}
	if (t->sensor) {
		r = tracker_attach_sensor(t);
		if (r < 0)
			return r;
		r = tracker_wake_start(t);
		if (r < 0)
			return r;
	}
	/* Polling too: its scans' stat reads go to them. Without them, new
	 * tasks are read on the loop thread, as before. */
	r = tracker_pending_start(t);
	if (r < 0)
		log_warning_errno(r, "cannot start the stat readers, reading new tasks on "
				  "the loop, ignoring: %m");
	r = tracker_arm_timers(t);
	if (r < 0)
		return r;
	log_info("tracking %zu tasks through the %s sensor", tracker_count(t),
		 sensor_kind_name(sensor_kind_of(t->sensor)));
	return 0;
}

bool tracker_admits(struct tracker *t, pid_t tgid, const struct procfs_stat *st)
{
	if (scope_excluded(&t->scope, tgid, st->flags & PF_KTHREAD_FLAG, st->ppid))
		return false;
	switch (t->scope.kind) {
	case SCOPE_PID:
		return tgid == t->scope.pid || tidmap_get(&t->procs, st->ppid) != NULL;
	case SCOPE_CGROUP:
		return scope_cgroup_contains(&t->scope, tgid, tgid) > 0;
	default:
		return true;
	}
}

bool tracker_may_admit(struct tracker *t, pid_t tgid, pid_t *ppid)
{
	struct procfs_status st;

	if (procfs_task_status(tgid, tgid, &st) < 0 || tracker_gone_state(st.state) ||
	    scope_excluded(&t->scope, tgid, st.kthread, st.ppid))
		return false;
	*ppid = st.ppid;
	return t->scope.kind != SCOPE_CGROUP || scope_cgroup_contains(&t->scope, tgid, tgid) > 0;
}

void tracker_set_comm(struct tracked_task *task, const char *comm)
{
	memcpy(task->comm, comm, sizeof(task->comm));
	task->comm[sizeof(task->comm) - 1] = '\0';
}

void tracker_apply_stat(struct tracked_task *task, const struct procfs_stat *st)
{
	task->ppid = st->ppid;
	task->sid = st->session;
	task->flags = st->flags;
	task->state = st->state;
	task->nice = st->nice;
	task->policy = (int)(st->policy & ~(unsigned)SCHED_RESET_ON_FORK);
	task->rt_priority = (int)st->rt_priority;
	task->last_cpu = st->processor;
}

static struct tracked_proc *get_proc(struct tracker *t, pid_t tgid,
				     const struct task_origin *origin)
{
	struct tracked_proc *proc = tidmap_get(&t->procs, tgid);

	if (proc)
		return proc;
	proc = calloc(1, sizeof(*proc));
	if (!proc)
		return NULL;
	proc->tgid = tgid;
	TAILQ_INIT(&proc->threads);
	/* A forked child runs its parent's binary until it execs. */
	if (origin && origin->exe) {
		proc->exe = strdup(origin->exe);
		proc->exe_read = proc->exe != NULL;
	}
	if (tidmap_put(&t->procs, tgid, proc) < 0) {
		free(proc->exe);
		free(proc);
		return NULL;
	}
	TAILQ_INSERT_TAIL(&t->proc_list, proc, link);
	return proc;
}

struct tracked_task *tracker_add(struct tracker *t, pid_t tgid, pid_t tid,
				 const struct procfs_stat *st, const struct task_origin *origin)
{
	struct tracked_task *task;
	struct tracked_proc *proc;
	struct procfs_status status;

	if (origin) {
		status.ruid = origin->uid;
		status.euid = origin->euid;
		status.rgid = origin->gid;
	} else if (procfs_task_status(tgid, tid, &status) < 0)
		return NULL;
	task = calloc(1, sizeof(*task));
	if (!task)
		goto oom;
	proc = get_proc(t, tgid, origin);
	if (!proc || tidmap_put(&t->tasks, tid, task) < 0) {
		if (proc && proc->nthreads == 0)
			drop_proc(t, proc);
		free(task);
		goto oom;
	}
	task->tid = tid;
	task->tgid = tgid;
	task->status_fd = task->schedstat_fd = task->pidfd = -1;
	task->uid = status.ruid;
	task->euid = status.euid;
	task->gid = status.rgid;
	task->start_time = st->start_time;
	tracker_set_comm(task, st->comm);
	tracker_apply_stat(task, st);
	task->proc = proc;
	task->added_ns = task->active_ns = now_nsec(CLOCK_MONOTONIC);
	task->seen_gen = t->generation;
	task->active = true;
	TAILQ_INSERT_TAIL(&proc->threads, task, proc_link);
	proc->nthreads++;
	TAILQ_INSERT_TAIL(&t->active, task, list_link);
	t->nactive++;
	/* Found by a scan or an adoption, not by its fork's event: the bpf
	 * sensor learns it is in scope from us. */
	if (!t->event_ns && sensor_needs_seed(t->sensor))
		(void)sensor_seed(t->sensor, tid, task->uid, task->euid, task->gid);
	if (t->cb.task_new)
		t->cb.task_new(task, t->userdata);
	return task;
oom:
	log_error_errno(ENOMEM, "cannot track task %d: %m", (int)tid);
	return NULL;
}

void tracker_origin_of(const struct tracked_task *task, bool exe, struct task_origin *ret)
{
	*ret = (struct task_origin){ task->uid, task->euid, task->gid,
				     exe ? task->proc->exe : NULL };
}

void tracker_set_callbacks(struct tracker *t, const struct tracker_callbacks *cb,
			   void *userdata)
{
	t->cb = *cb;
	t->userdata = userdata;
}

struct tracked_task *tracker_lookup(struct tracker *t, pid_t tid)
{
	return tidmap_get(&t->tasks, tid);
}

/* Ancestors deeper than this are not followed: the tree a request names
 * was forked moments ago, a few levels at most. */
#define ADOPT_MAX_DEPTH 16

/* 1, 0 or -ESRCH as tracker_adopt(), for the process tgid. */
static int adopt_process(struct tracker *t, pid_t tgid, unsigned depth, bool defer)
{
	pid_t ppid;
	int r;

	if (tidmap_get(&t->procs, tgid))
		return 1;
	if (tracker_pending_get(t, tgid))
		return 0;
	if (!tracker_may_admit(t, tgid, &ppid))
		return -ESRCH;
	if (t->scope.kind == SCOPE_PID && tgid != t->scope.pid && !tidmap_get(&t->procs, ppid)) {
		if (depth >= ADOPT_MAX_DEPTH || ppid <= 1)
			return -ESRCH;
		/* Its parent's place in the table vouches for it: the
		 * parent first. */
		r = adopt_process(t, ppid, depth + 1, defer);
		if (r <= 0)
			return r;
	}
	tracker_scan_threads(t, tgid, false, defer);
	if (tidmap_get(&t->procs, tgid))
		return 1;
	return tracker_pending_get(t, tgid) ? 0 : -ESRCH;
}

int tracker_adopt(struct tracker *t, pid_t tid, bool defer)
{
	struct tracked_task *task = tidmap_get(&t->tasks, tid);
	struct procfs_status status;
	int r;

	if (task)
		return 1;
	if (tracker_pending_get(t, tid))
		return 0;
	/* /proc/<tid> answers for any thread; its Tgid names the process. */
	if (procfs_task_status(tid, tid, &status) < 0 || status.tgid <= 0)
		return -ESRCH;
	r = adopt_process(t, status.tgid, 0, defer);
	if (r <= 0)
		return r;
	/* The process is held, not this thread of it: a new one, unless the
	 * scan that took the process in just asked for it. */
	if (!tidmap_get(&t->tasks, tid) && !tracker_pending_get(t, tid))
		tracker_scan_threads(t, status.tgid, false, defer);
	task = tidmap_get(&t->tasks, tid);
	if (task) {
		log_task(LOG_LEVEL_DEBUG, tid, task->comm, NULL, "track",
			 "adopted from /proc on request, before its event or poll");
		return 1;
	}
	return tracker_pending_get(t, tid) ? 0 : -ESRCH;
}

const char *tracker_task_exe(const struct tracked_task *task)
{
	struct tracked_proc *proc = task->proc;

	if (!proc->exe_read) {
		proc->exe_read = true;
		(void)procfs_exe(proc->tgid, &proc->exe);
	}
	return proc->exe;
}

void tracker_forget_exe(struct tracked_proc *proc)
{
	free(proc->exe);
	proc->exe = NULL;
	proc->exe_read = false;
}

static void foreach_list(struct task_list *list, tracker_task_func_t fn, void *userdata)
{
	struct tracked_task *task;

	TAILQ_FOREACH(task, list, list_link)
		fn(task, userdata);
}

void tracker_foreach(struct tracker *t, tracker_task_func_t fn, void *userdata)
{
	foreach_list(&t->active, fn, userdata);
	foreach_list(&t->idle, fn, userdata);
}

void tracker_foreach_active(struct tracker *t, tracker_task_func_t fn, void *userdata)
{
	foreach_list(&t->active, fn, userdata);
}

size_t tracker_foreach_thread(struct tracker *t, pid_t tgid, tracker_task_func_t fn,
			      void *userdata)
{
	struct tracked_proc *proc = tidmap_get(&t->procs, tgid);
	struct tracked_task *task;

	if (!proc)
		return 0;
	TAILQ_FOREACH(task, &proc->threads, proc_link)
		fn(task, userdata);
	return proc->nthreads;
}

size_t tracker_count(const struct tracker *t)
{
	return tidmap_count(&t->tasks);
}

size_t tracker_count_active(const struct tracker *t)
{
	return t->nactive;
}

uint64_t tracker_lost_recoveries(const struct tracker *t)
{
	return t->lost_recoveries;
}

uint64_t tracker_event_ns(const struct tracker *t)
{
	return t->event_ns;
}

void tracker_set_read_cmdline(struct tracker *t, bool on)
{
	t->read_cmdline = on;
}

const char *tracker_event_cmdline(const struct tracker *t, const struct tracked_task *task,
				  size_t *len)
{
	if (!t->event_cmdline || t->event_cmdline_tid != task->tid)
		return NULL;
	*len = t->event_cmdline_len;
	return t->event_cmdline;
}

uint64_t tracker_events(const struct tracker *t)
{
	return t->events;
}

uint64_t tracker_loop_stat_reads(const struct tracker *t)
{
	return t->loop_stat_reads;
}

uint64_t tracker_deferred_stat_reads(const struct tracker *t)
{
	return t->deferred_reads;
}

uint64_t tracker_stats_told(const struct tracker *t)
{
	return t->stats_told;
}

void tracker_set_reader_priority(struct tracker *t, int fifo_prio)
{
	t->reader_prio = fifo_prio;
}

bool tracker_polling(const struct tracker *t)
{
	return t->polling;
}

const char *tracker_sensor(const struct tracker *t)
{
	return sensor_kind_name(sensor_kind_of(t->polling ? NULL : t->sensor));
}

bool tracker_tells_wakes(const struct tracker *t)
{
	return !t->polling && sensor_has_counters(t->sensor);
}

uint64_t tracker_sensor_lost(const struct tracker *t)
{
	return sensor_lost(t->sensor);
}
