/* The bpf sensor's userspace half (see sensor_bpf.h): the maps of
 * sensor_bpf.bpf.c, as a loader child hands them over
 * (sensor_bpf_load.h), and their ring buffer turned into the proc
 * connector's events. */
#include "sensor_bpf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "log.h"
#include "sensor_bpf_event.h"
#include "sensor_bpf_load.h"

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif

/* A callback's return that ends a batch; the record it saw is consumed. */
#define BATCH_FULL (-E2BIG)

/* No skeleton: the loader child had it (sensor_bpf_load.h); the maps
 * and links live here by their fds. */
struct sensor_bpf {
	struct sensor_bpf_fds fds;
	void *bss;
	size_t bss_size;
	struct ring_buffer *rb;
	uint64_t lost_seen;
	uint64_t ns_per_tick;	/* a clock tick of /proc's start times */
	/* While sensor_bpf_receive() runs. */
	sensor_event_func_t fn;
	void *userdata;
	unsigned count, max;
};

/* libbpf's own messages (a verifier log runs to pages) are for debugging;
 * the notice the user sees is ours. */
static int on_libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char buf[512];
	size_t n;

	if (log_get_level() < LOG_LEVEL_DEBUG)
		return 0;
	vsnprintf(buf, sizeof(buf), fmt, ap);
	n = strlen(buf);
	if (n && buf[n - 1] == '\n')
		buf[n - 1] = '\0';
	log_debug("libbpf: %s", buf);
	return 0;
}

static int on_record(void *ctx, void *data, size_t size);

static int pidfd_open_thread(pid_t tid)
{
	return (int)syscall(SYS_pidfd_open, tid, PIDFD_THREAD);
}

int sensor_bpf_pidfd(pid_t tid)
{
	int fd = pidfd_open_thread(tid);

	return fd < 0 ? -errno : fd;
}

static int fail(int r, char *why, size_t size, const char *what)
{
	snprintf(why, size, "%s: %s", what, strerror(-r));
	return r;
}

/* The .bss map's page, read-only: the `lost` counter without a syscall. */
static int map_bss(struct sensor_bpf *b)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	if (b->fds.lost_offset + sizeof(uint64_t) > b->fds.bss_size)
		return -EBADMSG;
	b->bss_size = (b->fds.bss_size + page - 1) / page * page;
	b->bss = mmap(NULL, b->bss_size, PROT_READ, MAP_SHARED, b->fds.map[SENSOR_BPF_FD_BSS], 0);
	if (b->bss == MAP_FAILED) {
		b->bss = NULL;
		return -errno;
	}
	return 0;
}

int sensor_bpf_open(bool scope_all, uint64_t wake_after_ns, struct sensor_bpf **ret, char *why,
		    size_t why_size)
{
	long hz = sysconf(_SC_CLK_TCK);
	struct sensor_bpf *b;
	int r;

	/* Before the fork: the loader child logs through it too. */
	libbpf_set_print(on_libbpf_print);
	b = calloc(1, sizeof(*b));
	if (!b)
		return fail(-ENOMEM, why, why_size, "cannot allocate");
	b->ns_per_tick = 1000000000ULL / (uint64_t)(hz > 0 ? hz : 100);
	r = sensor_bpf_load(scope_all, wake_after_ns, &b->fds, why, why_size);
	if (r < 0)
		goto out;
	r = map_bss(b);
	if (r < 0) {
		fail(r, why, why_size, "cannot map the programs' counters");
		goto out;
	}
	b->rb = ring_buffer__new(b->fds.map[SENSOR_BPF_FD_EVENTS], on_record, b, NULL);
	if (!b->rb) {
		r = fail(-errno, why, why_size, "cannot map the ring buffer");
		goto out;
	}
	*ret = b;
	return 0;
out:
	sensor_bpf_free(b);
	return r;
}

struct sensor_bpf *sensor_bpf_free(struct sensor_bpf *b)
{
	if (!b)
		return NULL;
	ring_buffer__free(b->rb);
	if (b->bss)
		munmap(b->bss, b->bss_size);
	sensor_bpf_fds_close(&b->fds);
	free(b);
	return NULL;
}

int sensor_bpf_fd(const struct sensor_bpf *b)
{
	return ring_buffer__epoll_fd(b->rb);
}

