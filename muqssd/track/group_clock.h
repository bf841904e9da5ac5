/* A thread group's CPU time, through its POSIX CPU clock: one cheap
 * syscall that tells whether any thread of a process has run, where
 * schedstat takes an open, a read and a close per thread. */
#pragma once

#include <stdint.h>
#include <sys/types.h>

/* The CPU time of all threads of process @tgid, live and exited, in ns.
 * Returns 0, or -ESRCH when there is no such process. */
int group_clock_cpu_ns(pid_t tgid, uint64_t *ret);
