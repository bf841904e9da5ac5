/* A process whose name and executable path are hostile bytes (issue 16):
 * a quote, a newline, a colour escape and two bytes that are not UTF-8,
 * and a second thread named with a C1 CSI. Every muqssd test must pass
 * with one on the machine, and every view must show it harmlessly.
 *
 *   hostile-name -- CMD ARGS...   (the 'hostile' test setup's wrapper)
 *       starts one, out of any test's scope (re-parented away from the
 *       test), and runs CMD in its own place; the hostile one exits when
 *       CMD does.
 *   hostile-name --be SECONDS [spin]
 *       becomes one here, in the caller's scope, for SECONDS; "spin"
 *       makes it runnable, so that it shows in the run queues.
 *
 * It becomes one by exec'ing a copy of itself under the hostile name
 * (so /proc/PID/exe carries the bytes too), which it unlinks at once. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define HOSTILE_NAME "a\"\n\x1b[31mX\xff\xfeZ"
#define HOSTILE_THREAD "t\xc2\x9b" "2J\x1b]0;x\x07"

static volatile unsigned spin;

static void *thread_main(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, HOSTILE_THREAD);
	for (;;)
		pause();
	return NULL;
}

/* Argv: --run DIR WATCH_PID SECONDS SPIN, under the hostile exe name. */
static int run(char **argv)
{
	pid_t watch = (pid_t)atoi(argv[3]);
	char exe[PATH_MAX];
	pthread_t th;

	/* Nothing of ours outlives us: not the copy, not its directory. */
	snprintf(exe, sizeof(exe), "%s/%s", argv[2], HOSTILE_NAME);
	unlink(exe);
	rmdir(argv[2]);
	prctl(PR_SET_NAME, HOSTILE_NAME);
	alarm((unsigned)atoi(argv[4]));
	pthread_create(&th, NULL, thread_main, NULL);
	if (watch > 0) {
		int fd = (int)syscall(SYS_pidfd_open, watch, 0);
		struct pollfd p = { .fd = fd, .events = POLLIN };

		if (fd >= 0)
			while (poll(&p, 1, -1) < 0 && errno == EINTR)
				;
		return 0;
	}
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (atoi(argv[5]))
		for (;;)
			spin++;
	for (;;)
		pause();
}

/* Copies /proc/self/exe to DIR/HOSTILE_NAME and execs it in --run mode. */
static void become(pid_t watch, const char *seconds, int spinning)
{
	char dir[] = "/tmp/muqss-hostile.XXXXXX", exe[PATH_MAX], w[16], s[4];
	struct stat st;
	int in, out;

	if (!mkdtemp(dir))
		_exit(1);
	snprintf(exe, sizeof(exe), "%s/%s", dir, HOSTILE_NAME);
	in = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	out = open(exe, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0700);
	if (in < 0 || out < 0 || fstat(in, &st) < 0 ||
	    sendfile(out, in, NULL, (size_t)st.st_size) != st.st_size || close(out) < 0)
		_exit(1);
	snprintf(w, sizeof(w), "%d", (int)watch);
	snprintf(s, sizeof(s), "%d", spinning);
	execl(exe, HOSTILE_NAME, "--run", dir, w, seconds, s, (char *)NULL);
	_exit(1);
}

int main(int argc, char **argv)
{
	pid_t self = getpid(), pid;

	if (argc >= 6 && strcmp(argv[1], "--run") == 0)
		return run(argv);
	if (argc >= 3 && strcmp(argv[1], "--be") == 0) {
		become(0, argv[2], argc > 3 && strcmp(argv[3], "spin") == 0);
		return 1;
	}
	if (argc < 3 || strcmp(argv[1], "--") != 0) {
		fprintf(stderr, "usage: hostile-name -- CMD ARGS... | hostile-name --be SECONDS [spin]\n");
		return 2;
	}
	/* Twice forked: its parent is gone before CMD starts, so it is no
	 * child of CMD's, and holds none of CMD's output pipes open. */
	pid = fork();
	if (pid == 0) {
		if (fork() == 0) {
			int null = open("/dev/null", O_RDWR | O_CLOEXEC);

			setsid();
			dup2(null, 0);
			dup2(null, 1);
			dup2(null, 2);
			/* A day at most, should the watch fail. */
			become(self, "86400", 0);
		}
		_exit(0);
	}
	if (pid > 0)
		waitpid(pid, NULL, 0);
	execvp(argv[2], argv + 2);
	fprintf(stderr, "hostile-name: %s: %s\n", argv[2], strerror(errno));
	return 127;
}
