#include "children.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "sched_attr.h"

#define MAX_CHILDREN 64

static pid_t children[MAX_CHILDREN];

enum child_kind { CHILD_SLEEP, CHILD_SPIN, CHILD_FORKER, CHILD_FORK_LOOP };

/* What a fork loop counts, in memory shared with the test. */
static struct child_fork_count *fork_count;

/* Each SIGUSR1 forks a grandchild that sleeps, and dies with it. */
static void forker_main(unsigned secs)
{
	sigset_t usr1;
	int sig;

	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	for (;;) {
		if (sigwait(&usr1, &sig) != 0)
			continue;
		if (fork() == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			alarm(secs);
			for (;;)
				pause();
		}
	}
}

/* Forks and reaps children in a loop, each telling whether it began with
 * a realtime policy. */
static void fork_loop_main(void)
{
	for (;;) {
		pid_t pid = fork();
		int status;

		if (pid == 0)
			_exit(sched_getscheduler(0) == SCHED_OTHER ? 0 : 1);
		if (pid < 0 || waitpid(pid, &status, 0) != pid)
			continue;
		__atomic_add_fetch(&fork_count->forks, 1, __ATOMIC_RELAXED);
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			__atomic_add_fetch(&fork_count->born_rt, 1, __ATOMIC_RELAXED);
	}
}

static pid_t spawn(enum child_kind kind, unsigned secs)
{
	int closed[2];
	sigset_t usr1, old;
	pid_t pid;
	size_t i;
	char c;

	for (i = 0; i < MAX_CHILDREN && children[i]; i++)
		;
	REQUIRE(i < MAX_CHILDREN);
	/* The pipe's end is closed with the rest: once the read sees EOF the
	 * child holds nothing of ours, even if it is stopped right after. */
	REQUIRE(pipe2(closed, O_CLOEXEC) == 0);
	/* Blocked before the fork: a SIGUSR1 sent at once to a forker is
	 * not fatal (the others never get one). */
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	REQUIRE(sigprocmask(SIG_BLOCK, &usr1, &old) == 0);
	pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		/* Not the state dir's lock, nor anything else of the test's. */
		close_range(3, ~0u, 0);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		alarm(secs);
		if (kind == CHILD_FORKER)
			forker_main(secs);
		if (kind == CHILD_FORK_LOOP)
			fork_loop_main();
		if (kind == CHILD_SPIN)
			for (;;)
				;
		for (;;)
			pause();
	}
	REQUIRE(sigprocmask(SIG_SETMASK, &old, NULL) == 0);
	close(closed[1]);
	while (read(closed[0], &c, 1) < 0 && errno == EINTR)
		;
	close(closed[0]);
	children[i] = pid;
	return pid;
}

pid_t child_spawn(bool spin, unsigned secs)
{
	return spawn(spin ? CHILD_SPIN : CHILD_SLEEP, secs);
}

pid_t child_spawn_forker(unsigned secs)
{
	return spawn(CHILD_FORKER, secs);
}

pid_t child_spawn_fork_loop(unsigned secs, const struct child_fork_count **ret)
{
	if (!fork_count) {
		fork_count = mmap(NULL, sizeof(*fork_count), PROT_READ | PROT_WRITE,
				  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		REQUIRE(fork_count != MAP_FAILED);
	}
	*fork_count = (struct child_fork_count){ 0 };
	*ret = fork_count;
	return spawn(CHILD_FORK_LOOP, secs);
}

/* The last of forker's children listed, or 0 for none. */
static pid_t last_grandchild(pid_t forker)
{
	char path[64], buf[256], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)forker, (int)forker);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	REQUIRE(fd >= 0);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	while (n > 0 && buf[n - 1] == ' ')
		n--;
	buf[n] = '\0';
	p = strrchr(buf, ' ');
	return (pid_t)atoi(p ? p + 1 : buf);
}

pid_t child_fork_grandchild(pid_t forker)
{
	pid_t before = last_grandchild(forker);

	REQUIRE(kill(forker, SIGUSR1) == 0);
	for (int tries = 0; tries < 1000; tries++) {
		pid_t last = last_grandchild(forker);

		if (last > 0 && last != before)
			return last;
		usleep(1000);
	}
	REQUIRE(!"the grandchild was never forked");
	return -1;
}

static char state_dir[96];

static void state_dir_cleanup(void)
{
	char cmd[160];

	children_kill_all();
	snprintf(cmd, sizeof(cmd), "rm -rf -- '%s'", state_dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cleanup failed\n");
}

const char *test_state_dir(const char *name)
{
	snprintf(state_dir, sizeof(state_dir), "/tmp/muqss-test-%s-XXXXXX", name);
	REQUIRE(mkdtemp(state_dir));
	atexit(state_dir_cleanup);
	return state_dir;
}

void child_kill(pid_t pid)
{
	for (size_t i = 0; i < MAX_CHILDREN; i++)
		if (children[i] == pid) {
			kill(pid, SIGCONT);
			kill(pid, SIGKILL);
			(void)waitpid(pid, NULL, 0);
			children[i] = 0;
		}
}

void children_kill_all(void)
{
	for (size_t i = 0; i < MAX_CHILDREN; i++)
		if (children[i])
			child_kill(children[i]);
}

struct enforce_target child_target(pid_t pid)
{
	struct enforce_target t;

	REQUIRE(enforce_target_from_tid(pid, &t) == 0);
	REQUIRE(t.tgid == pid);
	return t;
}

static char state_of(pid_t pid)
{
	char path[64], buf[512], *p;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return '?';
	p = fgets(buf, sizeof(buf), f);
	fclose(f);
	if (!p || !(p = strrchr(buf, ')')))
		return '?';
	return p[2];
}

char child_wait_state(pid_t pid, char want, bool equal)
{
	char s = '?';

	for (int i = 0; i < 1000; i++) {
		s = state_of(pid);
		if ((s == want) == equal)
			break;
		nanosleep(&(struct timespec){ .tv_nsec = 1000000 }, NULL);
	}
	return s;
}

void test_go_realtime(int prio)
{
	struct sched_attr_v1 a = {
		.sched_policy = SCHED_FIFO,
		.sched_priority = (uint32_t)prio,
		.sched_flags = SCHED_FLAG_RESET_ON_FORK,
	};

	REQUIRE(sched_attr_set(0, &a) == 0);
}
