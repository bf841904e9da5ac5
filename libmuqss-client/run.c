/* Start a program under a policy, like schedtool -e: the child waits on a
 * pipe until the daemon has set its class, then execs, so the program's
 * first instruction already runs in the class and everything it starts
 * inherits it. */
#include "client-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void close_pair(int p[2])
{
	if (p[0] >= 0)
		close(p[0]);
	if (p[1] >= 0)
		close(p[1]);
}

static void reap(pid_t pid)
{
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
}

int muqss_run(struct muqss_client *c, enum muqss_policy policy, int nice_set, int nice,
	      char *const argv[], pid_t *ret_pid)
{
	int go[2] = { -1, -1 }, fail[2] = { -1, -1 };
	ssize_t n;
	pid_t pid;
	char one = 1;
	int r, err;

	if (!argv || !argv[0] || !client_policy_name(policy))
		return -EINVAL;
	if (pipe2(go, O_CLOEXEC) < 0 || pipe2(fail, O_CLOEXEC) < 0) {
		r = -errno;
		goto out;
	}
	pid = fork();
	if (pid < 0) {
		r = -errno;
		goto out;
	}
	if (pid == 0) {
		/* Only async-signal-safe calls from here to exec. */
		char byte;
		close(go[1]);
		close(fail[0]);
		if (read(go[0], &byte, 1) != 1)
			_exit(127);
		execvp(argv[0], argv);
		err = errno;
		(void)!write(fail[1], &err, sizeof(err));
		_exit(127);
	}
	close(go[0]);
	close(fail[1]);
	go[0] = fail[1] = -1;

	r = nice_set ? muqss_set_class_nice(c, pid, policy, nice) : muqss_set_class(c, pid, policy);
	if (r < 0) {
		kill(pid, SIGKILL);
		reap(pid);
		goto out;
	}
	/* Release the child; its end of fail closes on a successful exec. */
	if (write(go[1], &one, 1) != 1) {
		r = -errno;
		kill(pid, SIGKILL);
		reap(pid);
		goto out;
	}
	do
		n = read(fail[0], &err, sizeof(err));
	while (n < 0 && errno == EINTR);
	if (n == (ssize_t)sizeof(err)) {
		reap(pid);
		r = -err;
		goto out;
	}
	*ret_pid = pid;
	r = 0;
out:
	close_pair(go);
	close_pair(fail);
	return r;
}
