#include "task_stat.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int task_stat_parse(const char *line, struct task_stat *ret)
{
	const char *p = strrchr(line, ')');
	unsigned long long v;
	char *end;
	int field;

	/* comm may hold spaces and parentheses: fields start after the last ')'. */
	if (!p)
		return -EBADMSG;
	memset(ret, 0, sizeof(*ret));
	p++;
	for (field = 3; field <= 41; field++) {
		while (*p == ' ')
			p++;
		if (!*p || *p == '\n')
			return -EBADMSG;
		if (field == 3) {
			p++; /* state is a letter */
			continue;
		}
		errno = 0;
		if (*p == '-')
			v = (unsigned long long)strtoll(p, &end, 10);
		else
			v = strtoull(p, &end, 10);
		if (errno || end == p)
			return -EBADMSG;
		p = end;
		switch (field) {
		case 9: ret->flags = (unsigned)v; break;
		case 19: ret->nice = (int)(long long)v; break;
		case 22: ret->start_time = v; break;
		case 40: ret->rt_priority = (unsigned)v; break;
		case 41: ret->policy = (unsigned)v; break;
		}
	}
	return 0;
}

static int read_small(const char *path, char *buf, size_t size)
{
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	n = read(fd, buf, size - 1);
	if (n < 0) {
		int r = errno == ENOENT ? -ESRCH : -errno;

		close(fd);
		return r;
	}
	close(fd);
	buf[n] = '\0';
	return 0;
}

int task_stat_read(pid_t tgid, pid_t tid, struct task_stat *ret)
{
	char path[64], buf[1024];
	int r;

	if (tgid <= 0 || tid <= 0)
		return -ESRCH;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)tgid, (int)tid);
	r = read_small(path, buf, sizeof(buf));
	if (r < 0)
		return r;
	return task_stat_parse(buf, ret);
}

int task_read_tgid(pid_t tid, pid_t *ret)
{
	char path[64], buf[4096];
	const char *p;
	int r;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	r = read_small(path, buf, sizeof(buf));
	if (r < 0)
		return r;
	p = strstr(buf, "\nTgid:");
	if (!p)
		return -EBADMSG;
	*ret = (pid_t)strtol(p + 6, NULL, 10);
	return *ret > 0 ? 0 : -EBADMSG;
}

static int parse_status(const char *buf, pid_t *ret_tgid, bool *ret_kthread)
{
	const char *p;

	/* Name: comes first and the kernel escapes newlines in it, so a
	 * line start is a line start. */
	p = strstr(buf, "\nTgid:");
	if (!p)
		return -EBADMSG;
	*ret_tgid = (pid_t)strtol(p + 6, NULL, 10);
	p = strstr(buf, "\nKthread:");
	*ret_kthread = p && strtol(p + 9, NULL, 10) == 1;
	return 0;
}

int task_status_read(pid_t tgid, pid_t tid, pid_t *ret_tgid, bool *ret_kthread)
{
	char path[64], buf[4096];
	int r;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", (int)tgid, (int)tid);
	r = read_small(path, buf, sizeof(buf));
	if (r < 0)
		return r;
	return parse_status(buf, ret_tgid, ret_kthread);
}

int task_status_pread(int fd, pid_t *ret_tgid, bool *ret_kthread)
{
	char buf[4096];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	if (n <= 0)
		return n == 0 || errno == ESRCH || errno == ENOENT ? -ESRCH : -errno;
	buf[n] = '\0';
	return parse_status(buf, ret_tgid, ret_kthread);
}
