/* Rules: classify programs by comm, exe, cmdline, user and cgroup.
 *
 * A rules directory holds native rules and ananicy rules (*.rules) and
 * ananicy types (*.types), in any subdirectory; see muqssd.rules(5).
 * Matching is pure: the caller reads /proc and passes a subject. */
#pragma once

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "core/task.h"


enum rule_format {
	RULE_FORMAT_NATIVE,
	RULE_FORMAT_ANANICY,
};

/* Match kinds, also the weights of a rule's specificity: a rule's score is
 * the sum of its kinds, and the highest score wins. */
enum rule_match {
	RULE_MATCH_USER = 1 << 0,
	RULE_MATCH_CGROUP = 1 << 1,
	RULE_MATCH_COMM = 1 << 2,
	RULE_MATCH_EXE = 1 << 3,
	RULE_MATCH_CMDLINE = 1 << 4,
};

struct rule {
	/* What it matches: every kind present must match. */
	unsigned match;	  /* enum rule_match bits */
	char *comm;	  /* exact; longer than 15: see rules_match() */
	char *exe;	  /* fnmatch(3) glob, '*' also matches '/' */
	char *cmdline;	  /* POSIX extended regex, unanchored */
	regex_t cmdline_re;
	uid_t uid;
	char *user;	  /* as written, for messages */
	char *cgroup;	  /* path prefix, at a '/' boundary */

	/* What it sets. */
	enum sched_class class; /* never SCHED_CLASS_RT */
	bool nice_set;
	int nice;

	/* Where it came from. */
	enum rule_format format;
	char *type; /* ananicy type, or NULL */
	char *file;
	unsigned line;
	size_t order; /* load order: the later of two equal rules wins */
};

/* What a process is, as the caller read it from /proc. */
struct rule_subject {
	const char *comm;    /* /proc/PID/comm, no newline */
	const char *exe;     /* readlink of /proc/PID/exe, or NULL */
	const char *cmdline; /* arguments joined by single spaces, or NULL */
	uid_t uid;	     /* real uid */
	const char *cgroup;  /* cgroup path (the v2 "0::" one where present), or NULL */
};

struct rules;

/* Loads every *.types, then every *.rules file under dir (recursively,
 * following symlinks, in byte order of the path). A missing dir gives an
 * empty set. A bad line is logged with file and line and skipped; only
 * -ENOMEM and unreadable directories fail. */
int rules_load(struct rules **ret, const char *dir);
struct rules *rules_free(struct rules *r);

size_t rules_count(const struct rules *r);
/* Lines that were reported and skipped. */
unsigned rules_bad_lines(const struct rules *r);

/* The winning rule for s, or NULL. Precedence: the highest sum of match
 * kinds (cmdline 16, exe 8, comm 4, cgroup 2, user 1), then the rule loaded
 * last. A comm longer than 15 characters (as ananicy names can be) matches
 * a comm equal to its first 15, or an exe whose basename is all of it. */
const struct rule *rules_match(const struct rules *r, const struct rule_subject *s);
/* The kinds whose facts cost a /proc read that can wait on the task
 * (cmdline takes its mmap lock) or on the cgroup tree. */
#define RULES_LAZY (RULE_MATCH_CMDLINE | RULE_MATCH_CGROUP)
/* Which of RULES_LAZY some rule still needs to decide s, given its comm,
 * exe and uid: the caller reads only those, and most programs need none. */
unsigned rules_lazy_fields(const struct rules *r, const struct rule_subject *s);
/* Every RULE_MATCH_* some rule uses. */
unsigned rules_fields(const struct rules *r);
/* Whether one rule matches s. */
bool rule_matches(const struct rule *rule, const struct rule_subject *s);

/* Writes a sentence saying which rule matched s and why, or that none
 * did, for "muqssctl rules --explain". Returns 1 if a rule matched, 0 if
 * not; the text is truncated to size. */
int rules_explain(const struct rules *r, const struct rule_subject *s, char *buf, size_t size);

/* A class a rule may set: "iso", "normal", "idleprio", "batch"; else
 * -EINVAL. */
int rule_class_from_string(const char *s);
/* Turns /proc/PID/cmdline's NUL separators into spaces, in place; len is
 * what read() returned. Returns buf. */
char *rules_cmdline_join(char *buf, size_t len);
