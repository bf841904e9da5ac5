/* The set of rules and types the parsers fill: adding, finding, freeing,
 * and the one place a bad line is reported. */
#include "rules_private.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

int rule_class_from_string(const char *s)
{
	int c = sched_class_from_name(s);

	/* RT is what others set; muqssd never grants it. */
	return c == SCHED_CLASS_RT ? -EINVAL : c;
}

int rules_bad(struct rules *r, const struct rule_pos *pos, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_warning("%s:%u: %s, ignoring the line", pos->file, pos->line, msg);
	r->bad_lines++;
	return 0;
}

void rule_clear(struct rule *rule)
{
	free(rule->comm);
	free(rule->exe);
	if (rule->match & RULE_MATCH_CMDLINE)
		regfree(&rule->cmdline_re);
	free(rule->cmdline);
	free(rule->user);
	free(rule->cgroup);
	free(rule->ancestor_comm);
	if (rule->match & RULE_MATCH_ANCESTOR_CMDLINE)
		regfree(&rule->ancestor_cmdline_re);
	free(rule->ancestor_cmdline);
	free(rule->type);
	free(rule->file);
	memset(rule, 0, sizeof(*rule));
}

int rules_add(struct rules *r, struct rule *rule, const struct rule_pos *pos)
{
	if (r->n_rules == r->cap_rules) {
		size_t cap = r->cap_rules ? 2 * r->cap_rules : 64;
		struct rule *n = realloc(r->rules, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		r->rules = n;
		r->cap_rules = cap;
	}
	rule->file = strdup(pos->file);
	if (!rule->file)
		return -ENOMEM;
	rule->line = pos->line;
	rule->order = r->n_rules;
	r->windows_names |= ((rule->match & RULE_MATCH_COMM) && rules_names_windows_program(rule->comm)) ||
			    ((rule->match & RULE_MATCH_EXE) && rules_names_windows_program(rule->exe));
	r->rules[r->n_rules++] = *rule;
	memset(rule, 0, sizeof(*rule));
	return 0;
}

const struct rule_type *rules_find_type(const struct rules *r, const char *name)
{
	/* The last definition wins, as it does for rules. */
	for (size_t i = r->n_types; i-- > 0;)
		if (strcmp(r->types[i].name, name) == 0)
			return &r->types[i];
	return NULL;
}

struct rules *rules_free(struct rules *r)
{
	if (!r)
		return NULL;
	for (size_t i = 0; i < r->n_rules; i++)
		rule_clear(&r->rules[i]);
	for (size_t i = 0; i < r->n_types; i++)
		free(r->types[i].name);
	free(r->rules);
	free(r->types);
	free(r);
	return NULL;
}

size_t rules_count(const struct rules *r)
{
	return r ? r->n_rules : 0;
}

unsigned rules_bad_lines(const struct rules *r)
{
	return r ? r->bad_lines : 0;
}
