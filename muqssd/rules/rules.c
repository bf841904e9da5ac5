/* Loading a rules directory. */
#include "rules_private.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "trusted_file.h"
#include "trusted_path.h"

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
