/* RT group scheduling: with CONFIG_RT_GROUP_SCHED, a v1 cpu cgroup whose
 * cpu.rt_runtime_us is 0 (the default for every new cgroup) cannot hold a
 * realtime task, and sched_setattr() fails with EPERM even for root. */
#include "enforce-internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libcgroup.h>

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

/* libcgroup knows where each controller is mounted (cpu alone, cpu,cpuacct
 * or anywhere else) and reads a knob by name. Its own lookup of a task's
 * path is per process; a v1 thread may sit elsewhere, so that path comes
 * from the thread's own /proc file above. Only the EPERM path gets here,
 * so libcgroup is set up on first use, not at start. */
static int cgroup_lib_init(void)
{
	static int r = 1;

	if (r == 1)
		r = cgroup_init();
	return r;
}

bool rt_group_no_budget(pid_t tgid, pid_t tid, char *path, size_t size)
{
	struct cgroup_controller *cpu;
	struct cgroup *cg = NULL;
	char rel[2048], *mnt = NULL;
	int64_t v = -1;
	bool none = false;

	if (!cpu_cgroup_path(tgid, tid, rel, sizeof(rel)) || cgroup_lib_init() != 0 ||
	    cgroup_get_subsys_mount_point("cpu", &mnt) != 0)
		return false;
	snprintf(path, size, "%s%s%scpu.rt_runtime_us", mnt, rel,
		 rel[strlen(rel) - 1] == '/' ? "" : "/");
	free(mnt);
	cg = cgroup_new_cgroup(rel);
	if (cg && cgroup_get_cgroup(cg) == 0 && (cpu = cgroup_get_controller(cg, "cpu")) &&
	    cgroup_get_value_int64(cpu, "cpu.rt_runtime_us", &v) == 0)
		none = v == 0;
	cgroup_free(&cg);
	return none;
}
