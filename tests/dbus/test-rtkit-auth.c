/* rtkit's authorization without a bus: whose thread, which bounds, and a
 * thread that is not the one authorized. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "rtkit.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pid_t worker_tid;

static void *worker(void *arg)
{
	worker_tid = gettid();
	pthread_mutex_lock(&lock); /* held by main until the test is done */
	pthread_mutex_unlock(&lock);
	return NULL;
}

static void done(struct rtkit_target *t)
{
	if (t->pidfd >= 0)
		close(t->pidfd);
	t->pidfd = -1;
}

/* The caller's own process and its threads; thread 0 is the main one. */
static void test_own_threads(void)
{
	struct rtkit_target t;
	char err[256];
	pthread_t th;

	CHECK(rtkit_authorize(4242, getpid(), UINT64_MAX, 0, &t, err, sizeof(err)) == -EPERM ||
	      getuid() == 4242);
	done(&t);
	CHECK(rtkit_authorize(getuid(), getpid(), UINT64_MAX, 0, &t, err, sizeof(err)) == 0);
	CHECK(t.pid == getpid() && t.tid == getpid() && t.pidfd >= 0);
	done(&t);

	pthread_mutex_lock(&lock);
	REQUIRE(pthread_create(&th, NULL, worker, NULL) == 0);
	while (!__atomic_load_n(&worker_tid, __ATOMIC_SEQ_CST))
		usleep(1000);
	CHECK(rtkit_authorize(getuid(), 1, getpid(), (uint64_t)worker_tid, &t, err, sizeof(err)) == 0);
	CHECK(t.pid == getpid() && t.tid == worker_tid);
	CHECK(rtkit_target_recheck(&t, err, sizeof(err)) == 0);
	/* A tid that is no thread of the process (here: its parent's). */
	t.tid = getppid();
	CHECK(rtkit_target_recheck(&t, err, sizeof(err)) == -ESRCH);
	t.tid = worker_tid;
	pthread_mutex_unlock(&lock);
	CHECK(pthread_join(th, NULL) == 0);
	/* The thread is gone. */
	CHECK(rtkit_target_recheck(&t, err, sizeof(err)) == -ESRCH);
	done(&t);
}

/* A process authorized and then gone: its pidfd says so, whoever holds
 * its pid next. */
static void test_process_gone(void)
{
	struct rtkit_target t;
	char err[256];
	pid_t child = fork();

	REQUIRE(child >= 0);
	if (child == 0) {
		pause();
		_exit(0);
	}
	CHECK(rtkit_authorize(getuid(), getpid(), (uint64_t)child, 0, &t, err, sizeof(err)) == 0);
	CHECK(rtkit_target_recheck(&t, err, sizeof(err)) == 0);
	REQUIRE(kill(child, SIGKILL) == 0);
	CHECK(waitpid(child, NULL, 0) == child);
	CHECK(rtkit_target_recheck(&t, err, sizeof(err)) == -ESRCH);
	done(&t);
}

/* Another user's thread is refused, with the owner named; root may. */
static void test_other_user(void)
{
	struct rtkit_target t;
	char err[256];
	uid_t other = getuid() == 4242 ? 4243 : 4242;

	CHECK(rtkit_authorize(other, getpid(), getpid(), 0, &t, err, sizeof(err)) == -EPERM);
	done(&t);
	CHECK(strstr(err, "belongs to uid"));
	CHECK(strcmp(rtkit_error_name(-EPERM), "org.freedesktop.DBus.Error.AccessDenied") == 0);
	/* PID 1 belongs to root: a user may not, root may. */
	CHECK(rtkit_authorize(other, getpid(), 1, 0, &t, err, sizeof(err)) == -EPERM);
	done(&t);
	CHECK(rtkit_authorize(0, getpid(), 1, 0, &t, err, sizeof(err)) == 0);
	done(&t);
}

/* A thread authorized as the caller's and then another user's (a root
 * process's thread back from a uid it dropped to) is refused at the
 * recheck that comes before every change. Needs root to change uids. */
