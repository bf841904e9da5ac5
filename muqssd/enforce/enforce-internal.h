/* Shared by the enforcer and its levers; not for the daemon. */
#pragma once

#include "deadman.h"
#include "enforce.h"
#include "sched_attr.h"
#include "state_record.h"
#include "task_stat.h"

#define ENFORCE_BUCKETS 1024

struct enforce_task {
	struct enforce_task *next;
	struct state_record rec; /* identity and originals, as on disk */

	/* What we want now, beyond the originals. */
	int boost_prio; /* 0: not boosted */
	bool stopped;	/* rec.stopped is sticky on disk, this is now */
	bool idle;
	int nice;
	uint64_t slice_ns;
	bool pinned;
	cpu_set_t pinned_to;
	/* Deadman slots + 1 while boosted, while stopped, while our slice
	 * is set, while pinned; 0: none. */
	int dm_boost, dm_stop, dm_slice, dm_pin;
	int pidfd;	/* the thread's (PIDFD_THREAD), or -1 */
	bool on_disk;	/* rec was written */
};

struct enforcer {
	int dir_fd; /* state_dir/tasks, locked */
	pid_t self;
	char boot_id[STATE_BOOT_ID_LEN + 1]; /* written into every record */
	bool slice_supported;
	uint64_t default_slice_ns;
	bool rt_group_explained;
	bool dm_full_told;	/* the deadman's table is full, and we said so */
	enum enforce_refusal last_refusal;
	size_t count;
	struct deadman *deadman; /* NULL: no deadman */
	enforce_identity_func_t identity_of; /* NULL: none */
	void *identity_ctx;
	struct enforce_task *buckets[ENFORCE_BUCKETS];
};

/* The base attributes a task goes back to when not boosted. */
void enforce_base_attr(const struct enforcer *e, const struct enforce_task *t,
		       struct sched_attr_v1 *ret);
/* Its owner (or root) may renice the task or change its policy under us
 * (renice, chrt -b/-o/-i), and its affinity (taskset): their word is the
 * new base, kept while we run and put back at exit and by --restore.
 * What differs from what we last set is theirs: our boost reads FIFO, a
 * hog's translated nice is t->nice. Return 1 when they adopted something
 * (the record was written), 0 when not, or -errno. */
int enforce_adopt_owner_base(struct enforcer *e, struct enforce_task *t);
int enforce_adopt_owner_mask(struct enforcer *e, struct enforce_task *t);
/* Unboost to the base we keep, adopting nothing: after a deadman trip
 * the task shows the base the deadman had, maybe older than ours. */
int enforce_unboost_ours(struct enforcer *e, const struct enforce_target *target);

/* guard.c: the guard every lever goes through, below the levers and the
 * enforcer alike. */
/* Gives a deadman slot (t->dm_boost, dm_stop, dm_slice, dm_pin) back, if held. */
void enforce_dm_release(struct enforcer *e, int *slot);
/* Drops the record from the table (not from disk), with its slots and pidfd. */
void enforcer_unlink(struct enforcer *e, struct enforce_task *t);
/* Finds the task (recording it when create and it passes every guard),
 * checks its start time and reads its current stat. With !create an
 * unknown task gives 0 and *ret = NULL. */
int enforcer_task(struct enforcer *e, const struct enforce_target *target, bool create,
		  struct enforce_task **ret, struct task_stat *st);
/* The record of tid, or NULL; no check of its start time. */
struct enforce_task *enforcer_find(struct enforcer *e, pid_t tid);
/* Adds bits to the record's changed set, writing it before the caller
 * changes anything. force writes even when no bit is new. Returns 1 if it
 * wrote: the write took time, so the caller checks the start time again. */
int enforcer_mark(struct enforcer *e, struct enforce_task *t, unsigned bits, bool force);
int enforcer_refuse(struct enforcer *e, pid_t tid, enum enforce_refusal why);
/* No slot, no change: with the deadman's table full, a new boost or pin
 * is refused before any work for it (a table that stayed full cost each
 * tick a record and a /proc read for every task it wanted to pin). */
enum enforce_room { ENFORCE_ROOM_BOOST, ENFORCE_ROOM_PIN };
bool enforcer_no_room(struct enforcer *e, pid_t tid, enum enforce_room what);

#ifndef PIDFD_THREAD
#define PIDFD_THREAD 0200 /* O_EXCL: a pidfd for one thread (6.9) */
#endif
/* The recorded task is still there: through its pidfd, or its start time. */
int enforce_task_check(const struct enforce_task *t);
/* Start time of tid checked again right before a syscall on it. */
int task_verify(pid_t tgid, pid_t tid, uint64_t start_time);
/* Puts one recorded task back; -ESRCH when it is gone or another task. */
int task_restore(const struct state_record *rec, bool slice_supported, uint64_t default_slice_ns);
/* What a slice request of ns looks like to sched_setattr(). */
uint64_t slice_request(uint64_t ns, uint64_t default_ns);
/* Restores and removes every record in an opened, locked tasks dir. */
int state_restore_all(int dir_fd);
/* Puts back the autogroup sysctl recorded in the tasks dir, if any. */
int autogroup_restore(int dir_fd);
/* Whether a record that decoded may be acted on: 0, or -EPERM with why
 * set when it is from another boot (boot_id: this one), names self (the
 * process restoring) or a kernel thread. */
int restore_trust(const struct state_record *rec, const char *boot_id, pid_t self,
		  const char **why);
/* After EPERM on a FIFO boost as root: is RT group scheduling the cause? */
bool rt_group_no_budget(pid_t tgid, pid_t tid, char *path, size_t size);
