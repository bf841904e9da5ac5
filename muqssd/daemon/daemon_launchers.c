/* Launchers: the processes that satisfy some rule's ancestor keys, with the
 * command line read at their exec, so that a rule can match their
 * descendants without reading an ancestor's /proc on the loop. */
#include "daemon.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "procfs.h"
#include "rules.h"
#include "tracker.h"

/* Launchers are few (one a running game); a full table is pruned of the
 * dead first. */
#define LAUNCHERS_MAX 256

struct launcher {
	pid_t pid;
	uint64_t start_time; /* a reused pid is not the launcher */
	char *cmdline;
};

static struct launcher *find(struct daemon *d, pid_t pid)
{
	for (size_t i = 0; i < d->n_launchers; i++)
		if (d->launchers[i].pid == pid)
			return &d->launchers[i];
	return NULL;
}

static void drop(struct daemon *d, struct launcher *l)
{
	free(l->cmdline);
	*l = d->launchers[--d->n_launchers];
}

static void prune(struct daemon *d)
{
	for (size_t i = d->n_launchers; i-- > 0;) {
		struct launcher *l = &d->launchers[i];
		struct tracked_task *tt = tracker_lookup(d->tracker, l->pid);

		if (!tt || tt->start_time != l->start_time)
			drop(d, l);
	}
}

int daemon_launchers_note(struct daemon *d, const struct tracked_task *tt, const char *cmdline)
{
	struct launcher *l = find(d, tt->tgid);
	char *copy;

	/* A comm change comes without a command line: the one kept stands. */
	if (!cmdline && l && l->start_time == tt->start_time)
		return 0;
	if (!rules_is_ancestor(d->rules, tt->comm, cmdline)) {
		if (l)
			drop(d, l); /* an exec made it something else */
		return 0;
	}
	copy = cmdline ? strdup(cmdline) : NULL;
	if (cmdline && !copy)
		return -ENOMEM;
	if (!l && !d->launchers) {
		d->launchers = calloc(LAUNCHERS_MAX, sizeof(*d->launchers));
		if (!d->launchers) {
			free(copy);
			return -ENOMEM;
		}
	}
	if (!l) {
		if (d->n_launchers == LAUNCHERS_MAX)
			prune(d);
		if (d->n_launchers == LAUNCHERS_MAX) {
			log_warning("%d (%s): more than %d launchers, ignoring", (int)tt->tgid,
				    tt->comm, LAUNCHERS_MAX);
			free(copy);
			return 0;
		}
		l = &d->launchers[d->n_launchers++];
	} else {
		free(l->cmdline);
	}
	*l = (struct launcher){ tt->tgid, tt->start_time, copy };
	return 0;
}

/* A launcher's command line; at start-up, one not seen yet is read here
 * (see event_cmdline() in daemon_rules.c for why that may wait). */
static const char *cmdline_of(struct daemon *d, const struct tracked_task *a, bool at_start)
{
	struct launcher *l = find(d, a->tgid);
	char path[64], buf[4096];
	ssize_t n;

	if (l && l->start_time == a->start_time)
		return l->cmdline;
	if (!at_start)
		return NULL;
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)a->tgid);
	n = procfs_read_file(path, buf, sizeof(buf));
	if (n <= 0)
		return NULL;
	rules_cmdline_join(buf, (size_t)n);
	if (daemon_launchers_note(d, a, buf) < 0)
		return NULL;
	l = find(d, a->tgid);
	return l ? l->cmdline : NULL;
}

size_t daemon_launchers_ancestors(struct daemon *d, const struct tracked_task *tt, bool at_start,
				  struct rule_ancestor *out)
{
	size_t n = 0;

	for (pid_t pid = tt->ppid; pid > 1 && n < RULES_ANCESTOR_MAX;) {
		struct tracked_task *a = tracker_lookup(d->tracker, pid);

		/* Only ancestors in scope: the table knows their comm. */
		if (!a || a->tid != a->tgid)
			break;
		out[n++] = (struct rule_ancestor){ pid, a->comm, cmdline_of(d, a, at_start) };
		pid = a->ppid;
	}
	return n;
}

void daemon_launchers_free(struct daemon *d)
{
	while (d->n_launchers)
		drop(d, &d->launchers[0]);
	free(d->launchers);
	d->launchers = NULL;
}
