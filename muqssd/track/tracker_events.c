/* Applying proc connector events to the table.
 *
 * Events are per thread and arrive in order, but they describe the past:
 * by the time one is read the task may have exited and its tid been
 * reused. So every fact is reread from /proc and checked against the start
 * time, and an event about a task the table does not hold is dropped (the
 * next reconciliation settles anything missed). */
#include "tracker_private.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "time_util.h"

#define EVENTS_PER_WAKEUP 1024

static bool gone_state(char state)
{
	return state == 'Z' || state == 'X';
}

static void on_fork(struct tracker *t, const struct fork_proc_event *f)
{
	pid_t tid = f->child_pid, tgid = f->child_tgid;
	const struct tracked_task *donor;
	struct tracked_task *old;
	struct procfs_stat st;
	bool parent_in;

	if (tid == tgid) {
		/* A process: its parent is the thread that forked. */
		parent_in = tidmap_get(&t->procs, f->parent_tgid) ||
			    tracker_is_ghost(t, f->parent_tgid);
		if (!parent_in && (t->scope.kind != SCOPE_ALL || f->parent_tgid == t->scope.kthreadd))
			return;
		donor = tidmap_get(&t->tasks, f->parent_pid);
	} else {
		/* A thread: parent_* name the process's parent, not the
		 * creator; credentials come from the creator's group. */
		if (!tidmap_get(&t->procs, tgid))
			return;
		parent_in = true;
		donor = tidmap_get(&t->tasks, tgid);
	}
	if (procfs_task_stat(tgid, tid, &st) < 0) {
		/* Already gone, maybe after forking: a launcher. */
		if (tid == tgid && parent_in)
			tracker_ghost_add(t, tgid);
		return;
	}
	old = tidmap_get(&t->tasks, tid);
	if (old) {
		if (old->start_time == st.start_time && old->tgid == tgid)
			return; /* a scan found it first */
		tracker_remove(t, old);
	}
	if (st.flags & PF_KTHREAD_FLAG)
		return;
	if (gone_state(st.state)) {
		if (tid == tgid && parent_in)
			tracker_ghost_add(t, tgid);
		return;
	}
	if (!parent_in && !tracker_admits(t, tgid, &st))
		return;
	(void)tracker_add(t, tgid, tid, &st, donor);
}

static void on_exec(struct tracker *t, const struct proc_event *ev)
{
	pid_t tgid = ev->event_data.exec.process_tgid;
	struct tracked_proc *proc = tidmap_get(&t->procs, tgid);
	struct tracked_task *task, *next;
	struct procfs_stat st;

	if (!proc || procfs_task_stat(tgid, tgid, &st) < 0)
		return;
	/* exec from a thread other than the leader: the kernel killed the
	 * other threads and gave the exec'ing one the leader's tid and start
	 * time, without an event for the tid that vanished. */
	task = tidmap_get(&t->tasks, tgid);
	if (!task || task->start_time != st.start_time) {
		if (task)
			tracker_remove(t, task);
		proc = tidmap_get(&t->procs, tgid);
		if (!proc || gone_state(st.state))
			return;
		task = tracker_add(t, tgid, tgid, &st, TAILQ_FIRST(&proc->threads));
		if (!task)
			return;
	}
	for (struct tracked_task *o = TAILQ_FIRST(&proc->threads); o; o = next) {
		next = TAILQ_NEXT(o, proc_link);
		if (o != task)
			tracker_remove(t, o);
	}
	tracker_set_comm(task, st.comm);
	tracker_apply_stat(task, &st);
	free(proc->exe);
	proc->exe = NULL;
	(void)procfs_exe(tgid, &proc->exe);
	/* It runs: back on the active list now, not at the next sweep. */
	task->active_ns = now_nsec(CLOCK_MONOTONIC);
	tracker_set_active(t, task, true);
	t->event_ns = ev->timestamp_ns;
	if (t->cb.task_exec)
		t->cb.task_exec(task, t->userdata);
	t->event_ns = 0;
	log_debug("exec tid=%d comm=%s event_ns=%llu table_ns=%llu", (int)tgid, task->comm,
		  (unsigned long long)ev->timestamp_ns, (unsigned long long)now_nsec(CLOCK_MONOTONIC));
}

