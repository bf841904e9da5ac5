/* The deadman on a real child: a missed deadline drops our boost; once
 * tripped (or disarmed) the thread sleeps until the loop kicks it again,
 * not waking the CPUs the loop is no longer looking after; the next
 * missed deadline trips again; and it stops at once. */
#include <dirent.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "children.h"
#include "deadman.h"
#include "enforce.h"
#include "sched_attr.h"
#include "state_dir.h"

#define MS (1000ULL * 1000)

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* The deadman's tid: our one thread besides this one. */
static pid_t deadman_tid(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *de;
	pid_t found = 0;

	REQUIRE(d);
	while ((de = readdir(d))) {
		pid_t tid = (pid_t)atoi(de->d_name);

		if (tid > 0 && tid != gettid())
			found = tid;
	}
	closedir(d);
	REQUIRE(found > 0);
	return found;
}

/* How many times tid has woken from a sleep so far. */
static unsigned long wakeups(pid_t tid)
{
	char path[64], line[256];
	unsigned long n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/status", (int)tid);
	f = fopen(path, "re");
	REQUIRE(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "voluntary_ctxt_switches: %lu", &n) == 1)
			break;
	fclose(f);
	return n;
}

static const char *state_dir;

/* A missed deadline: our boost and pin of pid are dropped, once, and the
 * record tells when the pin ended (a child forked just before may carry
 * it, for a restore after a crash to find). */
static void miss_deadline(struct deadman *d, struct enforcer *e, pid_t pid, uint64_t trips)
{
	struct enforce_target t = child_target(pid);
	struct deadman_trip trip;
	struct sched_attr_v1 a;
	struct state_record rec;
	cpu_set_t one, all;
	char name[16];
	int fd;

	CPU_ZERO(&one);
	CPU_SET(0, &one);
	REQUIRE(sched_getaffinity(pid, sizeof(all), &all) == 0);
	CHECK(enforce_boost(e, &t, ENFORCE_BOOST_PRIO_MIN) == 0);
	CHECK(enforce_pin(e, &t, &one) == 0);
	CHECK(sched_attr_get(pid, &a) == 0 && a.sched_policy == SCHED_FIFO);
	deadman_kick(d, mono_ns() + 20 * MS, "in a test");
	usleep(80 * 1000);
	CHECK(deadman_trips(d) == trips);
	CHECK(sched_attr_get(pid, &a) == 0 && a.sched_policy == SCHED_OTHER);
	REQUIRE(deadman_take_trip(d, &trip));
	CHECK(trip.unboosted == 1 && !strcmp(trip.phase, "in a test"));
	CHECK(trip.unpinned == 1);
	CHECK(!deadman_take_trip(d, &trip));
	/* The loop is back: it puts its own view straight. */
	enforcer_drop_all_boosts(e);
	REQUIRE(state_dir_open(state_dir, false, &fd) == 0);
	snprintf(name, sizeof(name), "%d", (int)pid);
	CHECK(state_read(fd, name, &rec) == 0);
	CHECK(rec.unpinned_ns > 0 && CPU_EQUAL(&rec.unpinned_from, &one));
	CHECK(!(rec.changed & STATE_CHANGED_AFFINITY));
	close(fd);
	CHECK(sched_getaffinity(pid, sizeof(one), &one) == 0 && CPU_EQUAL(&one, &all));
}

/* Over 200 ms, the thread may wake once or twice (a kick on its way),
 * not every few ms. */
static void check_asleep(pid_t tid, const char *what)
{
	unsigned long before = wakeups(tid), woke;

	usleep(200 * 1000);
	woke = wakeups(tid) - before;
	printf("%s: the deadman woke %lu times in 200 ms\n", what, woke);
	CHECK(woke <= 2);
}

int main(void)
{
	struct enforcer *e;
	struct deadman *d;
	uint64_t t0;
	pid_t pid, tid;

	if (geteuid() != 0) {
		fprintf(stderr, "skip: boosting other tasks needs root\n");
		return 77;
	}
	test_go_realtime(ENFORCE_DAEMON_PRIO);
	state_dir = test_state_dir("deadman");
	REQUIRE(enforcer_new(&e, state_dir) == 0);
	REQUIRE(deadman_start(&d, ENFORCE_DAEMON_PRIO + 1) == 0);
	enforcer_set_deadman(e, d);
	tid = deadman_tid();
	pid = child_spawn(false, 10);

	miss_deadline(d, e, pid, 1);
	check_asleep(tid, "tripped");
	/* Kicked again, it keeps time again. */
	miss_deadline(d, e, pid, 2);
	deadman_kick(d, 0, NULL);
	check_asleep(tid, "disarmed");
	miss_deadline(d, e, pid, 3);

	t0 = mono_ns();
	enforcer_set_deadman(e, NULL);
	deadman_stop(d);
	CHECK(mono_ns() - t0 < 100 * MS);
	CHECK(enforcer_restore_all(e) == 0);
	enforcer_free(e);
	child_kill(pid);
	return CHECK_EXIT();
}
