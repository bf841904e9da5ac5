/* The one system-wide lever: kernel.sched_autogroup_enabled.
 *
 * With autogroup on, CFS first shares a CPU between sessions (autogroups)
 * and only then, inside each, by nice: a nice 19 hog and a nice 0 hog
 * started from two terminals get 50% each. MuQSS has no autogroup, so
 * `[scheduler] autogroup = off` turns it off while muqssd runs. Like every
 * task lever, the original value is recorded before the write, in the
 * state dir's tasks/ as "autogroup" (state_foreach ignores names that are
 * not pids), and put back at a clean exit, at the next start after a
 * crash and by `muqssd --restore`. Nothing is recorded when it was off
 * already: then it is not ours to turn on. */
#include "enforce-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"

#define AUTOGROUP_SYSCTL "/proc/sys/kernel/sched_autogroup_enabled"
#define AUTOGROUP_RECORD "autogroup"
#define AUTOGROUP_TMP ".tmp-autogroup"

static int read_value(int fd, int *ret)
{
	char buf[8];
	ssize_t n = read(fd, buf, sizeof(buf) - 1);

	if (n < 0)
		return -errno;
	buf[n] = '\0';
	if ((buf[0] != '0' && buf[0] != '1') || (buf[1] != '\n' && buf[1] != '\0'))
		return -EBADMSG;
	*ret = buf[0] - '0';
	return 0;
}

static int sysctl_read(int *ret)
{
	int fd = open(AUTOGROUP_SYSCTL, O_RDONLY | O_CLOEXEC), r;

	if (fd < 0)
		return -errno;
	r = read_value(fd, ret);
	close(fd);
	return r;
}

static int sysctl_write(int value)
{
	int fd = open(AUTOGROUP_SYSCTL, O_WRONLY | O_CLOEXEC), r = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, value ? "1\n" : "0\n", 2) != 2)
		r = -errno;
	close(fd);
	return r;
}

static int record_write(int dir_fd, int value)
{
	int fd, r = 0;

	if (unlinkat(dir_fd, AUTOGROUP_TMP, 0) < 0 && errno != ENOENT)
		return -errno;
	fd = openat(dir_fd, AUTOGROUP_TMP, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		    0600);
	if (fd < 0)
		return -errno;
	if (write(fd, value ? "1\n" : "0\n", 2) != 2)
		r = -errno;
	close(fd);
	if (r == 0 && renameat(dir_fd, AUTOGROUP_TMP, dir_fd, AUTOGROUP_RECORD) < 0)
		r = -errno;
	if (r < 0)
		(void)unlinkat(dir_fd, AUTOGROUP_TMP, 0);
	return r;
}

/* Like a task record: a symlink, another owner's file or garbage is refused. */
static int record_read(int dir_fd, int *ret)
{
	struct stat st;
	int fd, r;

	fd = openat(dir_fd, AUTOGROUP_RECORD, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		r = -errno;
	else if (!S_ISREG(st.st_mode) || st.st_uid != geteuid())
		r = -EPERM;
	else
		r = read_value(fd, ret);
	close(fd);
	return r;
}

int enforce_autogroup_off(struct enforcer *e)
{
	int was, r;

	r = sysctl_read(&was);
	if (r == -ENOENT) {
		log_notice("autogroup = off: this kernel has no autogroup (%s), nothing to do",
			   AUTOGROUP_SYSCTL);
		return 0;
	}
	if (r < 0)
		return log_error_errno(r, "cannot read %s, autogroup stays as it is: %m",
				       AUTOGROUP_SYSCTL);
	if (!was)
		return 0;
	r = record_write(e->dir_fd, was);
	if (r < 0)
		return log_error_errno(r, "cannot record autogroup's setting, leaving it on: %m");
	r = sysctl_write(0);
	if (r < 0) {
		(void)unlinkat(e->dir_fd, AUTOGROUP_RECORD, 0);
		return log_error_errno(r, "cannot turn autogroup off (%s), leaving it on: %m",
				       AUTOGROUP_SYSCTL);
	}
	log_info("autogroup off while muqssd runs: nice acts across sessions, as under MuQSS");
	return 0;
}

int autogroup_restore(int dir_fd)
{
	int value, r;

	r = record_read(dir_fd, &value);
	if (r == -ENOENT)
		return 0;
	if (r < 0) {
		log_warning_errno(r, "refusing the autogroup record, removing it: %m");
		(void)unlinkat(dir_fd, AUTOGROUP_RECORD, 0);
		return r;
	}
	r = sysctl_write(value);
	if (r < 0)
		return log_error_errno(r, "cannot put %s back to %d, keeping its record: %m",
				       AUTOGROUP_SYSCTL, value);
	(void)unlinkat(dir_fd, AUTOGROUP_RECORD, 0);
	log_info("autogroup put back to %d", value);
	return 0;
}
