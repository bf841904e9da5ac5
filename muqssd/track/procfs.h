/* Reading /proc for one task. The parsing lives in procfs_parse.c.
 *
 * Every function returns 0 or -errno. A task that is gone (its /proc
 * directory vanished, or it is being reaped mid-read) is -ESRCH whatever
 * errno the kernel gave; callers treat that as normal and stay quiet. */
#pragma once

#include <stddef.h>
#include <sys/types.h>

#include "procfs_parse.h"

/* Reads a whole small file into buf, NUL-terminated. Returns its length. */
ssize_t procfs_read_file(const char *path, char *buf, size_t size);
/* The same from an open fd, from where it stands; the fd stays open. */
ssize_t procfs_read_fd(int fd, char *buf, size_t size);

/* Opens /proc/<tgid>/task/<tid>/<name> (O_CLOEXEC) for procfs_*_pread():
 * the fd stays bound to that task, so once the task is gone (its tid
 * reused or not) reads fail with -ESRCH. Returns the fd or -errno. */
int procfs_task_open(pid_t tgid, pid_t tid, const char *name);
/* Rereads a whole small seq file through an open fd: one pread() at
 * offset 0, which the kernel generates afresh. Returns its length. */
ssize_t procfs_pread(int fd, char *buf, size_t size);
int procfs_stat_pread(int fd, struct procfs_stat *ret);
int procfs_status_pread(int fd, struct procfs_status *ret);
/* stat through a freshly opened fd, by read(): the stat worker's tests
 * stand a pipe (which pread() refuses) in for a read that hangs. */
int procfs_stat_read(int fd, struct procfs_stat *ret);
int procfs_schedstat_pread(int fd, struct procfs_schedstat *ret);

int procfs_task_stat(pid_t tgid, pid_t tid, struct procfs_stat *ret);
int procfs_task_status(pid_t tgid, pid_t tid, struct procfs_status *ret);
int procfs_task_schedstat(pid_t tgid, pid_t tid, struct procfs_schedstat *ret);
/* The task's path in one cgroup hierarchy (see procfs_parse_cgroup()). */
int procfs_task_cgroup(pid_t tgid, pid_t tid, const char *controller, char *buf, size_t size);
/* The process's executable; *ret is malloc'd. -EACCES/-ENOENT for kernel
 * threads and zombies. */
int procfs_exe(pid_t tgid, char **ret);
/* Parses a decimal directory entry name; 0 when it is not a pid. */
pid_t procfs_pid_from_name(const char *name);
