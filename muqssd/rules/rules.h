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
 * the sum of its kinds, and the highest score wins. What a process is
 * itself weighs more than what its ancestors are. */
enum rule_match {
	RULE_MATCH_USER = 1 << 0,
	RULE_MATCH_CGROUP = 1 << 1,
	RULE_MATCH_ANCESTOR_COMM = 1 << 2,
	RULE_MATCH_ANCESTOR_CMDLINE = 1 << 3,
	RULE_MATCH_COMM = 1 << 4,
	RULE_MATCH_EXE = 1 << 5,
	RULE_MATCH_CMDLINE = 1 << 6,
};
#define RULES_ANCESTOR (RULE_MATCH_ANCESTOR_COMM | RULE_MATCH_ANCESTOR_CMDLINE)
/* How far up a process's ancestors are looked at: a launcher is a few
 * levels up (reaper, pressure-vessel, wine), never 32. */
#define RULES_ANCESTOR_MAX 32

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
	/* One ancestor must match every ancestor key. */
	char *ancestor_comm; /* as comm */
	char *ancestor_cmdline; /* as cmdline */
	regex_t ancestor_cmdline_re;

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

/* One ancestor of a process, as the caller knows it. */
struct rule_ancestor {
	pid_t pid;
	const char *comm;
	const char *cmdline; /* joined, or NULL when unknown */
};

/* What a process is, as the caller read it from /proc. */
struct rule_subject {
	const char *comm;    /* /proc/PID/comm, no newline */
	const char *exe;     /* readlink of /proc/PID/exe, or NULL */
	const char *cmdline; /* arguments joined by single spaces, or NULL */
	uid_t uid;	     /* real uid */
	const char *cgroup;  /* cgroup path (the v2 "0::" one where present), or NULL */
	/* The Windows program a Wine loader runs, from rules_wine_path(), or
	 * NULL. */
	const char *wine_path;
	/* Parent first, at most RULES_ANCESTOR_MAX. */
	const struct rule_ancestor *ancestors;
	size_t n_ancestors;
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
 * kinds (cmdline 64, exe 32, comm 16, ancestor_cmdline 8, ancestor_comm 4,
 * cgroup 2, user 1), then the rule loaded last. A comm longer than 15
 * characters (as ananicy names can be) matches a comm equal to its first
 * 15, or an exe whose basename is all of it. A comm or exe that names a
 * .exe also matches s->wine_path (its basename for comm), ignoring case. */
const struct rule *rules_match(const struct rules *r, const struct rule_subject *s);
/* The kinds whose facts cost a /proc read that can wait on the task
 * (cmdline takes its mmap lock) or on the cgroup tree. */
#define RULES_LAZY (RULE_MATCH_CMDLINE | RULE_MATCH_CGROUP)
/* Which of RULES_LAZY some rule still needs to decide s, given its comm,
 * exe and uid: the caller reads only those, and most programs need none. */
unsigned rules_lazy_fields(const struct rules *r, const struct rule_subject *s);
/* Every RULE_MATCH_* some rule uses. */
unsigned rules_fields(const struct rules *r);
/* Whether some rule needs a command line: a cmdline or ancestor_cmdline
 * key, or a .exe name that only a Wine loader's arguments can show. */
bool rules_need_cmdline(const struct rules *r);
/* Some rule may need a process's exe to match: an exe glob, a comm past
 * the kernel's 15 bytes, a Windows program's name. */
bool rules_need_exe(const struct rules *r);
/* Whether a process with this comm and cmdline (joined, or NULL) satisfies
 * some rule's ancestor keys: the caller keeps its cmdline for its
 * descendants. */
bool rules_is_ancestor(const struct rules *r, const char *comm, const char *cmdline);
/* Whether one rule matches s. */
bool rule_matches(const struct rule *rule, const struct rule_subject *s);
/* The index in s->ancestors of the nearest ancestor that satisfies every
 * ancestor key of rule, or -1 (also when rule has none). */
int rule_ancestor(const struct rule *rule, const struct rule_subject *s);

/* Writes a sentence saying which rule matched s and why, or that none
 * did, for "muqssctl rules --explain". Returns 1 if a rule matched, 0 if
 * not; the text is truncated to size. */
int rules_explain(const struct rules *r, const struct rule_subject *s, char *buf, size_t size);

/* A class a rule may set: "iso", "normal", "idleprio", "batch"; else
 * -EINVAL. */
int rule_class_from_string(const char *s);
/* For a Wine loader (comm or exe wine, wine64, wine-preloader or
 * wine64-preloader): the Windows program it runs, the first of argv (NUL
 * separated, len bytes) that is not a loader, with '\\' turned to '/'
 * ("Z:/games/Game.exe"). NULL for anything else, or when it does not fit
 * in size. */
const char *rules_wine_path(const char *comm, const char *exe, const char *argv, size_t len,
			    char *buf, size_t size);
/* Turns /proc/PID/cmdline's NUL separators into spaces, in place; len is
 * what read() returned. Returns buf. */
char *rules_cmdline_join(char *buf, size_t len);
