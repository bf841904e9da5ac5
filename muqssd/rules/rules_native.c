/* Native rules: one per line, blank-separated key=value pairs, e.g.
 *   comm=pipewire class=iso
 *   exe=/usr/bin/make user=1000 class=batch nice=10
 *   cmdline="--type=renderer( |$)" class=normal nice=5  # comment
 *   ancestor_cmdline="SteamLaunch AppId=[0-9]+" class=iso */
#include "rules_private.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

/* Cuts the next key=value from *p, in place; a value may be "quoted", with
 * \" and \\ inside. Returns 1 with key and value set, 0 at the end of the
 * line or a comment, -EINVAL with *err set. */
static int next_pair(char **p, char **key, char **value, const char **err)
{
	char *s = *p, *out;

	while (isblank((unsigned char)*s))
		s++;
	if (*s == '\0' || *s == '#')
		return 0;
	*key = s;
	while (*s && *s != '=' && !isblank((unsigned char)*s))
		s++;
	if (*s != '=' || s == *key) {
		*err = "expected key=value";
		return -EINVAL;
	}
	*s++ = '\0';
	*value = out = s;
	if (*s == '"') {
		for (s++; *s != '"'; s++) {
			if (*s == '\0') {
				*err = "unterminated quote";
				return -EINVAL;
			}
			if (*s == '\\' && (s[1] == '"' || s[1] == '\\'))
				s++;
			*out++ = *s;
		}
		s++;
		if (*s && !isblank((unsigned char)*s)) {
			*err = "expected a blank after the closing quote";
			return -EINVAL;
		}
	} else {
		while (*s && !isblank((unsigned char)*s))
			*out++ = *s++;
	}
	if (*s)
		s++;
	*out = '\0';
	*p = s;
	return 1;
}

static int parse_user(const char *value, uid_t *uid)
{
	struct passwd *pw;
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(value, &end, 10);
	if (*value && !*end && !errno && v < UINT_MAX && isdigit((unsigned char)*value)) {
		*uid = (uid_t)v;
		return 0;
	}
	errno = 0;
	pw = getpwnam(value);
	if (!pw)
		return errno == ENOMEM ? -ENOMEM : -ENOENT;
	*uid = pw->pw_uid;
	return 0;
}

static int parse_nice(const char *value, int *nice)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(value, &end, 10);
	if (!*value || *end || errno || v < -20 || v > 19)
		return -EINVAL;
	*nice = (int)v;
	return 0;
}

/* Sets one match string, refusing a second one of the same kind. */
static int set_match(struct rule *rule, unsigned kind, char **field, const char *value)
{
	if (rule->match & kind)
		return -EEXIST;
	*field = strdup(value);
	if (!*field)
		return -ENOMEM;
	rule->match |= kind;
	return 0;
}

/* A cmdline or ancestor_cmdline pattern: checked for cost, then compiled. */
static int set_regex(struct rules *r, const struct rule_pos *pos, struct rule *rule,
		     unsigned kind, const char *key, const char *value)
{
	bool ancestor = kind == RULE_MATCH_ANCESTOR_CMDLINE;
	regex_t *re = ancestor ? &rule->ancestor_cmdline_re : &rule->cmdline_re;
	char **field = ancestor ? &rule->ancestor_cmdline : &rule->cmdline;
	const char *reason;
	int k;

	if (rule->match & kind)
		return rules_bad(r, pos, "%s given twice", key), -EINVAL;
	if (rules_regex_check(value, &reason) < 0)
		return rules_bad(r, pos, "%s: \"%s\": %s", key, value, reason), -EINVAL;
	k = regcomp(re, value, REG_EXTENDED | REG_NOSUB);
	if (k != 0) {
		char msg[128];

		regerror(k, re, msg, sizeof(msg));
		regfree(re);
		return rules_bad(r, pos, "%s: \"%s\": %s", key, value, msg), -EINVAL;
	}
	rule->match |= kind;
	*field = strdup(value);
	return *field ? 0 : -ENOMEM;
}

