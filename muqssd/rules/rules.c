/* Loading a rules directory, and matching a process against the rules. */
#include "rules_private.h"

#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "trusted_file.h"
#include "trusted_path.h"

#define COMM_MAX 15	 /* TASK_COMM_LEN - 1 */
#define WALK_MAX_DEPTH 4 /* ananicy.d nests 00-default/games/... */

char *rules_cmdline_join(char *buf, size_t len)
{
	/* The last NUL ends the string; the others separate arguments. */
	while (len > 0 && buf[len - 1] == '\0')
		len--;
	for (size_t i = 0; i < len; i++)
		if (buf[i] == '\0')
			buf[i] = ' ';
	buf[len] = '\0';
	return buf;
}

/* File lists: relative paths, so that the order does not depend on where
 * the directory is. */
struct walk {
	char **paths;
	size_t n, cap;
};

static bool has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n > k && strcmp(s + n - k, suffix) == 0;
}

static int walk_add(struct walk *w, const char *rel)
{
	if (w->n == w->cap) {
		size_t cap = w->cap ? 2 * w->cap : 32;
		char **n = realloc(w->paths, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		w->paths = n;
		w->cap = cap;
	}
	w->paths[w->n] = strdup(rel);
	if (!w->paths[w->n])
		return -ENOMEM;
	w->n++;
	return 0;
}

/* Every directory is opened through a trusted walk (whoever may write one
 * may add a rule); its files are walked again when they are opened. */
static int walk_dir(struct walk *w, const char *root, const char *rel, unsigned depth)
{
	char *path = NULL;
	DIR *d;
	struct dirent *de;
	int fd, r;

	if (asprintf(&path, "%s%s%s", root, *rel ? "/" : "", rel) < 0)
		return -ENOMEM;
	r = trusted_path_open(path, TRUSTED_DIR, &fd);
	if (r < 0) {
		if (r == -ENOENT && depth == 0)
			r = 0;
		else if (r == -ENOENT)
			log_error_errno(r, "%s: %m", path);
		free(path);
		return r;
	}
	d = fdopendir(fd);
	if (!d) {
		r = log_error_errno(errno, "%s: %m", path);
		close(fd);
		free(path);
		return r;
	}
	while (r >= 0 && (de = readdir(d))) {
		char *child = NULL;
		struct stat st;

		if (de->d_name[0] == '.')
			continue;
		if (asprintf(&child, "%s%s%s", rel, *rel ? "/" : "", de->d_name) < 0) {
			r = -ENOMEM;
			break;
		}
		/* Followed, only to sort: a symlink to /etc/ananicy.d is the way
		 * to use a community rule set as it is, and is checked, with
		 * its target, when it is opened. */
		if (fstatat(dirfd(d), de->d_name, &st, 0) < 0) {
			log_warning_errno(errno, "%s/%s: %m, ignoring", path, de->d_name);
		} else if (S_ISDIR(st.st_mode)) {
			if (depth + 1 < WALK_MAX_DEPTH)
				r = walk_dir(w, root, child, depth + 1);
			else
				log_warning("%s/%s: nested too deep, ignoring", path, de->d_name);
		} else if (S_ISREG(st.st_mode) &&
			   (has_suffix(de->d_name, ".rules") || has_suffix(de->d_name, ".types"))) {
			r = walk_add(w, child);
		}
		free(child);
	}
	closedir(d);
	free(path);
	return r;
}

static int compare_paths(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int parse_line(struct rules *r, const struct rule_pos *pos, char *line, bool types)
{
	char *s = line + strspn(line, " \t");

	if (*s == '\0' || *s == '#')
		return 0;
	if (types) {
		if (*s != '{')
			return rules_bad(r, pos, "a .types file holds only JSON objects");
		return rules_parse_ananicy_type(r, pos, s);
	}
	if (*s == '{')
		return rules_parse_ananicy_rule(r, pos, s);
	return rules_parse_native(r, pos, s);
}

static int load_file(struct rules *r, const char *path, bool types)
{
	struct rule_pos pos = { .file = path };
	char *line = NULL;
	size_t size = 0;
	ssize_t n;
	FILE *f;
	int k = 0;

	k = trusted_file_open(path, &f);
	if (k == -ENOENT) /* gone since the walk */
		return log_warning_errno(k, "%s: %m, ignoring", path), 0;
	if (k < 0)
		return k;
	while (k >= 0 && (n = getline(&line, &size, f)) >= 0) {
		pos.line++;
		while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			line[--n] = '\0';
		k = parse_line(r, &pos, line, types);
	}
	free(line);
	fclose(f);
	return k < 0 ? k : 0;
}

int rules_load(struct rules **ret, const char *dir)
{
	struct walk w = { 0 };
	struct rules *r;
	int k;

	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	k = walk_dir(&w, dir, "", 0);
	if (k >= 0 && w.n > 0)
		qsort(w.paths, w.n, sizeof(*w.paths), compare_paths);
	/* Types first, so that a rule may name a type from any file. */
	for (int pass = 0; k >= 0 && pass < 2; pass++)
		for (size_t i = 0; k >= 0 && i < w.n; i++) {
			char *path;

			if (has_suffix(w.paths[i], ".types") != (pass == 0))
				continue;
			if (asprintf(&path, "%s/%s", dir, w.paths[i]) < 0) {
				k = -ENOMEM;
				break;
			}
			k = load_file(r, path, pass == 0);
			free(path);
		}
	for (size_t i = 0; i < w.n; i++)
		free(w.paths[i]);
	free(w.paths);
	if (k < 0) {
		rules_free(r);
		return k;
	}
	log_debug("%s: %zu rules, %zu types, %u bad lines", dir, r->n_rules, r->n_types,
		  r->bad_lines);
	*ret = r;
	return 0;
}

static bool comm_matches(const char *want, const struct rule_subject *s)
{
	if (!s->comm)
		return false;
	if (strlen(want) <= COMM_MAX)
		return strcmp(want, s->comm) == 0;
	/* The kernel cut the name at 15: a prefix, or the whole exe name. */
	if (strlen(s->comm) == COMM_MAX && strncmp(want, s->comm, COMM_MAX) == 0)
		return true;
	if (s->exe) {
		const char *base = strrchr(s->exe, '/');

		return strcmp(base ? base + 1 : s->exe, want) == 0;
	}
	return false;
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

/* The kinds a caller has at hand: user, comm and exe. */
static bool eager_matches(const struct rule *rule, const struct rule_subject *s)
{
	if ((rule->match & RULE_MATCH_USER) && rule->uid != s->uid)
		return false;
	if ((rule->match & RULE_MATCH_COMM) && !comm_matches(rule->comm, s))
		return false;
	return !(rule->match & RULE_MATCH_EXE) || (s->exe && fnmatch(rule->exe, s->exe, 0) == 0);
}

unsigned rules_lazy_fields(const struct rules *r, const struct rule_subject *s)
{
	unsigned need = 0;

	for (size_t i = 0; r && i < r->n_rules; i++)
		if ((r->rules[i].match & RULES_LAZY) && eager_matches(&r->rules[i], s))
			need |= r->rules[i].match & RULES_LAZY;
	return need;
}

unsigned rules_fields(const struct rules *r)
{
	unsigned all = 0;

	for (size_t i = 0; r && i < r->n_rules; i++)
		all |= r->rules[i].match;
	return all;
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
