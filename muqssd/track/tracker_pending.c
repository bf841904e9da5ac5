/* Tasks found by an event, read off the loop thread.
 *
 * A fork's child, or a process that just exec'd, may be in (another)
 * execve by the time its event is read, and reading its stat would wait
 * for that exec to finish: up to a second when the task sits preempted
 * behind one of our boosts (bench/README.md, "The stall"). So the loop
 * only opens the file at the event and the stat worker reads it (the bpf
 * sensor tells the stat with the event: then nothing is read, unless a
 * rule needs the command line, which only a read gives). Until
 * the read is back the task is pending: a fork's child is not in the
 * table, and the loop does not know it, so nothing pins or boosts a task
 * whose identity is not yet known; an exec'd task stays as it was.
 *
 * A read is taken some time after its event, before or after the events
 * that follow. So later events are kept on the entry: an exit drops it
 * (its result is then ignored: each read has a cookie); a comm or setsid
 * is applied over whatever the read says; an exec means the read may be
 * from before it, so the read is applied as it is (never dropped: a task
 * that execs in a loop would never be applied) and read again for the
 * exec. Exits, comms and execs of a task come in order, so the last one
 * wins.
 *
 * A read the worker's full queue cannot take waits, its file open, until a
 * result makes room: never on the loop thread, where it would wait with
 * the task (the reason for the worker), and never dropped, which would lose
 * the task for good under --scope-pid if its parent exits before the next
 * scan. A storm that outruns the workers is still tracked exactly, later.
 * Past DEFERRED_MAX waiting reads, which hold an fd each, a read waits
 * with its files not yet opened, and they are opened when it reaches the
 * reader: its task's exit event drops it meanwhile, as it drops any, and
 * what the late read finds must be in scope on its own (vouched()). So a
 * scan, which hands the reader every thread it verifies (polling: all of
 * them, every 250 ms), never reads on the loop either. */
#include "tracker_private.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "time_util.h"

#define READER_THREADS 2
/* Reads waiting for room, each holding an fd: a storm of thousands must
 * not run the daemon out of fds (a soft limit of 1,024 under systemd),
 * nor grow the fd table on the loop (an RCU grace period each time). */
#define DEFERRED_MAX 256

struct tracker_pending *tracker_pending_get(struct tracker *t, pid_t tid)
{
	return tidmap_get(&t->pending, tid);
}

bool tracker_proc_known(struct tracker *t, pid_t tgid)
{
	struct tracker_pending *p = tracker_pending_get(t, tgid);

	return tidmap_get(&t->procs, tgid) || (p && p->add && p->parent_in);
}

static void complete(struct tracker *t, struct tracker_pending *p, int r,
		     const struct procfs_stat *read, const char *cmdline, size_t cmdline_len);

/* Off the waiting list; its fds, if open, are the caller's to close or
 * pass on. */
static void deferred_take(struct tracker *t, struct tracker_pending *p)
{
	TAILQ_REMOVE(&t->deferred, p, deferred_link);
	t->ndeferred--;
	if (p->deferred_fd >= 0)
		t->ndeferred_open--;
	p->deferred = false;
	p->deferred_fd = p->deferred_cmdline_fd = -1;
}

/* At the tail, or the head (head: back where it was). */
static void defer(struct tracker *t, struct tracker_pending *p, int fd, int cmdline_fd, bool head)
{
	if (TAILQ_EMPTY(&t->deferred))
		log_debug("stat reader's queue full: reads wait for room");
	p->deferred = true;
	p->deferred_fd = fd;
	p->deferred_cmdline_fd = fd >= 0 ? cmdline_fd : -1;
	if (head)
		TAILQ_INSERT_HEAD(&t->deferred, p, deferred_link);
	else
		TAILQ_INSERT_TAIL(&t->deferred, p, deferred_link);
	t->ndeferred++;
	if (fd >= 0)
		t->ndeferred_open++;
}

static void close_fds(int fd, int cmdline_fd)
{
	if (fd >= 0)
		close(fd);
	if (cmdline_fd >= 0)
		close(cmdline_fd);
}

static void undefer(struct tracker *t, struct tracker_pending *p)
{
	if (p->deferred) {
		close_fds(p->deferred_fd, p->deferred_cmdline_fd);
		deferred_take(t, p);
	}
}