/* The connector tells uids and gids apart: so do we. */
static void deliver_creds(struct sensor_bpf *b, const struct sensor_bpf_event *e,
			  struct proc_event *ev)
{
	memset(&ev->event_data, 0, sizeof(ev->event_data));
	ev->what = PROC_EVENT_UID;
	ev->event_data.id.process_pid = (pid_t)e->tid;
	ev->event_data.id.process_tgid = (pid_t)e->tgid;
	ev->event_data.id.r.ruid = e->uid;
	ev->event_data.id.e.euid = e->euid;
	b->fn(ev, NULL, b->userdata);
	ev->what = PROC_EVENT_GID;
	ev->event_data.id.r.rgid = e->gid;
	ev->event_data.id.e.egid = e->gid;
	b->fn(ev, NULL, b->userdata);
}

/* The task's stat as /proc would have shown it at the event. start_time
 * is in clock ticks, as fs/proc/array.c divides start_boottime (the
 * daemon's time namespace is the initial one, as for every event's ns). */
static const struct procfs_stat *told_stat(const struct sensor_bpf *b,
					   const struct sensor_bpf_event *e, struct procfs_stat *st)
{
	if (!e->stat.valid)
		return NULL;
	*st = (struct procfs_stat){
		.pid = (pid_t)e->tid,
		.state = 'R',
		.ppid = (pid_t)e->stat.ppid,
		.session = (pid_t)e->stat.sid,
		.flags = e->stat.flags,
		.nice = e->stat.nice,
		.start_time = e->stat.start_boottime / b->ns_per_tick,
		.processor = (int)e->stat.cpu,
		.rt_priority = e->stat.rt_priority,
		.policy = e->stat.policy,
	};
	memcpy(st->comm, e->comm, sizeof(st->comm));
	st->comm[sizeof(st->comm) - 1] = '\0';
	return st;
}

static void deliver(struct sensor_bpf *b, const struct sensor_bpf_event *e)
{
	struct procfs_stat stat;
	const struct procfs_stat *st = NULL;
	struct proc_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.timestamp_ns = e->ns;
	switch (e->what) {
	case SENSOR_BPF_FORK:
		ev.what = PROC_EVENT_FORK;
		ev.event_data.fork.parent_pid = (pid_t)e->ptid;
		ev.event_data.fork.parent_tgid = (pid_t)e->ptgid;
		ev.event_data.fork.child_pid = (pid_t)e->tid;
		ev.event_data.fork.child_tgid = (pid_t)e->tgid;
		st = told_stat(b, e, &stat);
		break;
	case SENSOR_BPF_EXEC:
		ev.what = PROC_EVENT_EXEC;
		ev.event_data.exec.process_pid = (pid_t)e->tid;
		ev.event_data.exec.process_tgid = (pid_t)e->tgid;
		b->fn(&ev, told_stat(b, e, &stat), b->userdata);
		deliver_creds(b, e, &ev);
		return;
	case SENSOR_BPF_EXIT:
		ev.what = PROC_EVENT_EXIT;
		ev.event_data.exit.process_pid = (pid_t)e->tid;
		ev.event_data.exit.process_tgid = (pid_t)e->tgid;
		break;
	case SENSOR_BPF_COMM:
		ev.what = PROC_EVENT_COMM;
		ev.event_data.comm.process_pid = (pid_t)e->tid;
		ev.event_data.comm.process_tgid = (pid_t)e->tgid;
		memcpy(ev.event_data.comm.comm, e->comm, sizeof(ev.event_data.comm.comm));
		break;
	case SENSOR_BPF_CREDS:
		deliver_creds(b, e, &ev);
		return;
	case SENSOR_BPF_WAKE:
		ev.what = (enum what)SENSOR_EVENT_WAKE;
		ev.event_data.exit.process_pid = (pid_t)e->tid;
		ev.event_data.exit.process_tgid = (pid_t)e->tgid;
		break;
	case SENSOR_BPF_LOCK_WAIT:
	case SENSOR_BPF_LOCK_DONE:
		ev.what = (enum what)(e->what == SENSOR_BPF_LOCK_WAIT ? SENSOR_EVENT_LOCK_WAIT
								      : SENSOR_EVENT_LOCK_DONE);
		ev.event_data.fork.parent_pid = (pid_t)e->tid;
		ev.event_data.fork.parent_tgid = (pid_t)e->tgid;
		ev.event_data.fork.child_pid = (pid_t)e->ptid;
		ev.event_data.fork.child_tgid = (pid_t)e->ptgid;
		break;
	default:
		return;
	}
	b->fn(&ev, st, b->userdata);
}

