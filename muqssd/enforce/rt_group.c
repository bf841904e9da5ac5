/* RT group scheduling: with CONFIG_RT_GROUP_SCHED, a v1 cpu cgroup whose
 * cpu.rt_runtime_us is 0 (the default for every new cgroup) cannot hold a
 * realtime task, and sched_setattr() fails with EPERM even for root. */
#include "enforce-internal.h"

#include <stdio.h>
#include <string.h>

static bool has_cpu_controller(const char *controllers)
{
	const char *p = controllers;

	for (;;) {
		size_t n = strcspn(p, ",");

		if (n == 3 && !strncmp(p, "cpu", 3))
			return true;
		if (!p[n])
			return false;
		p += n + 1;
	}
}

/* The task's path in the v1 cpu hierarchy, from "N:cpu,cpuacct:/path". */
static bool cpu_cgroup_path(pid_t tgid, pid_t tid, char *ret, size_t size)
{
	char path[64], line[4096];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/cgroup", (int)tgid, (int)tid);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		char *ctrl = strchr(line, ':'), *cg;

		if (!ctrl || !(cg = strchr(++ctrl, ':')))
			continue;
		*cg++ = '\0';
		cg[strcspn(cg, "\n")] = '\0';
		if (has_cpu_controller(ctrl)) {
			snprintf(ret, size, "%s", cg);
			found = true;
		}
	}
	fclose(f);
	return found;
}

bool rt_group_no_budget(pid_t tgid, pid_t tid, char *path, size_t size)
{
	static const char *const mounts[] = { "/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpu,cpuacct" };
	char cg[2048];

	if (!cpu_cgroup_path(tgid, tid, cg, sizeof(cg)))
		return false;
	for (size_t i = 0; i < sizeof(mounts) / sizeof(mounts[0]); i++) {
		long long v;
		FILE *f;
		int n;

		snprintf(path, size, "%s%s%scpu.rt_runtime_us", mounts[i], cg,
			 cg[strlen(cg) - 1] == '/' ? "" : "/");
		f = fopen(path, "re");
		if (!f)
			continue;
		n = fscanf(f, "%lld", &v);
		fclose(f);
		return n == 1 && v == 0;
	}
	return false;
}
