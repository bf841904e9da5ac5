/* A sentence for "muqssctl rules --explain PID". */
#include "rules_private.h"

#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

struct text {
	char *buf;
	size_t size, len;
};

__attribute__((format(printf, 2, 3)))
static void text_add(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (t->len + 1 >= t->size)
		return;
	va_start(ap, fmt);
	n = vsnprintf(t->buf + t->len, t->size - t->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		t->len += (size_t)n < t->size - t->len ? (size_t)n : t->size - t->len - 1;
}

static const char *or_none(const char *s)
{
	return s ? s : "(none)";
}

static void add_ancestor(struct text *t, const struct rule *rule, const struct rule_subject *s,
			 const char *sep)
{
	int i = rule_ancestor(rule, s);
	const struct rule_ancestor *a;

	if (i < 0)
		return;
	a = &s->ancestors[i];
	text_add(t, "%sits ancestor %d (%s, %d level%s up)", sep, (int)a->pid, or_none(a->comm),
		 i + 1, i == 0 ? "" : "s");
	if (rule->match & RULE_MATCH_ANCESTOR_COMM)
		text_add(t, " has comm \"%s\"", rule->ancestor_comm);
	if (rule->match & RULE_MATCH_ANCESTOR_CMDLINE)
		text_add(t, "%s command line matches /%s/",
			 rule->match & RULE_MATCH_ANCESTOR_COMM ? " and its" : "'s",
			 rule->ancestor_cmdline);
}

static void add_reasons(struct text *t, const struct rule *rule, const struct rule_subject *s)
{
	const char *sep = "";

	if (rule->match & RULE_MATCH_COMM) {
		if (s->comm && strcmp(rule->comm, s->comm) == 0)
			text_add(t, "comm is \"%s\"", rule->comm);
		else if (s->wine_path && rules_names_windows_program(rule->comm))
			text_add(t, "\"%s\" is the Windows program %s that Wine runs (comm \"%s\")",
				 rule->comm, s->wine_path, or_none(s->comm));
		else
			text_add(t, "\"%s\" is comm \"%s\" cut at 15 characters or exe %s",
				 rule->comm, or_none(s->comm), or_none(s->exe));
		sep = ", ";
	}
	if (rule->match & RULE_MATCH_EXE) {
		const char *exe = s->exe && fnmatch(rule->exe, s->exe, 0) == 0 ? s->exe : s->wine_path;

		text_add(t, "%sexe %s%s matches \"%s\"", sep, or_none(exe),
			 exe && exe == s->wine_path ? " (the Windows program Wine runs)" : "", rule->exe);
		sep = ", ";
	}
	if (rule->match & RULE_MATCH_CMDLINE) {
		text_add(t, "%sthe command line matches /%s/", sep, rule->cmdline);
		sep = ", ";
	}
	if (rule->match & RULE_MATCH_USER) {
		text_add(t, "%suser is %s (uid %u)", sep, rule->user, (unsigned)rule->uid);
		sep = ", ";
	}
	if (rule->match & RULE_MATCH_CGROUP) {
		text_add(t, "%scgroup %s is under %s", sep, s->cgroup, rule->cgroup);
		sep = ", ";
	}
	if (rule->match & RULES_ANCESTOR)
		add_ancestor(t, rule, s, sep);
}

int rules_explain(const struct rules *r, const struct rule_subject *s, char *buf, size_t size)
{
	struct text t = { .buf = buf, .size = size };
	const struct rule *best = rules_match(r, s), *other = NULL;
	size_t others = 0;

	if (size)
		buf[0] = '\0';
	if (!best) {
		text_add(&t, "no rule matched: comm \"%s\", exe %s, uid %u, cgroup %s (%zu rules loaded)",
			 or_none(s->comm), or_none(s->exe), (unsigned)s->uid, or_none(s->cgroup),
			 rules_count(r));
		return 0;
	}
	for (size_t i = 0; i < r->n_rules; i++)
		if (&r->rules[i] != best && rule_matches(&r->rules[i], s)) {
			others++;
			/* Name the runner-up, by the same precedence. */
			if (!other || r->rules[i].match >= other->match)
				other = &r->rules[i];
		}
	text_add(&t, "%s rule %s:%u matched because ",
		 best->format == RULE_FORMAT_ANANICY ? "ananicy" : "native", best->file, best->line);
	add_reasons(&t, best, s);
	text_add(&t, "; it sets class %s", sched_class_name(best->class));
	if (best->nice_set)
		text_add(&t, ", nice %d", best->nice);
	if (best->type)
		text_add(&t, " (through ananicy type %s)", best->type);
	if (others)
		text_add(&t, ". %zu other rule%s matched but lost on precedence (more specific "
			 "match kinds win, then the later rule); the runner-up is %s:%u",
			 others, others == 1 ? "" : "s", other->file, other->line);
	text_add(&t, ".");
	return 1;
}
