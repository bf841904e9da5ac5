/* Reads /proc stat files on threads of their own, off the loop thread.
 *
 * A read of /proc/<pid>/task/<tid>/stat takes the task's exec_update_lock,
 * which a task holds for write through most of an execve; one preempted
 * mid-exec behind our FIFO boosts held the loop in that read for a second
 * (bench/README.md, "The stall"). Opening the file takes no lock of the
 * task's, and an open fd stays bound to its task, so the loop opens the
 * file at the event and hands the fd over; a worker reads and parses it
 * and the result comes back to the loop through an eventfd.
 *
 * The queue is fixed in size: submitting to a full one fails at once, and
 * the caller decides what to do. Results come back in the order the reads
 * finish, not the order they were asked for: a read that hangs holds up
 * its own worker only.
 *
 * A read may take the task's command line too, through a second fd: it
 * takes the task's mmap lock, which a program just exec'd takes for write
 * at each mmap while it loads its libraries. */
#pragma once

#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-event.h>

#include "procfs_parse.h"

#define STAT_WORKER_JOBS 128

struct stat_worker;

struct stat_result {
	pid_t tid;
	uint64_t cookie;	/* the caller's, as given */
	int r;			/* 0, -ESRCH when the task is gone, -errno, -EINVAL */
	struct procfs_stat st;	/* when r is 0 */
	/* With a cmdline fd: its bytes (NULs kept, NUL-terminated), or NULL
	 * when it could not be read. Freed once done returns. */
	char *cmdline;
	size_t cmdline_len;
};

/* What a command line read may hold; the rest is cut. */
#define STAT_WORKER_CMDLINE_MAX 4096

typedef void (*stat_worker_done_func_t)(const struct stat_result *res, void *userdata);

/* Test hook: MUQSSD_TEST_STAT_DELAY_MS in the environment makes each read
 * wait that long first, as a read of a task mid-exec would.
 *
 * nthreads workers at SCHED_FIFO fifo_prio (0, or not allowed: the
 * creator's policy). done runs on the loop, from an io source at
 * priority, once per finished read. */
int stat_worker_new(struct stat_worker **ret, sd_event *event, int64_t priority,
		    unsigned nthreads, int fifo_prio, stat_worker_done_func_t done,
		    void *userdata);
/* Queues a read of fd, which the worker then owns and closes. -EAGAIN
 * when the queue is full: fd is still the caller's. Never blocks on a
 * read in progress. */
int stat_worker_submit(struct stat_worker *w, int fd, pid_t tid, uint64_t cookie);
/* The same, and reads cmdline_fd (a /proc cmdline file) after the stat;
 * the worker owns and closes both. */
int stat_worker_submit_cmdline(struct stat_worker *w, int fd, int cmdline_fd, pid_t tid,
			       uint64_t cookie);
/* Runs done for every read finished so far, now. Returns how many. */
unsigned stat_worker_drain(struct stat_worker *w);
/* Waits for the reads in progress (a read of a task mid-exec ends when its
 * exec does), drops the queued ones and closes their fds. */
struct stat_worker *stat_worker_free(struct stat_worker *w);