/* Opens what the read takes: stat, and a main thread's cmdline when a
 * rule needs it (opening takes no lock of the task's; reading does).
 * Returns 0, or -ESRCH or -errno from stat's open. */
static int open_files(struct tracker *t, const struct tracker_pending *p, int *fd,
		      int *cmdline_fd)
{
	*cmdline_fd = -1;
	*fd = procfs_task_open(p->tgid, p->tid, "stat");
	if (*fd < 0)
		return *fd;
	if (t->read_cmdline && p->tid == p->tgid)
		*cmdline_fd = procfs_task_open(p->tgid, p->tid, "cmdline");
	return 0;
}

/* Hands waiting reads to the worker while its queue has room, opening
 * those that wait unopened. */
static void submit_deferred(struct tracker *t)
{
	struct tracker_pending *p;

	while (t->reader && (p = TAILQ_FIRST(&t->deferred))) {
		int fd = p->deferred_fd, cmdline_fd = p->deferred_cmdline_fd, r;

		deferred_take(t, p);
		if (fd < 0) {
			p->opened_late = true;
			r = open_files(t, p, &fd, &cmdline_fd);
			if (r < 0) {
				complete(t, p, r, NULL, NULL, 0); /* may read again: from the top */
				continue;
			}
		}
		if (stat_worker_submit_cmdline(t->reader, fd, cmdline_fd, p->tid, p->cookie) < 0) {
			defer(t, p, fd, cmdline_fd, true);
			return;
		}
	}
}

void tracker_pending_drop(struct tracker *t, struct tracker_pending *p)
{
	undefer(t, p);
	if (tidmap_get(&t->pending, p->tid) == p)
		(void)tidmap_remove(&t->pending, p->tid);
	TAILQ_REMOVE(&t->pending_list, p, link);
	free(p->exe);
	free(p);
}

struct tracker_pending *tracker_pending_new(struct tracker *t, pid_t tid, pid_t tgid, bool add)
{
	struct tracker_pending *p = tidmap_get(&t->pending, tid);

	/* An entry left for tid: its exit event was lost. */
	if (p)
		tracker_pending_drop(t, p);
	p = calloc(1, sizeof(*p));
	if (!p || tidmap_put(&t->pending, tid, p) < 0) {
		free(p);
		log_error_errno(ENOMEM, "cannot track task %d: %m", (int)tid);
		return NULL;
	}
	p->tid = tid;
	p->tgid = tgid;
	p->add = add;
	p->deferred_fd = p->deferred_cmdline_fd = -1;
	TAILQ_INSERT_TAIL(&t->pending_list, p, link);
	return p;
}

void tracker_pending_drop_threads(struct tracker *t, pid_t tgid)
{
	struct tracker_pending *p, *next;

	TAILQ_FOREACH_SAFE(p, &t->pending_list, link, next)
		if (p->tgid == tgid && p->tid != tgid && p->add)
			tracker_pending_drop(t, p);
}

void tracker_pending_sid(struct tracker *t, pid_t tgid)
{
	struct tracker_pending *p;

	TAILQ_FOREACH(p, &t->pending_list, link)
		if (p->tgid == tgid) {
			p->sid_set = true;
			p->sid = tgid;
		}
}

/* What an exec changed, once read: as on_exec did before the worker. */
static void apply_exec(struct tracker *t, struct tracked_task *task,
		       const struct procfs_stat *st, uint64_t exec_ns)
{
	tracker_set_comm(task, st->comm);
	tracker_apply_stat(task, st);
	/* The loop may have boosted it, or stopped, since the read. */
	tracker_read_policy(task);
	tracker_forget_exe(task->proc);
	/* It runs: back on the active list now, not at the next sweep. */
	task->active_ns = now_nsec(CLOCK_MONOTONIC);
	tracker_set_active(t, task, true);
	t->event_ns = exec_ns;
	if (t->cb.task_exec)
		t->cb.task_exec(task, t->userdata);
	t->event_ns = 0;
	log_debug("exec tid=%d comm=%s event_ns=%llu table_ns=%llu", (int)task->tid, task->comm,
		  (unsigned long long)exec_ns, (unsigned long long)now_nsec(CLOCK_MONOTONIC));
}

