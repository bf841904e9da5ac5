/* The few fields of /proc/<tgid>/task/<tid>/stat the effectors check. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define TASK_PF_KTHREAD 0x00200000u

struct task_stat {
	unsigned flags;	     /* field 9 */
	int nice;	     /* field 19 */
	uint64_t start_time; /* field 22 */
	unsigned rt_priority; /* field 40 */
	unsigned policy;     /* field 41 */
};

/* Parses one stat line; -EBADMSG if it is malformed. */
int task_stat_parse(const char *line, struct task_stat *ret);
/* -ESRCH when the task is gone (ENOENT/ESRCH on /proc). */
int task_stat_read(pid_t tgid, pid_t tid, struct task_stat *ret);
/* The thread group of tid, from /proc/<tid>/status. */
int task_read_tgid(pid_t tid, pid_t *ret);
/* From /proc/<tgid>/task/<tid>/status, which, unlike stat, takes no lock
 * of the task's (stat waits on a task mid-exec): its thread group, and
 * whether it is a kernel thread. */
int task_status_read(pid_t tgid, pid_t tid, pid_t *ret_tgid, bool *ret_kthread);
/* The same through an open status file of the task (pread at 0). */
int task_status_pread(int fd, pid_t *ret_tgid, bool *ret_kthread);
