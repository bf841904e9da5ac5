/* Pure parsers for the /proc files the tracker reads.
 *
 * Each takes the file's whole text (NUL-terminated) and fills a struct; none
 * does I/O, so they can be unit-tested on fixtures and fuzzed. They return 0
 * or -EINVAL when the text does not parse. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define PF_KTHREAD_FLAG 0x00200000U

/* The fields of /proc/<pid>/task/<tid>/stat that the tracker uses. */
struct procfs_stat {
	pid_t pid;
	char comm[16];
	char state;		/* R, S, D, T, t, Z, X, I, ... */
	pid_t ppid;
	pid_t session;
	unsigned flags;		/* field 9; PF_KTHREAD_FLAG marks kernel threads */
	uint64_t utime, stime;	/* fields 14, 15, in clock ticks */
	int nice;		/* field 19 */
	uint64_t start_time;	/* field 22, clock ticks since boot */
	int processor;		/* field 39, CPU it last ran on */
	unsigned rt_priority;	/* field 40 */
	unsigned policy;	/* field 41, SCHED_* */
};

int procfs_parse_stat(const char *text, struct procfs_stat *ret);

/* The credentials and state in /proc/<pid>/task/<tid>/status. Unlike stat,
 * status takes no lock of the task's: it never waits on a task mid-exec. */
struct procfs_status {
	char state;		/* R, S, D...; 0 when the line is missing */
	pid_t tgid;
	uid_t ruid, euid;
	gid_t rgid, egid;
	uint64_t nvcsw;		/* voluntary_ctxt_switches; 0 when missing */
	pid_t ppid;		/* 0 when missing */
	/* "Kthread: 1", or, on kernels without that line, no memory
	 * ("VmSize:" missing: a kernel thread, or a process past its exit). */
	bool kthread;
};

int procfs_parse_status(const char *text, struct procfs_status *ret);

/* /proc/<pid>/task/<tid>/schedstat: time on CPU, time waiting on a run
 * queue (both ns) and the number of timeslices run. */
struct procfs_schedstat {
	uint64_t cpu_ns, wait_ns, timeslices;
};

int procfs_parse_schedstat(const char *text, struct procfs_schedstat *ret);

/* Finds, in the text of /proc/<pid>/cgroup, the path of the hierarchy named
 * by controller: "" is the cgroup2 unified hierarchy ("0::/path"), anything
 * else one of the comma-separated controllers of a v1 line ("cpu",
 * "name=systemd"). Copies the path into buf. Returns 0, -ENOENT when the
 * hierarchy is absent, -ENAMETOOLONG, or -EINVAL. */
int procfs_parse_cgroup(const char *text, const char *controller, char *buf, size_t size);

/* True when path is root or a descendant of it ("/a" holds "/a" and "/a/b",
 * not "/ab"). */
bool cgroup_path_within(const char *path, const char *root);
