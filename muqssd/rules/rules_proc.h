/* A process as rules see it, read from /proc for "muqssctl rules
 * --explain". */
#pragma once

#include "rules.h"

struct rules_proc {
	struct rule_subject s; /* points into the buffers below */
	char comm[16], exe[4096], cmdline[4096], cgroup[4096], wine[4096];
	struct rule_ancestor ancestors[RULES_ANCESTOR_MAX];
	char anc_comm[RULES_ANCESTOR_MAX][16];
	char anc_cmdline[RULES_ANCESTOR_MAX][4096];
};

/* Fills p->s with pid's comm, exe, cmdline (and Wine program), real uid,
 * v2 cgroup and its ancestors up to RULES_ANCESTOR_MAX. -errno when pid
 * cannot be read (-ENOENT: no such process); a missing detail is NULL. */
int rules_proc_read(struct rules_proc *p, pid_t pid);
