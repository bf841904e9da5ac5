/* A task forked (or a thread cloned) while we had pinned its parent, made
 * it SCHED_IDLE or given it an EEVDF slice inherits that, and no record
 * names it if we never saw the fork: a dead muqssd's, or one forked while
 * a stopping muqssd put its parent back. So a record also speaks for the
 * offspring of its task: those born after the record was first written,
 * of the same uid, that still carry exactly the pin, SCHED_IDLE or slice
 * we set get the parent's own settings back. Every record is put back
 * before any offspring is repaired, so a child's own record (which may
 * hold the inherited pin as "original") cannot undo that.
 * A task we unpinned lately speaks for the offspring born around that
 * unpin: a fork under way copied the pin, and a muqssd that died before
 * it read the fork left the child pinned.
 * After a crash, any CPU the record says we pinned the task to counts (a
 * fork the dead muqssd never read may predate a move of the pin, or the
 * deadman's unpin).
 * Limit: a child its owner pinned to one CPU we pinned the parent to
 * (born while it was pinned, or around the unpin) is widened. */
#include "inherit_repair.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "enforce-internal.h"
#include "log.h"
#include "sched_attr.h"

/* Processes visited below one record: a fork bomb costs a bounded walk. */
#define INHERIT_VISIT_MAX 256
/* Start times are in clock ticks, rounded down. */
#define INHERIT_SLACK_TICKS 2
/* A fork under way as its parent was put back copied the pin at its
 * start and joins the parent's children only at its end, after a bash
 * has copied its memory: a second walk, this much later, finds it. */
#define INHERIT_SECOND_WALK_USEC (50 * 1000)
/* Around an unpin, the offspring that may carry the pin with their fork
 * unread: the loop counts a pin that ended up to this before a fork's
 * event (FORK_COPY_NS), and a fork's start time comes after its copy of
 * the mask, by up to about as much. */
#define INHERIT_UNPIN_WINDOW_NS (100ULL * 1000 * 1000)

