/* Wires the task tracker into the daemon.
 *
 * Debug dump (until `muqssctl tasks --json` is there): on SIGUSR1 the
 * daemon drains queued proc events and writes the table to
 * <state_dir>/tasks.json, atomically (a temporary file renamed over it),
 * creating state_dir (0755) if needed. The file holds one object:
 *   { "dump_seq": n, "polling": bool, "events": n,
 *     "lost_event_recoveries": n, "count": n, "tasks": [ {...}, ... ] }
 * with the task objects of tracker_dump_json(). Tests use it. */
#include "daemon.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "tracker.h"

static uint64_t dump_seq;

static void on_recovered(struct tracker *t, void *userdata)
{
	struct daemon *d = userdata;

	d->counters.lost_event_recoveries = tracker_lost_recoveries(t);
	daemon_notify_status(d);
}

static void on_task_new(struct tracked_task *task, void *userdata)
{
	log_debug("new tid=%d tgid=%d comm=%s", (int)task->tid, (int)task->tgid, task->comm);
	daemon_sched_task_new(userdata, task);
}

static void on_task_exec(struct tracked_task *task, void *userdata)
{
	daemon_sched_task_exec(userdata, task);
}

static void on_task_exit(struct tracked_task *task, void *userdata)
{
	log_debug("exit tid=%d comm=%s", (int)task->tid, task->comm);
	daemon_sched_task_exit(userdata, task);
}

static int mkdir_parents(const char *path, mode_t mode)
{
	char buf[4096];

	if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf))
		return -ENAMETOOLONG;
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, mode) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, mode) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

/* Relative to the directory fd, with O_EXCL|O_NOFOLLOW on a fresh temp
 * name: a symlink planted at either name is replaced, never written through. */
static int write_atomic(const char *dir, const char *name, const char *text)
{
	char tmp[256];
	size_t len = strlen(text);
	int dir_fd, fd, r = 0;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", name) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dir_fd < 0)
		return -errno;
	/* A temp file left by a crash (or planted) would fail O_EXCL forever. */
	if (unlinkat(dir_fd, tmp, 0) < 0 && errno != ENOENT) {
		r = -errno;
		goto out;
	}
	fd = openat(dir_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		r = -errno;
		goto out;
	}
	for (size_t off = 0; off < len;) {
		ssize_t n = write(fd, text + off, len - off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			break;
		}
		off += (size_t)n;
	}
	if (close(fd) < 0 && r == 0)
		r = -errno;
	if (r == 0 && renameat(dir_fd, tmp, dir_fd, name) < 0)
		r = -errno;
	if (r < 0)
		(void)unlinkat(dir_fd, tmp, 0);
out:
	close(dir_fd);
	return r;
}

static int dump_to_state_dir(struct daemon *d)
{
	cJSON *root, *tasks;
	char *text = NULL;
	int r;

	(void)tracker_flush(d->tracker);
	root = cJSON_CreateObject();
	tasks = root ? cJSON_AddArrayToObject(root, "tasks") : NULL;
	if (!tasks) {
		r = -ENOMEM;
		goto out;
	}
	cJSON_AddNumberToObject(root, "dump_seq", (double)++dump_seq);
	cJSON_AddBoolToObject(root, "polling", tracker_polling(d->tracker));
	cJSON_AddNumberToObject(root, "events", (double)tracker_events(d->tracker));
	cJSON_AddNumberToObject(root, "lost_event_recoveries",
				(double)d->counters.lost_event_recoveries);
	cJSON_AddNumberToObject(root, "count", (double)tracker_count(d->tracker));
	r = daemon_dump_tasks(d, tasks);
	if (r < 0)
		goto out;
	text = cJSON_PrintUnformatted(root);
	if (!text) {
		r = -ENOMEM;
		goto out;
	}
	r = mkdir_parents(d->config.state_dir, 0755);
	if (r >= 0)
		r = write_atomic(d->config.state_dir, "tasks.json", text);
out:
	if (r < 0)
		log_warning_errno(r, "cannot write %s/tasks.json, ignoring: %m", d->config.state_dir);
	free(text);
	cJSON_Delete(root);
	return r;
}

static int on_sigusr1(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
	(void)dump_to_state_dir(userdata);
	return 0;
}

int daemon_track_start(struct daemon *d)
{
	static const struct tracker_callbacks cb = {
		.task_new = on_task_new,
		.task_exec = on_task_exec,
		.task_exit = on_task_exit,
		.recovered = on_recovered,
	};
	sigset_t mask;
	int r;

	r = tracker_new(&d->tracker, d->event, &d->config, &cb, d);
	if (r < 0)
		return r;
	r = tracker_start(d->tracker);
	if (r < 0)
		return log_error_errno(r, "cannot start task tracking: %m");
	sigemptyset(&mask);
	sigaddset(&mask, SIGUSR1);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	r = sd_event_add_signal(d->event, NULL, SIGUSR1, on_sigusr1, d);
	if (r < 0)
		log_warning_errno(r, "cannot watch SIGUSR1, no debug dump: %m");
	return 0;
}

void daemon_track_stop(struct daemon *d)
{
	d->tracker = tracker_free(d->tracker);
}

int daemon_dump_tasks(struct daemon *d, cJSON *array)
{
	if (!d->tracker)
		return 0;
	return tracker_dump_json(d->tracker, array);
}
