/* What the effectors refuse, and what they do with a task that is gone. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "children.h"
#include "enforce.h"
#include "sched_attr.h"

static char dir[] = "/tmp/muqss-test-guards-XXXXXX";
static char rt_cgroup[600];
static char rt_cgroup_parent[512];

static void cleanup(void)
{
	char cmd[128];

	children_kill_all();
	if (rt_cgroup[0] && rmdir(rt_cgroup) < 0)
		fprintf(stderr, "cannot remove %s: %m\n", rt_cgroup);
	snprintf(cmd, sizeof(cmd), "rm -rf -- '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cleanup failed\n");
}

static int policy_of(pid_t pid)
{
	struct sched_attr_v1 a;

	REQUIRE(sched_attr_get(pid, &a) == 0);
	return (int)a.sched_policy;
}

static void check_every_lever(struct enforcer *e, const struct enforce_target *t, int err)
{
	cpu_set_t zero;

	CPU_ZERO(&zero);
	CPU_SET(0, &zero);
	CHECK(enforce_boost(e, t, 1) == err);
	CHECK(enforce_set_idle(e, t, true) == err);
	CHECK(enforce_set_nice(e, t, 5) == err);
	CHECK(enforce_pin(e, t, &zero) == err);
	CHECK(enforce_stop(e, t) == err);
	if (enforce_slice_supported(e))
		CHECK(enforce_set_slice(e, t, 4000000) == err);
}

static void test_refusals(struct enforcer *e)
{
	struct enforce_target t = { .tid = 1, .tgid = 1 };
	struct sched_attr_v1 rr = { .sched_policy = SCHED_RR, .sched_priority = 1 };
	pid_t pid;

	CHECK(enforce_target_from_tid(1, &t) == 0);
	check_every_lever(e, &t, -EPERM);
	CHECK(enforcer_last_refusal(e) == ENFORCE_REFUSAL_PID1);

	/* kthreadd is pid 2 wherever the kernel has its own pid namespace. */
	if (enforce_target_from_tid(2, &t) == 0 && t.tgid == 2) {
		check_every_lever(e, &t, -EPERM);
		CHECK(enforcer_last_refusal(e) == ENFORCE_REFUSAL_KTHREAD);
	}

	t.tid = t.tgid = getpid();
	CHECK(enforce_target_from_tid(getpid(), &t) == 0);
	check_every_lever(e, &t, -EPERM);
	CHECK(enforcer_last_refusal(e) == ENFORCE_REFUSAL_SELF);

	/* Someone else's SCHED_RR stays. */
	pid = child_spawn(false, 10);
	CHECK(sched_attr_set(pid, &rr) == 0);
	t = child_target(pid);
	check_every_lever(e, &t, -EPERM);
	CHECK(enforcer_last_refusal(e) == ENFORCE_REFUSAL_FOREIGN_RT);
	CHECK(policy_of(pid) == SCHED_RR);
	CHECK(enforcer_count(e) == 0);
	child_kill(pid);

	/* ...also when it is set after we took the task in hand. */
	pid = child_spawn(false, 10);
	t = child_target(pid);
	CHECK(enforce_set_nice(e, &t, 3) == 0);
	CHECK(sched_attr_set(pid, &rr) == 0);
	CHECK(enforce_set_nice(e, &t, 4) == -EPERM);
	CHECK(enforce_boost(e, &t, 1) == -EPERM);
	CHECK(enforce_release(e, &t) == 0);
	CHECK(policy_of(pid) == SCHED_RR);
	child_kill(pid);
	printf("refusals: PID 1, kthreadd, self, foreign SCHED_RR refused\n");
}

static void test_reuse(struct enforcer *e)
{
	pid_t pid = child_spawn(false, 10);
	struct enforce_target t = child_target(pid), stale = t;

	/* A target whose start time is not the task's: a reused pid. */
	stale.start_time++;
	check_every_lever(e, &stale, -ESRCH);
	CHECK(enforce_release(e, &stale) == 0);
	CHECK(enforcer_count(e) == 0);
	CHECK(policy_of(pid) == SCHED_OTHER);

	/* Managed, then gone: -ESRCH, and release/forget drop the record. */
	CHECK(enforce_set_nice(e, &t, 2) == 0);
	child_kill(pid);
	CHECK(enforce_boost(e, &t, 1) == -ESRCH);
	CHECK(enforce_release(e, &t) == -ESRCH);
	CHECK(enforcer_count(e) == 0);
	pid = child_spawn(false, 10);
	t = child_target(pid);
	CHECK(enforce_set_nice(e, &t, 2) == 0);
	enforce_forget(e, pid);
	CHECK(enforcer_count(e) == 0);
	CHECK(getpriority(PRIO_PROCESS, (id_t)pid) == 2); /* forget touches nothing */
	child_kill(pid);
}

