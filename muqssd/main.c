/* muqssd: MuQSS's scheduling policy on a stock kernel, from userspace. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "config_file.h"
#include "daemon.h"
#include "log.h"
#include "restore.h"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: muqssd [OPTIONS]\n"
		"       muqssd --restore\n"
		"       muqssd --check-config [FILE]\n"
		"\n"
		"MuQSS-style scheduling for user tasks on a stock kernel.\n"
		"\n"
		"  -c, --config FILE        config file (default " CONFIG_DEFAULT_PATH ")\n"
		"  -s, --socket PATH        control socket (default " CONFIG_DEFAULT_SOCKET ")\n"
		"      --scope-pid PID      manage PID and its descendants only\n"
		"      --scope-cgroup PATH  manage the tasks of a cgroup subtree only\n"
		"      --state-dir DIR      crash-restore state (default " CONFIG_DEFAULT_STATE_DIR ")\n"
		"      --sensor KIND        how tasks are tracked: auto (default), bpf,\n"
		"                           connector or poll\n"
		"      --poll               the same as --sensor poll\n"
		"      --log-level LEVEL    error, warning, notice, info or debug\n"
		"      --restore            undo what a dead instance left behind, then exit\n"
		"      --check-config [FILE] validate the config, rules and state dir, then exit\n"
		"  -h, --help               show this help\n"
		"      --version            show the version\n");
}

enum {
	OPT_SCOPE_PID = 0x100,
	OPT_SCOPE_CGROUP,
	OPT_STATE_DIR,
	OPT_POLL,
	OPT_SENSOR,
	OPT_LOG_LEVEL,
	OPT_RESTORE,
	OPT_CHECK_CONFIG,
	OPT_VERSION,
};

struct options {
	const char *config_path;
	bool config_given;
	const char *socket_path;
	pid_t scope_pid;
	const char *scope_cgroup;
	const char *state_dir;
	int sensor; /* enum sensor_kind, -1 when not given */
	int log_level;
	bool restore;
	bool check_config;
};

static int parse_args(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "socket", required_argument, NULL, 's' },
		{ "scope-pid", required_argument, NULL, OPT_SCOPE_PID },
		{ "scope-cgroup", required_argument, NULL, OPT_SCOPE_CGROUP },
		{ "state-dir", required_argument, NULL, OPT_STATE_DIR },
		{ "poll", no_argument, NULL, OPT_POLL },
		{ "sensor", required_argument, NULL, OPT_SENSOR },
		{ "log-level", required_argument, NULL, OPT_LOG_LEVEL },
		{ "restore", no_argument, NULL, OPT_RESTORE },
		{ "check-config", no_argument, NULL, OPT_CHECK_CONFIG },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, OPT_VERSION },
		{ 0 },
	};
	int c;

	o->config_path = CONFIG_DEFAULT_PATH;
	o->log_level = -1;
	o->sensor = -1;
	while ((c = getopt_long(argc, argv, "c:s:h", longopts, NULL)) >= 0) {
		char *end;
		long v;

		switch (c) {
		case 'c':
			o->config_path = optarg;
			o->config_given = true;
			break;
		case 's':
			o->socket_path = optarg;
			break;
		case OPT_SCOPE_PID:
			errno = 0;
			v = strtol(optarg, &end, 10);
			if (errno || *end || v <= 1) {
				fprintf(stderr, "muqssd: --scope-pid: not a valid pid: %s\n", optarg);
				return -EINVAL;
			}
			o->scope_pid = (pid_t)v;
			break;
		case OPT_SCOPE_CGROUP:
			o->scope_cgroup = optarg;
			break;
		case OPT_STATE_DIR:
			o->state_dir = optarg;
			break;
		case OPT_POLL:
			o->sensor = SENSOR_POLL;
			break;
		case OPT_SENSOR:
			o->sensor = sensor_kind_from_string(optarg);
			if (o->sensor < 0) {
				fprintf(stderr, "muqssd: --sensor: auto, bpf, connector or poll, not %s\n",
					optarg);
				return -EINVAL;
			}
			break;
		case OPT_LOG_LEVEL:
			o->log_level = log_level_from_string(optarg);
			if (o->log_level < 0) {
				fprintf(stderr, "muqssd: --log-level: unknown level %s\n", optarg);
				return -EINVAL;
			}
			break;
		case OPT_RESTORE:
			o->restore = true;
			break;
		case OPT_CHECK_CONFIG:
			o->check_config = true;
			/* The file is optional: take the next word unless it is an option. */
			if (optind < argc && argv[optind][0] != '-') {
				o->config_path = argv[optind++];
				o->config_given = true;
			}
			break;
		case 'h':
			usage(stdout);
			exit(EXIT_SUCCESS);
		case OPT_VERSION:
			printf("muqssd %s\n", MUQSS_VERSION);
			exit(EXIT_SUCCESS);
		default:
			usage(stderr);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "muqssd: unexpected argument: %s\n", argv[optind]);
		return -EINVAL;
	}
	if (o->scope_pid && o->scope_cgroup) {
		fprintf(stderr, "muqssd: --scope-pid and --scope-cgroup exclude each other\n");
		return -EINVAL;
	}
	return 0;
}

/* Command-line options win over the config file. */
static int apply_options(struct config *c, const struct options *o)
{
	if (o->socket_path) {
		free(c->socket_path);
		c->socket_path = strdup(o->socket_path);
	}
	if (o->state_dir) {
		free(c->state_dir);
		c->state_dir = strdup(o->state_dir);
	}
	if (o->scope_pid) {
		c->scope = SCOPE_PID;
		c->scope_pid = o->scope_pid;
	}
	if (o->scope_cgroup) {
		c->scope = SCOPE_CGROUP;
		free(c->scope_cgroup);
		c->scope_cgroup = strdup(o->scope_cgroup);
		if (!c->scope_cgroup)
			return -ENOMEM;
	}
	if (o->sensor >= 0) {
		c->sensor = (enum sensor_kind)o->sensor;
		c->force_poll = false;
	}
	if (o->log_level >= 0)
		c->log_level = o->log_level;
	if (!c->socket_path || !c->state_dir)
		return -ENOMEM;
	return 0;
}

int main(int argc, char **argv)
{
	struct options opts = { 0 };
	struct config config;
	struct daemon *d = NULL;
	int r;

	log_init("muqssd");
	if (parse_args(argc, argv, &opts) < 0)
		return 2;
	if (opts.log_level >= 0)
		log_set_level(opts.log_level);

	config_init_defaults(&config);
	/* A missing default file is fine; a missing named file is not. */
	r = config_load(&config, opts.config_path, !opts.config_given);
	if (r >= 0)
		r = apply_options(&config, &opts);
	if (opts.check_config) {
		if (r >= 0)
			r = daemon_check_config(&config);
		if (r >= 0)
			printf("%s: OK\n", opts.config_path);
		config_free(&config);
		return r < 0 ? 1 : 0;
	}
	if (r < 0)
		goto out;
	log_set_level(config.log_level);

	if (opts.restore) {
		r = restore_from_state_dir(config.state_dir);
		goto out;
	}

	r = daemon_new(&d, &config, opts.config_path, !opts.config_given);
	if (r < 0)
		goto out;
	d->cli_log_level = opts.log_level;
	r = daemon_run(d);
out:
	daemon_free(d);
	config_free(&config);
	return r < 0 ? 1 : 0;
}
