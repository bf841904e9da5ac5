/* Affinity lever: pin to the CPU of the chosen run queue, never widen. */
#include "enforce-internal.h"

#include <errno.h>
#include <sched.h>

#include "log.h"
#include "time_util.h"

/* The owner may have changed the affinity under us (taskset, a runtime).
 * Their new mask is then the one to respect and to restore. Read just
 * before each pin, also when not pinned: the record may be older than
 * the owner's call (taskset right after its exec), and pinning on that
 * old record would overwrite the owner's mask with no trace. */
int enforce_adopt_owner_mask(struct enforcer *e, struct enforce_task *t)
{
	cpu_set_t cur;

	if (sched_getaffinity(t->rec.tid, sizeof(cur), &cur) < 0)
		return -errno;
	if (CPU_EQUAL(&cur, t->pinned ? &t->pinned_to : &t->rec.affinity))
		return 0;
	/* The deadman puts the owner's mask back when it trips, and the
	 * loop then unpins through here: that is no owner's change. */
	if (t->pinned && CPU_EQUAL(&cur, &t->rec.affinity)) {
		log_debug("task %d: its pin was undone already (the deadman)", (int)t->rec.tid);
		/* As enforce_unpin() notes it: a child forked before the
		 * deadman's unpin may carry the pin, its fork not read yet,
		 * and a restore after a crash must find it. */
		t->rec.changed &= ~(unsigned)STATE_CHANGED_AFFINITY;
		t->rec.unpinned_ns = now_nsec(CLOCK_BOOTTIME);
		t->rec.unpinned_from = t->pinned_to;
	} else
		log_debug("task %d: affinity changed by its owner, adopting it", (int)t->rec.tid);
	t->rec.affinity = cur;
	t->pinned = false;
	enforce_dm_release(e, &t->dm_pin);
	return enforcer_mark(e, t, 0, true);
}

int enforce_pin(struct enforcer *e, const struct enforce_target *target, const cpu_set_t *cpus)
{
	struct enforce_task *t;
	struct task_stat st;
	cpu_set_t want, pinned_before;
	int r, wrote, slot = 0;

	if (enforcer_no_room(e, target->tid, ENFORCE_ROOM_PIN))
		return -ENOSPC;
	r = enforcer_task(e, target, true, &t, &st);
	if (r < 0)
		return r;
	wrote = enforce_adopt_owner_mask(e, t);
	if (wrote < 0)
		return wrote;
	CPU_AND(&want, cpus, &t->rec.affinity);
	if (CPU_COUNT(&want) == 0)
		return -EINVAL;
	if (t->pinned && CPU_EQUAL(&want, &t->pinned_to))
		return 0;
	/* A CPU new to the record is written before the pin, as the first
	 * pin is: at most one write a CPU for the record's life. */
	pinned_before = t->rec.pinned_cpus;
	CPU_OR(&t->rec.pinned_cpus, &t->rec.pinned_cpus, &want);
	r = enforcer_mark(e, t, STATE_CHANGED_AFFINITY,
			  !CPU_EQUAL(&pinned_before, &t->rec.pinned_cpus));
	if (r < 0) {
		t->rec.pinned_cpus = pinned_before;
		return r;
	}
	if (r > 0 || wrote > 0) {
		r = enforce_task_check(t);
		if (r < 0)
			return r;
	}
	/* The deadman learns of the pin before it is made, as of a boost. */
	if (e->deadman) {
		slot = deadman_note_pin(e->deadman, t->rec.tid, &want, &t->rec.affinity);
		if (slot < 0)
			return slot;
		slot++;
	}
	if (sched_setaffinity(t->rec.tid, sizeof(want), &want) < 0) {
		r = -errno;
		enforce_dm_release(e, &slot);
		return r;
	}
	t->pinned = true;
	t->pinned_to = want;
	enforce_dm_release(e, &t->dm_pin);
	t->dm_pin = slot;
	return 0;
}

int enforce_owner_affinity(struct enforcer *e, pid_t tid, cpu_set_t *ret)
{
	struct enforce_task *t = enforcer_find(e, tid);
	int r;

	if (!t || !t->pinned)
		return sched_getaffinity(tid, sizeof(*ret), ret) < 0 ? -errno : 0;
	r = enforce_adopt_owner_mask(e, t);
	if (r < 0)
		return r;
	*ret = t->rec.affinity;
	return 0;
}

int enforce_unpin(struct enforcer *e, const struct enforce_target *target)
{
	struct enforce_task *t;
	struct task_stat st;
	int r;

	r = enforcer_task(e, target, false, &t, &st);
	if (r < 0 || !t || !t->pinned)
		return r;
	r = enforce_adopt_owner_mask(e, t);
	if (r < 0 || !t->pinned)
		return r < 0 ? r : 0;
	if (sched_setaffinity(t->rec.tid, sizeof(t->rec.affinity), &t->rec.affinity) < 0)
		return -errno;
	t->pinned = false;
	enforce_dm_release(e, &t->dm_pin);
	/* Its mask is its owner's again: a later restore (at exit, or after
	 * a crash) must not put back one the owner has replaced since. But a
	 * child forked just before may carry the pin, its fork not read yet:
	 * the record says when the pin ended, for a restore to find it. */
	t->rec.changed &= ~(unsigned)STATE_CHANGED_AFFINITY;
	t->rec.unpinned_ns = now_nsec(CLOCK_BOOTTIME);
	t->rec.unpinned_from = t->pinned_to;
	r = enforcer_mark(e, t, 0, true);
	return r < 0 ? r : 0;
}
