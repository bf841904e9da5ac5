/* Undoing what a dead muqssd left behind, from its state records.
 *
 * A task forked (or a thread cloned) while we had pinned its parent, made
 * it SCHED_IDLE or given it an EEVDF slice inherits that, and if we died
 * before we saw the fork, no record names it. So a record also speaks for
 * the offspring of its task: those born after the record was first
 * written, of the same uid, that still carry exactly the pin, SCHED_IDLE
 * or slice we set get the parent's own settings back. All records are
 * restored first, so a child's own record (which may hold the inherited
 * pin as "original") cannot undo that.
 * Limit: a child its owner pinned to the very CPU we pinned the parent to
 * is widened. */
#include "restore.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "enforce-internal.h"
#include "log.h"
#include "sched_attr.h"
#include "state_dir.h"

/* Processes visited below one record: a fork bomb costs a bounded walk. */
#define INHERIT_VISIT_MAX 256
/* Start times are in clock ticks; the record's mtime is turned into one. */
#define INHERIT_SLACK_TICKS 2

/* What a record's task carried when we came to restore it. */
struct inherit {
	pid_t tgid, tid;
	uint64_t start_time;
	uint64_t since; /* start time from which a task may have inherited */
	char uids[64];	/* the task's "Uid:" line: offspring must match it */
	bool pinned;
	cpu_set_t pin, affinity;
	bool idled;
	int policy;
	bool sliced;
	uint64_t our_slice_ns, slice_ns;
};

struct restore_ctx {
	char boot_id[STATE_BOOT_ID_LEN + 1];
	pid_t self;
	bool slice_supported;
	uint64_t default_slice_ns;
	unsigned restored, gone, failed, refused, repaired;
	struct inherit *inherit;
	size_t n_inherit, cap_inherit;
};

static int read_uids(pid_t tgid, pid_t tid, char *buf, size_t size)
{
	char path[64], text[4096], *p, *end;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", (int)tgid, (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (n < 0)
		return -errno;
	text[n] = '\0';
	p = strstr(text, "\nUid:");
	end = p ? strchr(p + 1, '\n') : NULL;
	if (!end || (size_t)(end - p) >= size)
		return -EBADMSG;
	memcpy(buf, p, (size_t)(end - p));
	buf[end - p] = '\0';
	return 0;
}

/* When the record was first written, as a /proc start time (boot-time
 * clock ticks): it is written before our first change, so anything that
 * started earlier did not inherit one. An older muqssd's record has only
 * its mtime, its last write: a child born between the first change and
 * that write is missed. */
static uint64_t written_at_ticks(int dir_fd, const char *name, const struct state_record *rec)
{
	struct timespec real, boot;
	struct stat st;
	int64_t ns, tick_ns = 1000000000LL / sysconf(_SC_CLK_TCK);

	if (rec->created_ns) {
		ns = (int64_t)(rec->created_ns / (uint64_t)tick_ns) - INHERIT_SLACK_TICKS;
		return ns > 0 ? (uint64_t)ns : 0;
	}
	if (fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
	    clock_gettime(CLOCK_REALTIME, &real) < 0 || clock_gettime(CLOCK_BOOTTIME, &boot) < 0)
		return UINT64_MAX; /* unknown: repair nothing */
	ns = (int64_t)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec -
	     ((int64_t)(real.tv_sec - boot.tv_sec) * 1000000000LL + (real.tv_nsec - boot.tv_nsec));
	ns = ns / tick_ns - INHERIT_SLACK_TICKS;
	return ns > 0 ? (uint64_t)ns : 0;
}

/* Before the task is put back: was it pinned, idled or sliced by us, so
 * that what it forked may carry that too? Returns -ENOMEM only. */
