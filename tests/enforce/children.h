/* Children for the enforcer tests: started here, killed here, bounded. */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include "enforce.h"

/* A child that spins (spin) or sleeps, dying on its own after secs and
 * with its parent. */
pid_t child_spawn(bool spin, unsigned secs);
/* A child that sleeps and forks a grandchild at each
 * child_fork_grandchild(); both die on their own after secs, and with
 * their parent. */
pid_t child_spawn_forker(unsigned secs);
/* A child that forks and reaps children in a loop, counting in *ret
 * those that began with a realtime policy. One at a time. */
struct child_fork_count {
	unsigned long forks;
	unsigned long born_rt;
};
pid_t child_spawn_fork_loop(unsigned secs, const struct child_fork_count **ret);
/* Makes forker fork a grandchild; returns the new grandchild's pid. */
pid_t child_fork_grandchild(pid_t forker);
/* SIGCONT + SIGKILL + reap, for one child or all that are left. */
void child_kill(pid_t pid);
void children_kill_all(void);
/* A fresh state directory under /tmp named for the test; at exit every
 * child left is killed and the directory removed. */
const char *test_state_dir(const char *name);
struct enforce_target child_target(pid_t pid);
/* Current state letter from /proc/<pid>/stat, waiting up to 1 s for want. */
char child_wait_state(pid_t pid, char want, bool equal);
/* Runs the caller SCHED_FIFO at prio with SCHED_RESET_ON_FORK, so no
 * boosted child can starve the test and children start normal. */
void test_go_realtime(int prio);
