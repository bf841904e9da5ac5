/* A sentence for "muqssctl rules --explain PID". */
#include "rules_private.h"

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

static void add_reasons(struct text *t, const struct rule *rule, const struct rule_subject *s)
{
	const char *sep = "";

	if (rule->match & RULE_MATCH_COMM) {
		if (s->comm && strcmp(rule->comm, s->comm) == 0)
			text_add(t, "comm is \"%s\"", rule->comm);
		else
			text_add(t, "\"%s\" is comm \"%s\" cut at 15 characters or exe %s",
				 rule->comm, or_none(s->comm), or_none(s->exe));
		sep = ", ";
	}
	if (rule->match & RULE_MATCH_EXE) {
		text_add(t, "%sexe %s matches \"%s\"", sep, s->exe, rule->exe);
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
	if (rule->match & RULE_MATCH_CGROUP)
		text_add(t, "%scgroup %s is under %s", sep, s->cgroup, rule->cgroup);
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
