/* Every key of muqssd.conf: where it goes, what it accepts. */
#include "config_keys.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>

#include "config_strv.h"
#include "log.h"
#include "tunables.h"

#define PID_MAX_LIMIT 4194304 /* the kernel's ceiling for pid_max */
#define COMM_MAX 15	      /* TASK_COMM_LEN - 1: longer names never match */

enum key_type {
	KEY_UINT,      /* unsigned in min..max, unit for messages */
	KEY_BOOL,      /* stored as unsigned 0/1 or bool */
	KEY_ENUM,      /* one of names[], stored as its index */
	KEY_PATH,      /* absolute path, char * */
	KEY_GROUP,     /* group name or gid, char *, empty means unset */
	KEY_MODE,      /* octal permission bits */
	KEY_LOG_LEVEL, /* error..debug */
	KEY_COMMS,     /* list of comm names */
	KEY_GLOBS,     /* list of exe path globs */
	KEY_PREFIXES,  /* list of cgroup path prefixes */
};

struct key {
	const char *section;
	const char *name;
	enum key_type type;
	size_t offset;
	size_t size; /* of the field */
	unsigned min, max;
	const char *unit;
	const char *const *names;
};

static const char *const iso_reading_names[] = { TUNABLE_ISO_READING_MACHINE,
						   TUNABLE_ISO_READING_PER_CPU, NULL };
static const char *const scope_names[] = { "all", "pid", "cgroup", NULL };
static const char *const sensor_names[] = { "auto", "bpf", "connector", "poll", NULL };
static const char *const autogroup_names[] = { "keep", "off", NULL };

#define F(field) offsetof(struct config, field), sizeof(((struct config *)0)->field)

