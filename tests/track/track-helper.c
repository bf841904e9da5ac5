/* Workloads for the tracking tests.
 *   track-helper threads N MS       N threads in all (main included), exit after MS
 *   track-helper storm N            fork+exec /bin/true N times, one at a time
 *   track-helper execstorm N RATE PROG ARGS...
 *                                   fork+exec PROG N times at RATE a second, not
 *                                   waiting for each; every other one through an
 *                                   intermediate child that forks it and exits;
 *                                   writes the count started to $MUQSS_STORM_COUNT
 *   track-helper rename NAME MS     prctl(PR_SET_NAME) after 300 ms, exit after MS
 *   track-helper setuid UID MS      setresuid(UID) after 300 ms, exit after MS */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static void *sleeper(void *arg)
{
	for (;;)
		pause();
	return arg;
}

static int threads(int n, long ms)
{
	for (int i = 1; i < n; i++) {
		pthread_t th;

		if (pthread_create(&th, NULL, sleeper, NULL) != 0)
			return 1;
	}
	sleep_ms(ms);
	return 0;
}

static int storm(long n)
{
	for (long i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid < 0) {
			sleep_ms(1);
			continue;
		}
		if (pid == 0) {
			execl("/bin/true", "true", (char *)NULL);
			_exit(127);
		}
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	return 0;
}

/* Every other program is started by a child that exits right after its
 * fork: its parent may be gone before anyone reads the fork event. */
static int exec_storm(long n, long rate, char **argv)
{
	struct timespec start, now;
	long started = 0;

	signal(SIGCHLD, SIG_IGN); /* the kernel reaps */
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (long i = 0; i < n; i++) {
		long due_ms = i * 1000 / rate, at_ms;
		pid_t pid;

		clock_gettime(CLOCK_MONOTONIC, &now);
		at_ms = (now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000;
		if (due_ms > at_ms)
			sleep_ms(due_ms - at_ms);
		pid = fork();
		if (pid < 0) {
			sleep_ms(1);
			continue;
		}
		if (pid > 0) {
			started++;
			continue;
		}
		if (i % 2 && fork() != 0)
			_exit(0);
		execv(argv[0], argv);
		_exit(127);
	}
	/* How many were started, for a caller that checks each one. */
	if (getenv("MUQSS_STORM_COUNT")) {
		FILE *f = fopen(getenv("MUQSS_STORM_COUNT"), "w");

		if (f) {
			fprintf(f, "%ld\n", started);
			fclose(f);
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 5 && strcmp(argv[1], "execstorm") == 0)
		return exec_storm(atol(argv[2]), atol(argv[3]), argv + 4);
	if (argc == 4 && strcmp(argv[1], "threads") == 0)
		return threads(atoi(argv[2]), atol(argv[3]));
	if (argc == 3 && strcmp(argv[1], "storm") == 0)
		return storm(atol(argv[2]));
	if (argc == 4 && strcmp(argv[1], "rename") == 0) {
		sleep_ms(300);
		prctl(PR_SET_NAME, argv[2]);
		sleep_ms(atol(argv[3]));
		return 0;
	}
	if (argc == 4 && strcmp(argv[1], "setuid") == 0) {
		uid_t uid = (uid_t)atol(argv[2]);

		sleep_ms(300);
		if (setresuid(uid, uid, uid) < 0)
			return 1;
		sleep_ms(atol(argv[3]));
		return 0;
	}
	fprintf(stderr, "usage: see the comment at the top of track-helper.c\n");
	return 2;
}
