/* Applying the sensor's events (the proc connector's, or the bpf
 * sensor's in the same form) to the table.
 *
 * Events are per thread and arrive in order, but they describe the past:
 * by the time one is read the task may have exited and its tid been
 * reused. So every fact is reread from /proc and checked against the start
 * time, and an event about a task the table does not hold is dropped (the
 * next reconciliation settles anything missed). A fork's or an exec's
 * stat is read off the loop (see tracker_pending.c), unless the sensor
 * told it with the event (bpf). */
#include "tracker_private.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "time_util.h"

#define EVENTS_PER_WAKEUP 1024

/* The child is read off the loop (tracker_pending.c): it may be in an
 * exec already. Whether it is in scope is decided here, from its parent
 * as the event names it, since the parent may be gone by then. */
static void on_fork(struct tracker *t, const struct fork_proc_event *f, uint64_t ns,
		    const struct procfs_stat *told)
{
	pid_t tid = f->child_pid, tgid = f->child_tgid;
	struct tracked_task *donor;
	struct tracker_pending *pp, *p;
	bool parent_in;

	if (tid == tgid) {
		/* A process: its parent is the thread that forked. */
		pp = tracker_pending_get(t, f->parent_tgid);
		parent_in = tracker_proc_known(t, f->parent_tgid) ||
			    tracker_is_ghost(t, f->parent_tgid);
		if (!parent_in && (t->scope.kind != SCOPE_ALL || f->parent_tgid == t->scope.kthreadd))
			return;
		donor = tidmap_get(&t->tasks, f->parent_pid);
	} else {
		/* A thread: parent_* name the process's parent, not the
		 * creator; credentials come from the creator's group. */
		pp = tracker_pending_get(t, tgid);
		parent_in = tidmap_get(&t->procs, tgid) != NULL;
		if (!parent_in && !(pp && pp->add))
			return;
		parent_in = parent_in || pp->parent_in;
		donor = tidmap_get(&t->tasks, tgid);
	}
	p = tracker_pending_new(t, tid, tgid, true);
	if (!p)
		return;
	p->parent_in = parent_in;
	p->fork_ns = ns;
	/* A parent whose exec is not yet applied has a stale exe. */
	if (donor)
		tracker_origin_of(donor, !(pp && pp->exec_ns), &p->origin);
	else if (pp && pp->add && pp->has_origin)
		p->origin = (struct task_origin){ pp->origin.uid, pp->origin.euid, pp->origin.gid,
						  pp->exec_ns ? NULL : pp->origin.exe };
	p->has_origin = donor || (pp && pp->add && pp->has_origin);
	if (p->origin.exe) {
		p->exe = strdup(p->origin.exe);
		p->origin.exe = p->exe;
	}
	if (donor && t->cb.task_forked)
		t->cb.task_forked(donor, tid, tgid, ns, t->userdata);
	tracker_pending_take(t, p, told);
}

/* What an exec changes that needs no read is done here; the rest (comm,
 * the new flags, the identity check) when its stat is read. */
static void on_exec(struct tracker *t, const struct proc_event *ev,
		    const struct procfs_stat *told)
{
	pid_t tgid = ev->event_data.exec.process_tgid;
	struct tracked_proc *proc = tidmap_get(&t->procs, tgid);
	struct tracker_pending *p = tracker_pending_get(t, tgid);
	struct tracked_task *task = tidmap_get(&t->tasks, tgid), *o, *next;
	bool leaderless = false;

	/* A thread of another process that had the tid: its exit was lost. */
	if (task && task->tgid != tgid) {
		tracker_remove(t, task);
		task = NULL;
		proc = tidmap_get(&t->procs, tgid);
	}
	/* The exec killed every other thread, those still being read too. */
	tracker_pending_drop_threads(t, tgid);
	if (proc) {
		/* From a thread other than the leader, the kernel gave the
		 * exec'ing one the leader's tid and start time, without an
		 * event for the tid that vanished. */
		for (o = TAILQ_FIRST(&proc->threads); o; o = next) {
			next = TAILQ_NEXT(o, proc_link);
			if (o != task)
				tracker_remove(t, o);
		}
		/* The leader had left: the process comes back, read anew. */
		leaderless = !task;
	}
	if (p) {
		/* A read is out: it may be from before this exec. */
		if (leaderless && !p->add) {
			p->add = true;
			p->parent_in = true;
		}
		p->exec_ns = ev->timestamp_ns;
		p->reread = true;
		p->comm_set = false;
		return;
	}
	if (!task && !leaderless)
		return;
	p = tracker_pending_new(t, tgid, tgid, leaderless);
	if (!p)
		return;
	p->parent_in = leaderless;
	p->exec_ns = ev->timestamp_ns;
	tracker_pending_take(t, p, told);
}

