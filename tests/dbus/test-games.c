/* The gamemode bridge's game table without muqssd: pidfds to pids, and
 * gamemoded's -1 when a register cannot be done. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "games.h"

static void test_pidfd_pid(void)
{
	int fd = (int)syscall(SYS_pidfd_open, getpid(), 0);
	pid_t child;

	CHECK(fd >= 0);
	CHECK(games_pidfd_pid(fd) == getpid());
	close(fd);
	child = fork();
	REQUIRE(child >= 0);
	if (child == 0)
		_exit(0);
	fd = (int)syscall(SYS_pidfd_open, child, 0);
	CHECK(fd >= 0);
	CHECK(waitpid(child, NULL, 0) == child);
	CHECK(games_pidfd_pid(fd) == -ESRCH); /* exited: fdinfo says Pid: -1 */
	close(fd);
	CHECK(games_pidfd_pid(9999) < 0);
}

static void test_register_without_muqssd(void)
{
	struct games_options o = { .mode = GAMES_MODE_ISO, .socket = "/nonexistent/muqssd" };
	struct games *g;
	sd_event *e;

	REQUIRE(sd_event_new(&e) >= 0);
	REQUIRE(games_new(&g, e, &o, NULL, NULL) == 0);
	CHECK(games_register(g, getpid(), -1) == -1);
	CHECK(games_register(g, 0, -1) == -1);
	CHECK(games_count(g) == 0);
	CHECK(games_query(g, getpid()) == 0);
	CHECK(games_unregister(g, getpid()) == -1);
	games_free(g);
	sd_event_unref(e);
}

int main(void)
{
	test_pidfd_pid();
	test_register_without_muqssd();
	return CHECK_EXIT();
}
