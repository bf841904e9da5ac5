/* Processes that left the table while events about them were still queued.
 *
 * With --scope-pid, a fork is in scope when its parent is. Events are read
 * late (a busy tick, a batch), and the tick's /proc reads may see a
 * process gone first: a launcher that forks and exits at once is removed
 * as a zombie, and its child's fork event, still queued, then names a
 * parent the table no longer holds. Such a child was lost for good: by the
 * next scan it has been reparented. So a process that leaves the table
 * (or is gone before its own fork event is read) stays known as a ghost
 * until its leader's exit event, which the kernel sends after every fork
 * event its process made (each thread's forks come before its exit; the
 * leader's exit may come before another thread's fork, rarely, and that
 * child is lost as before). Ghosts whose exit event never came (lost in
 * an overflow, or read before the removal) age out at the next two
 * reconciliations, so a reused pid is not taken for one for long. */
#include "tracker_private.h"

#include <errno.h>

#include "log.h"

void tracker_ghost_add(struct tracker *t, pid_t tgid)
{
	/* Only fork events ask, and a cgroup scope needs no parent. */
	if (t->scope.kind != SCOPE_PID || t->polling)
		return;
	/* The value only has to be non-NULL. */
	if (tidmap_put(&t->ghosts, tgid, t) < 0)
		log_warning_errno(ENOMEM, "cannot remember gone process %d, ignoring: %m", (int)tgid);
}

bool tracker_is_ghost(const struct tracker *t, pid_t tgid)
{
	return tidmap_get(&t->ghosts, tgid) || tidmap_get(&t->old_ghosts, tgid);
}

void tracker_ghost_forget(struct tracker *t, pid_t tgid)
{
	(void)tidmap_remove(&t->ghosts, tgid);
	(void)tidmap_remove(&t->old_ghosts, tgid);
}

void tracker_ghosts_age(struct tracker *t, bool all)
{
	tidmap_done(&t->old_ghosts);
	if (all) {
		tidmap_done(&t->ghosts);
		return;
	}
	t->old_ghosts = t->ghosts;
	tidmap_init(&t->ghosts);
}
