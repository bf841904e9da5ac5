/* Shared by the rules parsers and the loader. */
#pragma once

#include "rules.h"

/* An ananicy type: defaults for the rules that name it. */
struct rule_type {
	char *name;
	bool class_set;
	enum sched_class class;
	bool nice_set;
	int nice;
};

struct rules {
	struct rule *rules;
	size_t n_rules, cap_rules;
	struct rule_type *types;
	size_t n_types, cap_types;
	unsigned bad_lines;
	bool windows_names; /* some comm or exe names a .exe */
};

/* Where a line came from, for messages. */
struct rule_pos {
	const char *file;
	unsigned line;
};

/* rule_set.c */
/* Logs "FILE:LINE: reason, ignoring the line" and counts it. Returns 0. */
__attribute__((format(printf, 3, 4)))
int rules_bad(struct rules *r, const struct rule_pos *pos, const char *fmt, ...);

/* Takes over *rule (its strings and regex) on success. */
int rules_add(struct rules *r, struct rule *rule, const struct rule_pos *pos);
void rule_clear(struct rule *rule);
const struct rule_type *rules_find_type(const struct rules *r, const char *name);

/* rules_match.c */
/* Whether a comm or exe pattern ends in .exe, in any case. */
bool rules_names_windows_program(const char *name);

/* Refuses a cmdline= pattern that regcomp(3) would take too long over, or
 * that would be slow to match: -EINVAL with *reason set, else 0. Syntax
 * errors are left to regcomp(). */
int rules_regex_check(const char *pattern, const char **reason);

/* Each parses one line (without its newline) and adds what it defines.
 * A bad line is reported through rules_bad(); only -ENOMEM is returned. */
int rules_parse_native(struct rules *r, const struct rule_pos *pos, char *line);
int rules_parse_ananicy_rule(struct rules *r, const struct rule_pos *pos, const char *line);
int rules_parse_ananicy_type(struct rules *r, const struct rule_pos *pos, const char *line);
