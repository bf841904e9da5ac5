/* group_clock against real processes: a sleeping child's clock stands
 * still, a spinning one's moves by what it spent, a reaped one is gone. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "group_clock.h"

#define SPIN_NS 50000000ULL

static uint64_t clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* The child sleeps until SIGUSR1, spins until its own CPU clock has moved
 * SPIN_NS (however long a loaded machine makes that take), then sleeps
 * until killed. */
static volatile sig_atomic_t go;
static void on_usr1(int sig) { (void)sig; go = 1; }

static pid_t start_child(int ready_fd)
{
	pid_t pid = fork();

	REQUIRE(pid >= 0);
	if (pid)
		return pid;
	/* Gone with the test, even when a REQUIRE ends it early. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	signal(SIGUSR1, on_usr1);
	(void)!write(ready_fd, "r", 1);
	while (!go)
		pause();
	for (uint64_t end = clock_ns(CLOCK_PROCESS_CPUTIME_ID) + SPIN_NS;
	     clock_ns(CLOCK_PROCESS_CPUTIME_ID) < end;)
		;
	(void)!write(ready_fd, "d", 1);
	for (;;)
		pause();
}

int main(void)
{
	uint64_t a, b, c;
	int fds[2];
	char ch;
	pid_t pid;

	REQUIRE(pipe(fds) == 0);
	pid = start_child(fds[1]);
	REQUIRE(read(fds[0], &ch, 1) == 1 && ch == 'r');
	usleep(20000);

	CHECK(group_clock_cpu_ns(pid, &a) == 0);
	usleep(50000);
	CHECK(group_clock_cpu_ns(pid, &b) == 0);
	CHECK(a == b); /* asleep: not a nanosecond */

	kill(pid, SIGUSR1);
	REQUIRE(read(fds[0], &ch, 1) == 1 && ch == 'd');
	CHECK(group_clock_cpu_ns(pid, &c) == 0);
	/* The child's own clock moved SPIN_NS after b was read: the group
	 * clock, the same clock read from outside, saw all of it. */
	CHECK(c >= b + SPIN_NS);

	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	CHECK(group_clock_cpu_ns(pid, &c) == -ESRCH);

	CHECK(group_clock_cpu_ns(getpid(), &a) == 0 && a > 0);
	printf("spinning child +%.1f ms\n", (double)(c - b) / 1e6);
	return CHECK_EXIT();
}
