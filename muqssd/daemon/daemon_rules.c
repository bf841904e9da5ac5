/* Rules: classify programs at exec and at start-up, without a pid typed. */
#include "daemon.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "procfs.h"
#include "rules.h"
#include "tracker.h"

int daemon_rules_read(struct daemon *d, struct rules **ret)
{
	int r;

	*ret = NULL;
	if (!d->config.rules_dir)
		return 0;
	r = rules_load(ret, d->config.rules_dir);
	if (r < 0)
		return log_error_errno(r, "cannot load rules from %s: %m", d->config.rules_dir);
	return 0;
}

void daemon_rules_set(struct daemon *d, struct rules *r)
{
	rules_free(d->rules);
	d->rules = r;
	d->rules_fields = rules_fields(r);
	d->rules_need_exe = rules_need_exe(r);
	/* Off the loop, with the stat of each new program. */
	if (d->tracker)
		tracker_set_read_cmdline(d->tracker, rules_need_cmdline(r));
	log_info("%zu rules loaded from %s", rules_count(r), d->config.rules_dir);
}

int daemon_rules_load(struct daemon *d)
{
	struct rules *r;
	int ret = daemon_rules_read(d, &r);

	if (ret < 0)
		return ret;
	daemon_rules_set(d, r);
	return 0;
}

void daemon_rules_free(struct daemon *d)
{
	daemon_launchers_free(d);
	d->rules = rules_free(d->rules);
}

/* The command line the tracker read off the loop with the task's fork or
 * exec. Returns false when there is none (a rescan, a comm change, a
 * read taken on the loop): reading it here would take the task's mmap
 * lock, which a program loading its libraries holds, on the loop. At
 * start-up (at_start), before the first tick, it is read here, as the
 * scan read the tasks' stat: that may wait on a program loading, but
 * nothing of ours is boosted or pinned yet to hold that program up. */
static bool event_cmdline(struct daemon *d, const struct tracked_task *tt, bool at_start,
			  char *buf, size_t size, size_t *ret_len)
{
	const char *read;
	size_t len = 0, n;

	if (at_start) {
		char path[64];
		ssize_t r;

		snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)tt->tgid);
		r = procfs_read_file(path, buf, size);
		if (r < 0)
			return false;
		n = (size_t)r;
	} else {
		read = tracker_event_cmdline(d->tracker, tt, &len);
		if (!read)
			return false;
		n = len < size ? len : size - 1;
		memcpy(buf, read, n);
		buf[n] = '\0';
	}
	*ret_len = n;
	return true;
}

/* The v2 path where there is one (a hybrid host's "0::" line), else the
 * named systemd hierarchy's. */
static void read_cgroup(pid_t pid, char *buf, size_t size)
{
	int r = procfs_task_cgroup(pid, pid, "", buf, size);

	if (r == -ENOENT)
		r = procfs_task_cgroup(pid, pid, "name=systemd", buf, size);
	if (r < 0)
		buf[0] = '\0';
}

/* The rule that matches tt's process, or NULL. Only main threads are
 * matched; other threads follow their process's class. The command line
 * and the cgroup are read only when a rule needs them to decide. Reading
 * cmdline takes the task's mmap lock, which a task that just exec'd
 * takes for write at each mmap while it loads its libraries: so at a
 * fork or an exec the tracker's stat readers have read it already, and
 * without that read (a comm change, a rescan) a rule that needs it does
 * not decide: NULL, the task keeps the class it has. at_start: for a
 * process the start-up scan found, before the first tick. */
const struct rule *daemon_rules_match(struct daemon *d, const struct tracked_task *tt,
				      bool at_start)
{
	char cmdline[4096] = "", cgroup[4096] = "", wine[4096];
	struct rule_ancestor ancestors[RULES_ANCESTOR_MAX];
	struct rule_subject s;
	unsigned need, fields;
	size_t len = 0;
	bool have;

	if (!d->rules || tt->tid != tt->tgid)
		return NULL;
	fields = d->rules_fields;
	s = (struct rule_subject){
		.comm = tt->comm,
		.exe = d->rules_need_exe ? tracker_task_exe(tt) : NULL,
		.uid = tt->uid,
		.ancestors = ancestors,
	};
	if (fields & RULES_ANCESTOR)
		s.n_ancestors = daemon_launchers_ancestors(d, tt, at_start, ancestors);
	need = rules_lazy_fields(d->rules, &s);
	/* A launcher's command line is kept for its descendants: read with
	 * its exec, it costs nothing more here. */
	have = ((need & RULE_MATCH_CMDLINE) || (fields & RULE_MATCH_ANCESTOR_CMDLINE)) &&
	       event_cmdline(d, tt, at_start, cmdline, sizeof(cmdline), &len);
	if (have) {
		s.wine_path = rules_wine_path(tt->comm, s.exe, cmdline, len, wine, sizeof(wine));
		if (len > 0)
			rules_cmdline_join(cmdline, len);
	}
	if (fields & RULES_ANCESTOR)
		(void)daemon_launchers_note(d, tt, have && cmdline[0] ? cmdline : NULL);
	if ((need & RULE_MATCH_CMDLINE) && !have) {
		d->counters.rules_undecided++;
		return NULL;
	}
	if (need & RULE_MATCH_CGROUP)
		read_cgroup(tt->tgid, cgroup, sizeof(cgroup));
	s.cmdline = cmdline[0] ? cmdline : NULL;
	s.cgroup = cgroup[0] ? cgroup : NULL;
	return rules_match(d->rules, &s);
}
