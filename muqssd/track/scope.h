/* Which tasks the tracker manages.
 *
 * Never: kernel threads (PF_KTHREAD, or children of kthreadd), PID 1 (of
 * the daemon's PID namespace), and the daemon itself. Then, by config.scope:
 *   SCOPE_ALL     every other task;
 *   SCOPE_PID     the process config.scope_pid and its descendants. The
 *                 tracker decides membership at fork time from the parent's
 *                 and remembers it, so a descendant reparented to init stays
 *                 in scope. (A start-up scan can only follow the tree as it
 *                 is then.)
 *   SCOPE_CGROUP  processes whose thread group leader is in a cgroup subtree.
 *
 * The cgroup may be given as
 *   - a path under a mounted hierarchy: /sys/fs/cgroup/unified/x (cgroup2)
 *     or /sys/fs/cgroup/cpu/x (the v1 hierarchy the cpu controller is on);
 *   - a path relative to a hierarchy's root ("x" or "/x"): looked up in the
 *     cgroup2 hierarchy first, then in the v1 hierarchy holding "cpu".
 * Membership is read from /proc/<pid>/task/<tid>/cgroup, so it is per
 * thread and works in hybrid layouts. libcgroup's
 * cgroup_get_current_controller_path() reads the same file per process and
 * needs cgroup_init(); a 30-line parser on fixtures is simpler here.
 * Tasks moved into the cgroup later are found by the next reconciliation. */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>

#include "config.h"
#include "procfs_parse.h"

struct scope {
	enum scope_kind kind;
	pid_t pid;
	pid_t self;
	pid_t kthreadd;	/* 2, or -1 in a PID namespace (no kernel threads there) */
	char controller[64]; /* "" for cgroup2 */
	char path[PATH_MAX]; /* relative to the hierarchy's root, "/..." */
};

/* Resolves the config's scope; -ENOENT when the cgroup is nowhere. */
int scope_init(struct scope *s, const struct config *c);
/* Never tracked, whatever the scope. */
bool scope_excluded(const struct scope *s, pid_t tgid, bool kthread, pid_t ppid);
/* 1 when the task is in the scope's cgroup subtree, 0 when not, -errno. */
int scope_cgroup_contains(const struct scope *s, pid_t tgid, pid_t tid);