/* Whether the table's task still runs, without its stat (which can wait
 * on an exec): its own status fd is bound to it; by path a tid reused
 * since cannot be told apart, which the next verifying scan settles. */
static bool still_alive(struct tracked_task *task)
{
	struct procfs_status st;
	int r;

	if (task->status_fd >= 0)
		r = procfs_status_pread(task->status_fd, &st);
	else
		r = procfs_task_status(task->tgid, task->tid, &st);
	return r == 0 && st.tgid == task->tgid && !tracker_gone_state(st.state);
}

static void on_exit_event(struct tracker *t, const struct proc_event *ev)
{
	pid_t tid = ev->event_data.exit.process_pid, tgid = ev->event_data.exit.process_tgid;
	struct tracked_task *task = tidmap_get(&t->tasks, tid);
	struct tracker_pending *p = tracker_pending_get(t, tid);

	if (!task) {
		if (p)
			tracker_pending_drop(t, p);
		/* Every fork event of the leader's process came before. */
		if (tid == tgid)
			tracker_ghost_forget(t, tgid);
		return;
	}
	/* An exit older than the task's entry may belong to an earlier
	 * owner of the tid that a rescan replaced: check before dropping. */
	if (ev->timestamp_ns < task->added_ns && still_alive(task))
		return;
	if (p)
		tracker_pending_drop(t, p);
	tracker_remove(t, task);
	if (tid == tgid || !tidmap_get(&t->procs, tgid))
		tracker_ghost_forget(t, tgid);
}

static void on_comm(struct tracker *t, const struct comm_proc_event *c)
{
	struct tracked_task *task = tidmap_get(&t->tasks, c->process_pid);
	struct tracker_pending *p = tracker_pending_get(t, c->process_pid);

	if (p) {
		memcpy(p->comm, c->comm, sizeof(p->comm));
		p->comm[sizeof(p->comm) - 1] = '\0';
		p->comm_set = true;
	}
	if (!task)
		return;
	memcpy(task->comm, c->comm, sizeof(task->comm));
	task->comm[sizeof(task->comm) - 1] = '\0';
	if (t->cb.task_exec)
		t->cb.task_exec(task, t->userdata);
}

/* A pending child that lends its creator's credentials takes its own. */
static void pending_id(struct tracker *t, const struct proc_event *ev)
{
	const struct id_proc_event *id = &ev->event_data.id;
	struct tracker_pending *p = tracker_pending_get(t, id->process_pid);

	if (!p || !p->add || !p->has_origin)
		return;
	if (ev->what == PROC_EVENT_GID) {
		p->origin.gid = id->r.rgid;
		return;
	}
	p->origin.uid = id->r.ruid;
	p->origin.euid = id->e.euid;
}

static void on_id(struct tracker *t, const struct proc_event *ev)
{
	const struct id_proc_event *id = &ev->event_data.id;
	struct tracked_task *task = tidmap_get(&t->tasks, id->process_pid);

	pending_id(t, ev);
	if (!task)
		return;
	if (ev->what == PROC_EVENT_GID) {
		task->gid = id->r.rgid;
		return;
	}
	if (task->uid == id->r.ruid && task->euid == id->e.euid)
		return;
	task->uid = id->r.ruid;
	task->euid = id->e.euid;
	if (t->cb.task_uid)
		t->cb.task_uid(task, t->userdata);
}

static void on_sid(struct tracker *t, const struct sid_proc_event *s)
{
	struct tracked_proc *proc = tidmap_get(&t->procs, s->process_tgid);
	struct tracked_task *task;

	tracker_pending_sid(t, s->process_tgid);
	if (!proc)
		return;
	TAILQ_FOREACH(task, &proc->threads, proc_link)
		task->sid = s->process_tgid;
}

static void on_ptrace(struct tracker *t, const struct ptrace_proc_event *p)
{
	struct tracked_task *task = tidmap_get(&t->tasks, p->process_pid);
	struct tracker_pending *pt = tracker_pending_get(t, p->process_pid);

	if (pt) {
		pt->tracer_set = true;
		pt->tracer = p->tracer_tgid;
	}
	if (task)
		task->tracer = p->tracer_tgid;
}

/* A sleeper woke: the sensor tells, so the tick reads no sleeper. One
 * the tick still counts active ignores it; the next read decides. */
