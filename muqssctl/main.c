/* muqssctl: the command line for muqssd. */
#include "muqssctl.h"
#include "protocol.h"
#include "tunables.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage_tunables(FILE *f)
{
	fprintf(f, "Tunables (get, set):\n");
#define TUNABLE_HELP(id, name, kind, field, min, max, def, unit, help) \
	fprintf(f, "  %-12s %u..%u%s, default %u%s: %s\n", name, (unsigned)(min), (unsigned)(max), \
		unit, (unsigned)(def), unit, help);
	MUQSS_TUNABLES(TUNABLE_HELP)
#undef TUNABLE_HELP
	fprintf(f, "  %-12s %s, default %s: %s\n", TUNABLE_ISO_READING, TUNABLE_ISO_READING_VALUES,
		TUNABLE_ISO_READING_MACHINE, TUNABLE_ISO_READING_HELP);
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: muqssctl [--socket PATH] [--json] COMMAND [ARGS...]\n"
		"\n"
		"Control muqssd, MuQSS scheduling for user tasks.\n"
		"\n"
		"Commands:\n"
		"  status                     daemon version, uptime, tunables, counters\n"
		"  iso [-t] PID...            put processes (with -t: threads) in SCHED_ISO\n"
		"  idleprio [-t] PID...       ... in SCHED_IDLEPRIO\n"
		"  normal [-t] PID...         ... back in the normal class\n"
		"  batch [-t] PID...          ... in the batch class\n"
		"  run [-I|-D|-N|-B] [-n NICE] -- CMD [ARGS...]\n"
		"                             start CMD under a policy (default -I, ISO)\n"
		"  get [TUNABLE]              show tunables\n"
		"  set TUNABLE VALUE          change a tunable at once\n"
		"  queues [--cpu N]           each CPU's run queue in order\n"
		"  tasks                      the tasks muqssd tracks\n"
		"  reload                     re-read the configuration file\n"
		"  top                        live view of queues and class CPU shares\n"
		"  rules [--config FILE] [--rules-dir DIR] --explain PID\n"
		"                             which rule matches a process, and why\n"
		"\n");
	usage_tunables(f);
	fprintf(f,
		"\n"
		"Options:\n"
		"  -s, --socket PATH  control socket (default $MUQSS_SOCKET or "
		MUQSS_DEFAULT_SOCKET ")\n"
		"  -j, --json         print JSON instead of tables\n"
		"  -h, --help         show this help\n"
		"      --version      show the version\n"
		"\n"
		"Exit status: 0 done, 1 failed, 2 usage, 3 no daemon, 4 permission denied,\n"
		"5 no such process, 6 bad value; run returns the program's status.\n");
}

int ctl_connect(struct ctl *ctl)
{
	const char *path = ctl->socket;
	int r;

	if (ctl->client)
		return 0;
	if (!path)
		path = getenv("MUQSS_SOCKET");
	if (!path || !*path)
		path = MUQSS_DEFAULT_SOCKET;
	r = muqss_connect(&ctl->client, path);
	if (r == -EPROTO) {
		fprintf(stderr, "muqssctl: %s: muqssd speaks another protocol version; "
				"are muqssctl and muqssd from the same release?\n", path);
		return EXIT_FAIL;
	}
	if (r < 0) {
		fprintf(stderr, "muqssctl: cannot connect to %s: %s", path, strerror(-r));
		if (r == -ENOENT || r == -ECONNREFUSED)
			fprintf(stderr, "; is muqssd running? (systemctl start muqssd)");
		fputc('\n', stderr);
		return EXIT_NO_DAEMON;
	}
	return 0;
}

static const struct {
	const char *name;
	int (*run)(struct ctl *ctl, int argc, char **argv);
} verbs[] = {
	{ "status", verb_status },
	{ "iso", verb_class },
	{ "idleprio", verb_class },
	{ "normal", verb_class },
	{ "batch", verb_class },
	{ "run", verb_run },
	{ "get", verb_get },
	{ "set", verb_set },
	{ "queues", verb_queues },
	{ "tasks", verb_tasks },
	{ "reload", verb_reload },
	{ "top", verb_top },
	{ "rules", verb_rules },
};

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 },
	};
	struct ctl ctl = { 0 };
	int c, r;

	/* '+': options after the command belong to the command. */
	while ((c = getopt_long(argc, argv, "+s:jh", longopts, NULL)) >= 0) {
		switch (c) {
		case 's':
			ctl.socket = optarg;
			break;
		case 'j':
			ctl.json = true;
			break;
		case 'h':
			usage(stdout);
			return EXIT_OK;
		case 'V':
			printf("muqssctl %s (protocol %d)\n", MUQSS_VERSION, PROTOCOL_VERSION);
			return EXIT_OK;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return EXIT_USAGE;
	}
	for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++) {
		if (strcmp(argv[optind], verbs[i].name) != 0)
			continue;
		/* Each verb parses its own options from argv[0] = its name. */
		argc -= optind;
		argv += optind;
		optind = 0;
		r = verbs[i].run(&ctl, argc, argv);
		muqss_close(ctl.client);
		return r;
	}
	fprintf(stderr, "muqssctl: unknown command: %s (see muqssctl --help)\n", argv[optind]);
	return EXIT_USAGE;
}