/* A sensor's word on who a pidfd names, as the daemon's bpf sensor gives
 * it: here whatever the test says. */
static uint64_t told_start;
static pid_t told_tgid;
static int told_r;

static int fake_identity(void *ctx, int pidfd, uint64_t *ret_start, pid_t *ret_tgid)
{
	(void)ctx;
	CHECK(pidfd >= 0);
	*ret_start = told_start;
	*ret_tgid = told_tgid;
	return told_r;
}

/* The sensor's word proves a new task's identity in place of its stat;
 * a word that does not match, or none, leaves it to stat. The target
 * names the child's thread under another process, which a stat read
 * (of /proc/TGID/task/TID) refuses: only the sensor's word takes it. */
static void test_sensor_proof(struct enforcer *e)
{
	pid_t pid = child_spawn(false, 10);
	struct enforce_target t = child_target(pid), other = t;

	other.tgid = 4194000; /* no such process */
	enforcer_set_identity_source(e, fake_identity, NULL);
	told_start = t.start_time;
	told_tgid = other.tgid;
	told_r = 0;
	CHECK(enforce_set_nice(e, &other, 2) == 0);
	CHECK(getpriority(PRIO_PROCESS, (id_t)pid) == 2);
	enforce_forget(e, pid);
	CHECK(setpriority(PRIO_PROCESS, (id_t)pid, 0) == 0);
	/* Another start time, or another process: stat decides, and refuses. */
	told_start = t.start_time + 1;
	CHECK(enforce_set_nice(e, &other, 2) == -ESRCH);
	told_start = t.start_time;
	told_tgid = other.tgid + 1;
	CHECK(enforce_set_nice(e, &other, 2) == -ESRCH);
	/* The sensor cannot say: stat decides. */
	told_r = -ENODATA;
	CHECK(enforce_set_nice(e, &other, 2) == -ESRCH);
	CHECK(enforce_set_nice(e, &t, 2) == 0);
	CHECK(enforce_release(e, &t) == 0);
	CHECK(getpriority(PRIO_PROCESS, (id_t)pid) == 0);
	CHECK(enforcer_count(e) == 0);
	enforcer_set_identity_source(e, NULL, NULL);
	child_kill(pid);
}

static void write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);

	REQUIRE(fd >= 0);
	CHECK(write(fd, s, strlen(s)) == (ssize_t)strlen(s));
	close(fd);
}

static bool own_cpu_cgroup(char *ret, size_t size)
{
	char line[1024];
	bool found = false;
	FILE *f = fopen("/proc/self/cgroup", "re");

	while (f && !found && fgets(line, sizeof(line), f)) {
		char *p = strstr(line, ":cpu");

		if (p && (p[4] == ':' || p[4] == ',')) {
			p = strchr(p + 1, ':') + 1;
			p[strcspn(p, "\n")] = '\0';
			snprintf(ret, size, "/sys/fs/cgroup/cpu%s", strcmp(p, "/") ? p : "");
			found = true;
		}
	}
	if (f)
		fclose(f);
	return found;
}

