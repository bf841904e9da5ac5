/* The enforcer: the table of tasks we changed, and giving them back
 * (one, all at exit, or the boosts after a deadman trip). The guard the
 * levers go through is guard.c. */
#include "enforce-internal.h"

#include <errno.h>
#include <sys/resource.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "inherit_repair.h"
#include "log.h"
#include "sched_attr.h"
#include "state_dir.h"
#include "time_util.h"

enum enforce_refusal enforcer_last_refusal(const struct enforcer *e)
{
	return e->last_refusal;
}

bool enforce_slice_supported(const struct enforcer *e)
{
	return e->slice_supported;
}

size_t enforcer_count(const struct enforcer *e)
{
	return e->count;
}

/* Each recorded task holds a pidfd: the soft limit of 1024 is for
 * select(), which nothing here uses. */
static void raise_fd_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
}

int enforcer_new(struct enforcer **ret, const char *state_dir)
{
	struct enforcer *e;
	int r;

	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->dir_fd = -1;
	e->self = getpid();
	raise_fd_limit();
	e->slice_supported = sched_slice_probe(&e->default_slice_ns);
	r = state_boot_id(e->boot_id);
	if (r < 0) {
		log_error_errno(r, "cannot read /proc/sys/kernel/random/boot_id: %m");
		goto fail;
	}
	r = state_dir_open(state_dir, true, &e->dir_fd);
	if (r < 0)
		goto fail;
	r = state_dir_lock(e->dir_fd);
	if (r < 0) {
		log_error_errno(r, "%s is in use by another muqssd: %m", state_dir);
		goto fail;
	}
	r = state_restore_all(e->dir_fd);
	if (r < 0)
		log_warning_errno(r, "could not restore every task a previous muqssd left, ignoring: %m");
	log_debug("EEVDF slice requests %s", e->slice_supported ? "supported" : "not supported");
	*ret = e;
	return 0;
fail:
	enforcer_free(e);
	return r;
}

struct enforcer *enforcer_free(struct enforcer *e)
{
	if (!e)
		return NULL;
	for (size_t i = 0; i < ENFORCE_BUCKETS; i++)
		while (e->buckets[i]) {
			struct enforce_task *t = e->buckets[i];

			e->buckets[i] = t->next;
			if (t->pidfd >= 0)
				close(t->pidfd);
			free(t);
		}
	if (e->dir_fd >= 0)
		close(e->dir_fd);
	free(e);
	return NULL;
}

/* With inherit, what the task's offspring may have inherited from it is
 * noted for inherit_repair_run(). */
static int release(struct enforcer *e, const struct enforce_target *target,
		   struct inherit_repair *inherit)
{
	struct enforce_task *t = enforcer_find(e, target->tid);
	struct state_record rec;
	int r, q;

	if (!t)
		return 0;
	/* What its owner set since our last change is what goes back. A
	 * task gone fails these, and task_restore() then says so. */
	if (enforce_task_check(t) == 0) {
		(void)enforce_adopt_owner_base(e, t);
		if (t->pinned)
			(void)enforce_adopt_owner_mask(e, t);
	}
	/* Live, we know whether it is stopped now; the record only "ever". */
	rec = t->rec;
	rec.stopped = t->stopped;
	if (inherit && rec.created_ns)
		(void)inherit_repair_note(inherit, &rec, inherit_since_ticks(rec.created_ns));
	r = task_restore(&rec, e->slice_supported, e->default_slice_ns);
	q = state_remove(e->dir_fd, t->rec.tid);
	if (q < 0)
		log_warning_errno(q, "cannot remove the state record of task %d, ignoring: %m",
				  (int)t->rec.tid);
	enforcer_unlink(e, t);
	return r;
}

int enforce_release(struct enforcer *e, const struct enforce_target *target)
{
	return release(e, target, NULL);
}

void enforce_forget(struct enforcer *e, pid_t tid)
{
	struct enforce_task *t = enforcer_find(e, tid);

	if (!t)
		return;
	(void)state_remove(e->dir_fd, tid);
	enforcer_unlink(e, t);
}

/* On our way out. A task may fork between the last fork event we read
 * and its own restore here, and the child inherits our pin, SCHED_IDLE
 * or slice with no record and no event read: so, as a restore after a
 * crash does, each task's offspring are repaired once all are back. */
int enforcer_restore_all(struct enforcer *e)
{
	uint64_t now = now_nsec(CLOCK_BOOTTIME);
	/* Live, we read the forks around an unpin within about this. */
	struct inherit_repair inherit = { .slice_supported = e->slice_supported,
					  .default_slice_ns = e->default_slice_ns,
					  .unpins_after_ns = now > 1000000000ULL ? now - 1000000000ULL : 0 };
	unsigned repaired;
	int ret = 0, ag;

	for (size_t i = 0; i < ENFORCE_BUCKETS; i++)
		while (e->buckets[i]) {
			struct enforce_task *t = e->buckets[i];
			struct enforce_target target = {
				.tid = t->rec.tid,
				.tgid = t->rec.tgid,
				.start_time = t->rec.start_time,
			};
			int r = release(e, &target, &inherit);

			if (r < 0 && r != -ESRCH && ret == 0)
				ret = r;
		}
	repaired = inherit_repair_run(&inherit);
	if (repaired)
		log_info("put back %u task(s) that had inherited a pin, SCHED_IDLE or a slice "
			 "as we stopped", repaired);
	ag = autogroup_restore(e->dir_fd);
	return ret ? ret : ag;
}

void enforcer_set_deadman(struct enforcer *e, struct deadman *d)
{
	e->deadman = d;
}

void enforcer_drop_all_boosts(struct enforcer *e)
{
	for (size_t i = 0; i < ENFORCE_BUCKETS; i++)
		for (struct enforce_task *t = e->buckets[i]; t; t = t->next) {
			struct enforce_target target = { .tid = t->rec.tid, .tgid = t->rec.tgid,
							 .start_time = t->rec.start_time };

			/* The deadman undid these already; again from here, in
			 * case the loop was making one of them as it tripped. */
			if (t->boost_prio)
				(void)enforce_unboost_ours(e, &target);
			if (t->stopped)
				(void)enforce_cont(e, &target);
			t->boost_prio = 0;
			t->stopped = false;
			enforce_dm_release(e, &t->dm_boost);
			enforce_dm_release(e, &t->dm_stop);
			/* The deadman gave our slice and pin back: the loop
			 * sets them again where it still wants them. */
			if (t->dm_slice)
				(void)enforce_set_slice(e, &target, 0);
			if (t->pinned)
				(void)enforce_unpin(e, &target);
		}
}

int enforce_get_original(const struct enforcer *e, pid_t tid, struct enforce_original *ret)
{
	struct enforce_task *t = enforcer_find((struct enforcer *)e, tid);

	if (!t)
		return -ENOENT;
	ret->policy = t->rec.policy;
	ret->nice = t->rec.nice;
	ret->reset_on_fork = t->rec.reset_on_fork;
	ret->slice_ns = t->rec.slice_ns;
	ret->affinity = t->rec.affinity;
	return 0;
}

int enforce_target_from_tid(pid_t tid, struct enforce_target *ret)
{
	struct task_stat st;
	pid_t tgid;
	int r;

	r = task_read_tgid(tid, &tgid);
	if (r < 0)
		return r;
	r = task_stat_read(tgid, tid, &st);
	if (r < 0)
		return r;
	*ret = (struct enforce_target){ .tid = tid, .tgid = tgid, .start_time = st.start_time };
	return 0;
}
