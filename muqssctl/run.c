/* muqssctl run: start a program under a policy and become its exit status. */
#include "muqssctl.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

int verb_run(struct ctl *ctl, int argc, char **argv)
{
	enum muqss_policy policy = MUQSS_POLICY_ISO;
	struct sigaction ign = { .sa_handler = SIG_IGN }, old_int, old_quit;
	bool nice_set = false;
	long nice = 0;
	pid_t pid;
	int c, r, status;

	while ((c = getopt(argc, argv, "+IDNBn:")) >= 0) {
		switch (c) {
		case 'I': policy = MUQSS_POLICY_ISO; break;
		case 'D': policy = MUQSS_POLICY_IDLEPRIO; break;
		case 'N': policy = MUQSS_POLICY_NORMAL; break;
		case 'B': policy = MUQSS_POLICY_BATCH; break;
		case 'n': {
			char *end;
			errno = 0;
			nice = strtol(optarg, &end, 10);
			if (errno || *end || end == optarg || nice < -20 || nice > 19) {
				fprintf(stderr, "muqssctl run: nice must be -20..19\n");
				return EXIT_USAGE;
			}
			nice_set = true;
			break;
		}
		default:
			return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "muqssctl run: what to run? (muqssctl run -I -- CMD ARGS...)\n");
		return EXIT_USAGE;
	}
	if ((r = ctl_connect(ctl)) > 0)
		return r == EXIT_NO_DAEMON ? EXIT_RUN_FAILED : r;
	r = muqss_run(ctl->client, policy, nice_set, (int)nice, argv + optind, &pid);
	if (r == -ENOENT || r == -EACCES || r == -ENOEXEC) {
		fprintf(stderr, "muqssctl run: %s: %s\n", argv[optind], strerror(-r));
		return r == -ENOENT ? 127 : 126;
	}
	if (r < 0) {
		(void)ctl_fail(ctl, r, "run");
		return EXIT_RUN_FAILED;
	}
	/* Done with the daemon; the program may run for hours. */
	muqss_close(ctl->client);
	ctl->client = NULL;
	/* Like system(3): the terminal's ^C and ^\ are for the program. */
	sigaction(SIGINT, &ign, &old_int);
	sigaction(SIGQUIT, &ign, &old_quit);
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			fprintf(stderr, "muqssctl run: waitpid: %s\n", strerror(errno));
			return EXIT_RUN_FAILED;
		}
	}
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGQUIT, &old_quit, NULL);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}
