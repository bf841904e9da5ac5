/* The exec storm's target: its name is what the storm's rule matches.
 *   storm-target FILE NICE
 * Appends "pid nice_at_main ms_until_nice ppid_at_main" to FILE (one write, O_APPEND),
 * ms_until_nice -1 when NICE did not come within 10 s. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define WAIT_MS 10000
/* 2,000 waiters polling each millisecond would load the machine themselves. */
#define POLL_MS 10

static int nice_now(void)
{
	errno = 0;
	return getpriority(PRIO_PROCESS, 0);
}

int main(int argc, char **argv)
{
	struct timespec ts = { 0, POLL_MS * 1000000L };
	int want, at_main, waited = -1, fd;
	pid_t ppid = getppid();
	char line[64];

	if (argc != 3)
		return 2;
	want = atoi(argv[2]);
	at_main = nice_now();
	for (int ms = 0; ms <= WAIT_MS; ms += POLL_MS) {
		if (nice_now() == want) {
			waited = ms;
			break;
		}
		nanosleep(&ts, NULL);
	}
	fd = open(argv[1], O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd < 0)
		return 1;
	snprintf(line, sizeof(line), "%d %d %d %d\n", (int)getpid(), at_main, waited,
		 (int)ppid);
	if (write(fd, line, strlen(line)) < 0)
		return 1;
	close(fd);
	return 0;
}