/* The events kept while the read was out win over it. */
static void apply_kept(const struct tracker_pending *p, struct procfs_stat *st)
{
	if (p->comm_set)
		memcpy(st->comm, p->comm, sizeof(st->comm));
	if (p->sid_set)
		st->session = p->sid;
}

/* Whether the event or scan that made p vouches that it is in scope. Not
 * for files opened late: the tid may name another task by then (pids
 * wrap in seconds under a storm), so scope is asked of what was read,
 * unless it is a thread of a process the table holds. */
static bool vouched(struct tracker *t, const struct tracker_pending *p)
{
	if (!p->parent_in)
		return false;
	return !p->opened_late || (p->tid != p->tgid && tidmap_get(&t->procs, p->tgid));
}

/* A fork's child, read: added as on_fork did before the worker. Returns
 * the task, or NULL when it is not to be tracked. */
static struct tracked_task *complete_add(struct tracker *t, struct tracker_pending *p, int r,
					 struct procfs_stat *st)
{
	pid_t tid = p->tid, tgid = p->tgid;
	struct tracked_task *task;

	task = tidmap_get(&t->tasks, tid);
	if (p->verify && (r == -ESRCH || (r == 0 && tracker_gone_state(st->state)))) {
		/* A scan listed it, and it left before its read: its exit
		 * event was lost, or is yet to be read. */
		if (task && task->tgid == tgid)
			tracker_remove(t, task);
		return NULL;
	}
	if (r < 0 || tracker_gone_state(st->state)) {
		/* Already gone, maybe after forking: a launcher. */
		if (tid == tgid && p->parent_in && !p->verify &&
		    !(r == 0 && (st->flags & PF_KTHREAD_FLAG)))
			tracker_ghost_add(t, tgid);
		return NULL;
	}
	if (task && task->start_time == st->start_time && task->tgid == tgid) {
		/* A scan or a request found it first, or a scan checks it. */
		if (p->verify) {
			tracker_verify_task(t, task, st);
			/* The loop may have boosted it since the read. */
			tracker_read_policy(task);
		}
		return task;
	}
	if (task)
		tracker_remove(t, task);
	if (st->flags & PF_KTHREAD_FLAG)
		return NULL;
	if (!vouched(t, p) && !tracker_admits(t, tgid, st))
		return NULL;
	apply_kept(p, st);
	t->event_ns = p->fork_ns;
	task = tracker_add(t, tgid, tid, st, p->has_origin ? &p->origin : NULL);
	t->event_ns = 0;
	if (task && p->tracer_set)
		task->tracer = p->tracer;
	return task;
}

/* An exec'd process, read. Returns the task, or NULL when it is gone. */
static struct tracked_task *complete_exec(struct tracker *t, struct tracker_pending *p, int r,
					  struct procfs_stat *st)
{
	struct tracked_task *task = tidmap_get(&t->tasks, p->tgid);

	/* Gone: its exit event, or the tick's next read, removes it. */
	if (!task || task->tgid != p->tgid || r < 0 || tracker_gone_state(st->state))
		return NULL;
	/* The table held a task the tid had before: its exit was lost.
	 * The next scan finds the new one. */
	if (task->start_time != st->start_time) {
		tracker_remove(t, task);
		return NULL;
	}
	return task;
}

static void complete_read(struct tracker *t, struct tracker_pending *p, int r,
			  const struct procfs_stat *read)
{
	struct tracked_task *task;
	struct procfs_stat st;

	if (r == -EINVAL)
		log_task(LOG_LEVEL_WARNING, p->tid, NULL, NULL, "track",
			 "cannot parse /proc/%d/task/%d/stat, ignoring", (int)p->tgid, (int)p->tid);
	if (r == 0)
		st = *read;
	task = p->add ? complete_add(t, p, r, &st) : complete_exec(t, p, r, &st);
	if (task && p->exec_ns) {
		if (p->add && p->reread) {
			/* Read maybe before its exec: read the exec'd one. */
			p->add = p->reread = false;
			tracker_pending_read(t, p);
			return;
		}
		apply_kept(p, &st);
		apply_exec(t, task, &st, p->exec_ns);
		if (p->reread) {
			p->reread = false;
			tracker_pending_read(t, p);
			return;
		}
	}
	tracker_pending_drop(t, p);
}

/* The command line read with the stat is the callbacks' (task_new from
 * complete_add, task_exec) while the result is applied. */
