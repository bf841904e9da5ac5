/* The one-shot verbs: each connects, asks, prints. */
#include "muqssctl.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct option json_only[] = {
	{ "json", no_argument, NULL, 'j' },
	{ 0 },
};

/* Options every verb takes; returns an exit code, or -1 to go on. */
static int parse_plain(struct ctl *ctl, int argc, char **argv, int min_args, int max_args)
{
	int c;

	while ((c = getopt_long(argc, argv, "+j", json_only, NULL)) >= 0) {
		if (c != 'j')
			return EXIT_USAGE;
		ctl->json = true;
	}
	if (argc - optind < min_args || argc - optind > max_args) {
		fprintf(stderr, "muqssctl %s: wrong number of arguments (see muqssctl --help)\n",
			argv[0]);
		return EXIT_USAGE;
	}
	return -1;
}

static int parse_int(const char *s, long min, long max, long *ret)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		return -EINVAL;
	*ret = v;
	return 0;
}

int verb_status(struct ctl *ctl, int argc, char **argv)
{
	char *text = NULL;
	cJSON *o;
	int r;

	if ((r = parse_plain(ctl, argc, argv, 0, 0)) >= 0)
		return r;
	if ((r = ctl_connect(ctl)) > 0)
		return r;
	r = muqss_status_json(ctl->client, &text);
	if (r < 0)
		return ctl_fail(ctl, r, "status");
	if (ctl->json) {
		ctl_print_json(text);
	} else if ((o = ctl_parse(text))) {
		print_status(o);
		cJSON_Delete(o);
	}
	free(text);
	return EXIT_OK;
}

int verb_get(struct ctl *ctl, int argc, char **argv)
{
	char *text = NULL;
	cJSON *status, *tun, *v;
	int r;

	if ((r = parse_plain(ctl, argc, argv, 0, 1)) >= 0)
		return r;
	if ((r = ctl_connect(ctl)) > 0)
		return r;
	if (optind < argc) {
		r = muqss_get_tunable(ctl->client, argv[optind], &text);
		if (r < 0)
			return ctl_fail(ctl, r, "get");
		if (ctl->json) {
			cJSON *o = cJSON_CreateObject();
			char *s = o && cJSON_AddStringToObject(o, argv[optind], text) ?
					  cJSON_PrintUnformatted(o) : NULL;
			puts(s ? s : "{}");
			cJSON_free(s);
			cJSON_Delete(o);
		} else {
			char buf[1024];
			puts(print_text(buf, sizeof(buf), text));
		}
		free(text);
		return EXIT_OK;
	}
	r = muqss_status_json(ctl->client, &text);
	if (r < 0)
		return ctl_fail(ctl, r, "get");
	status = ctl_parse(text);
	free(text);
	if (!status)
		return EXIT_FAIL;
	tun = cJSON_GetObjectItem(status, "tunables");
	if (ctl->json) {
		char *s = cJSON_Print(tun);
		puts(s ? s : "{}");
		cJSON_free(s);
	} else {
		cJSON_ArrayForEach(v, tun) {
			char k[256], t[256];
			print_text(k, sizeof(k), v->string);
			if (cJSON_IsNumber(v))
				printf("%-12s %.0f\n", k, v->valuedouble);
			else if (cJSON_IsString(v))
				printf("%-12s %s\n", k, print_text(t, sizeof(t), v->valuestring));
		}
	}
	cJSON_Delete(status);
	return EXIT_OK;
}

int verb_set(struct ctl *ctl, int argc, char **argv)
{
	int r;

	if ((r = parse_plain(ctl, argc, argv, 2, 2)) >= 0)
		return r;
	if ((r = ctl_connect(ctl)) > 0)
		return r;
	r = muqss_set_tunable(ctl->client, argv[optind], argv[optind + 1]);
	if (r < 0)
		return ctl_fail(ctl, r, "set");
	if (ctl->json)
		printf("{\"%s\": \"%s\"}\n", argv[optind], argv[optind + 1]);
	return EXIT_OK;
}

int verb_reload(struct ctl *ctl, int argc, char **argv)
{
	int r;

	if ((r = parse_plain(ctl, argc, argv, 0, 0)) >= 0)
		return r;
	if ((r = ctl_connect(ctl)) > 0)
		return r;
	r = muqss_reload(ctl->client);
	return r < 0 ? ctl_fail(ctl, r, "reload") : EXIT_OK;
}

static int policy_from_name(const char *name, enum muqss_policy *ret)
{
	if (strcmp(name, "iso") == 0)
		*ret = MUQSS_POLICY_ISO;
	else if (strcmp(name, "idleprio") == 0)
		*ret = MUQSS_POLICY_IDLEPRIO;
	else if (strcmp(name, "batch") == 0)
		*ret = MUQSS_POLICY_BATCH;
	else if (strcmp(name, "normal") == 0)
		*ret = MUQSS_POLICY_NORMAL;
	else
		return -EINVAL;
	return 0;
}

/* iso|idleprio|normal|batch [-t] ID...: every ID is tried; the exit code
 * is that of the first failure. */
int verb_class(struct ctl *ctl, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "thread", no_argument, NULL, 't' },
		{ "json", no_argument, NULL, 'j' },
		{ 0 },
	};
	enum muqss_policy policy = MUQSS_POLICY_NORMAL;
	bool thread = false;
	int c, r, ret = EXIT_OK;

	(void)policy_from_name(argv[0], &policy);
	while ((c = getopt_long(argc, argv, "+tj", opts, NULL)) >= 0) {
		if (c == 't')
			thread = true;
		else if (c == 'j')
			ctl->json = true;
		else
			return EXIT_USAGE;
	}
	if (optind >= argc) {
		fprintf(stderr, "muqssctl %s: which %s? (muqssctl %s %sID...)\n", argv[0],
			thread ? "thread" : "process", argv[0], thread ? "-t " : "");
		return EXIT_USAGE;
	}
	for (int i = optind; i < argc; i++) {
		long id;
		if (parse_int(argv[i], 1, INT_MAX, &id) < 0) {
			fprintf(stderr, "muqssctl %s: not a %s id: %s\n", argv[0],
				thread ? "thread" : "process", argv[i]);
			return EXIT_USAGE;
		}
	}
	if ((r = ctl_connect(ctl)) > 0)
		return r;
	for (int i = optind; i < argc; i++) {
		pid_t id = (pid_t)atol(argv[i]);
		r = thread ? muqss_set_class_tid(ctl->client, id, policy)
			   : muqss_set_class(ctl->client, id, policy);
		if (ctl->json)
			printf("{\"%s\": %d, \"class\": \"%s\", \"ok\": %s}\n",
			       thread ? "tid" : "pid", (int)id, argv[0], r < 0 ? "false" : "true");
		if (r < 0) {
			int e = ctl_fail(ctl, r, argv[i]);
			if (ret == EXIT_OK)
				ret = e;
			if (!ctl->client || muqss_get_fd(ctl->client) < 0)
				break;
		}
	}
	return ret;
}
