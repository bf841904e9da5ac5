#include "procfs_parse.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Moves past n space-separated fields. */
static const char *skip_fields(const char *p, unsigned n)
{
	while (n-- > 0) {
		while (*p == ' ')
			p++;
		if (!*p)
			return NULL;
		while (*p && *p != ' ')
			p++;
	}
	while (*p == ' ')
		p++;
	return *p ? p : NULL;
}

static int next_u64(const char **p, uint64_t *ret)
{
	char *end;

	while (**p == ' ')
		(*p)++;
	if (**p < '0' || **p > '9')
		return -EINVAL;
	errno = 0;
	*ret = strtoull(*p, &end, 10);
	if (errno)
		return -EINVAL;
	*p = end;
	return 0;
}

static int next_i64(const char **p, int64_t *ret)
{
	char *end;

	while (**p == ' ')
		(*p)++;
	if (**p != '-' && (**p < '0' || **p > '9'))
		return -EINVAL;
	errno = 0;
	*ret = strtoll(*p, &end, 10);
	if (errno)
		return -EINVAL;
	*p = end;
	return 0;
}

int procfs_parse_stat(const char *text, struct procfs_stat *ret)
{
	const char *open, *close, *p;
	uint64_t v[8];
	int64_t pid, ppid, session, nice, cpu;
	size_t len;

	/* comm may hold spaces, parentheses, anything: it ends at the last ')'. */
	open = strchr(text, '(');
	close = strrchr(text, ')');
	if (!open || !close || close < open)
		return -EINVAL;
	p = text;
	if (next_i64(&p, &pid) < 0 || pid <= 0 || p > open)
		return -EINVAL;
	memset(ret, 0, sizeof(*ret));
	ret->pid = (pid_t)pid;
	len = (size_t)(close - open - 1);
	if (len >= sizeof(ret->comm))
		len = sizeof(ret->comm) - 1;
	memcpy(ret->comm, open + 1, len);
	ret->comm[len] = '\0';

	p = close + 1;
	while (*p == ' ')
		p++;
	if (!*p || *p == ' ')
		return -EINVAL;
	ret->state = *p++;				/* 3 */
	if (next_i64(&p, &ppid) < 0)			/* 4 */
		return -EINVAL;
	p = skip_fields(p, 1);				/* 5 pgrp */
	if (!p || next_i64(&p, &session) < 0)		/* 6 */
		return -EINVAL;
	p = skip_fields(p, 2);				/* 7, 8 */
	if (!p || next_u64(&p, &v[0]) < 0)		/* 9 flags */
		return -EINVAL;
	p = skip_fields(p, 4);				/* 10-13 */
	if (!p || next_u64(&p, &v[1]) < 0 ||		/* 14 utime */
	    next_u64(&p, &v[2]) < 0)			/* 15 stime */
		return -EINVAL;
	p = skip_fields(p, 3);				/* 16-18 */
	if (!p || next_i64(&p, &nice) < 0)		/* 19 */
		return -EINVAL;
	p = skip_fields(p, 2);				/* 20, 21 */
	if (!p || next_u64(&p, &v[3]) < 0)		/* 22 starttime */
		return -EINVAL;
	p = skip_fields(p, 16);				/* 23-38 */
	if (!p || next_i64(&p, &cpu) < 0 ||		/* 39 processor */
	    next_u64(&p, &v[4]) < 0 ||			/* 40 rt_priority */
	    next_u64(&p, &v[5]) < 0)			/* 41 policy */
		return -EINVAL;

	ret->ppid = (pid_t)ppid;
	ret->session = (pid_t)session;
	ret->flags = (unsigned)v[0];
	ret->utime = v[1];
	ret->stime = v[2];
	ret->nice = (int)nice;
	ret->start_time = v[3];
	ret->processor = (int)cpu;
	ret->rt_priority = (unsigned)v[4];
	ret->policy = (unsigned)v[5];
	return 0;
}