static void test_owner_changed(void)
{
	struct rtkit_target t;
	char err[256], c;
	int to_child[2], to_parent[2];
	pid_t child;

	if (geteuid() != 0) {
		printf("owner change: needs root, not checked\n");
		return;
	}
	REQUIRE(pipe(to_child) == 0 && pipe(to_parent) == 0);
	child = fork();
	REQUIRE(child >= 0);
	if (child == 0) {
		/* Saved uid 0 kept, to come back. Ends when the test closes its
		 * end of the pipe, or exits on a failed REQUIRE. */
		close(to_child[1]);
		if (setresuid(65534, 65534, 0) < 0 || write(to_parent[1], "d", 1) != 1 ||
		    read(to_child[0], &c, 1) != 1 || setresuid(0, 0, 0) < 0 ||
		    write(to_parent[1], "r", 1) != 1)
			_exit(1);
		while (read(to_child[0], &c, 1) > 0)
			;
		_exit(0);
	}
	close(to_child[0]);
	REQUIRE(read(to_parent[0], &c, 1) == 1 && c == 'd');
	CHECK(rtkit_authorize(65534, getpid(), (uint64_t)child, 0, &t, err, sizeof(err)) == 0);
	CHECK(rtkit_target_recheck(&t, err, sizeof(err)) == 0);
	REQUIRE(write(to_child[1], "g", 1) == 1);
	REQUIRE(read(to_parent[0], &c, 1) == 1 && c == 'r');
	CHECK(rtkit_target_recheck(&t, err, sizeof(err)) == -EPERM);
	/* The refusal says why: the owner changed, the thread is there. */
	CHECK(strstr(err, "belongs to uid 0") && !strstr(err, "gone"));
	done(&t);
	/* Root's request is root's whoever owns the thread. */
	CHECK(rtkit_authorize(0, getpid(), (uint64_t)child, 0, &t, err, sizeof(err)) == 0);
	CHECK(rtkit_target_recheck(&t, err, sizeof(err)) == 0);
	done(&t);
	close(to_child[1]);
	CHECK(waitpid(child, NULL, 0) == child);
	close(to_parent[0]);
	close(to_parent[1]);
}

/* A thread must be in the process named; nonsense pids are no process. */
static void test_wrong_process(void)
{
	struct rtkit_target t;
	char err[256];

	CHECK(rtkit_authorize(getuid(), getpid(), getpid(), 1, &t, err, sizeof(err)) == -ESRCH);
	done(&t);
	CHECK(rtkit_authorize(getuid(), getpid(), 0, 0, &t, err, sizeof(err)) == -ESRCH);
	CHECK(t.pidfd == -1);
	CHECK(rtkit_authorize(getuid(), getpid(), UINT64_C(1) << 40, 0, &t, err, sizeof(err)) ==
	      -ESRCH);
	CHECK(rtkit_authorize(getuid(), getpid(), getpid(), UINT64_C(1) << 40, &t, err,
			      sizeof(err)) == -ESRCH);
	done(&t);
	CHECK(strcmp(rtkit_error_name(-ESRCH), "org.freedesktop.DBus.Error.Failed") == 0);
}

/* The bounds rtkit advertises in MaxRealtimePriority and MinNiceLevel. */
static void test_bounds(void)
{
	char err[128];

	CHECK(rtkit_check_priority(0, err, sizeof(err)) == -EPERM);
	CHECK(rtkit_check_priority(1, err, sizeof(err)) == 0);
	CHECK(rtkit_check_priority(RTKIT_MAX_REALTIME_PRIORITY, err, sizeof(err)) == 0);
	CHECK(rtkit_check_priority(RTKIT_MAX_REALTIME_PRIORITY + 1, err, sizeof(err)) == -EPERM);
	CHECK(strstr(err, "out of range 1..20"));
	CHECK(rtkit_check_priority(UINT32_MAX, err, sizeof(err)) == -EPERM);
	CHECK(rtkit_check_nice(RTKIT_MIN_NICE_LEVEL, err, sizeof(err)) == 0);
	CHECK(rtkit_check_nice(RTKIT_MIN_NICE_LEVEL - 1, err, sizeof(err)) == -EPERM);
	CHECK(rtkit_check_nice(19, err, sizeof(err)) == 0);
	CHECK(rtkit_check_nice(20, err, sizeof(err)) == -EPERM);
	CHECK(strcmp(rtkit_error_name(-ENOMEM), "org.freedesktop.DBus.Error.NoMemory") == 0);
	CHECK(strcmp(rtkit_error_name(-EBUSY), "org.freedesktop.DBus.Error.AccessDenied") == 0);
}

int main(void)
{
	test_own_threads();
	test_process_gone();
	test_other_user();
	test_owner_changed();
	test_wrong_process();
	test_bounds();
	return CHECK_EXIT();
}
