/* Undoing what a dead muqssd left behind, from its state records,
 * offspring that inherited what we set included (inherit_repair.c). */
#include "restore.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "enforce-internal.h"
#include "inherit_repair.h"
#include "log.h"
#include "sched_attr.h"
#include "state_dir.h"

struct restore_ctx {
	char boot_id[STATE_BOOT_ID_LEN + 1];
	pid_t self;
	unsigned restored, gone, failed, refused;
	struct inherit_repair inherit;
};

/* When the record was first written, as a /proc start time (boot-time
 * clock ticks): it is written before our first change, so anything that
 * started earlier did not inherit one. An older muqssd's record has only
 * its mtime, its last write: a child born between the first change and
 * that write is missed. */
static uint64_t written_at_ticks(int dir_fd, const char *name, const struct state_record *rec)
{
	struct timespec real, boot;
	struct stat st;
	int64_t ns;

	if (rec->created_ns)
		return inherit_since_ticks(rec->created_ns);
	if (fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
	    clock_gettime(CLOCK_REALTIME, &real) < 0 || clock_gettime(CLOCK_BOOTTIME, &boot) < 0)
		return UINT64_MAX; /* unknown: repair nothing */
	ns = (int64_t)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec -
	     ((int64_t)(real.tv_sec - boot.tv_sec) * 1000000000LL + (real.tv_nsec - boot.tv_nsec));
	return ns > 0 ? inherit_since_ticks((uint64_t)ns) : 0;
}

int restore_trust(const struct state_record *rec, const char *boot_id, pid_t self,
		  const char **why)
{
	struct task_stat st;

	*why = NULL;
	/* The state dir may be on disk and outlive a reboot: then its pids
	 * and start times name whatever runs now. */
	if (strcmp(rec->boot_id, boot_id) != 0)
		*why = rec->boot_id[0] ? "it is from another boot" : "it carries no boot id";
	else if (rec->tgid == 1 || rec->tid == 1)
		*why = "it names PID 1";
	else if (rec->tgid == self || rec->tid == self)
		*why = "it names muqssd itself";
	/* Whatever runs at that pid now, start time or not: the enforcer
	 * never records a kernel thread, so such a record was not ours. */
	else if (task_stat_read(rec->tgid, rec->tid, &st) == 0 && (st.flags & TASK_PF_KTHREAD))
		*why = "it names a kernel thread";
	return *why ? -EPERM : 0;
}

static int restore_one(int dir_fd, const char *name, void *userdata)
{
	struct restore_ctx *c = userdata;
	struct state_record rec;
	const char *why;
	int r;

	r = state_read(dir_fd, name, &rec);
	if (r < 0) {
		/* A planted symlink or a torn file: never follow, never trust. */
		log_warning_errno(r, "state record %s refused and removed: %m", name);
		c->refused++;
		(void)unlinkat(dir_fd, name, 0);
		return 0;
	}
	if (restore_trust(&rec, c->boot_id, c->self, &why) < 0) {
		log_warning("state record %s refused and removed: %s", name, why);
		c->refused++;
		(void)unlinkat(dir_fd, name, 0);
		return 0;
	}
	r = inherit_repair_note(&c->inherit, &rec, written_at_ticks(dir_fd, name, &rec));
	if (r < 0)
		return r;
	r = task_restore(&rec, c->inherit.slice_supported, c->inherit.default_slice_ns);
	if (r == -ESRCH)
		c->gone++;
	else if (r < 0)
		c->failed++;
	else
		c->restored++;
	/* A failed step will fail again; keeping the record helps nobody. */
	(void)state_remove(dir_fd, rec.tid);
	return 0;
}

int state_restore_all(int dir_fd)
{
	struct restore_ctx c = { 0 };
	int r;

	c.inherit.slice_supported = sched_slice_probe(&c.inherit.default_slice_ns);
	c.self = getpid();
	r = state_boot_id(c.boot_id);
	if (r < 0)
		/* Without it no record can be trusted: keep them for a later try. */
		return log_error_errno(r, "cannot read /proc/sys/kernel/random/boot_id: %m");
	(void)autogroup_restore(dir_fd);
	r = state_foreach(dir_fd, restore_one, &c);
	/* Even after -ENOMEM: what was noted is worth repairing. */
	(void)inherit_repair_run(&c.inherit);
	if (r < 0)
		return log_error_errno(r, "cannot read the state records: %m");
	if (c.restored || c.gone || c.failed || c.refused)
		log_info("restored %u task(s) left by a previous muqssd; %u had exited, "
			 "%u could not be fully restored, %u record(s) refused; "
			 "%u task(s) put back that had inherited a pin, SCHED_IDLE or a slice",
			 c.restored, c.gone, c.failed, c.refused, c.inherit.repaired);
	return c.failed ? -EIO : 0;
}

int restore_from_state_dir(const char *state_dir)
{
	int fd, r;

	r = state_dir_open(state_dir, false, &fd);
	if (r == -ENOENT)
		return 0; /* no muqssd ever ran here */
	if (r < 0)
		return r;
	r = state_dir_lock(fd);
	if (r < 0) {
		close(fd);
		return log_error_errno(r, "%s is held by a running muqssd, it restores its own tasks: %m",
				       state_dir);
	}
	r = state_restore_all(fd);
	close(fd);
	return r;
}
