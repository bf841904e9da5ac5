/* A task's per-tick facts from the bpf sensor's counters in the kernel:
 * one bpf() lookup through the task's pidfd, where the /proc path
 * (tracker_refresh.c) preads schedstat and often status.
 *
 * Each active task read this way keeps a pidfd of its thread open (it
 * is the key of task storage) until it goes idle, up to a budget taken
 * from RLIMIT_NOFILE; a task past it, or any task under the connector
 * or polling, gets -EOPNOTSUPP or -EMFILE and is read from /proc. */
#include "tracker_private.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "log.h"

/* fds left for everything else: sockets, /proc fds, the readers'. */
#define PIDFD_RESERVE 1024
#define PIDFD_MAX 8192

static size_t pidfd_budget(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return 0;
	if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > PIDFD_MAX + PIDFD_RESERVE)
		return PIDFD_MAX;
	return rl.rlim_cur > PIDFD_RESERVE ? (size_t)(rl.rlim_cur - PIDFD_RESERVE) : 0;
}

void tracker_reserve_pidfds(struct tracker *t)
{
	int fd, high;

	if (!sensor_has_counters(t->sensor))
		return;
	t->max_pidfds = pidfd_budget();
	/* Growing the fd table of a threaded process waits for an RCU grace
	 * period, each time it doubles: once here, not on a tick. */
	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	high = fcntl(fd, F_DUPFD_CLOEXEC, (int)(t->max_pidfds + PIDFD_RESERVE - 1));
	if (high < 0)
		log_debug("cannot grow the fd table for %zu pidfds: %m", t->max_pidfds);
	else
		close(high);
	close(fd);
}

void tracker_close_pidfd(struct tracker *t, struct tracked_task *task)
{
	if (task->pidfd < 0)
		return;
	close(task->pidfd);
	task->pidfd = -1;
	t->npidfds--;
}

/* The task's pidfd, opened once and kept, within the budget. */
static int task_pidfd(struct tracker *t, struct tracked_task *task)
{
	int r;

	if (!sensor_has_counters(t->sensor))
		return -EOPNOTSUPP;
	if (task->pidfd < 0) {
		/* max_pidfds: tracker_reserve_pidfds(), at start. */
		if (t->npidfds >= t->max_pidfds)
			return -EMFILE;
		r = sensor_task_pidfd(task->tid);
		if (r < 0)
			return r;
		task->pidfd = r;
		t->npidfds++;
	}
	return task->pidfd;
}

int tracker_task_counters(struct tracker *t, struct tracked_task *task, uint64_t now_ns,
			  struct sensor_counters *ret)
{
	int fd = task_pidfd(t, task);

	/* A pidfd is bound to its task: a reused tid cannot answer. */
	return fd < 0 ? fd : sensor_counters(t->sensor, fd, now_ns, ret);
}

int tracker_set_task_class(struct tracker *t, struct tracked_task *task, unsigned cls)
{
	int fd = task_pidfd(t, task);

	return fd < 0 ? fd : sensor_set_class(t->sensor, fd, cls);
}

int tracker_pidfd_identity(struct tracker *t, int pidfd, uint64_t *ret_start, pid_t *ret_tgid)
{
	return sensor_task_identity(t->sensor, pidfd, ret_start, ret_tgid);
}

int tracker_refresh_counters(struct tracker *t, struct tracked_task *task, uint64_t now_ns)
{
	struct sensor_counters c;
	int r = tracker_task_counters(t, task, now_ns, &c);

	if (r < 0)
		return r;
	if (c.state == 'R' || c.cpu_ns != task->cpu_ns)
		task->active_ns = now_ns;
	task->state = c.state;
	task->cpu_ns = c.cpu_ns;
	task->wait_ns = c.wait_ns;
	task->last_cpu = c.cpu;
	task->nvcsw = (uint32_t)c.nvcsw;
	task->sib_wakes = c.sib_wakes;
	task->timeslices = (uint32_t)(c.nvcsw + c.nivcsw);
	task->refreshed_ns = now_ns;
	task->stale = false;
	return 0;
}
