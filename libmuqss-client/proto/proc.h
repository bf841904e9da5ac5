/* The few /proc reads both ends of the control socket need. ESRCH when
 * the task is gone (ENOENT from /proc is mapped to it). */
#pragma once

#include <stdint.h>
#include <sys/types.h>

/* Start time in clock ticks since boot (field 22 of stat). tid 0: pid. */
int proc_start_time(pid_t pid, pid_t tid, uint64_t *ret);
/* The process a thread belongs to. */
int proc_tgid(pid_t tid, pid_t *ret);
/* Real uid of a task. tid 0: pid's main thread. */
int proc_real_uid(pid_t pid, pid_t tid, uid_t *ret);
/* Real and effective uid of a task. tid 0: pid's main thread. */
int proc_uids(pid_t pid, pid_t tid, uid_t *uid, uid_t *euid);
/* The soft RLIMIT_NICE of a process as /proc/PID/limits shows it to
 * anyone (prlimit(2) on another user's process needs CAP_SYS_RESOURCE);
 * "unlimited" is ULONG_MAX. The kernel lets a task's own user lower its
 * nice to n only when 20 - n <= this. */
int proc_rlimit_nice(pid_t pid, unsigned long *ret);
