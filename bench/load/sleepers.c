/* Sleeping threads for bench/run's task-count runs: N threads in all
 * (main included) that never wake, for MS milliseconds. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static void *sleep_forever(void *arg)
{
	for (;;)
		pause();
	return arg;
}

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	int n = atoi(argv[1]);
	long ms = atol(argv[2]);
	pthread_t th;

	for (int i = 1; i < n; i++)
		if (pthread_create(&th, NULL, sleep_forever, NULL) != 0)
			return 1;
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR)
		;
	return 0;
}