static int on_record(void *ctx, void *data, size_t size)
{
	struct sensor_bpf *b = ctx;
	struct sensor_bpf_event e;

	if (size < SENSOR_BPF_EVENT_SHORT)
		return 0;
	/* A short record has no filename: the copy's is empty. */
	memcpy(&e, data, size < sizeof(e) ? size : sizeof(e));
	if (size < sizeof(e))
		e.filename[0] = '\0';
	deliver(b, &e);
	return ++b->count >= b->max ? BATCH_FULL : 0;
}

int sensor_bpf_receive(struct sensor_bpf *b, unsigned max, sensor_event_func_t fn,
		       void *userdata)
{
	uint64_t lost;
	int r;

	if (!max)
		return 0;
	b->fn = fn;
	b->userdata = userdata;
	b->count = 0;
	b->max = max;
	r = ring_buffer__consume(b->rb);
	if (r < 0 && r != BATCH_FULL)
		return r;
	lost = sensor_bpf_lost(b);
	if (lost != b->lost_seen) {
		b->lost_seen = lost;
		return -ENOBUFS;
	}
	return (int)b->count;
}

int sensor_bpf_seed(struct sensor_bpf *b, pid_t tid, uid_t uid, uid_t euid, gid_t gid)
{
	struct sensor_bpf_task v = { .known = 1, .uid = uid, .euid = euid, .gid = gid };
	int fd, r;

	fd = pidfd_open_thread(tid);
	if (fd < 0)
		return -errno;
	r = bpf_map_update_elem(b->fds.map[SENSOR_BPF_FD_SCOPE], &fd, &v, BPF_ANY);
	r = r < 0 ? -errno : 0;
	close(fd);
	return r;
}

uint64_t sensor_bpf_lost(const struct sensor_bpf *b)
{
	const uint64_t *lost = (const uint64_t *)((const char *)b->bss + b->fds.lost_offset);

	return __atomic_load_n(lost, __ATOMIC_RELAXED);
}

/* __state bits (include/linux/sched.h), as /proc names them. */
static char state_letter(uint32_t state)
{
	if (state == 0)
		return 'R';
	if ((state & 0x0402) == 0x0402) /* TASK_IDLE: UNINTERRUPTIBLE | NOLOAD */
		return 'I';
	if (state & 0x0001)
		return 'S';
	if (state & 0x0002)
		return 'D';
	if (state & 0x0004)
		return 'T';
	if (state & 0x0008)
		return 't';
	return 'S';
}

int sensor_bpf_counters(struct sensor_bpf *b, int pidfd, uint64_t now_ns,
			struct sensor_counters *ret)
{
	struct sensor_bpf_task v;

	if (bpf_map_lookup_elem(b->fds.map[SENSOR_BPF_FD_SCOPE], &pidfd, &v) < 0)
		return -errno;
	/* Seeded but not yet switched: nothing counted. */
	if (!v.run_ns && !v.out_ns)
		return -ENOENT;
	*ret = (struct sensor_counters){
		.cpu_ns = v.runtime_ns,
		.wait_ns = v.wait_ns,
		.wake_ns = v.wake_ns,
		.run_ns = v.run_ns,
		.out_ns = v.out_ns,
		.nvcsw = v.nvcsw,
		.nivcsw = v.nivcsw,
		.sib_wakes = v.sib_wakes,
		.cpu = (int)v.cpu,
		.state = state_letter(v.state),
	};
	/* On a CPU now: its runtime grows from its switch in. A waiter's
	 * wait too, from when it was queued. */
	if (v.run_ns > v.out_ns && now_ns > v.run_ns)
		ret->cpu_ns += now_ns - v.run_ns;
	else if (v.queued_ns && now_ns > v.queued_ns)
		ret->wait_ns += now_ns - v.queued_ns;
	return 0;
}

