/* Effectors: the levers muqssd pulls on tasks, and the safety net under them.
 *
 * Every change goes through a struct enforcer. Before it first changes a
 * task it records the task's identity and original settings in a file
 * under the state dir, so a later muqssd (or `muqssd --restore`) can put
 * the task back even if this instance is SIGKILLed mid-change.
 *
 * A task is named by (tid, tgid, start time). Each lever checks the start
 * time just before it acts, so a pid reused by another task is never
 * touched: the lever returns -ESRCH, as it does for a task that is gone.
 *
 * Never touched, whatever the caller asks (-EPERM, reason in
 * enforcer_last_refusal()): PID 1, kernel threads, the calling process,
 * and tasks running SCHED_FIFO, SCHED_RR or SCHED_DEADLINE set by someone
 * else. They keep their policy.
 *
 * All functions return 0 or -errno. */
#pragma once

#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* FIFO priorities: boosts granted to tasks use MIN..MAX (normal work up
 * to NORMAL_MAX, ISO above it), the daemon runs at DAEMON_PRIO, above all
 * of them, so a boosted spinner cannot starve it. */
#define ENFORCE_BOOST_PRIO_MIN 1
#define ENFORCE_BOOST_PRIO_NORMAL_MAX 10
#define ENFORCE_BOOST_PRIO_MAX 11
#define ENFORCE_DAEMON_PRIO 20

struct enforcer;

struct enforce_target {
	pid_t tid;
	pid_t tgid;
	uint64_t start_time; /* /proc/<tgid>/task/<tid>/stat field 22, in ticks */
	/* Optional proof of identity: an open /proc/<tgid>/task/<tid>/ file
	 * of this very task (the tracker's, opened once its start time was
	 * checked). With it the enforcer need not read stat, which waits on
	 * a task mid-exec: a task whose file still reads still owns its tid. */
	bool has_proof;
	int proof_fd;
};

/* What a task had before muqssd first changed it. */
struct enforce_original {
	int policy; /* SCHED_OTHER, SCHED_BATCH or SCHED_IDLE */
	int nice;
	bool reset_on_fork;
	uint64_t slice_ns; /* EEVDF slice request; 0 if the kernel has none */
	cpu_set_t affinity;
};

enum enforce_refusal {
	ENFORCE_REFUSAL_NONE = 0,
	ENFORCE_REFUSAL_PID1,
	ENFORCE_REFUSAL_KTHREAD,
	ENFORCE_REFUSAL_SELF,
	ENFORCE_REFUSAL_FOREIGN_RT, /* RT/DEADLINE policy set by someone else */
	ENFORCE_REFUSAL_RT_GROUP,   /* EPERM: the cgroup has cpu.rt_runtime_us == 0 */
};

/* Opens (creating if needed) state_dir/tasks, refuses a state dir that is
 * a symlink, not a directory, not ours or group/other-writable, and takes
 * its lock (-EBUSY if another live muqssd holds it). Then it restores
 * whatever a dead instance left there, so it starts from a clean slate. */
int enforcer_new(struct enforcer **ret, const char *state_dir);
/* Frees memory and closes files. Changes and records are left in place:
 * call enforcer_restore_all() first for a clean shutdown. */
struct enforcer *enforcer_free(struct enforcer *e);
/* Puts every task back (SIGCONT, policy, nice, slice, affinity) and
 * removes its record, and autogroup too. Tasks that are gone are just
 * forgotten. */
int enforcer_restore_all(struct enforcer *e);
/* Why the last -EPERM was returned. */
enum enforce_refusal enforcer_last_refusal(const struct enforcer *e);
const char *enforce_refusal_to_string(enum enforce_refusal r);
/* The CPUs tid's owner allows: the kernel's mask, or while we pin it,
 * the one recorded (updated if the owner changed it meanwhile). */
int enforce_owner_affinity(struct enforcer *e, pid_t tid, cpu_set_t *ret);
/* Whether sched_setattr() takes sched_runtime for normal tasks (6.12+). */
bool enforce_slice_supported(const struct enforcer *e);
/* Hands every boost and stop to d before it is made (deadman.h). */
struct deadman;
void enforcer_set_deadman(struct enforcer *e, struct deadman *d);
/* A sensor's word on who a pidfd names: its start time (stat field 22,
 * clock ticks) and process, 0; or -errno when it cannot say. With it the
 * enforcer proves a new task's identity without reading stat, which
 * costs three system calls and waits on a task mid-exec. */
typedef int (*enforce_identity_func_t)(void *ctx, int pidfd, uint64_t *ret_start,
				       pid_t *ret_tgid);
