/* Wires the task tracker into the daemon.
 *
 * Debug dump (until `muqssctl tasks --json` is there): on SIGUSR1 the
 * daemon drains queued proc events and writes the table to
 * <state_dir>/tasks.json, atomically (a temporary file renamed over it),
 * creating state_dir (0755) if needed. The file holds one object:
 *   { "dump_seq": n, "polling": bool, "events": n,
 *     "lost_event_recoveries": n, "count": n, "tasks": [ {...}, ... ] }
 * with the task objects of tracker_dump_each(), written one at a time as
 * they are built. Tests use it. */
#include "daemon.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "text.h"
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
	daemon_loop_task_new(userdata, task);
}

static void on_task_exec(struct tracked_task *task, void *userdata)
{
	daemon_loop_task_exec(userdata, task);
}

static void on_task_exit(struct tracked_task *task, void *userdata)
{
	log_debug("exit tid=%d comm=%s", (int)task->tid, task->comm);
	daemon_loop_task_exit(userdata, task);
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

/* A failed stdio write leaves the write(2) errno; EIO if it left none. */
static int stream_errno(void)
{
	return errno > 0 ? -errno : -EIO;
}

/* Relative to the directory fd, with O_EXCL|O_NOFOLLOW on a fresh temp
 * name: a symlink planted at either name is replaced, never written through.
 * write_fn fills the file through stdio; on any error the temp file goes. */
static int write_atomic(const char *dir, const char *name,
			int (*write_fn)(FILE *f, void *ctx), void *ctx)
{
	char tmp[256];
	int dir_fd, fd, r = 0;
	FILE *f;

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
	f = fdopen(fd, "w");
	if (!f) {
		r = -errno;
		close(fd);
		goto fail;
	}
	r = write_fn(f, ctx);
	if (r == 0 && ferror(f))
		r = -EIO;
	/* fclose flushes the buffered tail: its error counts as a write's. */
	if (fclose(f) != 0 && r == 0)
		r = stream_errno();
	if (r == 0 && renameat(dir_fd, tmp, dir_fd, name) < 0)
		r = -errno;
fail:
	if (r < 0)
		(void)unlinkat(dir_fd, tmp, 0);
out:
	close(dir_fd);
	return r;
}

struct dump_ctx {
	struct daemon *d;
	uint64_t seq;
	FILE *f;
	bool first;
};

static int dump_task(cJSON *task, void *ctx)
{
	struct dump_ctx *c = ctx;
	char *text = cJSON_PrintUnformatted(task);
	int r = 0;

	if (!text)
		return -ENOMEM;
	text_fix_utf8(text, strlen(text)); /* a name is any bytes; the file is JSON */
	if ((!c->first && fputc(',', c->f) == EOF) || fputs(text, c->f) == EOF)
		r = stream_errno();
	c->first = false;
	cJSON_free(text);
	return r;
}

/* The header, then each task as it is built: never a tree of all tasks. */
static int dump_write(FILE *f, void *ctx)
{
	struct dump_ctx *c = ctx;
	struct daemon *d = c->d;
	int r;

	c->f = f;
	c->first = true;
	if (fprintf(f, "{\"dump_seq\":%" PRIu64 ",\"polling\":%s,\"events\":%" PRIu64
		       ",\"lost_event_recoveries\":%" PRIu64 ",\"count\":%zu,\"tasks\":[",
		    c->seq, tracker_polling(d->tracker) ? "true" : "false",
		    tracker_events(d->tracker), d->counters.lost_event_recoveries,
		    tracker_count(d->tracker)) < 0)
		return stream_errno();
	r = daemon_dump_tasks(d, dump_task, c);
	if (r < 0)
		return r;
	if (fputs("]}", f) == EOF)
		return stream_errno();
	return 0;
}

static int dump_to_state_dir(struct daemon *d)
{
	struct dump_ctx c = { .d = d, .seq = ++dump_seq };
	int r;

	(void)tracker_flush(d->tracker);
	r = mkdir_parents(d->config.state_dir, 0755);
	if (r >= 0)
		r = write_atomic(d->config.state_dir, "tasks.json", dump_write, &c);
	if (r < 0)
		log_warning_errno(r, "cannot write %s/tasks.json, ignoring: %m", d->config.state_dir);
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

int daemon_dump_tasks(struct daemon *d, int (*fn)(cJSON *task, void *ctx), void *ctx)
{
	if (!d->tracker)
		return 0;
	return tracker_dump_each(d->tracker, fn, ctx);
}
