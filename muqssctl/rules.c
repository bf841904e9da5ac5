/* muqssctl rules --explain PID: which rule muqssd's rules give a process
 * and why, read here from the rules directory and /proc, as root sees
 * them; the daemon is not asked. */
#include "muqssctl.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "config_file.h"
#include "log.h"
#include "rules.h"
#include "rules_proc.h"

static int usage_rules(void)
{
	fprintf(stderr, "usage: muqssctl rules [--config FILE] [--rules-dir DIR] --explain PID\n");
	return EXIT_USAGE;
}

/* The rules directory muqssd would read: --rules-dir, else the config's. */
static int rules_dir_of(const char *config_path, const char *dir, char **ret)
{
	struct config c;
	int r;

	if (dir) {
		*ret = strdup(dir);
		return *ret ? 0 : -ENOMEM;
	}
	config_init_defaults(&c);
	r = config_load(&c, config_path ? config_path : CONFIG_DEFAULT_PATH, !config_path);
	if (r >= 0) {
		*ret = c.rules_dir ? strdup(c.rules_dir) : NULL;
		r = !c.rules_dir || *ret ? 0 : -ENOMEM;
	}
	config_free(&c);
	return r;
}

static int explain(const char *dir, pid_t pid)
{
	struct rules *rules = NULL;
	struct rules_proc *p = calloc(1, sizeof(*p));
	char text[4096], shown[4 * sizeof(text)];
	int r;

	if (!p)
		return EXIT_FAIL;
	r = rules_proc_read(p, pid);
	if (r < 0) {
		fprintf(stderr, "muqssctl: process %d: %s\n", (int)pid, strerror(-r));
		free(p);
		return r == -ENOENT || r == -ESRCH ? EXIT_NO_PROCESS : EXIT_FAIL;
	}
	r = dir ? rules_load(&rules, dir) : 0;
	if (r < 0) {
		fprintf(stderr, "muqssctl: cannot load rules from %s: %s\n", dir, strerror(-r));
		free(p);
		return EXIT_FAIL;
	}
	(void)rules_explain(rules, &p->s, text, sizeof(text));
	/* Names and command lines are anyone's bytes. */
	printf("%d: %s\n", (int)pid, print_text(shown, sizeof(shown), text));
	rules_free(rules);
	free(p);
	return EXIT_OK;
}

int verb_rules(struct ctl *ctl, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "explain", required_argument, NULL, 'e' },
		{ "config", required_argument, NULL, 'c' },
		{ "rules-dir", required_argument, NULL, 'd' },
		{ 0 },
	};
	const char *config_path = NULL, *dir_opt = NULL, *pid_arg = NULL;
	char *dir = NULL, *end;
	long pid;
	int c, r;

	(void)ctl;
	while ((c = getopt_long(argc, argv, "e:c:d:", opts, NULL)) >= 0) {
		switch (c) {
		case 'e': pid_arg = optarg; break;
		case 'c': config_path = optarg; break;
		case 'd': dir_opt = optarg; break;
		default: return usage_rules();
		}
	}
	if (!pid_arg || optind != argc)
		return usage_rules();
	errno = 0;
	pid = strtol(pid_arg, &end, 10);
	if (*end || errno || pid <= 0 || pid > 0x3fffffff)
		return usage_rules();
	log_init("muqssctl");
	r = rules_dir_of(config_path, dir_opt, &dir);
	if (r < 0) {
		fprintf(stderr, "muqssctl: cannot read the configuration: %s\n", strerror(-r));
		return EXIT_FAIL;
	}
	r = explain(dir, (pid_t)pid);
	free(dir);
	return r;
}