static void on_wake(struct tracker *t, const struct proc_event *ev)
{
	struct tracked_task *task = tidmap_get(&t->tasks, ev->event_data.exit.process_pid);

	if (task && task->tgid == ev->event_data.exit.process_tgid && !task->active) {
		task->active_ns = ev->timestamp_ns;
		tracker_set_active(t, task, true);
		if (t->cb.task_woke)
			t->cb.task_woke(task, t->userdata);
	}
}

/* A lock wait's begin or end: both threads known, of one process. */
static void on_lock(struct tracker *t, const struct proc_event *ev, bool begins)
{
	const struct fork_proc_event *f = &ev->event_data.fork;
	struct tracked_task *waiter = tidmap_get(&t->tasks, f->parent_pid), *holder = NULL;

	if (!waiter || waiter->tgid != f->parent_tgid || !t->cb.lock_wait)
		return;
	if (begins) {
		holder = tidmap_get(&t->tasks, f->child_pid);
		if (!holder || holder->tgid != waiter->tgid)
			return;
		/* Read now, not at the next tick: the loop queues it at once
		 * if it is runnable. One lookup in the sensor's storage. */
		if (!holder->active) {
			holder->active_ns = ev->timestamp_ns;
			tracker_set_active(t, holder, true);
		}
		(void)tracker_refresh_counters(t, holder, now_nsec(CLOCK_MONOTONIC));
	}
	t->cb.lock_wait(waiter, holder, t->userdata);
}

static void on_event(const struct proc_event *ev, const struct procfs_stat *st, void *userdata)
{
	struct tracker *t = userdata;

	t->events++;
	/* Not the kernel's enum: the bpf sensor's own. */
	switch ((unsigned)ev->what) {
	case SENSOR_EVENT_WAKE:
		on_wake(t, ev);
		return;
	case SENSOR_EVENT_LOCK_WAIT:
	case SENSOR_EVENT_LOCK_DONE:
		on_lock(t, ev, (unsigned)ev->what == SENSOR_EVENT_LOCK_WAIT);
		return;
	}
	switch (ev->what) {
	case PROC_EVENT_FORK:
		on_fork(t, &ev->event_data.fork, ev->timestamp_ns, st);
		break;
	case PROC_EVENT_EXEC:
		on_exec(t, ev, st);
		break;
	case PROC_EVENT_EXIT:
		on_exit_event(t, ev);
		break;
	case PROC_EVENT_COMM:
		on_comm(t, &ev->event_data.comm);
		break;
	case PROC_EVENT_UID:
	case PROC_EVENT_GID:
		on_id(t, ev);
		break;
	case PROC_EVENT_SID:
		on_sid(t, &ev->event_data.sid);
		break;
	case PROC_EVENT_PTRACE:
		on_ptrace(t, &ev->event_data.ptrace);
		break;
	case PROC_EVENT_COREDUMP:
		/* The exit event follows; nothing to keep. */
		break;
	default:
		break;
	}
}

void tracker_receive(struct tracker *t)
{
	int r;

	if (!t->sensor)
		return;
	/* A bounded batch per wakeup keeps the loop responsive in a storm;
	 * the source stays readable, so the rest comes next iteration. */
	r = sensor_receive(t->sensor, EVENTS_PER_WAKEUP, on_event, t);
	if (r == -ENOBUFS)
		tracker_schedule_recovery(t);
	else if (r < 0)
		log_warning_errno(r, "cannot read the %s sensor, ignoring: %m", tracker_sensor(t));
}

static int on_io(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	tracker_receive(userdata);
	return 0;
}

int tracker_flush(struct tracker *t)
{
	int r;

	if (!t->sensor)
		return 0;
	do
		r = sensor_receive(t->sensor, EVENTS_PER_WAKEUP, on_event, t);
	while (r == EVENTS_PER_WAKEUP);
	/* Reads still out are not waited for: one may wait on an exec. */
	tracker_pending_flush(t);
	if (r == -ENOBUFS) {
		tracker_schedule_recovery(t);
		return 0;
	}
	return r < 0 ? r : 0;
}

int tracker_attach_sensor(struct tracker *t)
{
	int r;

	r = sd_event_add_io(t->event, &t->io_source, sensor_fd(t->sensor), EPOLLIN, on_io, t);
	if (r < 0)
		return log_error_errno(r, "cannot watch the %s sensor: %m", tracker_sensor(t));
	/* Drain events before timers fire, so the table is fresh for a tick. */
	(void)sd_event_source_set_priority(t->io_source, SD_EVENT_PRIORITY_IMPORTANT);
	return 0;
}
