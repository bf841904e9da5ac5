/* Makes proc connector events as fast as the machine allows.
 *	forker fork N     N children that exit at once, every 16th through exec
 *	forker thread N   N threads started and joined one after the other
 * Threads are an order of magnitude cheaper, and each still costs a fork
 * and an exit event. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define EXEC_EVERY 16

static void *nothing(void *arg)
{
	return arg;
}

static int threads(long n)
{
	for (long i = 0; i < n; i++) {
		pthread_t th;

		if (pthread_create(&th, NULL, nothing, NULL) != 0) {
			usleep(1000);
			continue;
		}
		pthread_join(th, NULL);
	}
	return 0;
}

static int forks(long n)
{
	for (long i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid < 0) {
			usleep(1000);
			continue;
		}
		if (pid == 0) {
			if (i % EXEC_EVERY == 0)
				execl("/bin/true", "true", (char *)NULL);
			_exit(0);
		}
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	return 0;
}

int main(int argc, char **argv)
{
	long n = argc == 3 ? atol(argv[2]) : 0;

	if (n > 0 && strcmp(argv[1], "fork") == 0)
		return forks(n);
	if (n > 0 && strcmp(argv[1], "thread") == 0)
		return threads(n);
	fprintf(stderr, "usage: forker fork|thread N\n");
	return 2;
}
