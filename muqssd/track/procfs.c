#include "procfs.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int gone(int e)
{
	/* ENOENT: the directory is gone; ESRCH: reaped between open and read. */
	return (e == ENOENT || e == ESRCH) ? -ESRCH : -e;
}

ssize_t procfs_read_file(const char *path, char *buf, size_t size)
{
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return gone(errno);
	n = procfs_read_fd(fd, buf, size);
	close(fd);
	return n;
}

ssize_t procfs_read_fd(int fd, char *buf, size_t size)
{
	size_t len = 0;

	/* A /proc seq file hands over all it has, up to the space given:
	 * a short read is the end, no second read() needed to see EOF. */
	while (len + 1 < size) {
		size_t want = size - 1 - len;
		ssize_t n = read(fd, buf + len, want);

		if (n < 0) {
			int e = errno;

			if (e == EINTR)
				continue;
			return gone(e);
		}
		len += (size_t)n;
		if ((size_t)n < want)
			break;
	}
	buf[len] = '\0';
	return (ssize_t)len;
}

int procfs_task_open(pid_t tgid, pid_t tid, const char *name)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/%s", (int)tgid, (int)tid, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	return fd < 0 ? gone(errno) : fd;
}

ssize_t procfs_pread(int fd, char *buf, size_t size)
{
	ssize_t n;

	/* A seq file read at offset 0 is generated afresh. */
	do
		n = pread(fd, buf, size - 1, 0);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return gone(errno);
	buf[n] = '\0';
	return n;
}

static ssize_t read_task_file(pid_t tgid, pid_t tid, const char *name, char *buf, size_t size)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/task/%d/%s", (int)tgid, (int)tid, name);
	return procfs_read_file(path, buf, size);
}

static int parse_stat(ssize_t n, const char *buf, struct procfs_stat *ret)
{
	if (n < 0)
		return (int)n;
	/* An empty file means the task is being torn down. */
	if (n == 0)
		return -ESRCH;
	return procfs_parse_stat(buf, ret);
}

int procfs_task_stat(pid_t tgid, pid_t tid, struct procfs_stat *ret)
{
	char buf[1024];

	return parse_stat(read_task_file(tgid, tid, "stat", buf, sizeof(buf)), buf, ret);
}

int procfs_stat_pread(int fd, struct procfs_stat *ret)
{
	char buf[1024];

	return parse_stat(procfs_pread(fd, buf, sizeof(buf)), buf, ret);
}

int procfs_stat_read(int fd, struct procfs_stat *ret)
{
	char buf[1024];
	ssize_t n;

	/* Once, whole: a seq file hands over all it has up to the space given. */
	do
		n = read(fd, buf, sizeof(buf) - 1);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return gone(errno);
	buf[n] = '\0';
	return parse_stat(n, buf, ret);
}

int procfs_status_pread(int fd, struct procfs_status *ret)
{
	char buf[4096];
	ssize_t n = procfs_pread(fd, buf, sizeof(buf));

	if (n <= 0)
		return n ? (int)n : -ESRCH;
	return procfs_parse_status(buf, ret);
}

int procfs_task_status(pid_t tgid, pid_t tid, struct procfs_status *ret)
{
	char buf[4096];
	ssize_t n;

	n = read_task_file(tgid, tid, "status", buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	if (n == 0)
		return -ESRCH;
	return procfs_parse_status(buf, ret);
}

static int parse_schedstat(ssize_t n, const char *buf, struct procfs_schedstat *ret)
{
	if (n < 0)
		return (int)n;
	if (n == 0)
		return -ESRCH;
	return procfs_parse_schedstat(buf, ret);
}

int procfs_task_schedstat(pid_t tgid, pid_t tid, struct procfs_schedstat *ret)
{
	char buf[128];

	return parse_schedstat(read_task_file(tgid, tid, "schedstat", buf, sizeof(buf)), buf, ret);
}

int procfs_schedstat_pread(int fd, struct procfs_schedstat *ret)
{
	char buf[128];

	return parse_schedstat(procfs_pread(fd, buf, sizeof(buf)), buf, ret);
}

int procfs_task_cgroup(pid_t tgid, pid_t tid, const char *controller, char *buf, size_t size)
{
	char text[4096];
	ssize_t n;

	n = read_task_file(tgid, tid, "cgroup", text, sizeof(text));
	if (n < 0)
		return (int)n;
	if (n == 0)
		return -ESRCH;
	return procfs_parse_cgroup(text, controller, buf, size);
}

int procfs_exe(pid_t tgid, char **ret)
{
	char path[32], target[PATH_MAX];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)tgid);
	n = readlink(path, target, sizeof(target) - 1);
	if (n < 0)
		return -errno;
	target[n] = '\0';
	*ret = strdup(target);
	return *ret ? 0 : -ENOMEM;
}

pid_t procfs_pid_from_name(const char *name)
{
	long v = 0;

	if (!*name)
		return 0;
	for (const char *p = name; *p; p++) {
		if (*p < '0' || *p > '9' || v > INT_MAX / 10)
			return 0;
		v = v * 10 + (*p - '0');
	}
	return (pid_t)v;
}
