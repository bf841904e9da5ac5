/*
 * fork_copy.c - can a child copy a SCHED_FIFO boost without its
 * reset-on-fork flag, when its parent is unboosted while it forks?
 *
 * A forker forks and reaps children in a loop; each child reports the
 * policy it began with. Meanwhile the main thread boosts the forker
 * (SCHED_FIFO 6 with SCHED_FLAG_RESET_ON_FORK, as muqssd does) and
 * unboosts it (SCHED_OTHER, no flag), over and over. With -2 the unboost
 * takes two steps, as muqssd's does since: SCHED_OTHER with the flag
 * still set, then the flag cleared.
 *
 * Every child that began realtime is a copy the kernel did not reset.
 * Root, 2 CPUs; the forker gets an alarm, the run ends within -d seconds.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define FLAG_RESET_ON_FORK 0x01

/* struct sched_attr, version 0: glibc 2.36 has no wrapper. */
struct attr {
	uint32_t size, policy;
	uint64_t flags;
	int32_t nice;
	uint32_t prio;
	uint64_t runtime, deadline, period;
};

static int set(pid_t pid, int policy, int prio, int flags)
{
	struct attr a = { .size = sizeof(a), .policy = policy, .prio = prio, .flags = flags };

	return (int)syscall(SYS_sched_setattr, pid, &a, 0);
}

/* One byte per fork: 'f' for a child that began SCHED_OTHER, else its
 * policy, flag and priority packed. */
static void forker(int out, int secs)
{
	alarm(secs + 2);
	for (;;) {
		pid_t c = fork();
		unsigned char b = 'f';

		if (c == 0) {
			int policy = sched_getscheduler(0);
			struct sched_param sp = { 0 };

			if (policy != SCHED_OTHER) {
				sched_getparam(0, &sp);
				b = (policy & 0x7) | (policy & SCHED_RESET_ON_FORK ? 0x8 : 0) |
				    (sp.sched_priority << 4);
			}
			_exit(write(out, &b, 1) == 1 ? 0 : 1);
		}
		if (c > 0)
			waitpid(c, NULL, 0);
	}
}

int main(int argc, char **argv)
{
	int secs = 10, two_step = 0, p[2], opt;
	long flips = 0, forks = 0, rt = 0, no_flag = 0;
	unsigned char buf[4096];
	ssize_t n;
	time_t end;
	pid_t pid;

	while ((opt = getopt(argc, argv, "d:2")) != -1) {
		if (opt == 'd')
			secs = atoi(optarg);
		else if (opt == '2')
			two_step = 1;
		else {
			fprintf(stderr, "usage: %s [-d seconds] [-2]\n", argv[0]);
			return 2;
		}
	}
	if (pipe(p) < 0 || (pid = fork()) < 0) {
		perror("fork_copy");
		return 1;
	}
	if (pid == 0) {
		close(p[0]);
		forker(p[1], secs);
	}
	close(p[1]);
	end = time(NULL) + secs;
	while (time(NULL) < end) {
		if (set(pid, SCHED_FIFO, 6, FLAG_RESET_ON_FORK) < 0) {
			perror("sched_setattr");
			break;
		}
		if (two_step)
			set(pid, SCHED_OTHER, 0, FLAG_RESET_ON_FORK);
		set(pid, SCHED_OTHER, 0, 0);
		flips++;
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	while ((n = read(p[0], buf, sizeof(buf))) > 0)
		for (ssize_t i = 0; i < n; i++) {
			forks++;
			if (buf[i] == 'f')
				continue;
			rt++;
			no_flag += !(buf[i] & 0x8);
		}
	printf("unboost in %s: %ld flips, %ld forks, %ld began realtime (%ld without the flag)\n",
	       two_step ? "two steps" : "one step", flips, forks, rt, no_flag);
	return 0;
}