static void complete(struct tracker *t, struct tracker_pending *p, int r,
		     const struct procfs_stat *read, const char *cmdline, size_t cmdline_len)
{
	/* A callback may complete another read (an adoption's scan): the
	 * outer one's command line is back once that returns. */
	const char *outer = t->event_cmdline;
	size_t outer_len = t->event_cmdline_len;
	pid_t outer_tid = t->event_cmdline_tid;

	t->event_cmdline = cmdline;
	t->event_cmdline_len = cmdline_len;
	t->event_cmdline_tid = p->tid;
	complete_read(t, p, r, read);
	t->event_cmdline = outer;
	t->event_cmdline_len = outer_len;
	t->event_cmdline_tid = outer_tid;
}

static void on_read(const struct stat_result *res, void *userdata)
{
	struct tracker *t = userdata;
	struct tracker_pending *p;

	/* This result's slot is free again. Before the lookup: a read
	 * that cannot open its files is completed there, and dropped. */
	submit_deferred(t);
	p = tidmap_get(&t->pending, res->tid);
	/* Dropped (an exit, an exec that killed it) or asked again since. */
	if (!p || p->cookie != res->cookie)
		return;
	complete(t, p, res->r, &res->st, res->cmdline, res->cmdline_len);
}

void tracker_pending_read(struct tracker *t, struct tracker_pending *p)
{
	struct procfs_stat st;
	int fd, cmdline_fd, r;

	p->cookie = ++t->cookies;
	/* The new read is taken after every event so far. */
	p->comm_set = p->sid_set = false;
	p->opened_late = false;
	undefer(t, p);
	if (t->reader && t->ndeferred_open >= DEFERRED_MAX) {
		/* Its files are opened when it reaches the reader. */
		defer(t, p, -1, -1, false);
		t->deferred_reads++;
		return;
	}
	r = open_files(t, p, &fd, &cmdline_fd);
	if (r < 0) {
		complete(t, p, r, NULL, NULL, 0);
		return;
	}
	if (t->reader) {
		/* Behind the ones already waiting, so they keep their order. */
		if (TAILQ_EMPTY(&t->deferred) &&
		    stat_worker_submit_cmdline(t->reader, fd, cmdline_fd, p->tid, p->cookie) == 0)
			return;
		defer(t, p, fd, cmdline_fd, false);
		t->deferred_reads++;
		return;
	}
	/* No worker (at exit): read here, the stat only (a rule reads the
	 * command line if it must). */
	t->loop_stat_reads++;
	r = procfs_stat_read(fd, &st);
	close_fds(fd, cmdline_fd);
	complete(t, p, r, &st, NULL, 0);
}

void tracker_pending_take(struct tracker *t, struct tracker_pending *p,
			  const struct procfs_stat *told)
{
	/* A command line only a read gives. */
	if (!told || (t->read_cmdline && p->tid == p->tgid)) {
		tracker_pending_read(t, p);
		return;
	}
	t->stats_told++;
	p->cookie = ++t->cookies;
	complete(t, p, 0, told, NULL, 0);
}

void tracker_pending_flush(struct tracker *t)
{
	if (t->reader)
		(void)stat_worker_drain(t->reader);
}

void tracker_finish_pending(struct tracker *t)
{
	struct tracker_pending *p;

	if (!t)
		return;
	/* Fork events still queued in the socket become pending first. */
	(void)tracker_flush(t);
	/* No worker from here on: reads in flight are waited for and their
	 * results dropped (stale cookies), and every read is taken here. */
	t->reader = stat_worker_free(t->reader);
	while ((p = TAILQ_FIRST(&t->pending_list)))
		tracker_pending_read(t, p);
}

int tracker_pending_start(struct tracker *t)
{
	/* Results are events: applied before timers, like the connector's. */
	return stat_worker_new(&t->reader, t->event, SD_EVENT_PRIORITY_IMPORTANT, READER_THREADS,
			       t->reader_prio, on_read, t);
}

void tracker_pending_stop(struct tracker *t)
{
	struct tracker_pending *p;

	t->reader = stat_worker_free(t->reader);
	while ((p = TAILQ_FIRST(&t->pending_list)))
		tracker_pending_drop(t, p);
	tidmap_done(&t->pending);
}
