/* Where the tracker learns of forks, execs, exits, renames and credential
 * changes: one interface over three backends.
 *   bpf        programs in the kernel filter to the scope and write a ring
 *              buffer (sensor_bpf.c); no /proc read, no event from outside
 *   connector  the proc connector: every event of the machine (connector.c)
 *   poll       no sensor at all: the tracker rescans /proc on a timer
 * Both event backends hand the tracker the same struct proc_event, so the
 * rest of the daemon does not know which one runs. */
#pragma once

#include <linux/cn_proc.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "config.h"
#include "procfs_parse.h"
#include "scope.h"

struct sensor;

/* The bpf sensor's one event of its own, beside the connector's kinds
 * (in event_data.exit's pid fields): a task in scope woke after sleeping
 * at least the wake_after_ns given to sensor_open(). */
#define SENSOR_EVENT_WAKE 0x00010000u
/* And two of lock holders (bpf only), in event_data.fork's fields: the
 * waiter as parent_pid and parent_tgid. LOCK_WAIT: it began to wait on a
 * futex that child_pid, an IDLEPRIO thread of its process, holds.
 * LOCK_DONE: that wait ended. */
#define SENSOR_EVENT_LOCK_WAIT 0x00020000u
#define SENSOR_EVENT_LOCK_DONE 0x00030000u

/* st: for a fork's child or an exec'd task, its stat as the kernel told
 * it at the event (bpf), so nothing need read it; NULL when the sensor
 * tells none (the connector, other events). */
typedef void (*sensor_event_func_t)(const struct proc_event *ev, const struct procfs_stat *st,
				    void *userdata);

/* Opens the sensor asked for (auto: bpf, else connector). One that cannot
 * be used logs one notice that says why, and the next is tried: bpf, then
 * the connector, then polling (0 with *ret NULL; poll_ms is for the
 * notice). Never fails for want of a backend. With SCOPE_ALL every user
 * task counts, so nothing needs seeding (sensor_seed). The bpf sensor
 * tells a wakeup after a sleep of wake_after_ns (SENSOR_EVENT_WAKE). */
int sensor_open(enum sensor_kind want, const struct scope *scope, unsigned poll_ms,
		uint64_t wake_after_ns, struct sensor **ret);
struct sensor *sensor_free(struct sensor *s);
/* SENSOR_POLL for NULL. */
enum sensor_kind sensor_kind_of(const struct sensor *s);
/* Readable when events are queued. */
int sensor_fd(const struct sensor *s);
/* Hands up to max queued events to fn, without blocking. Returns the count
 * read, or -ENOBUFS when events were lost since the last call (those read
 * were delivered): the caller rescans /proc. */
int sensor_receive(struct sensor *s, unsigned max, sensor_event_func_t fn, void *userdata);
/* Whether sensor_seed() is needed for a task found other than by its fork
 * event (a scan, an adoption). */
bool sensor_needs_seed(const struct sensor *s);
/* Marks thread tid in scope in the kernel, so that its events and its
 * descendants' come; uid, euid and gid as known, so a change from them
 * is told. 0, or -errno (gone: -ESRCH). */
int sensor_seed(struct sensor *s, pid_t tid, uid_t uid, uid_t euid, gid_t gid);
/* Events lost so far (a full ring buffer); 0 for the connector, whose
 * losses only show as -ENOBUFS. */
uint64_t sensor_lost(const struct sensor *s);

/* A task's scheduling as the kernel counted it at its last switch or
 * wakeup (bpf only). CLOCK_MONOTONIC ns; 0 for what has not happened. */
struct sensor_counters {
	uint64_t cpu_ns;	/* on CPU, up to now when it runs now */
	uint64_t wait_ns;	/* runnable but off a CPU, summed */
	uint64_t wake_ns;	/* its last wakeup */
	uint64_t run_ns;	/* its last switch in */
	uint64_t out_ns;	/* its last switch out */
	uint64_t nvcsw, nivcsw;
	uint32_t sib_wakes;	/* wakeups by a thread of its process (low bits) */
	int cpu;		/* the CPU it last ran on */
	char state;		/* R (running or runnable), S, D, T, t, I... */
};
/* Whether sensor_counters() can answer: the bpf sensor. */
bool sensor_has_counters(const struct sensor *s);
/* The counters of the task pidfd refers to (a pidfd of the thread,
 * PIDFD_THREAD): 0, -ENOENT when the kernel holds none for it (not in
 * scope, or not switched since it was), -ESRCH when it is gone,
 * -EOPNOTSUPP without bpf. One bpf() call. */
int sensor_counters(struct sensor *s, int pidfd, uint64_t now_ns, struct sensor_counters *ret);
/* A pidfd of thread tid, for sensor_counters(); -errno. */
int sensor_task_pidfd(pid_t tid);

/* Wake latency, as the kernel sees it (bpf only): how long a managed
 * task waited for a CPU from its wakeup to its switch in, in log2
 * histograms; bucket b counts waits of [2^b, 2^(b+1)) ns (see
 * log2_hist.h). Kept per task and per class, the class being what the
 * daemon last told of the task (sensor_set_class) or its parent's at
 * fork; a class past the last counts as the last. */
#define SENSOR_WAKE_BUCKETS 32
#define SENSOR_WAKE_CLASSES 8
/* The class whose threads' locks count (LOCK_WAIT): enum sched_class's
 * IDLEPRIO. */
#define SENSOR_CLASS_IDLEPRIO 3
/* Tells the kernel the class of the task pidfd refers to: 0, -ENOENT
 * when it holds nothing for it, -EOPNOTSUPP without bpf. Two bpf()
 * calls; a switch of the task between them may lose a count of its own
 * histogram, never add one. */
int sensor_set_class(struct sensor *s, int pidfd, unsigned cls);
/* The start time (stat's field 22, clock ticks) and process of the task
 * pidfd refers to, as the kernel set them in its storage: 0; -ENODATA
 * when it holds none (out of scope, not yet switched, a kernel thread);
 * -EOPNOTSUPP without bpf. */
int sensor_task_identity(struct sensor *s, int pidfd, uint64_t *ret_start, pid_t *ret_tgid);
/* The task's histogram since it came in scope; errors as sensor_counters(). */
int sensor_task_wake_hist(struct sensor *s, int pidfd, uint64_t ret[SENSOR_WAKE_BUCKETS]);
/* Every class's histogram since the sensor opened, summed over the CPUs:
 * one bpf() call. */
int sensor_class_wake_hists(struct sensor *s,
			    uint64_t ret[SENSOR_WAKE_CLASSES][SENSOR_WAKE_BUCKETS]);