/* Finds "key" at the start of a line; returns what follows it. */
static const char *find_line(const char *text, const char *key)
{
	size_t n = strlen(key);

	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (strncmp(p, key, n) == 0)
			return p + n;
	return NULL;
}

int procfs_parse_status(const char *text, struct procfs_status *ret)
{
	const char *p;
	unsigned long a, b;

	memset(ret, 0, sizeof(*ret));
	p = find_line(text, "State:");
	while (p && (*p == ' ' || *p == '\t'))
		p++;
	if (p && *p >= 'A' && *p <= 'z')
		ret->state = *p;
	p = find_line(text, "Tgid:");
	if (!p || sscanf(p, "%lu", &a) != 1)
		return -EINVAL;
	ret->tgid = (pid_t)a;
	p = find_line(text, "Uid:");
	if (!p || sscanf(p, "%lu %lu", &a, &b) != 2)
		return -EINVAL;
	ret->ruid = (uid_t)a;
	ret->euid = (uid_t)b;
	p = find_line(text, "Gid:");
	if (!p || sscanf(p, "%lu %lu", &a, &b) != 2)
		return -EINVAL;
	ret->rgid = (gid_t)a;
	ret->egid = (gid_t)b;
	p = find_line(text, "voluntary_ctxt_switches:");
	if (p && sscanf(p, "%lu", &a) == 1)
		ret->nvcsw = a;
	p = find_line(text, "PPid:");
	if (p && sscanf(p, "%lu", &a) == 1)
		ret->ppid = (pid_t)a;
	p = find_line(text, "Kthread:");
	if (p && sscanf(p, "%lu", &a) == 1)
		ret->kthread = a != 0;
	else
		ret->kthread = !find_line(text, "VmSize:");
	return 0;
}

int procfs_parse_schedstat(const char *text, struct procfs_schedstat *ret)
{
	const char *p = text;

	if (next_u64(&p, &ret->cpu_ns) < 0 || next_u64(&p, &ret->wait_ns) < 0 ||
	    next_u64(&p, &ret->timeslices) < 0)
		return -EINVAL;
	return 0;
}

static bool list_has(const char *list, size_t len, const char *name)
{
	size_t n = strlen(name);
	const char *p = list, *end = list + len;

	while (p < end) {
		const char *comma = memchr(p, ',', (size_t)(end - p));
		size_t l = comma ? (size_t)(comma - p) : (size_t)(end - p);

		if (l == n && memcmp(p, name, n) == 0)
			return true;
		p += l + 1;
	}
	return false;
}

int procfs_parse_cgroup(const char *text, const char *controller, char *buf, size_t size)
{
	const char *line = text;

	while (line && *line) {
		const char *nl = strchr(line, '\n');
		const char *end = nl ? nl : line + strlen(line);
		const char *c1 = memchr(line, ':', (size_t)(end - line));
		const char *c2 = c1 ? memchr(c1 + 1, ':', (size_t)(end - c1 - 1)) : NULL;
		size_t clen, plen;

		if (!c2)
			return -EINVAL;
		clen = (size_t)(c2 - c1 - 1);
		if (controller[0] ? list_has(c1 + 1, clen, controller)
				  : (clen == 0 && c1 - line == 1 && line[0] == '0')) {
			plen = (size_t)(end - c2 - 1);
			if (plen + 1 > size)
				return -ENAMETOOLONG;
			memcpy(buf, c2 + 1, plen);
			buf[plen] = '\0';
			return 0;
		}
		line = nl ? nl + 1 : NULL;
	}
	return -ENOENT;
}

bool cgroup_path_within(const char *path, const char *root)
{
	size_t n = strlen(root);

	while (n > 0 && root[n - 1] == '/')
		n--;
	if (n == 0)
		return path[0] == '/';
	return strncmp(path, root, n) == 0 && (path[n] == '\0' || path[n] == '/');
}
