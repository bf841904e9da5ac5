#include "scope.h"

#include <errno.h>
#include <mntent.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "procfs.h"

static bool path_under(const char *path, const char *dir, size_t *len)
{
	size_t n = strlen(dir);

	while (n > 0 && dir[n - 1] == '/')
		n--;
	if (strncmp(path, dir, n) != 0 || (path[n] != '\0' && path[n] != '/'))
		return false;
	*len = n;
	return true;
}

/* Names the v1 hierarchy mounted with opts by one of its controllers, as
 * /proc/self/cgroup spells them. */
static int v1_controller(struct mntent *m, char *buf, size_t size)
{
	char text[4096];
	const char *line;

	if (procfs_read_file("/proc/self/cgroup", text, sizeof(text)) < 0)
		return -EIO;
	for (line = text; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		const char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		char list[256], *save = NULL;

		if (!c2 || (size_t)(c2 - c1) >= sizeof(list))
			continue;
		memcpy(list, c1 + 1, (size_t)(c2 - c1 - 1));
		list[c2 - c1 - 1] = '\0';
		for (char *w = strtok_r(list, ",", &save); w; w = strtok_r(NULL, ",", &save))
			if (hasmntopt(m, w)) {
				snprintf(buf, size, "%s", w);
				return 0;
			}
	}
	return -ENOENT;
}

static int resolve_mounted(struct scope *s, const char *path)
{
	struct mntent *m, ent;
	char strings[4096];
	size_t best = 0;
	int r = -ENOENT;
	FILE *f;

	f = setmntent("/proc/self/mounts", "re");
	if (!f)
		return -errno;
	while ((m = getmntent_r(f, &ent, strings, sizeof(strings)))) {
		bool v2 = strcmp(m->mnt_type, "cgroup2") == 0;
		size_t n;

		if ((!v2 && strcmp(m->mnt_type, "cgroup") != 0) || !path_under(path, m->mnt_dir, &n) ||
		    (n <= best && best > 0))
			continue;
		if (v2)
			s->controller[0] = '\0';
		else if (v1_controller(m, s->controller, sizeof(s->controller)) < 0)
			continue;
		best = n;
		snprintf(s->path, sizeof(s->path), "%s", path[n] ? path + n : "/");
		r = 0;
	}
	endmntent(f);
	return r;
}

static int mount_point_of(const char *type, const char *opt, char *buf, size_t size)
{
	struct mntent *m, ent;
	char strings[4096];
	int r = -ENOENT;
	FILE *f;

	f = setmntent("/proc/self/mounts", "re");
	if (!f)
		return -errno;
	while ((m = getmntent_r(f, &ent, strings, sizeof(strings))))
		if (strcmp(m->mnt_type, type) == 0 && (!opt || hasmntopt(m, opt))) {
			snprintf(buf, size, "%s", m->mnt_dir);
			r = 0;
			break;
		}
	endmntent(f);
	return r;
}

int scope_init(struct scope *s, const struct config *c)
{
	static const struct {
		const char *type, *opt;
	} roots[] = { { "cgroup2", NULL }, { "cgroup", "cpu" } };
	char full[PATH_MAX + 64];
	struct stat st;

	struct procfs_stat kst;

	memset(s, 0, sizeof(*s));
	s->kind = c->scope;
	s->pid = c->scope_pid;
	s->self = getpid();
	/* In a PID namespace of its own, 2 is an ordinary process. */
	s->kthreadd = procfs_task_stat(2, 2, &kst) == 0 && (kst.flags & PF_KTHREAD_FLAG) ? 2 : -1;
	if (s->kind != SCOPE_CGROUP)
		return 0;
	if (!c->scope_cgroup || !*c->scope_cgroup)
		return -EINVAL;
	if (c->scope_cgroup[0] == '/' && resolve_mounted(s, c->scope_cgroup) == 0)
		return 0;
	for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
		char mnt[PATH_MAX];

		if (strlen(c->scope_cgroup) >= PATH_MAX ||
		    mount_point_of(roots[i].type, roots[i].opt, mnt, sizeof(mnt)) < 0)
			continue;
		snprintf(full, sizeof(full), "%s/%s", mnt,
			 c->scope_cgroup + (c->scope_cgroup[0] == '/'));
		if (stat(full, &st) == 0 && S_ISDIR(st.st_mode) && resolve_mounted(s, full) == 0)
			return 0;
	}
	return -ENOENT;
}

bool scope_excluded(const struct scope *s, pid_t tgid, bool kthread, pid_t ppid)
{
	if (tgid <= 1 || tgid == s->kthreadd || tgid == s->self)
		return true;
	return kthread || ppid == s->kthreadd;
}

int scope_cgroup_contains(const struct scope *s, pid_t tgid, pid_t tid)
{
	char path[PATH_MAX];
	int r;

	r = procfs_task_cgroup(tgid, tid, s->controller, path, sizeof(path));
	if (r < 0)
		return r;
	return cgroup_path_within(path, s->path) ? 1 : 0;
}
