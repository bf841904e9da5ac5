#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "log.h"

void config_init_defaults(struct config *c)
{
	memset(c, 0, sizeof(*c));
	c->tunables.rr_interval_ms = 6;
	c->tunables.interactive = 1;
	c->tunables.iso_cpu = 70;
	c->tunables.yield_type = 1;
	c->tunables.iso_reading = ISO_READING_MACHINE;
	c->scope = SCOPE_ALL;
	c->reconcile_interval_ms = 10000;
	c->poll_interval_ms = 250;
	c->idleprio_stop_max_ms = 1000;
	c->socket_path = strdup(CONFIG_DEFAULT_SOCKET);
	c->socket_mode = 0666;
	c->state_dir = strdup(CONFIG_DEFAULT_STATE_DIR);
	c->rules_dir = strdup("/etc/muqssd/muqssd.rules.d");
	c->log_level = LOG_LEVEL_INFO;
}

static void strv_free(char **v)
{
	if (!v)
		return;
	for (char **p = v; *p; p++)
		free(*p);
	free(v);
}

void config_free(struct config *c)
{
	free(c->scope_cgroup);
	strv_free(c->exempt.comms);
	strv_free(c->exempt.exes);
	strv_free(c->exempt.cgroups);
	free(c->socket_path);
	free(c->socket_group);
	free(c->admin_group);
	free(c->state_dir);
	free(c->rules_dir);
	memset(c, 0, sizeof(*c));
}
