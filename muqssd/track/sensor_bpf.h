/* The bpf sensor's userspace half: loads sensor_bpf.bpf.c through its
 * skeleton, reads its ring buffer, seeds its scope. Programs and maps
 * live by their fds only (nothing is pinned), so they go away with the
 * daemon however it ends. Needs CAP_BPF and CAP_PERFMON (or
 * CAP_SYS_ADMIN), kernel BTF, and a kernel with task storage for
 * tracing programs and PIDFD_THREAD (6.9) unless scope_all. Tasks are
 * named by their pids in the daemon's own PID namespace, and tasks
 * outside it are not reported. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sensor.h"

struct sensor_bpf;

/* On failure, why (for the user's notice) is written to why. */
int sensor_bpf_open(bool scope_all, uint64_t wake_after_ns, struct sensor_bpf **ret, char *why,
		    size_t why_size);
struct sensor_bpf *sensor_bpf_free(struct sensor_bpf *b);
int sensor_bpf_fd(const struct sensor_bpf *b);
int sensor_bpf_receive(struct sensor_bpf *b, unsigned max, sensor_event_func_t fn,
		       void *userdata);
int sensor_bpf_seed(struct sensor_bpf *b, pid_t tid, uid_t uid, uid_t euid, gid_t gid);
uint64_t sensor_bpf_lost(const struct sensor_bpf *b);
int sensor_bpf_counters(struct sensor_bpf *b, int pidfd, uint64_t now_ns,
			struct sensor_counters *ret);
/* pidfd_open(tid, PIDFD_THREAD), or -errno. */
int sensor_bpf_pidfd(pid_t tid);
/* With create (scope_all), a task the kernel holds nothing for yet gets
 * its storage now. */
int sensor_bpf_set_class(struct sensor_bpf *b, int pidfd, unsigned cls, bool create);
int sensor_bpf_task_identity(struct sensor_bpf *b, int pidfd, uint64_t *ret_start,
			     pid_t *ret_tgid);
int sensor_bpf_task_wake_hist(struct sensor_bpf *b, int pidfd,
			      uint64_t ret[SENSOR_WAKE_BUCKETS]);
int sensor_bpf_class_wake_hists(struct sensor_bpf *b,
				uint64_t ret[SENSOR_WAKE_CLASSES][SENSOR_WAKE_BUCKETS]);
