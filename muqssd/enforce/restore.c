/* Undoing what a dead muqssd left behind, from its state records. */
#include "restore.h"

#include <errno.h>
#include <unistd.h>

#include "enforce-internal.h"
#include "log.h"
#include "sched_attr.h"
#include "state_dir.h"

struct restore_ctx {
	bool slice_supported;
	uint64_t default_slice_ns;
	unsigned restored, gone, failed, refused;
};

static int restore_one(int dir_fd, const char *name, void *userdata)
{
	struct restore_ctx *c = userdata;
	struct state_record rec;
	int r;

	r = state_read(dir_fd, name, &rec);
	if (r < 0) {
		/* A planted symlink or a torn file: never follow, never trust. */
		log_warning_errno(r, "state record %s refused and removed: %m", name);
		c->refused++;
		(void)unlinkat(dir_fd, name, 0);
		return 0;
	}
	r = task_restore(&rec, c->slice_supported, c->default_slice_ns);
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

	c.slice_supported = sched_slice_probe(&c.default_slice_ns);
	r = state_foreach(dir_fd, restore_one, &c);
	if (r < 0)
		return log_error_errno(r, "cannot read the state records: %m");
	if (c.restored || c.gone || c.failed || c.refused)
		log_info("restored %u task(s) left by a previous muqssd; %u had exited, "
			 "%u could not be fully restored, %u record(s) refused",
			 c.restored, c.gone, c.failed, c.refused);
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
