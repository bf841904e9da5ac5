/* queues and tasks. */
#include "muqssctl.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int verb_queues(struct ctl *ctl, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "cpu", required_argument, NULL, 'c' },
		{ "json", no_argument, NULL, 'j' },
		{ 0 },
	};
	char *text = NULL, *end;
	long cpu = -1;
	cJSON *o;
	int c, r;

	while ((c = getopt_long(argc, argv, "+c:j", opts, NULL)) >= 0) {
		switch (c) {
		case 'c':
			errno = 0;
			cpu = strtol(optarg, &end, 10);
			if (errno || *end || end == optarg || cpu < 0 || cpu > INT_MAX) {
				fprintf(stderr, "muqssctl queues: --cpu: not a CPU number: %s\n",
					optarg);
				return EXIT_USAGE;
			}
			break;
		case 'j':
			ctl->json = true;
			break;
		default:
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "muqssctl queues: unexpected argument: %s\n", argv[optind]);
		return EXIT_USAGE;
	}
	if ((r = ctl_connect(ctl)) > 0)
		return r;
	r = muqss_queues_json(ctl->client, (int)cpu, &text);
	if (r < 0)
		return ctl_fail(ctl, r, "queues");
	if (ctl->json) {
		ctl_print_json(text);
	} else if ((o = ctl_parse(text))) {
		print_queues(o);
		cJSON_Delete(o);
	}
	free(text);
	return EXIT_OK;
}

int verb_tasks(struct ctl *ctl, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ 0 },
	};
	char *text = NULL;
	cJSON *o;
	int c, r;

	while ((c = getopt_long(argc, argv, "+j", opts, NULL)) >= 0) {
		if (c != 'j')
			return EXIT_USAGE;
		ctl->json = true;
	}
	if (optind < argc) {
		fprintf(stderr, "muqssctl tasks: unexpected argument: %s\n", argv[optind]);
		return EXIT_USAGE;
	}
	if ((r = ctl_connect(ctl)) > 0)
		return r;
	r = muqss_tasks_json(ctl->client, &text);
	if (r < 0)
		return ctl_fail(ctl, r, "tasks");
	if (ctl->json) {
		ctl_print_json(text);
	} else if ((o = ctl_parse(text))) {
		print_tasks(o);
		cJSON_Delete(o);
	}
	free(text);
	return EXIT_OK;
}
