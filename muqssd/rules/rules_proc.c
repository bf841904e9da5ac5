/* A process and its ancestors read from /proc at once, for "muqssctl rules
 * --explain". Not for muqssd's loop: reading cmdline takes the mmap lock
 * of a task that may be loading a program (see daemon_rules.c). */
#include "rules_proc.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The whole file as bytes, NUL-terminated; its length or -errno. */
static ssize_t read_file(pid_t pid, const char *name, char *buf, size_t size)
{
	char path[64];
	size_t len = 0;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (len + 1 < size && (n = read(fd, buf + len, size - 1 - len)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			n = -errno;
			close(fd);
			return n;
		}
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';
	return (ssize_t)len;
}

static int read_comm(pid_t pid, char comm[16])
{
	ssize_t n = read_file(pid, "comm", comm, 16);

	if (n < 0)
		return (int)n;
	if (n > 0 && comm[n - 1] == '\n')
		comm[n - 1] = '\0';
	return 0;
}

/* The parent, from stat past the last ')' (comm may hold anything). */
static pid_t read_ppid(pid_t pid)
{
	char buf[1024], *p;
	int ppid;

	if (read_file(pid, "stat", buf, sizeof(buf)) < 0)
		return -1;
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %*c %d", &ppid) != 1)
		return -1;
	return ppid;
}

static uid_t read_uid(pid_t pid)
{
	char buf[4096], *p;
	unsigned uid;

	if (read_file(pid, "status", buf, sizeof(buf)) < 0)
		return (uid_t)-1;
	p = strstr(buf, "\nUid:");
	return p && sscanf(p + 5, "%u", &uid) == 1 ? (uid_t)uid : (uid_t)-1;
}

/* The v2 line ("0::/path"), else none. */
static const char *read_cgroup(pid_t pid, char *buf, size_t size)
{
	char *p, *end;

	if (read_file(pid, "cgroup", buf, size) < 0)
		return NULL;
	p = strncmp(buf, "0::", 3) == 0 ? buf : strstr(buf, "\n0::");
	if (!p)
		return NULL;
	p += p == buf ? 3 : 4;
	end = strchr(p, '\n');
	if (end)
		*end = '\0';
	return p;
}

int rules_proc_read(struct rules_proc *p, pid_t pid)
{
	char path[64];
	ssize_t n, len;
	int r;

	memset(&p->s, 0, sizeof(p->s));
	r = read_comm(pid, p->comm);
	if (r < 0)
		return r;
	p->s.comm = p->comm;
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	n = readlink(path, p->exe, sizeof(p->exe) - 1);
	if (n > 0) {
		p->exe[n] = '\0';
		p->s.exe = p->exe;
	}
	len = read_file(pid, "cmdline", p->cmdline, sizeof(p->cmdline));
	if (len > 0) {
		p->s.wine_path = rules_wine_path(p->comm, p->s.exe, p->cmdline, (size_t)len, p->wine,
						 sizeof(p->wine));
		p->s.cmdline = rules_cmdline_join(p->cmdline, (size_t)len);
	}
	p->s.uid = read_uid(pid);
	p->s.cgroup = read_cgroup(pid, p->cgroup, sizeof(p->cgroup));
	p->s.ancestors = p->ancestors;
	for (pid_t a = read_ppid(pid); a > 1 && p->s.n_ancestors < RULES_ANCESTOR_MAX;
	     a = read_ppid(a)) {
		size_t i = p->s.n_ancestors;

		if (read_comm(a, p->anc_comm[i]) < 0)
			break;
		len = read_file(a, "cmdline", p->anc_cmdline[i], sizeof(p->anc_cmdline[i]));
		p->ancestors[i] = (struct rule_ancestor){
			a, p->anc_comm[i], len > 0 ? rules_cmdline_join(p->anc_cmdline[i], (size_t)len) : NULL,
		};
		p->s.n_ancestors++;
	}
	return 0;
}
