/* One record of the bpf sensor's ring buffer: shared by the program in
 * the kernel (sensor_bpf.bpf.c) and its reader (sensor_bpf.c). Fixed
 * size, so the program reserves it in one step. */
#pragma once

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

enum sensor_bpf_what {
	SENSOR_BPF_FORK = 1,
	SENSOR_BPF_EXEC,
	SENSOR_BPF_EXIT,
	SENSOR_BPF_COMM,	/* prctl(PR_SET_NAME), a write to comm; not an exec's */
	SENSOR_BPF_CREDS,	/* uid, euid or gid changed (seen at its next switch) */
	SENSOR_BPF_WAKE,	/* woken after sleeping at least wake_after_ns */
	SENSOR_BPF_LOCK_WAIT,	/* waits on a futex an IDLEPRIO thread holds (ptid) */
	SENSOR_BPF_LOCK_DONE,	/* that wait ended */
};

#define SENSOR_BPF_FILENAME_MAX 128
/* Wake latency histograms: bucket b counts latencies of [2^b, 2^(b+1)) ns
 * (bucket 0 also 0 ns, the last everything from 2^31 ns up). */
#define SENSOR_BPF_WAKE_BUCKETS 32
/* Classes the daemon may tell (enum sched_class); more go to the last. */
#define SENSOR_BPF_CLASSES 8
/* The daemon's IDLEPRIO (enum sched_class in core/task.h). */
#define SENSOR_BPF_CLASS_IDLEPRIO 3

/* Fork and exec: the task's fields that its /proc stat would show at the
 * event, so the daemon needs no read of it (tracker_pending.c). */
struct sensor_bpf_stat {
	__u64 start_boottime;	/* ns since boot, as task->start_boottime */
	__u32 flags;		/* PF_* */
	__u32 ppid;		/* its real parent's process */
	__u32 sid;		/* its session */
	__u32 policy, rt_priority;
	__s32 nice;
	__u32 cpu;		/* where the event ran: the task's CPU then */
	__u32 valid;		/* 0: not told (other events) */
};

struct sensor_bpf_event {
	__u32 what;
	__u32 tid, tgid;
	/* fork: the child's real parent, as the proc connector names it
	 * (for a thread, its process's parent); lock wait: the holder */
	__u32 ptid, ptgid;
	__u32 uid, euid, gid;	/* creds: the new ones; exec: as of it */
	__u64 ns;		/* CLOCK_MONOTONIC */
	__u64 cgroup_id;	/* of its cgroup v2 */
	char comm[16];
	struct sensor_bpf_stat stat;
	/* exec: as execve got it. Last, and only in an exec's record: the
	 * others end before it, half the size (SENSOR_BPF_EVENT_SHORT). */
	char filename[SENSOR_BPF_FILENAME_MAX];
};

#define SENSOR_BPF_EVENT_SHORT __builtin_offsetof(struct sensor_bpf_event, filename)

/* A task's storage: its presence marks the task in scope (but with
 * scope_all, where every task has one). The credentials last seen, to
 * tell a setuid() at the task's next switch: the pointer, which any
 * commit_creds() changes, and the ids, which say if it matters. */
struct sensor_bpf_task {
	__u32 known;		/* 0: ids not yet seen, take them silently */
	__u32 uid, euid, gid;
	__u64 cred;		/* task->real_cred as last seen; 0 before */
	/* Scheduling counters, kept at its switches and wakeups, so a tick
	 * reads them by a lookup rather than /proc (CLOCK_MONOTONIC ns). */
	__u64 runtime_ns;	/* se.sum_exec_runtime at its last switch out */
	__u64 wait_ns;		/* summed time runnable but off a CPU */
	__u64 queued_ns;	/* since when it waits for a CPU; 0: it does not */
	__u64 wake_ns;		/* its last wakeup */
	__u64 run_ns;		/* its last switch in */
	__u64 out_ns;		/* its last switch out */
	__u64 nvcsw, nivcsw;	/* as of its last switch out */
	__u32 state;		/* __state at its last switch out; 0 once woken */
	__u32 cpu;		/* the CPU it last ran on */
	/* Wake latency: a wakeup arms woken, its switch in (not one after
	 * a preemption) counts now - wake_ns into wake_hist and into its
	 * class's histogram (muqss_wake_class). */
	__u32 cls;		/* the daemon's class of it; a fork's child inherits */
	__u32 woken;		/* woken since its last switch in or out */
	__u32 lock_told;	/* in a futex wait told as SENSOR_BPF_LOCK_WAIT */
	/* Wakeups by another thread of its own process: a group whose
	 * threads hand the CPU to each other (low bits, only compared). */
	__u32 sib_wakes;
	__u32 wake_hist[SENSOR_BPF_WAKE_BUCKETS];
	/* task->start_boottime and its process (as the daemon's namespace
	 * numbers it), set in the kernel at its fork or first switch; 0
	 * before, and always for a kernel thread. Proof that a pidfd names
	 * the task an event named (sensor_task_identity). */
	__u64 start_boottime;
	__u32 tgid;
	__u32 pad;
};

/* A class's wake latencies on one CPU (a per-CPU array, one per class). */
struct sensor_bpf_wake_hist {
	__u64 bucket[SENSOR_BPF_WAKE_BUCKETS];
};
