// SPDX-License-Identifier: GPL-2.0
/* The bpf sensor's half in the kernel: forks, execs, exits, renames and
 * credential changes of the tasks in scope, into a ring buffer that the
 * daemon reads as one more fd (sensor_bpf.c); and each such task's
 * scheduling counters in its task storage, for the tick to look up.
 *
 * The scope is a flag in task storage: userspace sets it on the tasks
 * its scan finds, a fork passes it on, and a task without it costs one
 * lookup and leaves. With scope_all (no scope), every user task counts. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "sensor_bpf_event.h"
#include "sensor_bpf_pidns.bpf.h"

#define PF_KTHREAD 0x00200000

char LICENSE[] SEC("license") = "GPL";

const volatile bool scope_all;
/* A task woken after sleeping this long is told (SENSOR_BPF_WAKE): the
 * daemon reads no sleeper, it waits for this. 0: never told. */
const volatile __u64 wake_after_ns;
/* Records the ring buffer had no room for: the daemon rescans /proc. */
__u64 lost;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	/* 4,600 forks or exits, 2,200 execs: a crowd of 10,000 threads
	 * started at once loses none. Mapped twice, it counts twice in RSS. */
	__uint(max_entries, 1 << 19);
} muqss_events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct sensor_bpf_task);
} muqss_scope SEC(".maps");

/* Per CPU, so the hot path adds without atomics; summed in userspace. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SENSOR_BPF_CLASSES);
	__type(key, __u32);
	__type(value, struct sensor_bpf_wake_hist);
} muqss_wake_class SEC(".maps");

static __always_inline bool in_scope(struct task_struct *task)
{
	return scope_all || bpf_task_storage_get(&muqss_scope, task, 0, 0);
}

static __always_inline void set_creds(struct sensor_bpf_event *e, const struct cred *c)
{
	e->uid = c->uid.val;
	e->euid = c->euid.val;
	e->gid = c->gid.val;
}

/* NULL for a task outside the daemon's PID namespace: it cannot name it. */
static __always_inline struct sensor_bpf_event *reserve(__u32 what, struct task_struct *task)
{
	__u32 tid = pidns_tid(task), tgid;
	struct sensor_bpf_event *e;

	if (!tid)
		return NULL;
	tgid = pidns_tgid(task);
	e = bpf_ringbuf_reserve(&muqss_events,
				what == SENSOR_BPF_EXEC ? sizeof(*e) : SENSOR_BPF_EVENT_SHORT, 0);
	if (!e) {
		__sync_fetch_and_add(&lost, 1);
		return NULL;
	}
	e->what = what;
	e->tid = tid;
	e->tgid = tgid;
	e->ptid = e->ptgid = 0;
	e->uid = e->euid = e->gid = 0;
	e->ns = bpf_ktime_get_ns();
	e->cgroup_id = bpf_get_current_cgroup_id();
	__builtin_memcpy(e->comm, task->comm, sizeof(e->comm));
	e->stat.valid = 0;
	return e;
}

/* Every wake-up of the daemon costs a context switch each way. A fork, an
 * exit or a thread's rename can wait for the next one, or the next tick,
 * which reads the buffer first (records stay in order); an exec (its rule
 * is due before the program's main()), a wake-up or a lock cannot. An urgent record
 * must force the wake-up: the default one comes only when the reader
 * has read everything before it. So does a buffer this far behind. */
#define LAZY_BYTES_MAX (64 * (sizeof(struct sensor_bpf_event) + 8))

static __always_inline void submit(struct sensor_bpf_event *e, bool urgent)
{
	if (!urgent && bpf_ringbuf_query(&muqss_events, BPF_RB_AVAIL_DATA) < LAZY_BYTES_MAX)
		bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
	else
		bpf_ringbuf_submit(e, BPF_RB_FORCE_WAKEUP);
}