void enforcer_set_identity_source(struct enforcer *e, enforce_identity_func_t fn, void *ctx);
/* After a deadman trip: every boost and stop undone, for sure. */
void enforcer_drop_all_boosts(struct enforcer *e);
/* Number of tasks with a live record. */
size_t enforcer_count(const struct enforcer *e);

/* SCHED_FIFO at prio (ENFORCE_BOOST_PRIO_MIN..MAX) with
 * SCHED_RESET_ON_FORK, so children start normal. A failure caused by RT
 * group scheduling (cpu.rt_runtime_us == 0 in the task's cgroup) is
 * explained in the log once. */
int enforce_boost(struct enforcer *e, const struct enforce_target *t, int fifo_prio);
/* Back to the base policy: the original one, or SCHED_IDLE after
 * enforce_set_idle(), with the nice and slice last set. */
int enforce_unboost(struct enforcer *e, const struct enforce_target *t);
/* SCHED_IDLE (idle = true) or back to the original policy. */
int enforce_set_idle(struct enforcer *e, const struct enforce_target *t, bool idle);
int enforce_set_nice(struct enforcer *e, const struct enforce_target *t, int nice);
/* EEVDF slice request in ns (kernel clamps it to 0.1..100 ms); 0 puts the
 * original back. -EOPNOTSUPP on kernels without it. Takes effect when
 * the task is not boosted. */
int enforce_set_slice(struct enforcer *e, const struct enforce_target *t, uint64_t ns);
/* A thread forked by a task we gave slice @ours_ns carries it too, and
 * whoever records the thread next would take it for the owner's. If tid
 * (not yet ours, not RT) still asks for @ours_ns, gives it @owner_ns, the
 * parent's recorded slice. Returns 1 if it did, 0 if nothing to do, or
 * -errno (-EOPNOTSUPP without EEVDF slices). */
int enforce_reset_inherited_slice(struct enforcer *e, pid_t tid, uint64_t ours_ns,
				  uint64_t owner_ns);

/* A child (not recorded yet) forked while we had changed its parent
 * carries our settings: gives it its owner's from the parent's record
 * orig. affinity: orig's mask; idle_policy: orig's policy instead of our
 * SCHED_IDLE; our_slice_ns (0: none): orig's slice if it still asks ours;
 * our_nice (ENFORCE_NICE_NONE: none): owner_nice. Start time checked. */
#define ENFORCE_NICE_NONE 100
int enforce_undo_inherited(struct enforcer *e, const struct enforce_target *child,
			   const struct enforce_original *orig, bool affinity, bool idle_policy,
			   uint64_t our_slice_ns, int our_nice, int owner_nice);

/* Restricts the task to cpus intersected with the affinity its owner set
 * (-EINVAL if that is empty); it is never widened. If the owner changed
 * the affinity since our last pin, the owner's new mask becomes the one
 * restored. */
int enforce_pin(struct enforcer *e, const struct enforce_target *t, const cpu_set_t *cpus);
int enforce_unpin(struct enforcer *e, const struct enforce_target *t);

/* SIGSTOP/SIGCONT through a pidfd. A stop always stops the whole thread
 * group (that is what SIGSTOP does), so IDLEPRIO stopping is per process:
 * any thread of the process may be the target. */
int enforce_stop(struct enforcer *e, const struct enforce_target *t);
int enforce_cont(struct enforcer *e, const struct enforce_target *t);

/* A nice or policy someone else set since our last change (renice,
 * chrt -b/-o/-i) becomes the task's base: what unboost, release and
 * --restore put back. Nothing to do for a task we never changed. */
int enforce_rebase(struct enforcer *e, const struct enforce_target *t);

/* Everything back for one task and its record removed: its owner's
 * settings, the latest ones it set (enforce_rebase()). Returns -ESRCH if
 * the task was gone (the record is removed all the same). */
int enforce_release(struct enforcer *e, const struct enforce_target *t);
/* The task exited: drop its record without touching anything. */
void enforce_forget(struct enforcer *e, pid_t tid);
/* The settings recorded before the first change; -ENOENT if unmanaged. */
int enforce_get_original(const struct enforcer *e, pid_t tid, struct enforce_original *ret);

/* Reads (tgid, start time) of tid from /proc; for building targets. */
int enforce_target_from_tid(pid_t tid, struct enforce_target *ret);

/* kernel.sched_autogroup_enabled to 0 until enforcer_restore_all(), its
 * value recorded first (see autogroup.c). 0 also when the kernel has no
 * autogroup or it was off. */
int enforce_autogroup_off(struct enforcer *e);

/* Runs the calling process SCHED_FIFO at prio and locks its memory.
 * Failures are logged and ignored; returns the first error. */
int enforce_protect_self(int prio);