/* What a record's task carried when we came to restore it. */
struct inherit {
	pid_t tgid, tid;
	uint64_t start_time;
	uint64_t since; /* start time from which a task may have inherited */
	char uids[64];	/* the task's "Uid:" line: offspring must match it */
	bool pinned;	/* by us now, or the deadman undid our pin */
	bool unpinned; /* lately: offspring born in [unpin_from, unpin_to] */
	uint64_t unpin_from, unpin_to;
	cpu_set_t pins;	/* the one-CPU masks a child may have copied from it */
	cpu_set_t affinity;
	bool idled;
	int policy;
	bool sliced;
	uint64_t our_slice_ns, slice_ns;
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

static uint64_t boottime_ticks(uint64_t ns)
{
	return ns / (uint64_t)(1000000000LL / sysconf(_SC_CLK_TCK));
}

uint64_t inherit_since_ticks(uint64_t created_ns)
{
	uint64_t ticks = boottime_ticks(created_ns);

	return ticks > INHERIT_SLACK_TICKS ? ticks - INHERIT_SLACK_TICKS : 0;
}

/* a is a subset of b. */
static bool mask_within(const cpu_set_t *a, const cpu_set_t *b)
{
	cpu_set_t both;

	CPU_AND(&both, a, b);
	return CPU_EQUAL(&both, a);
}

/* Before the task is put back: was it pinned, idled or sliced by us, so
 * that what it forked may carry that too? Returns -ENOMEM only. */
int inherit_repair_note(struct inherit_repair *c, const struct state_record *rec, uint64_t since)
{
	bool crashed = !c->unpins_after_ns, narrower;
	struct sched_attr_v1 a;
	cpu_set_t cur;
	struct inherit f = {
		.tgid = rec->tgid, .tid = rec->tid, .start_time = rec->start_time,
		.affinity = rec->affinity,
		.policy = rec->policy, .slice_ns = rec->slice_ns,
	};

	if (task_verify(rec->tgid, rec->tid, rec->start_time) < 0)
		return 0;
	/* Only a one-CPU mask narrower than the original is one we may have
	 * set: the pin it has now, or the pin our last unpin ended. */
	if ((rec->changed & STATE_CHANGED_AFFINITY) &&
	    sched_getaffinity(rec->tid, sizeof(cur), &cur) == 0) {
		narrower = mask_within(&cur, &rec->affinity) && !CPU_EQUAL(&cur, &rec->affinity);
		if (narrower)
			f.pins = cur;
		/* After a crash, the original back on a pinned record: the
		 * deadman undid our pin, which a child forked before carries. */
		f.pinned = narrower || (crashed && CPU_EQUAL(&cur, &rec->affinity));
	}
	if (!f.pinned && rec->unpinned_ns && rec->unpinned_ns >= c->unpins_after_ns) {
		f.unpinned = true;
		f.unpin_from = inherit_since_ticks(rec->unpinned_ns > INHERIT_UNPIN_WINDOW_NS
							   ? rec->unpinned_ns - INHERIT_UNPIN_WINDOW_NS
							   : 0);
		f.unpin_to = boottime_ticks(rec->unpinned_ns + INHERIT_UNPIN_WINDOW_NS) +
			     INHERIT_SLACK_TICKS;
	}
	/* A live muqssd read every fork but the last few, which copied the
	 * pin of now. A dead one may have left forks unread from before it
	 * moved the pin: any pin of the record's counts (an older record's
	 * only the last unpin's). */
	if (f.unpinned || crashed)
		CPU_OR(&f.pins, &f.pins, &rec->unpinned_from);
	if (crashed)
		CPU_OR(&f.pins, &f.pins, &rec->pinned_cpus);
	if ((rec->changed & STATE_CHANGED_POLICY) && sched_attr_get(rec->tid, &a) == 0) {
		f.idled = rec->policy != SCHED_IDLE && a.sched_policy == SCHED_IDLE;
		/* A boosted task reports no slice: then we cannot tell ours. */
		f.sliced = c->slice_supported && !sched_policy_is_rt((int)a.sched_policy) &&
			   a.sched_runtime && a.sched_runtime != rec->slice_ns;
		f.our_slice_ns = a.sched_runtime;
	}
	/* The uids last: a stopping muqssd notes every task it put back. */
	if ((!f.pinned && !f.unpinned && !f.idled && !f.sliced) ||
	    read_uids(rec->tgid, rec->tid, f.uids, sizeof(f.uids)) < 0)
		return 0;
	f.since = since;
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 16;
		struct inherit *p = realloc(c->v, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		c->v = p;
		c->cap = cap;
	}
	c->v[c->n++] = f;
	return 0;
}

/* One CPU of the pins we gave the parent, and narrower than its own mask. */
static bool pinned_by_us(const cpu_set_t *cur, const struct inherit *f)
{
	return CPU_COUNT(cur) == 1 && mask_within(cur, &f->pins) &&
	       mask_within(cur, &f->affinity) && !CPU_EQUAL(cur, &f->affinity);
}

/* One thread below a restored record: 1 if it got the parent's settings. */
static int inherit_repair_one(const struct inherit_repair *c, const struct inherit *f, pid_t tgid,
			      pid_t tid)
{
	struct sched_attr_v1 a;
	struct task_stat st;
	char uids[64];
	cpu_set_t cur;
	bool pin_copied;
	int done = 0;

	/* Never a kernel thread, nor a realtime task: like the levers' guards. */
	if (task_stat_read(tgid, tid, &st) < 0 || (st.flags & TASK_PF_KTHREAD) ||
	    sched_policy_is_rt((int)st.policy) || st.start_time < f->since)
		return 0;
	if (read_uids(tgid, tid, uids, sizeof(uids)) < 0 || strcmp(uids, f->uids) != 0)
		return 0;
	pin_copied = f->pinned || (f->unpinned && st.start_time >= f->unpin_from &&
				   st.start_time <= f->unpin_to);
	if (pin_copied && sched_getaffinity(tid, sizeof(cur), &cur) == 0 &&
	    pinned_by_us(&cur, f) && task_verify(tgid, tid, st.start_time) == 0 &&
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
static void repair_below(struct inherit_repair *c, const struct inherit *f)
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

unsigned inherit_repair_run(struct inherit_repair *c)
{
	for (size_t i = 0; i < c->n; i++)
		repair_below(c, &c->v[i]);
	if (c->n) {
		usleep(INHERIT_SECOND_WALK_USEC);
		for (size_t i = 0; i < c->n; i++)
			repair_below(c, &c->v[i]);
	}
	free(c->v);
	c->v = NULL;
	c->n = c->cap = 0;
	return c->repaired;
}