/* What /proc/<tid>/stat would show of task now (fs/proc/array.c): the
 * daemon then reads no stat for its fork or exec. */
static __always_inline void set_stat(struct sensor_bpf_event *e, struct task_struct *task)
{
	e->stat.start_boottime = task->start_boottime;
	e->stat.flags = task->flags;
	e->stat.ppid = pidns_tgid(task->real_parent);
	e->stat.sid = pidns_nr(BPF_CORE_READ(task, signal, pids[PIDTYPE_SID]));
	e->stat.policy = task->policy;
	e->stat.rt_priority = task->rt_priority;
	e->stat.nice = task->static_prio - 120; /* PRIO_TO_NICE */
	e->stat.cpu = bpf_get_smp_processor_id();
	e->stat.valid = 1;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(muqss_fork, struct task_struct *parent, struct task_struct *child)
{
	struct sensor_bpf_event *e;
	struct task_struct *real_parent;

	struct sensor_bpf_task *pv = bpf_task_storage_get(&muqss_scope, parent, 0, 0);

	if ((!scope_all && !pv) || (child->flags & PF_KTHREAD))
		return 0;
	/* With scope_all, a child's storage waits for its first switch,
	 * unless it has a class to inherit. */
	if (!scope_all || (pv && pv->cls)) {
		struct sensor_bpf_task *v = bpf_task_storage_get(&muqss_scope, child, 0,
								 BPF_LOCAL_STORAGE_GET_F_CREATE);
		const struct cred *c = child->real_cred;

		if (v) {
			v->start_boottime = child->start_boottime;
			v->tgid = pidns_tgid(child);
			v->cred = (__u64)c;
			v->uid = c->uid.val;
			v->euid = c->euid.val;
			v->gid = c->gid.val;
			v->known = 1;
			v->cls = pv ? pv->cls : 0;
		}
	}
	e = reserve(SENSOR_BPF_FORK, child);
	if (!e)
		return 0;
	/* As the proc connector: a thread's parent is its process's. 0 for
	 * a parent outside the daemon's namespace, as getppid() says. */
	real_parent = child->real_parent;
	e->ptid = pidns_tid(real_parent);
	e->ptgid = pidns_tgid(real_parent);
	set_stat(e, child);
	submit(e, false);
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(muqss_exec, struct task_struct *task, pid_t old_pid, struct linux_binprm *bprm)
{
	struct sensor_bpf_event *e;
	struct sensor_bpf_task *v;

	if (!in_scope(task))
		return 0;
	/* A thread that execs takes its leader's tid and start time. */
	v = bpf_task_storage_get(&muqss_scope, task, 0, 0);
	if (v)
		v->start_boottime = task->start_boottime;
	e = reserve(SENSOR_BPF_EXEC, task);
	if (!e)
		return 0;
	bpf_probe_read_kernel_str(e->filename, sizeof(e->filename), bprm->filename);
	/* A set-id binary's: told now, not at the next switch. */
	set_creds(e, task->real_cred);
	set_stat(e, task);
	submit(e, true);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(muqss_exit, struct task_struct *task)
{
	struct sensor_bpf_event *e;

	if (!in_scope(task))
		return 0;
	e = reserve(SENSOR_BPF_EXIT, task);
	if (e)
		submit(e, false);
	return 0;
}

SEC("tp_btf/task_rename")
int BPF_PROG(muqss_rename, struct task_struct *task, const char *comm)
{
	struct sensor_bpf_event *e;

	/* An exec renames too; its exec event tells. */
	if (bpf_core_field_exists(task->in_execve) && BPF_CORE_READ_BITFIELD(task, in_execve))
		return 0;
	if (!in_scope(task))
		return 0;
	e = reserve(SENSOR_BPF_COMM, task);
	if (!e)
		return 0;
	/* The tracepoint fires before the copy: the new name is comm. */
	bpf_probe_read_kernel_str(e->comm, sizeof(e->comm), comm);
	/* Rules match a process by its main thread's name: a thread that
	 * names itself (most do, once, at their start) can wait. */
	submit(e, task->pid == task->tgid);
	return 0;
}

/* No tracepoint marks a credential change (and fentry on commit_creds()
 * is refused on some kernels): a task's credentials are compared with
 * those it had at its last switch, when it switches out. Any task that
 * calls setuid() switches out soon after. */
static __always_inline void check_creds(struct sensor_bpf_task *v, struct task_struct *task)
{
	const struct cred *c = task->real_cred;
	struct sensor_bpf_event *e;
	bool changed;

	if (v->cred == (__u64)c)
		return;
	v->cred = (__u64)c;
	changed = v->known && (v->uid != c->uid.val || v->euid != c->euid.val ||
			       v->gid != c->gid.val);
	v->known = 1;
	v->uid = c->uid.val;
	v->euid = c->euid.val;
	v->gid = c->gid.val;
	if (!changed)
		return;
	e = reserve(SENSOR_BPF_CREDS, task);
	if (!e)
		return;
	set_creds(e, c);
	submit(e, true);
}

/* With scope_all every user task gets its storage at its first switch;
 * otherwise only the tasks in scope have one. */
static __always_inline struct sensor_bpf_task *task_of(struct task_struct *task)
{
	bool kthread = task->flags & PF_KTHREAD;
	struct sensor_bpf_task *v;

	v = bpf_task_storage_get(&muqss_scope, task, 0,
				 scope_all && !kthread ? BPF_LOCAL_STORAGE_GET_F_CREATE : 0);
	/* Storage the daemon made (a seed, a class) learns it here. */
	if (v && !v->start_boottime && !kthread) {
		v->start_boottime = task->start_boottime;
		v->tgid = pidns_tgid(task);
	}
	return v;
}

/* floor(log2(ns)), capped to the last bucket: no clz in BPF. */
static __always_inline __u32 wake_bucket(__u64 ns)
{
	__u32 b = 0;

	if (ns >> 32)
		return SENSOR_BPF_WAKE_BUCKETS - 1;
	if (ns >> 16) {
		ns >>= 16;
		b += 16;
	}
	if (ns >> 8) {
		ns >>= 8;
		b += 8;
	}
	if (ns >> 4) {
		ns >>= 4;
		b += 4;
	}
	if (ns >> 2) {
		ns >>= 2;
		b += 2;
	}
	if (ns >> 1)
		b += 1;
	return b;
}

/* Switched out: a wakeup it got while it ran is spent (it was already
 * on a CPU); its next switch in follows a preemption or a new wakeup. */
static __always_inline void wake_out(struct sensor_bpf_task *v)
{
	v->woken = 0;
}

/* Switched in: if woken since it last ran, how long the wakeup waited
 * for a CPU goes into its histogram and its class's. Arithmetic on the
 * storage already looked up, and an inlined per-CPU array index. */
static __always_inline void wake_in(struct sensor_bpf_task *w, __u64 now)
{
	struct sensor_bpf_wake_hist *h;
	__u32 b, cls;

	if (!w->woken)
		return;
	w->woken = 0;
	b = wake_bucket(now > w->wake_ns ? now - w->wake_ns : 0) & (SENSOR_BPF_WAKE_BUCKETS - 1);
	w->wake_hist[b]++;
	cls = w->cls < SENSOR_BPF_CLASSES ? w->cls : SENSOR_BPF_CLASSES - 1;
	h = bpf_map_lookup_elem(&muqss_wake_class, &cls);
	if (h)
		h->bucket[b]++;
}

/* Lock holders (issue 35). A thread that waits on a futex held by an
 * IDLEPRIO thread of its process would wait until nothing else wants a
 * CPU: the daemon promotes the holder for as long as the wait lasts.
 * A futex wait is seen where it blocks, at its switch out: the syscall
 * it is in and the futex's address are in its saved registers (fentry
 * on futex_wait() would do, but some kernels refuse fentry). Who holds
 * a futex is the lock word's business, not the kernel's; two layouts
 * say it: a PI futex holds its owner's tid, and glibc's mutex keeps its
 * owner's tid in the word two after its lock. A tid read there counts
 * only if it names an IDLEPRIO thread in scope of the waiter's own
 * process, so a word that means something else costs one lookup. */
#define FUTEX_WAIT 0
#define FUTEX_LOCK_PI 6
#define FUTEX_WAIT_BITSET 9
#define FUTEX_LOCK_PI2 13
#define FUTEX_CMD_MASK 0x7f	/* without PRIVATE and CLOCK_REALTIME */
#define FUTEX_TID_MASK 0x3fffffff
#define GLIBC_MUTEX_OWNER_WORD 2

#if defined(__TARGET_ARCH_x86)
#define NR_FUTEX 202
#define SYSCALL_NR(r) BPF_CORE_READ(r, orig_ax)
#define SYSCALL_ARG1(r) BPF_CORE_READ(r, di)
#define SYSCALL_ARG2(r) BPF_CORE_READ(r, si)
#elif defined(__TARGET_ARCH_arm64)
#define NR_FUTEX 98
#define SYSCALL_NR(r) BPF_CORE_READ(r, syscallno)
#define SYSCALL_ARG1(r) BPF_CORE_READ(r, orig_x0)
#define SYSCALL_ARG2(r) BPF_CORE_READ(r, regs[1])
#endif

extern struct task_struct *bpf_task_from_pid(s32 pid) __ksym __weak;
extern void bpf_task_release(struct task_struct *p) __ksym __weak;

/* Set by the daemon: the kernel has what lock_out() needs. */
const volatile bool lock_holders;

/* The tid the futex prev blocks on names as its owner, or 0. */
static __always_inline __u32 futex_owner(struct task_struct *prev)
{
#ifdef NR_FUTEX
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(prev);
	__u32 *uaddr, word = 0;
	long nr;
	int cmd;

	if (!regs)
		return 0;
	nr = (long)SYSCALL_NR(regs);
	if (nr != NR_FUTEX)
		return 0;
	uaddr = (__u32 *)SYSCALL_ARG1(regs);
	cmd = (int)SYSCALL_ARG2(regs) & FUTEX_CMD_MASK;
	if (cmd == FUTEX_WAIT || cmd == FUTEX_WAIT_BITSET) {
		bpf_probe_read_user(&word, sizeof(word), uaddr + GLIBC_MUTEX_OWNER_WORD);
		return word;
	}
	if (cmd == FUTEX_LOCK_PI || cmd == FUTEX_LOCK_PI2) {
		bpf_probe_read_user(&word, sizeof(word), uaddr);
		return word & FUTEX_TID_MASK;
	}
#endif
	return 0;
}

/* The daemon's tid of the IDLEPRIO thread of prev's process that owner
 * names, or 0. */
static __always_inline __u32 idle_holder(struct task_struct *prev, __u32 owner)
{
	struct task_struct *holder;
	struct sensor_bpf_task *h;
	__u32 tid = 0;

	/* Tids as the waiter names them: only the initial namespace's
	 * are the kernel's. */
	if (!owner || owner == (__u32)prev->pid || BPF_CORE_READ(prev, thread_pid, level) != 0)
		return 0;
	holder = bpf_task_from_pid((s32)owner);
	if (!holder)
		return 0;
	if (holder->tgid == prev->tgid) {
		h = bpf_task_storage_get(&muqss_scope, holder, 0, 0);
		if (h && h->cls == SENSOR_BPF_CLASS_IDLEPRIO)
			tid = pidns_tid(holder);
	}
	bpf_task_release(holder);
	return tid;
}

/* prev blocks: on a lock an IDLEPRIO thread holds? */
static __always_inline void lock_out(struct sensor_bpf_task *v, struct task_struct *prev)
{
	struct sensor_bpf_event *e;
	__u32 holder;

	if (!lock_holders || !v->state || v->cls == SENSOR_BPF_CLASS_IDLEPRIO)
		return;
	holder = idle_holder(prev, futex_owner(prev));
	if (!holder)
		return;
	e = reserve(SENSOR_BPF_LOCK_WAIT, prev);
	if (!e)
		return;
	e->ptid = holder;
	e->ptgid = e->tgid;
	submit(e, true);
	v->lock_told = 1;
}

/* next runs: a wait told is over (if the lock is still held, it blocks
 * and is told again). */
static __always_inline void lock_in(struct sensor_bpf_task *w, struct task_struct *next)
{
	struct sensor_bpf_event *e;

	if (!w->lock_told)
		return;
	w->lock_told = 0;
	e = reserve(SENSOR_BPF_LOCK_DONE, next);
	if (e)
		submit(e, true);
}

/* The hottest hook: one lookup for each of prev and next, and out at
 * once for a task outside the scope. */
SEC("tp_btf/sched_switch")
int BPF_PROG(muqss_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	struct sensor_bpf_task *v = task_of(prev), *w;
	__u64 now = 0;

	if (v) {
		now = bpf_ktime_get_ns();
		v->runtime_ns = prev->se.sum_exec_runtime;
		v->nvcsw = prev->nvcsw;
		v->nivcsw = prev->nivcsw;
		v->out_ns = now;
		/* Preempted, it waits in a run queue again. */
		v->state = preempt ? 0 : prev_state;
		v->queued_ns = v->state == 0 ? now : 0;
		check_creds(v, prev);
		wake_out(v);
		lock_out(v, prev);
	}
	w = task_of(next);
	if (w) {
		if (!now)
			now = bpf_ktime_get_ns();
		wake_in(w, now);
		lock_in(w, next);
		if (w->queued_ns && now > w->queued_ns)
			w->wait_ns += now - w->queued_ns;
		w->queued_ns = 0;
		/* Exact while it is off a CPU: its runtime from here on is
		 * now - run_ns, however long ago its storage was made. */
		w->runtime_ns = next->se.sum_exec_runtime;
		w->run_ns = now;
		w->state = 0;
		w->cpu = bpf_get_smp_processor_id();
	}
	return 0;
}

/* A sleeper the daemon reads no more waits for this: a wakeup after a
 * long sleep, or the first one seen of a task seeded asleep. Not a new
 * task's first: it never slept, and its fork was told. */
static __always_inline bool tell_wake(const struct sensor_bpf_task *v, __u64 now, bool new)
{
	if (!wake_after_ns || new)
		return false;
	if (!v->out_ns)
		return !v->run_ns;
	return now - v->out_ns >= wake_after_ns;
}

static __always_inline void woken(struct task_struct *p, bool new)
{
	struct sensor_bpf_task *v = task_of(p);
	struct task_struct *waker;
	__u64 now;

	if (!v)
		return;
	now = bpf_ktime_get_ns();
	/* The hook runs in the waker's context, but for a wakeup queued to
	 * another CPU's list: then it counts as no sibling's. */
	waker = bpf_get_current_task_btf();
	if (!new && waker != p && waker->tgid == p->tgid)
		v->sib_wakes++;
	if (tell_wake(v, now, new)) {
		struct sensor_bpf_event *e = reserve(SENSOR_BPF_WAKE, p);

		if (e)
			submit(e, true);
	}
	v->wake_ns = now;
	v->woken = 1;
	v->queued_ns = now;
	v->state = 0;
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(muqss_wakeup, struct task_struct *p)
{
	woken(p, false);
	return 0;
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(muqss_wakeup_new, struct task_struct *p)
{
	woken(p, true);
	return 0;
}