static const struct key keys[] = {
#define TUNABLE_KEY(id, name, kind, field, min, max, def, unit, help) \
	{ "scheduler", name, KEY_##kind, F(tunables.field), min, max, unit, NULL },
	MUQSS_TUNABLES(TUNABLE_KEY)
#undef TUNABLE_KEY
	{ "scheduler", TUNABLE_ISO_READING, KEY_ENUM, F(tunables.iso_reading), 0, 0, "", iso_reading_names },
	{ "scheduler", "autogroup", KEY_ENUM, F(autogroup), 0, 0, "", autogroup_names },
	{ "scope", "mode", KEY_ENUM, F(scope), 0, 0, "", scope_names },
	{ "scope", "pid", KEY_UINT, F(scope_pid), 2, PID_MAX_LIMIT, "", NULL },
	{ "scope", "cgroup", KEY_PATH, F(scope_cgroup), 0, 0, "", NULL },
	{ "exempt", "comm", KEY_COMMS, F(exempt.comms), 0, 0, "", NULL },
	{ "exempt", "exe", KEY_GLOBS, F(exempt.exes), 0, 0, "", NULL },
	{ "exempt", "cgroup", KEY_PREFIXES, F(exempt.cgroups), 0, 0, "", NULL },
	{ "tracking", "reconcile_interval_ms", KEY_UINT, F(reconcile_interval_ms), 100, 3600000, " ms", NULL },
	{ "tracking", "poll_interval_ms", KEY_UINT, F(poll_interval_ms), 10, 60000, " ms", NULL },
	{ "tracking", "force_poll", KEY_BOOL, F(force_poll), 0, 1, "", NULL },
	{ "tracking", "sensor", KEY_ENUM, F(sensor), 0, 0, "", sensor_names },
	{ "idleprio", "stop_max_ms", KEY_UINT, F(idleprio_stop_max_ms), 1, 60000, " ms", NULL },
	{ "control", "socket", KEY_PATH, F(socket_path), 0, 0, "", NULL },
	{ "control", "mode", KEY_MODE, F(socket_mode), 0, 0777, "", NULL },
	{ "control", "group", KEY_GROUP, F(socket_group), 0, 0, "", NULL },
	{ "control", "admin_group", KEY_GROUP, F(admin_group), 0, 0, "", NULL },
	{ "rtkit", "enable", KEY_BOOL, F(rtkit), 0, 1, "", NULL },
	{ "daemon", "state_dir", KEY_PATH, F(state_dir), 0, 0, "", NULL },
	{ "daemon", "rules_dir", KEY_PATH, F(rules_dir), 0, 0, "", NULL },
	{ "daemon", "log_level", KEY_LOG_LEVEL, F(log_level), 0, 0, "", NULL },
};

const char *sensor_kind_name(enum sensor_kind kind)
{
	return (unsigned)kind <= SENSOR_POLL ? sensor_names[kind] : "?";
}

int sensor_kind_from_string(const char *s)
{
	for (unsigned i = 0; sensor_names[i]; i++)
		if (strcmp(s, sensor_names[i]) == 0)
			return (int)i;
	return -EINVAL;
}

#define bad(pos, key, fmt, ...) \
	log_error("%s:%u: %s: " fmt, (pos)->file, (pos)->line, (key)->name, ##__VA_ARGS__)

static int parse_unsigned(const char *s, int base, unsigned long *ret)
{
	char *end;
	unsigned long v;

	if (!*s || !(isdigit((unsigned char)*s)))
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, base);
	if (errno || *end)
		return -EINVAL;
	*ret = v;
	return 0;
}

static int set_uint(void *field, size_t size, unsigned v)
{
	if (size == sizeof(bool))
		*(bool *)field = v != 0;
	else if (size == sizeof(unsigned))
		*(unsigned *)field = v;
	else
		return -EINVAL;
	return 0;
}

static int apply_uint(void *field, const struct key *k, const struct config_pos *pos,
		      const char *value)
{
	unsigned long v;

	if (parse_unsigned(value, 10, &v) < 0) {
		bad(pos, k, "\"%s\" is not a number in range %u..%u%s", value, k->min, k->max, k->unit);
		return -EINVAL;
	}
	if (v < k->min || v > k->max) {
		bad(pos, k, "%s is out of range %u..%u%s", value, k->min, k->max, k->unit);
		return -EINVAL;
	}
	/* scope_pid is a pid_t, the same size as unsigned on Linux. */
	return set_uint(field, k->size, (unsigned)v);
}

static int apply_bool(void *field, const struct key *k, const struct config_pos *pos,
		      const char *value)
{
	static const char *const yes[] = { "1", "yes", "true", "on", NULL };
	static const char *const no[] = { "0", "no", "false", "off", NULL };

	for (size_t i = 0; yes[i]; i++) {
		if (strcasecmp(value, yes[i]) == 0)
			return set_uint(field, k->size, 1);
		if (strcasecmp(value, no[i]) == 0)
			return set_uint(field, k->size, 0);
	}
	bad(pos, k, "\"%s\" is not a boolean (allowed 0, 1, yes, no, true, false, on, off)", value);
	return -EINVAL;
}

static int apply_enum(void *field, const struct key *k, const struct config_pos *pos,
		      const char *value)
{
	char allowed[128] = "";

	for (size_t i = 0; k->names[i]; i++) {
		if (strcmp(value, k->names[i]) == 0) {
			*(int *)field = (int)i;
			return 0;
		}
		if (i)
			strncat(allowed, "|", sizeof(allowed) - strlen(allowed) - 1);
		strncat(allowed, k->names[i], sizeof(allowed) - strlen(allowed) - 1);
	}
	bad(pos, k, "\"%s\" is not one of %s", value, allowed);
	return -EINVAL;
}

static int set_string(char **field, const char *value)
{
	char *copy = NULL;

	if (*value) {
		copy = strdup(value);
		if (!copy)
			return -ENOMEM;
	}
	free(*field);
	*field = copy;
	return 0;
}

static int apply_path(char **field, const struct key *k, const struct config_pos *pos,
		      const char *value)
{
	if (value[0] != '/') {
		bad(pos, k, "\"%s\" is not an absolute path", value);
		return -EINVAL;
	}
	if (strcmp(k->name, "socket") == 0 && strlen(value) >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
		bad(pos, k, "path is %zu bytes, the limit for a socket is %zu", strlen(value),
		    sizeof(((struct sockaddr_un *)0)->sun_path) - 1);
		return -EINVAL;
	}
	return set_string(field, value);
}

static int apply_group(char **field, const struct key *k, const struct config_pos *pos,
		       const char *value)
{
	/* The shadow-utils rule, as sysusers.d applies it: no leading digit
	 * or dash unless the whole name is a gid. */
	size_t n = strlen(value);
	bool numeric = n > 0 && strspn(value, "0123456789") == n;
	bool ok = numeric || n == 0 || (n <= 32 && !isdigit((unsigned char)value[0]) && value[0] != '-');

	for (size_t i = 0; ok && !numeric && i < n; i++)
		ok = isalnum((unsigned char)value[i]) || strchr("_.-", value[i]) ||
		     (value[i] == '$' && i == n - 1);
	if (!ok) {
		bad(pos, k, "\"%s\" is not a valid group name or gid", value);
		return -EINVAL;
	}
	return set_string(field, value);
}

static int apply_mode(unsigned *field, const struct key *k, const struct config_pos *pos,
		      const char *value)
{
	unsigned long v;

	if (parse_unsigned(value, 8, &v) < 0 || v > k->max) {
		bad(pos, k, "\"%s\" is not an octal mode in range 0000..0777", value);
		return -EINVAL;
	}
	*field = (unsigned)v;
	return 0;
}

static int apply_log_level(int *field, const struct key *k, const struct config_pos *pos,
			   const char *value)
{
	int level = log_level_from_string(value);

	if (level < 0) {
		bad(pos, k, "\"%s\" is not one of error|warning|notice|info|debug", value);
		return -EINVAL;
	}
	*field = level;
	return 0;
}

/* Splits value at blanks; "double quotes" keep a name with spaces whole,
 * as comms like "Web Content" need. Returns the next word in buf or NULL. */
static const char *next_word(const char **p, char *buf, size_t size, bool *unterminated)
{
	const char *s = *p;
	size_t n = 0;

	while (*s && isspace((unsigned char)*s))
		s++;
	if (!*s)
		return NULL;
	if (*s == '"') {
		const char *end = strchr(++s, '"');

		if (!end) {
			*unterminated = true;
			return NULL;
		}
		n = (size_t)(end - s);
		*p = end + 1;
	} else {
		while (s[n] && !isspace((unsigned char)s[n]))
			n++;
		*p = s + n;
	}
	if (n >= size)
		n = size - 1;
	memcpy(buf, s, n);
	buf[n] = '\0';
	return buf;
}

static int check_item(const struct key *k, const struct config_pos *pos, const char *w)
{
	switch (k->type) {
	case KEY_COMMS:
		if (strlen(w) > COMM_MAX) {
			bad(pos, k, "\"%s\" is longer than %d characters, the kernel's limit for comm",
			    w, COMM_MAX);
			return -EINVAL;
		}
		return 0;
	case KEY_GLOBS:
		if (w[0] != '/' && w[0] != '*') {
			bad(pos, k, "\"%s\" is not an absolute path glob", w);
			return -EINVAL;
		}
		return 0;
	default:
		if (w[0] != '/') {
			bad(pos, k, "\"%s\" is not a cgroup path (it must start with /)", w);
			return -EINVAL;
		}
		return 0;
	}
}

/* Each assignment appends; an empty one clears the list, so a drop-in can
 * start over. */
static int apply_list(char ***field, const struct key *k, const struct config_pos *pos,
		      const char *value)
{
	char buf[PATH_MAX];
	bool unterminated = false;
	const char *p = value, *w;
	char **add = NULL;
	int r = 0;

	if (!*value) {
		config_strv_free(*field);
		*field = NULL;
		return 0;
	}
	while ((w = next_word(&p, buf, sizeof(buf), &unterminated))) {
		r = check_item(k, pos, w);
		if (r < 0)
			goto out;
		r = config_strv_append(&add, w);
		if (r < 0)
			goto out;
	}
	if (unterminated) {
		bad(pos, k, "unterminated quote in \"%s\"", value);
		r = -EINVAL;
		goto out;
	}
	for (size_t i = 0; add && add[i]; i++) {
		r = config_strv_append(field, add[i]);
		if (r < 0)
			goto out;
	}
out:
	config_strv_free(add);
	return r;
}

static bool section_known(const char *section)
{
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (strcmp(keys[i].section, section) == 0)
			return true;
	return false;
}

int config_key_apply(struct config *c, const struct config_pos *pos, const char *section,
		     const char *name, const char *value)
{
	const struct key *k = NULL;
	void *field;

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (strcmp(keys[i].section, section) == 0 && strcmp(keys[i].name, name) == 0) {
			k = &keys[i];
			break;
		}
	if (!k) {
		if (!*section)
			log_error("%s:%u: %s: key outside any [section]", pos->file, pos->line, name);
		else if (!section_known(section))
			log_error("%s:%u: unknown section [%s]", pos->file, pos->line, section);
		else
			log_error("%s:%u: %s: unknown key in [%s]", pos->file, pos->line, name, section);
		return -EINVAL;
	}
	field = (char *)c + k->offset;
	switch (k->type) {
	case KEY_UINT: return apply_uint(field, k, pos, value);
	case KEY_BOOL: return apply_bool(field, k, pos, value);
	case KEY_ENUM: return apply_enum(field, k, pos, value);
	case KEY_PATH: return apply_path(field, k, pos, value);
	case KEY_GROUP: return apply_group(field, k, pos, value);
	case KEY_MODE: return apply_mode(field, k, pos, value);
	case KEY_LOG_LEVEL: return apply_log_level(field, k, pos, value);
	case KEY_COMMS:
	case KEY_GLOBS:
	case KEY_PREFIXES: return apply_list(field, k, pos, value);
	}
	return -EINVAL;
}

int config_validate(const struct config *c, const char *path)
{
	if (c->scope == SCOPE_PID && c->scope_pid <= 0) {
		log_error("%s: [scope] mode = pid needs pid = PID", path);
		return -EINVAL;
	}
	if (c->scope == SCOPE_CGROUP && !c->scope_cgroup) {
		log_error("%s: [scope] mode = cgroup needs cgroup = PATH", path);
		return -EINVAL;
	}
	if (!c->socket_path || !c->state_dir || !c->rules_dir) {
		log_error("%s: socket, state_dir and rules_dir may not be empty", path);
		return -EINVAL;
	}
	return 0;
}