static int inherit_note(struct restore_ctx *c, int dir_fd, const char *name,
			const struct state_record *rec)
{
	struct sched_attr_v1 a;
	struct inherit f = {
		.tgid = rec->tgid, .tid = rec->tid, .start_time = rec->start_time,
		.affinity = rec->affinity,
		.policy = rec->policy, .slice_ns = rec->slice_ns,
	};

	if (task_verify(rec->tgid, rec->tid, rec->start_time) < 0 ||
	    read_uids(rec->tgid, rec->tid, f.uids, sizeof(f.uids)) < 0)
		return 0;
	/* Only a mask narrower than the original is one we may have set. */
	if ((rec->changed & STATE_CHANGED_AFFINITY) &&
	    sched_getaffinity(rec->tid, sizeof(f.pin), &f.pin) == 0) {
		cpu_set_t both;

		CPU_AND(&both, &f.pin, &rec->affinity);
		f.pinned = !CPU_EQUAL(&f.pin, &rec->affinity) && CPU_EQUAL(&both, &f.pin);
	}
	if ((rec->changed & STATE_CHANGED_POLICY) && sched_attr_get(rec->tid, &a) == 0) {
		f.idled = rec->policy != SCHED_IDLE && a.sched_policy == SCHED_IDLE;
		/* A boosted task reports no slice: then we cannot tell ours. */
		f.sliced = c->slice_supported && !sched_policy_is_rt((int)a.sched_policy) &&
			   a.sched_runtime && a.sched_runtime != rec->slice_ns;
		f.our_slice_ns = a.sched_runtime;
	}
	if (!f.pinned && !f.idled && !f.sliced)
		return 0;
	f.since = written_at_ticks(dir_fd, name, rec);
	if (c->n_inherit == c->cap_inherit) {
		size_t cap = c->cap_inherit ? 2 * c->cap_inherit : 16;
		struct inherit *p = realloc(c->inherit, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		c->inherit = p;
		c->cap_inherit = cap;
	}
	c->inherit[c->n_inherit++] = f;
	return 0;
}

/* One thread below a restored record: 1 if it got the parent's settings. */
static int inherit_repair_one(const struct restore_ctx *c, const struct inherit *f, pid_t tgid,
			      pid_t tid)
{
	struct sched_attr_v1 a;
	struct task_stat st;
	char uids[64];
	cpu_set_t cur;
	int done = 0;

	/* Never a kernel thread, nor a realtime task: like the levers' guards. */
	if (task_stat_read(tgid, tid, &st) < 0 || (st.flags & TASK_PF_KTHREAD) ||
	    sched_policy_is_rt((int)st.policy) || st.start_time < f->since)
		return 0;
	if (read_uids(tgid, tid, uids, sizeof(uids)) < 0 || strcmp(uids, f->uids) != 0)
		return 0;
	if (f->pinned && sched_getaffinity(tid, sizeof(cur), &cur) == 0 && CPU_EQUAL(&cur, &f->pin) &&
	    task_verify(tgid, tid, st.start_time) == 0 &&
	    sched_setaffinity(tid, sizeof(f->affinity), &f->affinity) == 0)
		done = 1;
	if ((f->idled || f->sliced) && sched_attr_get(tid, &a) == 0) {
		bool idle = f->idled && a.sched_policy == SCHED_IDLE;
		bool slice = f->sliced && a.sched_runtime == f->our_slice_ns;

		if (idle)
			a.sched_policy = (uint32_t)f->policy;
		a.sched_flags &= SCHED_FLAG_RESET_ON_FORK;
		if (c->slice_supported)
			a.sched_runtime = slice_request(slice ? f->slice_ns : a.sched_runtime,
							c->default_slice_ns);
		if ((idle || slice) && task_verify(tgid, tid, st.start_time) == 0 &&
		    sched_attr_set(tid, &a) == 0)
			done = 1;
	}
	if (done)
		log_debug("task %d: had inherited what we set on task %d, put back",
			  (int)tid, (int)f->tid);
	return done;
}

/* Appends the children that thread tid of pid forked to todo. */
static void inherit_children(pid_t pid, pid_t tid, pid_t *todo, size_t *n)
{
	char path[64], buf[4096], *p, *end;
	ssize_t len;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid, (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return;
	buf[len] = '\0';
	for (p = buf; *n < INHERIT_VISIT_MAX; p = end) {
		long child = strtol(p, &end, 10);

		if (end == p || child <= 0)
			break;
		todo[(*n)++] = (pid_t)child;
	}
}

/* The other threads of the record's process and all its descendants,
 * breadth first, at most INHERIT_VISIT_MAX processes. */
static void inherit_repair(struct restore_ctx *c, const struct inherit *f)
{
	pid_t todo[INHERIT_VISIT_MAX];
	size_t n = 0;

	/* Its pid may have been reused since we noted it. */
	if (task_verify(f->tgid, f->tid, f->start_time) < 0)
		return;
	todo[n++] = f->tgid;
	for (size_t i = 0; i < n; i++) {
		char path[32];
		struct dirent *de;
		DIR *d;

		snprintf(path, sizeof(path), "/proc/%d/task", (int)todo[i]);
		d = opendir(path);
		if (!d)
			continue;
		while ((de = readdir(d))) {
			pid_t tid = (pid_t)atoi(de->d_name);

			if (tid <= 0)
				continue;
			if (tid != f->tid)
				c->repaired += inherit_repair_one(c, f, todo[i], tid);
			inherit_children(todo[i], tid, todo, &n);
		}
		closedir(d);
	}
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
	r = inherit_note(c, dir_fd, name, &rec);
	if (r < 0)
		return r;
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
	c.self = getpid();
	r = state_boot_id(c.boot_id);
	if (r < 0)
		/* Without it no record can be trusted: keep them for a later try. */
		return log_error_errno(r, "cannot read /proc/sys/kernel/random/boot_id: %m");
	(void)autogroup_restore(dir_fd);
	r = state_foreach(dir_fd, restore_one, &c);
	/* Even after -ENOMEM: what was noted is worth repairing. */
	for (size_t i = 0; i < c.n_inherit; i++)
		inherit_repair(&c, &c.inherit[i]);
	free(c.inherit);
	if (r < 0)
		return log_error_errno(r, "cannot read the state records: %m");
	if (c.restored || c.gone || c.failed || c.refused)
		log_info("restored %u task(s) left by a previous muqssd; %u had exited, "
			 "%u could not be fully restored, %u record(s) refused; "
			 "%u task(s) put back that had inherited a pin, SCHED_IDLE or a slice",
			 c.restored, c.gone, c.failed, c.refused, c.repaired);
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
