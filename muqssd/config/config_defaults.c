#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "config_strv.h"
#include "log.h"
#include "tunables.h"

void config_init_defaults(struct config *c)
{
	memset(c, 0, sizeof(*c));
#define TUNABLE_DEFAULT(id, name, kind, field, min, max, def, unit, help) \
	c->tunables.field = TUNABLE_##id##_DEFAULT;
	MUQSS_TUNABLES(TUNABLE_DEFAULT)
#undef TUNABLE_DEFAULT
	c->tunables.iso_reading = ISO_READING_MACHINE;
	c->scope = SCOPE_ALL;
	c->reconcile_interval_ms = 10000;
	c->poll_interval_ms = 250;
	c->idleprio_stop_max_ms = 1000;
	c->autogroup = AUTOGROUP_KEEP;
	c->socket_path = strdup(CONFIG_DEFAULT_SOCKET);
	c->socket_mode = 0666;
	c->state_dir = strdup(CONFIG_DEFAULT_STATE_DIR);
	c->rules_dir = strdup(CONFIG_DEFAULT_RULES_DIR);
	c->log_level = LOG_LEVEL_INFO;
}

void config_strv_free(char **v)
{
	if (!v)
		return;
	for (char **p = v; *p; p++)
		free(*p);
	free(v);
}

int config_strv_append(char ***v, const char *s)
{
	size_t n = 0;
	char **nv, *copy;

	while (*v && (*v)[n])
		n++;
	copy = strdup(s);
	if (!copy)
		return -ENOMEM;
	nv = realloc(*v, (n + 2) * sizeof(char *));
	if (!nv) {
		free(copy);
		return -ENOMEM;
	}
	nv[n] = copy;
	nv[n + 1] = NULL;
	*v = nv;
	return 0;
}

int config_strv_copy(char ***ret, char *const *src)
{
	char **v = NULL;

	for (size_t i = 0; src && src[i]; i++)
		if (config_strv_append(&v, src[i]) < 0) {
			config_strv_free(v);
			return -ENOMEM;
		}
	*ret = v;
	return 0;
}

static int strdup_or_null(char **dst, const char *src)
{
	*dst = NULL;
	if (!src)
		return 0;
	*dst = strdup(src);
	return *dst ? 0 : -ENOMEM;
}

int config_copy(struct config *dst, const struct config *src)
{
	struct config c = *src;
	int r = 0;

	/* Clear every owned pointer first so a failure frees only copies. */
	c.scope_cgroup = c.socket_path = c.socket_group = c.admin_group = NULL;
	c.state_dir = c.rules_dir = NULL;
	memset(&c.exempt, 0, sizeof(c.exempt));
	if (strdup_or_null(&c.scope_cgroup, src->scope_cgroup) < 0 ||
	    strdup_or_null(&c.socket_path, src->socket_path) < 0 ||
	    strdup_or_null(&c.socket_group, src->socket_group) < 0 ||
	    strdup_or_null(&c.admin_group, src->admin_group) < 0 ||
	    strdup_or_null(&c.state_dir, src->state_dir) < 0 ||
	    strdup_or_null(&c.rules_dir, src->rules_dir) < 0 ||
	    config_strv_copy(&c.exempt.comms, src->exempt.comms) < 0 ||
	    config_strv_copy(&c.exempt.exes, src->exempt.exes) < 0 ||
	    config_strv_copy(&c.exempt.cgroups, src->exempt.cgroups) < 0)
		r = -ENOMEM;
	if (r < 0) {
		config_free(&c);
		return r;
	}
	*dst = c;
	return 0;
}

void config_free(struct config *c)
{
	free(c->scope_cgroup);
	config_strv_free(c->exempt.comms);
	config_strv_free(c->exempt.exes);
	config_strv_free(c->exempt.cgroups);
	free(c->socket_path);
	free(c->socket_group);
	free(c->admin_group);
	free(c->state_dir);
	free(c->rules_dir);
	memset(c, 0, sizeof(*c));
}
