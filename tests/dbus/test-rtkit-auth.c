/* rtkit's authorization without a bus: whose thread, which bounds, and a
 * thread that is not the one authorized. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rtkit.h"

#define check(cond)                                                                 \
	do {                                                                        \
		if (!(cond)) {                                                      \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__,      \
				__LINE__, #cond);                                   \
			exit(EXIT_FAILURE);                                         \
		}                                                                   \
	} while (0)

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pid_t worker_tid;

static void *worker(void *arg)
{
	worker_tid = gettid();
	pthread_mutex_lock(&lock); /* held by main until the test is done */
	pthread_mutex_unlock(&lock);
	return NULL;
}

/* The caller's own process and its threads; thread 0 is the main one. */
static void test_own_threads(void)
{
	struct rtkit_target t;
	char err[256];
	pthread_t th;

	check(rtkit_authorize(4242, getpid(), UINT64_MAX, 0, &t, err, sizeof(err)) == -EPERM ||
	      getuid() == 4242);
	check(rtkit_authorize(getuid(), getpid(), UINT64_MAX, 0, &t, err, sizeof(err)) == 0);
	check(t.pid == getpid() && t.tid == getpid() && t.start_time > 0);

	pthread_mutex_lock(&lock);
	check(pthread_create(&th, NULL, worker, NULL) == 0);
	while (!__atomic_load_n(&worker_tid, __ATOMIC_SEQ_CST))
		usleep(1000);
	check(rtkit_authorize(getuid(), 1, getpid(), (uint64_t)worker_tid, &t, err, sizeof(err)) == 0);
	check(t.pid == getpid() && t.tid == worker_tid);
	check(rtkit_target_recheck(&t, -1) == 0);
	/* Another start time is another thread that reused the tid. */
	t.start_time++;
	check(rtkit_target_recheck(&t, -1) == -ESRCH);
	pthread_mutex_unlock(&lock);
	check(pthread_join(th, NULL) == 0);
}

/* Another user's thread is refused, with the owner named; root may. */
static void test_other_user(void)
{
	struct rtkit_target t;
	char err[256];
	uid_t other = getuid() == 4242 ? 4243 : 4242;

	check(rtkit_authorize(other, getpid(), getpid(), 0, &t, err, sizeof(err)) == -EPERM);
	check(strstr(err, "belongs to uid"));
	check(strcmp(rtkit_error_name(-EPERM), "org.freedesktop.DBus.Error.AccessDenied") == 0);
	/* PID 1 belongs to root: a user may not, root may. */
	check(rtkit_authorize(other, getpid(), 1, 0, &t, err, sizeof(err)) == -EPERM);
	check(rtkit_authorize(0, getpid(), 1, 0, &t, err, sizeof(err)) == 0);
}

/* A thread must be in the process named; nonsense pids are no process. */
static void test_wrong_process(void)
{
	struct rtkit_target t;
	char err[256];

	check(rtkit_authorize(getuid(), getpid(), getpid(), 1, &t, err, sizeof(err)) == -ESRCH);
	check(rtkit_authorize(getuid(), getpid(), 0, 0, &t, err, sizeof(err)) == -ESRCH);
	check(rtkit_authorize(getuid(), getpid(), UINT64_C(1) << 40, 0, &t, err, sizeof(err)) ==
	      -ESRCH);
	check(rtkit_authorize(getuid(), getpid(), getpid(), UINT64_C(1) << 40, &t, err,
			      sizeof(err)) == -ESRCH);
	check(strcmp(rtkit_error_name(-ESRCH), "org.freedesktop.DBus.Error.Failed") == 0);
}

/* The bounds rtkit advertises in MaxRealtimePriority and MinNiceLevel. */
static void test_bounds(void)
{
	char err[128];

	check(rtkit_check_priority(0, err, sizeof(err)) == -EPERM);
	check(rtkit_check_priority(1, err, sizeof(err)) == 0);
	check(rtkit_check_priority(RTKIT_MAX_REALTIME_PRIORITY, err, sizeof(err)) == 0);
	check(rtkit_check_priority(RTKIT_MAX_REALTIME_PRIORITY + 1, err, sizeof(err)) == -EPERM);
	check(strstr(err, "out of range 1..20"));
	check(rtkit_check_priority(UINT32_MAX, err, sizeof(err)) == -EPERM);
	check(rtkit_check_nice(RTKIT_MIN_NICE_LEVEL, err, sizeof(err)) == 0);
	check(rtkit_check_nice(RTKIT_MIN_NICE_LEVEL - 1, err, sizeof(err)) == -EPERM);
	check(rtkit_check_nice(19, err, sizeof(err)) == 0);
	check(rtkit_check_nice(20, err, sizeof(err)) == -EPERM);
	check(strcmp(rtkit_error_name(-ENOMEM), "org.freedesktop.DBus.Error.NoMemory") == 0);
	check(strcmp(rtkit_error_name(-EBUSY), "org.freedesktop.DBus.Error.AccessDenied") == 0);
}

int main(void)
{
	test_own_threads();
	test_other_user();
	test_wrong_process();
	test_bounds();
	printf("ok\n");
	return 0;
}
