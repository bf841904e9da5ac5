/* Rules: classify programs at exec and at start-up, without a pid typed. */
#include "daemon.h"

#include <errno.h>

#include "log.h"
#include "procfs.h"
#include "rules.h"
#include "tracker.h"

int daemon_rules_load(struct daemon *d)
{
	struct rules *r = NULL;
	int ret;

	if (!d->config.rules_dir)
		return 0;
	ret = rules_load(&r, d->config.rules_dir);
	if (ret < 0 && ret != -ENOENT)
		return log_error_errno(ret, "cannot load rules from %s: %m", d->config.rules_dir);
	rules_free(d->rules);
	d->rules = r;
	log_info("%zu rules loaded from %s", r ? rules_count(r) : 0, d->config.rules_dir);
	return 0;
}

void daemon_rules_free(struct daemon *d)
{
	d->rules = rules_free(d->rules);
}

static void read_cmdline(pid_t pid, char *buf, size_t size)
{
	ssize_t n = procfs_read_cmdline(pid, buf, size);

	if (n > 0)
		rules_cmdline_join(buf, (size_t)n);
	else
		buf[0] = '\0';
}

/* The rule that matches tt's process, or NULL. Only main threads are
 * matched; other threads follow their process's class. */
const struct rule *daemon_rules_match(struct daemon *d, const struct tracked_task *tt)
{
	char cmdline[4096];
	struct rule_subject s;

	if (!d->rules || tt->tid != tt->tgid)
		return NULL;
	read_cmdline(tt->tgid, cmdline, sizeof(cmdline));
	s = (struct rule_subject){
		.comm = tt->comm,
		.exe = tracker_task_exe(tt),
		.cmdline = cmdline[0] ? cmdline : NULL,
		.uid = tt->uid,
	};
	return rules_match(d->rules, &s);
}
