#include "proc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void task_path(char *buf, size_t len, pid_t pid, pid_t tid, const char *file)
{
	if (tid > 0)
		snprintf(buf, len, "/proc/%d/task/%d/%s", (int)pid, (int)tid, file);
	else
		snprintf(buf, len, "/proc/%d/%s", (int)pid, file);
}

static FILE *open_proc(const char *path, int *err)
{
	FILE *f = fopen(path, "re");

	if (!f)
		*err = errno == ENOENT ? -ESRCH : -errno;
	return f;
}

int proc_start_time(pid_t pid, pid_t tid, uint64_t *ret)
{
	char path[64], line[1024], *p, *end;
	unsigned long long start;
	FILE *f;
	int r = 0;

	task_path(path, sizeof(path), pid, tid, "stat");
	f = open_proc(path, &r);
	if (!f)
		return r;
	if (!fgets(line, sizeof(line), f)) {
		fclose(f);
		return -ESRCH;
	}
	fclose(f);
	/* comm may hold spaces and parentheses: fields count from the last ')'. */
	p = strrchr(line, ')');
	if (!p)
		return -EIO;
	/* After ')' come fields 3, 4, ...; start time is field 22. */
	for (int field = 3; field <= 22; field++) {
		p = strchr(p + 1, ' ');
		if (!p)
			return -EIO;
	}
	errno = 0;
	start = strtoull(p + 1, &end, 10);
	if (errno || end == p + 1)
		return -EIO;
	*ret = start;
	return 0;
}

/* The first n numbers of the status line key. */
static int status_field(pid_t pid, pid_t tid, const char *key, unsigned long *ret, int n)
{
	char path[64], line[256];
	size_t klen = strlen(key);
	FILE *f;
	int r = 0;

	task_path(path, sizeof(path), pid, tid, "status");
	f = open_proc(path, &r);
	if (!f)
		return r;
	r = -EIO;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, key, klen) == 0 && line[klen] == ':') {
			char *p = line + klen + 1, *end;

			r = 0;
			for (int i = 0; r == 0 && i < n; i++, p = end) {
				errno = 0;
				ret[i] = strtoul(p, &end, 10);
				r = errno || end == p ? -EIO : 0;
			}
			break;
		}
	}
	fclose(f);
	return r;
}

int proc_tgid(pid_t tid, pid_t *ret)
{
	unsigned long v;
	int r = status_field(tid, 0, "Tgid", &v, 1);

	if (r < 0)
		return r;
	*ret = (pid_t)v;
	return 0;
}

int proc_real_uid(pid_t pid, pid_t tid, uid_t *ret)
{
	uid_t euid;

	return proc_uids(pid, tid, ret, &euid);
}

int proc_uids(pid_t pid, pid_t tid, uid_t *uid, uid_t *euid)
{
	unsigned long v[2];
	int r = status_field(pid, tid, "Uid", v, 2);

	if (r < 0)
		return r;
	*uid = (uid_t)v[0];
	*euid = (uid_t)v[1];
	return 0;
}

int proc_rlimit_nice(pid_t pid, unsigned long *ret)
{
	static const char key[] = "Max nice priority";
	char path[64], line[256];
	FILE *f;
	int r = -EIO;

	task_path(path, sizeof(path), pid, 0, "limits");
	f = open_proc(path, &r);
	if (!f)
		return r;
	while (fgets(line, sizeof(line), f)) {
		char *p = line + sizeof(key) - 1, *end;

		if (strncmp(line, key, sizeof(key) - 1) != 0)
			continue;
		p += strspn(p, " ");
		if (strncmp(p, "unlimited", 9) == 0) {
			*ret = ~0UL;
			r = 0;
			break;
		}
		errno = 0;
		*ret = strtoul(p, &end, 10);
		r = errno || end == p ? -EIO : 0;
		break;
	}
	fclose(f);
	return r;
}
