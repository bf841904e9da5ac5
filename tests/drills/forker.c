/* Makes proc connector events as fast as the machine allows: N children
 * that exit at once, every EXEC_EVERY-th of them through an exec.
 *	forker N */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define EXEC_EVERY 16

int main(int argc, char **argv)
{
	long n = argc == 2 ? atol(argv[1]) : 0;

	if (n <= 0) {
		fprintf(stderr, "usage: forker N\n");
		return 2;
	}
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