_Static_assert(SENSOR_WAKE_BUCKETS == SENSOR_BPF_WAKE_BUCKETS, "one bucket count");
_Static_assert(SENSOR_WAKE_CLASSES == SENSOR_BPF_CLASSES, "one class count");
_Static_assert(SENSOR_CLASS_IDLEPRIO == SENSOR_BPF_CLASS_IDLEPRIO, "one IDLEPRIO");

int sensor_bpf_task_identity(struct sensor_bpf *b, int pidfd, uint64_t *ret_start,
			     pid_t *ret_tgid)
{
	struct sensor_bpf_task v;

	if (bpf_map_lookup_elem(b->fds.map[SENSOR_BPF_FD_SCOPE], &pidfd, &v) < 0)
		return errno == ENOENT ? -ENODATA : -errno;
	if (!v.start_boottime || !v.tgid)
		return -ENODATA;
	/* In clock ticks, as /proc/<tid>/stat shows it (deliver()). */
	*ret_start = v.start_boottime / b->ns_per_tick;
	*ret_tgid = (pid_t)v.tgid;
	return 0;
}

int sensor_bpf_set_class(struct sensor_bpf *b, int pidfd, unsigned cls, bool create)
{
	int map = b->fds.map[SENSOR_BPF_FD_SCOPE];
	struct sensor_bpf_task v;

	if (cls >= SENSOR_BPF_CLASSES)
		cls = SENSOR_BPF_CLASSES - 1;
	if (bpf_map_lookup_elem(map, &pidfd, &v) < 0) {
		/* Under a scope, storage is the scope: never made here. */
		if (errno != ENOENT || !create)
			return -errno;
		memset(&v, 0, sizeof(v));
		v.cls = cls;
		return bpf_map_update_elem(map, &pidfd, &v, BPF_NOEXIST) < 0 ? -errno : 0;
	}
	if (v.cls == cls)
		return 0;
	v.cls = cls;
	/* The update replaces what the kernel counted since the lookup: a
	 * wakeup then consumed must not count again. */
	v.woken = 0;
	return bpf_map_update_elem(map, &pidfd, &v, BPF_EXIST) < 0 ? -errno : 0;
}

int sensor_bpf_task_wake_hist(struct sensor_bpf *b, int pidfd, uint64_t ret[SENSOR_WAKE_BUCKETS])
{
	struct sensor_bpf_task v;

	if (bpf_map_lookup_elem(b->fds.map[SENSOR_BPF_FD_SCOPE], &pidfd, &v) < 0)
		return -errno;
	for (size_t i = 0; i < SENSOR_WAKE_BUCKETS; i++)
		ret[i] = v.wake_hist[i];
	return 0;
}

int sensor_bpf_class_wake_hists(struct sensor_bpf *b,
				uint64_t ret[SENSOR_WAKE_CLASSES][SENSOR_WAKE_BUCKETS])
{
	int ncpu = libbpf_num_possible_cpus(), r = 0;
	uint32_t keys[SENSOR_BPF_CLASSES], out_batch, count = SENSOR_BPF_CLASSES;
	struct sensor_bpf_wake_hist *per_cpu;

	if (ncpu <= 0)
		return ncpu < 0 ? ncpu : -EINVAL;
	/* Class by class, each value one per possible CPU. */
	per_cpu = calloc((size_t)SENSOR_BPF_CLASSES * (size_t)ncpu, sizeof(*per_cpu));
	if (!per_cpu)
		return -ENOMEM;
	/* The whole array at once; ENOENT only says there is no more. */
	if (bpf_map_lookup_batch(b->fds.map[SENSOR_BPF_FD_WAKE_CLASS], NULL, &out_batch, keys,
				 per_cpu, &count, NULL) < 0 && errno != ENOENT)
		r = -errno;
	else if (count != SENSOR_BPF_CLASSES)
		r = -EIO;
	memset(ret, 0, SENSOR_WAKE_CLASSES * sizeof(*ret));
	for (uint32_t k = 0; r == 0 && k < count && keys[k] < SENSOR_WAKE_CLASSES; k++)
		for (int c = 0; c < ncpu; c++)
			for (size_t i = 0; i < SENSOR_WAKE_BUCKETS; i++)
				ret[keys[k]][i] += per_cpu[k * (size_t)ncpu + (size_t)c].bucket[i];
	free(per_cpu);
	return r;
}
