/* Signal lever: SIGSTOP/SIGCONT of a whole process, through a pidfd.
 *
 * SIGSTOP stops every thread of the group whichever thread it is sent to,
 * so there is no per-thread stop: IDLEPRIO stopping is per process. The
 * pidfd is opened before the start time is checked, so once the check
 * passes the pidfd names our process and the signal cannot hit a new
 * process that reused the pid. */
#include "enforce-internal.h"

#include <errno.h>
#include <signal.h>
#include <sys/pidfd.h>
#include <unistd.h>

#include "log.h"

/* For SIGSTOP, the deadman gets the pidfd first (*dm_slot), so that the
 * stop ends whatever happens to the loop; no slot, no stop. */
static int signal_process(struct enforcer *e, const struct enforce_task *t, int sig,
			  int *dm_slot)
{
	int fd, r;

	fd = pidfd_open(t->rec.tgid, 0);
	if (fd < 0)
		return errno == ESRCH ? -ESRCH : -errno;
	r = enforce_task_check(t);
	if (r == 0 && dm_slot && e->deadman && !*dm_slot) {
		r = deadman_note_stop(e->deadman, fd);
		if (r >= 0) {
			*dm_slot = r + 1;
			r = 0;
		}
	}
	if (r == 0 && pidfd_send_signal(fd, sig, NULL, 0) < 0)
		r = -errno;
	close(fd);
	return r;
}

int enforce_stop(struct enforcer *e, const struct enforce_target *target)
{
	struct enforce_task *t;
	struct task_stat st;
	int r;

	r = enforcer_task(e, target, true, &t, &st);
	if (r < 0)
		return r;
	/* On disk "stopped" stays set after a SIGCONT: a stop/cont cycle then
	 * costs no write, and the worst a restore does is one SIGCONT too many,
	 * which is also the safe direction. */
	if (!t->rec.stopped) {
		t->rec.stopped = true;
		r = enforcer_mark(e, t, 0, true);
		if (r < 0) {
			t->rec.stopped = false;
			return r;
		}
	}
	r = signal_process(e, t, SIGSTOP, &t->dm_stop);
	if (r == 0)
		t->stopped = true;
	else
		enforce_dm_release(e, &t->dm_stop);
	return r;
}

int enforce_cont(struct enforcer *e, const struct enforce_target *target)
{
	struct enforce_task *t;
	struct task_stat st;
	int r;

	r = enforcer_task(e, target, false, &t, &st);
	if (r < 0 || !t || !t->stopped)
		return r;
	r = signal_process(e, t, SIGCONT, NULL);
	if (r == 0 || r == -ESRCH) {
		t->stopped = false;
		enforce_dm_release(e, &t->dm_stop);
	}
	return r;
}
