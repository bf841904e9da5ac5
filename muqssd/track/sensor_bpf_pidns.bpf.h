// SPDX-License-Identifier: GPL-2.0
/* Pids as the daemon sees them. task->pid is the initial PID namespace's
 * number; a daemon in a namespace of its own (a container) names tasks by
 * its namespace's numbers, and must not hear of tasks outside it. The
 * daemon tells its namespace by inode (that of /proc/self/ns/pid): a pid's
 * number in it is the one whose namespace has that inode. Included once,
 * by sensor_bpf.bpf.c. */
#pragma once

/* The kernel's MAX_PID_NS_LEVEL. */
#define PIDNS_LEVELS 32

/* Set by the daemon before load. */
const volatile __u32 pidns_inum;

/* The number of pid in the daemon's namespace; 0 when pid has none there
 * (a task outside it, or pid NULL). A namespace sits at one level, so the
 * first match from the pid's own level up is the one. */
static __always_inline __u32 pidns_nr(struct pid *pid)
{
	struct upid upid;
	int level;

	if (!pid)
		return 0;
	level = BPF_CORE_READ(pid, level);
	for (int i = 0; i < PIDNS_LEVELS; i++, level--) {
		if (level < 0)
			return 0;
		if (bpf_core_read(&upid, sizeof(upid), &pid->numbers[level]))
			return 0;
		if (BPF_CORE_READ(upid.ns, ns.inum) == pidns_inum)
			return upid.nr;
	}
	return 0;
}

static __always_inline __u32 pidns_tid(struct task_struct *task)
{
	return pidns_nr(BPF_CORE_READ(task, thread_pid));
}

/* A thread's process: its group leader's number. */
static __always_inline __u32 pidns_tgid(struct task_struct *task)
{
	return pidns_nr(BPF_CORE_READ(task, group_leader, thread_pid));
}
