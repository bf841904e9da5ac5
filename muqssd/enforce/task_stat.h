/* The few fields of /proc/<tgid>/task/<tid>/stat the effectors check. */
#pragma once

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
