/* A root process whose threads have different real uids, as a daemon that
 * drops privilege in one thread has (setresuid(2) through the raw system
 * call changes only the calling thread; glibc's wrapper changes them all).
 *	mixed-uid worker UID   the main thread stays root, a second thread is UID's
 *	mixed-uid main UID     the main thread is UID's, a second thread stays root
 * Both threads then sleep until killed. */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static uid_t uid;

/* Keeps saved uid 0, as a thread that means to come back would. */
static void drop(void)
{
	if (syscall(SYS_setresuid, uid, uid, 0) < 0) {
		perror("mixed-uid: setresuid");
		exit(EXIT_FAILURE);
	}
}

static void *worker(void *arg)
{
	if (arg)
		drop();
	for (;;)
		pause();
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th;
	bool worker_drops;

	if (argc != 3 || (strcmp(argv[1], "worker") != 0 && strcmp(argv[1], "main") != 0)) {
		fprintf(stderr, "usage: mixed-uid worker|main UID\n");
		return EXIT_FAILURE;
	}
	worker_drops = strcmp(argv[1], "worker") == 0;
	uid = (uid_t)strtoul(argv[2], NULL, 10);
	if (pthread_create(&th, NULL, worker, worker_drops ? &uid : NULL) != 0) {
		fprintf(stderr, "mixed-uid: cannot start a thread\n");
		return EXIT_FAILURE;
	}
	if (!worker_drops)
		drop();
	for (;;)
		pause();
}