static void test_rt_group(struct enforcer *e)
{
	char path[700], pidstr[16];
	struct enforce_target t;
	pid_t pid;

	if (access("/sys/fs/cgroup/cpu/cpu.rt_runtime_us", F_OK) < 0 ||
	    !own_cpu_cgroup(rt_cgroup_parent, sizeof(rt_cgroup_parent))) {
		printf("rt group: no v1 cpu controller with RT group scheduling, not tested\n");
		return;
	}
	snprintf(rt_cgroup, sizeof(rt_cgroup), "%s/muqss-test-guards-%d", rt_cgroup_parent,
		 (int)getpid());
	REQUIRE(mkdir(rt_cgroup, 0755) == 0);
	pid = child_spawn(false, 10);
	snprintf(pidstr, sizeof(pidstr), "%d", (int)pid);
	snprintf(path, sizeof(path), "%s/tasks", rt_cgroup);
	write_file(path, pidstr); /* a new cgroup has cpu.rt_runtime_us = 0 */
	t = child_target(pid);
	CHECK(enforce_boost(e, &t, 1) == -EPERM);
	CHECK(enforcer_last_refusal(e) == ENFORCE_REFUSAL_RT_GROUP);
	CHECK(policy_of(pid) == SCHED_OTHER);
	CHECK(enforce_release(e, &t) == 0);
	snprintf(path, sizeof(path), "%s/tasks", rt_cgroup_parent);
	write_file(path, pidstr);
	child_kill(pid);
	CHECK(rmdir(rt_cgroup) == 0);
	rt_cgroup[0] = '\0';
	printf("rt group: EPERM explained by cpu.rt_runtime_us = 0\n");
}

static void test_protect_self(void)
{
	pid_t pid = fork();
	int status;

	REQUIRE(pid >= 0);
	if (pid == 0) {
		struct sched_attr_v1 a;
		char line[256];
		long locked = 0;
		FILE *f;

		alarm(5);
#ifdef __SANITIZE_ADDRESS__
		/* ASan's terabytes of shadow cannot be locked: only the policy counts. */
		(void)enforce_protect_self(ENFORCE_DAEMON_PRIO);
		if (sched_attr_get(0, &a) < 0 || a.sched_policy != SCHED_FIFO)
			_exit(3);
		_exit(0);
#endif
		if (enforce_protect_self(ENFORCE_DAEMON_PRIO) < 0)
			_exit(2);
		if (sched_attr_get(0, &a) < 0 || a.sched_policy != SCHED_FIFO ||
		    a.sched_priority != ENFORCE_DAEMON_PRIO)
			_exit(3);
		f = fopen("/proc/self/status", "re");
		while (f && fgets(line, sizeof(line), f))
			if (sscanf(line, "VmLck: %ld", &locked) == 1)
				break;
		_exit(locked > 0 ? 0 : 4);
	}
	CHECK(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK(ENFORCE_DAEMON_PRIO > ENFORCE_BOOST_PRIO_MAX);
}

/* An enforcer freed without restoring is a crashed daemon: the next one
 * finds the records and puts the task back before doing anything else. */
static void test_restart_restores(struct enforcer **e)
{
	pid_t pid = child_spawn(true, 5);
	struct enforce_target t = child_target(pid);
	cpu_set_t all, zero, got;

	CHECK(sched_getaffinity(pid, sizeof(all), &all) == 0);
	CPU_ZERO(&zero);
	CPU_SET(0, &zero);
	CHECK(enforce_boost(*e, &t, 5) == 0);
	CHECK(enforce_pin(*e, &t, &zero) == 0);
	CHECK(enforce_stop(*e, &t) == 0);
	CHECK(child_wait_state(pid, 'T', true) == 'T');
	enforcer_free(*e);
	CHECK(policy_of(pid) == SCHED_FIFO);
	REQUIRE(enforcer_new(e, dir) == 0);
	CHECK(enforcer_count(*e) == 0);
	CHECK(child_wait_state(pid, 'T', false) != 'T');
	CHECK(policy_of(pid) == SCHED_OTHER);
	CHECK(sched_getaffinity(pid, sizeof(got), &got) == 0);
	CHECK(CPU_EQUAL(&got, &all));
	child_kill(pid);
}

int main(void)
{
	struct enforcer *e;

	if (geteuid() != 0) {
		fprintf(stderr, "skip: changing other tasks' policies needs root\n");
		return 77;
	}
	REQUIRE(mkdtemp(dir));
	atexit(cleanup);
	test_go_realtime(ENFORCE_DAEMON_PRIO);
	REQUIRE(enforcer_new(&e, dir) == 0);
	test_refusals(e);
	test_reuse(e);
	test_sensor_proof(e);
	test_rt_group(e);
	test_protect_self();
	test_restart_restores(&e);
	enforcer_free(e);
	return CHECK_EXIT();
}