static int apply_pair(struct rules *r, const struct rule_pos *pos, struct rule *rule,
		      const char *key, const char *value, bool *class_set)
{
	int k;

	if (!*value)
		return rules_bad(r, pos, "%s: empty value", key), -EINVAL;
	if (strcmp(key, "comm") == 0) {
		k = set_match(rule, RULE_MATCH_COMM, &rule->comm, value);
	} else if (strcmp(key, "exe") == 0) {
		if (value[0] != '/' && value[0] != '*')
			return rules_bad(r, pos, "exe: \"%s\" is not an absolute path glob", value), -EINVAL;
		k = set_match(rule, RULE_MATCH_EXE, &rule->exe, value);
	} else if (strcmp(key, "cgroup") == 0) {
		if (value[0] != '/')
			return rules_bad(r, pos, "cgroup: \"%s\" does not start with /", value), -EINVAL;
		k = set_match(rule, RULE_MATCH_CGROUP, &rule->cgroup, value);
	} else if (strcmp(key, "user") == 0) {
		k = parse_user(value, &rule->uid);
		if (k == -ENOENT)
			return rules_bad(r, pos, "user: no user \"%s\"", value), -EINVAL;
		if (k == 0)
			k = set_match(rule, RULE_MATCH_USER, &rule->user, value);
	} else if (strcmp(key, "cmdline") == 0) {
		k = set_regex(r, pos, rule, RULE_MATCH_CMDLINE, key, value);
	} else if (strcmp(key, "ancestor_cmdline") == 0) {
		k = set_regex(r, pos, rule, RULE_MATCH_ANCESTOR_CMDLINE, key, value);
	} else if (strcmp(key, "ancestor_comm") == 0) {
		k = set_match(rule, RULE_MATCH_ANCESTOR_COMM, &rule->ancestor_comm, value);
	} else if (strcmp(key, "class") == 0) {
		if (*class_set)
			return rules_bad(r, pos, "class given twice"), -EINVAL;
		k = rule_class_from_string(value);
		if (k < 0)
			return rules_bad(r, pos, "class: \"%s\" is not one of iso|normal|idleprio|batch",
					 value), -EINVAL;
		rule->class = (enum sched_class)k;
		*class_set = true;
		k = 0;
	} else if (strcmp(key, "nice") == 0) {
		if (rule->nice_set)
			return rules_bad(r, pos, "nice given twice"), -EINVAL;
		if (parse_nice(value, &rule->nice) < 0)
			return rules_bad(r, pos, "nice: \"%s\" is out of range -20..19", value), -EINVAL;
		rule->nice_set = true;
		k = 0;
	} else {
		return rules_bad(r, pos, "unknown key \"%s\" (allowed comm, exe, cmdline, user, "
				 "cgroup, ancestor_comm, ancestor_cmdline, class, nice)", key), -EINVAL;
	}
	if (k == -EEXIST)
		return rules_bad(r, pos, "%s given twice", key), -EINVAL;
	return k;
}

int rules_parse_native(struct rules *r, const struct rule_pos *pos, char *line)
{
	struct rule rule = { .format = RULE_FORMAT_NATIVE };
	bool class_set = false;
	char *p = line, *key, *value;
	const char *err = NULL;
	int k;

	while ((k = next_pair(&p, &key, &value, &err)) > 0) {
		k = apply_pair(r, pos, &rule, key, value, &class_set);
		if (k < 0)
			break;
	}
	if (k == -EINVAL && err) {
		rules_bad(r, pos, "%s", err);
	} else if (k == 0 && !rule.match) {
		rules_bad(r, pos, "no comm, exe, cmdline, user, cgroup or ancestor key to match");
		k = -EINVAL;
	} else if (k == 0 && !class_set) {
		rules_bad(r, pos, "no class= (iso, normal, idleprio or batch)");
		k = -EINVAL;
	}
	if (k == 0)
		k = rules_add(r, &rule, pos);
	rule_clear(&rule);
	return k == -ENOMEM ? k : 0;
}