static void on_exit_event(struct tracker *t, const struct proc_event *ev)
{
	pid_t tid = ev->event_data.exit.process_pid, tgid = ev->event_data.exit.process_tgid;
	struct tracked_task *task = tidmap_get(&t->tasks, tid);
	struct procfs_stat st;

	if (!task) {
		/* Every fork event of the leader's process came before. */
		if (tid == tgid)
			tracker_ghost_forget(t, tgid);
		return;
	}
	/* An exit older than the task's entry may belong to an earlier
	 * owner of the tid that a rescan replaced: check before dropping. */
	if (ev->timestamp_ns < task->added_ns &&
	    procfs_task_stat(task->tgid, task->tid, &st) == 0 &&
	    st.start_time == task->start_time && !gone_state(st.state))
		return;
	tracker_remove(t, task);
	if (tid == tgid || !tidmap_get(&t->procs, tgid))
		tracker_ghost_forget(t, tgid);
}

static void on_comm(struct tracker *t, const struct comm_proc_event *c)
{
	struct tracked_task *task = tidmap_get(&t->tasks, c->process_pid);

	if (!task)
		return;
	memcpy(task->comm, c->comm, sizeof(task->comm));
	task->comm[sizeof(task->comm) - 1] = '\0';
	if (t->cb.task_exec)
		t->cb.task_exec(task, t->userdata);
}

static void on_id(struct tracker *t, const struct proc_event *ev)
{
	const struct id_proc_event *id = &ev->event_data.id;
	struct tracked_task *task = tidmap_get(&t->tasks, id->process_pid);

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

	if (!proc)
		return;
	TAILQ_FOREACH(task, &proc->threads, proc_link)
		task->sid = s->process_tgid;
}

static void on_ptrace(struct tracker *t, const struct ptrace_proc_event *p)
{
	struct tracked_task *task = tidmap_get(&t->tasks, p->process_pid);

	if (task)
		task->tracer = p->tracer_tgid;
}

static void on_event(const struct proc_event *ev, void *userdata)
{
	struct tracker *t = userdata;

	t->events++;
	switch (ev->what) {
	case PROC_EVENT_FORK:
		t->event_ns = ev->timestamp_ns;
		on_fork(t, &ev->event_data.fork);
		t->event_ns = 0;
		break;
	case PROC_EVENT_EXEC:
		on_exec(t, ev);
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

static int on_io(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct tracker *t = userdata;
	int r;

	/* A bounded batch per wakeup keeps the loop responsive in a storm;
	 * the source stays readable, so the rest comes next iteration. */
	r = connector_receive(t->conn, EVENTS_PER_WAKEUP, on_event, t);
	if (r == -ENOBUFS)
		tracker_schedule_recovery(t);
	else if (r < 0)
		log_warning_errno(r, "cannot read the proc connector, ignoring: %m");
	return 0;
}

int tracker_flush(struct tracker *t)
{
	int r;

	if (!t->conn)
		return 0;
	do
		r = connector_receive(t->conn, EVENTS_PER_WAKEUP, on_event, t);
	while (r == EVENTS_PER_WAKEUP);
	if (r == -ENOBUFS) {
		tracker_schedule_recovery(t);
		return 0;
	}
	return r < 0 ? r : 0;
}

int tracker_attach_connector(struct tracker *t)
{
	int r;

	r = sd_event_add_io(t->event, &t->io_source, connector_fd(t->conn), EPOLLIN, on_io, t);
	if (r < 0)
		return log_error_errno(r, "cannot watch the proc connector: %m");
	/* Drain events before timers fire, so the table is fresh for a tick. */
	(void)sd_event_source_set_priority(t->io_source, SD_EVENT_PRIORITY_IMPORTANT);
	return 0;
}
