/* Matching a process, and its ancestors, against the rules. */
#include "rules_private.h"

#include <fnmatch.h>
#include <string.h>
#include <strings.h>

#define COMM_MAX 15 /* TASK_COMM_LEN - 1 */

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

bool rules_names_windows_program(const char *name)
{
	size_t n = name ? strlen(name) : 0;

	return n > 4 && strcasecmp(name + n - 4, ".exe") == 0;
}

/* A name as the kernel keeps it: exact, or cut at 15 (a longer want
 * matches a comm of its first 15). */
static bool name_matches(const char *want, const char *comm)
{
	if (!comm)
		return false;
	if (strlen(want) <= COMM_MAX)
		return strcmp(want, comm) == 0;
	return strlen(comm) == COMM_MAX && strncmp(want, comm, COMM_MAX) == 0;
}

static bool comm_matches(const char *want, const struct rule_subject *s)
{
	if (name_matches(want, s->comm))
		return true;
	/* The kernel cut the name at 15: the whole exe name says it. */
	if (strlen(want) > COMM_MAX && s->exe && strcmp(base_name(s->exe), want) == 0)
		return true;
	/* Windows names are not case-sensitive. */
	return s->wine_path && rules_names_windows_program(want) &&
	       strcasecmp(base_name(s->wine_path), want) == 0;
}

static bool exe_matches(const char *glob, const struct rule_subject *s)
{
	if (s->exe && fnmatch(glob, s->exe, 0) == 0)
		return true;
	return s->wine_path && rules_names_windows_program(glob) &&
	       fnmatch(glob, s->wine_path, FNM_CASEFOLD) == 0;
}

static bool cgroup_matches(const char *prefix, const char *cgroup)
{
	size_t n = strlen(prefix);

	while (n > 1 && prefix[n - 1] == '/')
		n--;
	if (!cgroup || strncmp(prefix, cgroup, n) != 0)
		return false;
	return n == 1 || cgroup[n] == '\0' || cgroup[n] == '/';
}

static bool ancestor_matches(const struct rule *rule, const char *comm, const char *cmdline)
{
	if ((rule->match & RULE_MATCH_ANCESTOR_COMM) && !name_matches(rule->ancestor_comm, comm))
		return false;
	return !(rule->match & RULE_MATCH_ANCESTOR_CMDLINE) ||
	       (cmdline && regexec(&rule->ancestor_cmdline_re, cmdline, 0, NULL, 0) == 0);
}

int rule_ancestor(const struct rule *rule, const struct rule_subject *s)
{
	size_t n = s->n_ancestors < RULES_ANCESTOR_MAX ? s->n_ancestors : RULES_ANCESTOR_MAX;

	if (!(rule->match & RULES_ANCESTOR))
		return -1;
	for (size_t i = 0; i < n; i++)
		if (ancestor_matches(rule, s->ancestors[i].comm, s->ancestors[i].cmdline))
			return (int)i;
	return -1;
}

/* The kinds a caller has at hand: user, comm, exe and the ancestors. */
static bool eager_matches(const struct rule *rule, const struct rule_subject *s)
{
	if ((rule->match & RULE_MATCH_USER) && rule->uid != s->uid)
		return false;
	if ((rule->match & RULE_MATCH_COMM) && !comm_matches(rule->comm, s))
		return false;
	if ((rule->match & RULE_MATCH_EXE) && !exe_matches(rule->exe, s))
		return false;
	return !(rule->match & RULES_ANCESTOR) || rule_ancestor(rule, s) >= 0;
}

static bool is_wine_loader(const char *name)
{
	static const char *const loaders[] = {
		"wine", "wine64", "wine-preloader", "wine64-preloader",
	};

	for (size_t i = 0; name && i < sizeof(loaders) / sizeof(*loaders); i++)
		if (strcmp(loaders[i], name) == 0 || name_matches(loaders[i], name))
			return true;
	return false;
}

const char *rules_wine_path(const char *comm, const char *exe, const char *argv, size_t len,
			    char *buf, size_t size)
{
	size_t at = 0;

	if (!is_wine_loader(comm) && !(exe && is_wine_loader(base_name(exe))))
		return NULL;
	/* wine64-preloader /usr/bin/wine64 C:\x\Game.exe: a few loaders
	 * first. Once Wine runs, it moves the program to argv[0]. */
	for (int arg = 0; arg < 4 && at < len; arg++) {
		const char *a = argv + at;
		size_t n = strnlen(a, len - at);

		at += n + 1;
		if (n == 0 || is_wine_loader(base_name(a)))
			continue;
		if (a[0] == '-' || n >= size)
			return NULL;
		for (size_t i = 0; i < n; i++)
			buf[i] = a[i] == '\\' ? '/' : a[i];
		buf[n] = '\0';
		return buf;
	}
	return NULL;
}

unsigned rules_lazy_fields(const struct rules *r, const struct rule_subject *s)
{
	unsigned need = 0;

	for (size_t i = 0; r && i < r->n_rules; i++)
		if ((r->rules[i].match & RULES_LAZY) && eager_matches(&r->rules[i], s))
			need |= r->rules[i].match & RULES_LAZY;
	/* A Wine loader's program is in its arguments. */
	if (r && r->windows_names && !s->wine_path &&
	    (is_wine_loader(s->comm) || (s->exe && is_wine_loader(base_name(s->exe)))))
		need |= RULE_MATCH_CMDLINE;
	return need;
}

unsigned rules_fields(const struct rules *r)
{
	unsigned all = 0;

	for (size_t i = 0; r && i < r->n_rules; i++)
		all |= r->rules[i].match;
	return all;
}

bool rules_need_cmdline(const struct rules *r)
{
	return (rules_fields(r) & (RULE_MATCH_CMDLINE | RULE_MATCH_ANCESTOR_CMDLINE)) ||
	       (r && r->windows_names);
}

bool rules_need_exe(const struct rules *r)
{
	if (!r)
		return false;
	if ((rules_fields(r) & RULE_MATCH_EXE) || r->windows_names)
		return true;
	/* A comm the kernel cut at 15 is matched by the exe's name. */
	for (size_t i = 0; i < r->n_rules; i++)
		if ((r->rules[i].match & RULE_MATCH_COMM) && strlen(r->rules[i].comm) > COMM_MAX)
			return true;
	return false;
}

bool rules_is_ancestor(const struct rules *r, const char *comm, const char *cmdline)
{
	for (size_t i = 0; r && i < r->n_rules; i++)
		if ((r->rules[i].match & RULES_ANCESTOR) && ancestor_matches(&r->rules[i], comm, cmdline))
			return true;
	return false;
}

bool rule_matches(const struct rule *rule, const struct rule_subject *s)
{
	if (!eager_matches(rule, s))
		return false;
	if ((rule->match & RULE_MATCH_CGROUP) && !cgroup_matches(rule->cgroup, s->cgroup))
		return false;
	if ((rule->match & RULE_MATCH_CMDLINE) &&
	    (!s->cmdline || regexec(&rule->cmdline_re, s->cmdline, 0, NULL, 0) != 0))
		return false;
	return true;
}

const struct rule *rules_match(const struct rules *r, const struct rule_subject *s)
{
	const struct rule *best = NULL;

	if (!r)
		return NULL;
	for (size_t i = 0; i < r->n_rules; i++) {
		const struct rule *rule = &r->rules[i];

		/* Later rules come later in the array: >= lets them win ties. */
		if (best && rule->match < best->match)
			continue;
		if (rule_matches(rule, s))
			best = rule;
	}
	return best;
}
