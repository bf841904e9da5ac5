/*
 * late_fork.c - does a child forked while its parent was pinned join the
 * parent's children list only after the parent is unpinned, so that a walk
 * of /proc/PID/task/PID/children right after the unpin misses it?
 *
 * A parent with 256 MB of touched memory (a fork then takes milliseconds)
 * forks a child every 2 ms, each living 1 s. The main program pins it to
 * CPU 0, waits 0-20 ms, unpins it, widens every child it then finds on CPU
 * 0 alone (the first walk), and walks again 50 ms later: a child found
 * pinned only then had copied the pin before the unpin and joined late.
 * Root, 2 CPUs, about 300 MB of memory; the parent has an alarm.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MEMORY (256UL << 20)
#define MAX_CHILDREN 2048

static int children_of(pid_t parent, pid_t *out)
{
	char path[64], buf[16384], *p, *end;
	size_t len;
	int n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)parent, (int)parent);
	f = fopen(path, "re");
	if (!f)
		return 0;
	len = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[len] = '\0';
	for (p = buf; n < MAX_CHILDREN; p = end) {
		long v = strtol(p, &end, 10);

		if (end == p)
			break;
		out[n++] = (pid_t)v;
	}
	return n;
}

/* Widens the children still on CPU 0 alone; returns how many. */
static long widen_pinned(pid_t parent, const cpu_set_t *pin, const cpu_set_t *all)
{
	static pid_t kids[MAX_CHILDREN];
	int n = children_of(parent, kids);
	long found = 0;

	for (int i = 0; i < n; i++) {
		cpu_set_t cur;

		if (sched_getaffinity(kids[i], sizeof(cur), &cur) == 0 && CPU_EQUAL(&cur, pin) &&
		    sched_setaffinity(kids[i], sizeof(*all), all) == 0)
			found++;
	}
	return found;
}

static void forker(int secs)
{
	char *m;

	alarm(secs + 3);
	m = mmap(NULL, MEMORY, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		_exit(1);
	memset(m, 1, MEMORY);
	signal(SIGCHLD, SIG_IGN);
	for (;;) {
		if (fork() == 0) {
			sleep(1);
			_exit(0);
		}
		usleep(2000);
	}
}

int main(int argc, char **argv)
{
	int secs = argc > 1 ? atoi(argv[1]) : 10;
	long rounds = 0, first = 0, late = 0;
	cpu_set_t pin, all;
	time_t end;
	pid_t p;

	CPU_ZERO(&pin);
	CPU_SET(0, &pin);
	CPU_ZERO(&all);
	CPU_SET(0, &all);
	CPU_SET(1, &all);
	p = fork();
	if (p < 0) {
		perror("late_fork");
		return 1;
	}
	if (p == 0)
		forker(secs);
	sleep(1);
	end = time(NULL) + secs;
	while (time(NULL) < end) {
		sched_setaffinity(p, sizeof(pin), &pin);
		usleep((useconds_t)(rand() % 20000));
		sched_setaffinity(p, sizeof(all), &all);
		first += widen_pinned(p, &pin, &all);
		usleep(50000);
		late += widen_pinned(p, &pin, &all);
		rounds++;
	}
	kill(p, SIGKILL);
	waitpid(p, NULL, 0);
	printf("%ld unpins: %ld pinned children found by a walk right after, "
	       "%ld more only by a walk 50 ms later\n", rounds, first, late);
	return 0;
}
