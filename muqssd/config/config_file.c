/* muqssd.conf and its drop-ins, read with libinih into a copy of the config. */
#include "config_file.h"

#include <dirent.h>
#include <errno.h>
#include <ini.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config_keys.h"
#include "log.h"
#include "trusted_file.h"
#include "trusted_path.h"

/* Debian's libinih is built without INI_HANDLER_LINENO, so the handler does
 * not learn the line number. inih calls the reader once per line, so the
 * reader counts them. A line longer than inih's buffer would come back in
 * pieces and shift every number after it: it is refused whole instead. */
struct parse {
	struct config *config;
	FILE *f;
	struct config_pos pos;
	bool at_line_start;
	int error;
};

static char *parse_read(char *buf, int size, void *userdata)
{
	struct parse *p = userdata;
	size_t n;

	if (!fgets(buf, size, p->f))
		return NULL;
	p->pos.line++;
	n = strlen(buf);
	if (n > 0 && buf[n - 1] != '\n' && !feof(p->f)) {
		int ch;

		while ((ch = fgetc(p->f)) != EOF && ch != '\n')
			;
		log_error("%s:%u: line longer than %d characters", p->pos.file, p->pos.line, size - 3);
		if (!p->error)
			p->error = -EINVAL;
		/* inih must see something harmless in its place. */
		snprintf(buf, (size_t)size, ";\n");
	}
	return buf;
}

static int parse_handle(void *userdata, const char *section, const char *name,
			const char *value)
{
	struct parse *p = userdata;
	int r;

	r = config_key_apply(p->config, &p->pos, section, name, value);
	if (r < 0 && (!p->error || r == -ENOMEM))
		p->error = r;
	/* Nonzero: go on, so that one run reports every bad line. */
	return 1;
}

/* Applies one file on top of *c. */
static int parse_file(struct config *c, const char *path, FILE *f)
{
	struct parse p = {
		.config = c,
		.f = f,
		.pos = { .file = path },
	};
	int r;

	r = ini_parse_stream(parse_read, &p, parse_handle, &p);
	if (r > 0) {
		log_error("%s:%d: syntax error: expected [section], key = value or a comment", path, r);
		if (!p.error)
			p.error = -EINVAL;
	} else if (r < 0 && !p.error) {
		p.error = log_error_errno(ENOMEM, "%s: %m", path);
	}
	if (ferror(f) && !p.error)
		p.error = log_error_errno(EIO, "%s: read error: %m", path);
	return p.error;
}

static int load_one(struct config *c, const char *path, bool missing_ok)
{
	FILE *f = NULL;
	int r;

	r = trusted_file_open(path, &f);
	if (r == -ENOENT && missing_ok)
		return r;
	if (r == -ENOENT)
		return log_error_errno(r, "%s: %m", path);
	if (r < 0)
		return r;
	r = parse_file(c, path, f);
	fclose(f);
	return r;
}

static int dropin_filter(const struct dirent *de)
{
	size_t n = strlen(de->d_name);

	return de->d_name[0] != '.' && n > 5 && strcmp(de->d_name + n - 5, ".conf") == 0;
}

/* Byte order, not the locale's: the merge order must not depend on LANG. */
static int dropin_compare(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

static int load_dropins(struct config *c, const char *path)
{
	struct dirent **list = NULL;
	char *dir = NULL;
	int fd, n, r;

	if (asprintf(&dir, "%s.d", path) < 0)
		return -ENOMEM;
	/* The directory is as trusted as its files: whoever may write it may
	 * add a drop-in. Each file is walked again when it is opened. */
	r = trusted_path_open(dir, TRUSTED_DIR, &fd);
	if (r < 0) {
		free(dir);
		return r == -ENOENT ? 0 : r;
	}
	n = scandirat(fd, ".", &list, dropin_filter, dropin_compare);
	if (n < 0)
		r = log_error_errno(errno, "%s: %m", dir);
	close(fd);
	if (n < 0) {
		free(dir);
		return r;
	}
	for (int i = 0; i < n; i++) {
		char *file = NULL;

		if (r != -ENOMEM) {
			if (asprintf(&file, "%s/%s", dir, list[i]->d_name) < 0) {
				r = -ENOMEM;
			} else {
				int k = load_one(c, file, false);

				if (k < 0 && (!r || k == -ENOMEM))
					r = k;
			}
		}
		free(file);
		free(list[i]);
	}
	free(list);
	free(dir);
	return r;
}

/* Rules come with the config they sit beside: the shipped muqssd.conf and
 * muqssd.rules.d, installed or in a clone. Unless a file names rules_dir,
 * it is muqssd.rules.d in the config file's directory, which for the
 * installed config is the default itself. */
static int rules_beside(struct config *c, const char *path)
{
	char *copy, *dir, *rules;

	if (!c->rules_dir || strcmp(c->rules_dir, CONFIG_DEFAULT_RULES_DIR) != 0)
		return 0;
	copy = strdup(path);
	if (!copy)
		return -ENOMEM;
	dir = realpath(dirname(copy), NULL);
	free(copy);
	if (!dir)
		return 0;
	if (asprintf(&rules, "%s/muqssd.rules.d", dir) < 0) {
		free(dir);
		return -ENOMEM;
	}
	free(dir);
	free(c->rules_dir);
	c->rules_dir = rules;
	return 0;
}

int config_load(struct config *c, const char *path, bool missing_ok)
{
	struct config next;
	bool found = true;
	int r, k;

	r = config_copy(&next, c);
	if (r < 0)
		return log_error_errno(r, "cannot copy the configuration: %m");
	r = load_one(&next, path, missing_ok);
	if (r == -ENOENT && missing_ok) {
		found = false;
		r = 0;
	}
	/* Drop-ins apply even without the main file; keep going after an
	 * error so that one --check-config run lists every problem. */
	k = load_dropins(&next, path);
	if (k < 0 && (!r || k == -ENOMEM))
		r = k;
	if (r == 0)
		r = rules_beside(&next, path);
	if (r == 0)
		r = config_validate(&next, path);
	if (r < 0) {
		config_free(&next);
		return r;
	}
	config_free(c);
	*c = next;
	return found ? 1 : 0;
}
