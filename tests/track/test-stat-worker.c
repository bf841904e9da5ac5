/* The stat worker: a read that hangs (a pipe with no writer's data stands
 * in for /proc/<pid>/stat of a task mid-exec) never holds the submitting
 * thread, and other reads still come back while it hangs; a full queue
 * refuses at once; a real stat file parses; freeing closes queued fds; a
 * command line comes back with its stat, NULs kept. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "procfs.h"
#include "stat_worker.h"

#define MAX_RESULTS 512
#define SLACK_NS (500 * 1000000ULL)

static struct stat_result results[MAX_RESULTS];
static unsigned nresults;

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void on_done(const struct stat_result *res, void *userdata)
{
	(void)userdata;
	REQUIRE(nresults < MAX_RESULTS);
	results[nresults++] = *res;
}

static const struct stat_result *result_of(uint64_t cookie)
{
	for (unsigned i = 0; i < nresults; i++)
		if (results[i].cookie == cookie)
			return &results[i];
	return NULL;
}

/* Runs the loop until want results are in or timeout_ms passed. */
static void run_until(sd_event *e, unsigned want, unsigned timeout_ms)
{
	uint64_t end = mono_ns() + (uint64_t)timeout_ms * 1000000;

	while (nresults < want && mono_ns() < end)
		REQUIRE(sd_event_run(e, 10 * 1000) >= 0);
}

/* A pipe's read end; with text, written and the write end closed, so
 * the read returns it at once. Without, *wfd keeps the read hanging. */
static int pipe_with(const char *text, int *wfd)
{
	int p[2];

	REQUIRE(pipe2(p, O_CLOEXEC) == 0);
	if (text) {
		REQUIRE(write(p[1], text, strlen(text)) == (ssize_t)strlen(text));
		close(p[1]);
	} else
		*wfd = p[1];
	return p[0];
}

static const char STAT_LINE[] =
	"4242 (fake worker) S 1 4242 4242 0 -1 4194560 100 0 0 0 5 6 0 0 20 0 1 0 "
	"987654 1000000 100 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n";

static void test_hang_does_not_block(sd_event *e)
{
	const struct stat_result *r2, *r3;
	int hang_w, fd, fds[3];
	struct stat_worker *w;
	uint64_t t0, took;

	nresults = 0;
	REQUIRE(stat_worker_new(&w, e, 0, 2, 0, on_done, NULL) == 0);
	/* Cookie 1 hangs; 2 and 3 read at once. */
	fds[0] = pipe_with(NULL, &hang_w);
	fds[1] = pipe_with(STAT_LINE, NULL);
	fds[2] = pipe_with("garbage", NULL);
	CHECK(stat_worker_submit(w, fds[0], 4242, 1) == 0);
	/* A worker is in the hanging read by now. */
	usleep(20 * 1000);
	t0 = mono_ns();
	CHECK(stat_worker_submit(w, fds[1], 4242, 2) == 0);
	CHECK(stat_worker_submit(w, fds[2], 4243, 3) == 0);
	took = mono_ns() - t0;
	/* The hang never ends by itself: any bound shows the submits did
	 * not wait on it; a loose one keeps a busy machine from failing it. */
	CHECK(took < SLACK_NS);
	run_until(e, 2, 10000);
	CHECK(nresults == 2);
	CHECK(!result_of(1));
	r2 = result_of(2);
	r3 = result_of(3);
	REQUIRE(r2 && r3);
	CHECK(r2->r == 0 && r2->tid == 4242);
	CHECK(strcmp(r2->st.comm, "fake worker") == 0);
	CHECK(r2->st.start_time == 987654 && r2->st.state == 'S');
	CHECK(r3->r == -EINVAL && r3->tid == 4243);
	/* Still hanging: later reads keep flowing past it. */
	fd = pipe_with(STAT_LINE, NULL);
	CHECK(stat_worker_submit(w, fd, 7, 4) == 0);
	run_until(e, 3, 10000);
	CHECK(result_of(4) && result_of(4)->r == 0 && !result_of(1));
	/* The hung read ends (EOF reads as a task torn down). */
	close(hang_w);
	run_until(e, 4, 10000);
	CHECK(result_of(1) && result_of(1)->r == -ESRCH);
	stat_worker_free(w);
	fprintf(stderr, "hang: 2 submits behind it took %llu us; their reads flowed past it\n",
		(unsigned long long)(took / 1000));
}

static void test_full_queue(sd_event *e)
{
	int hang_w[2], keep[STAT_WORKER_JOBS], extra, before;
	struct stat_worker *w;
	uint64_t t0;

	nresults = 0;
	REQUIRE(stat_worker_new(&w, e, 0, 2, 0, on_done, NULL) == 0);
	/* Both workers hang, the rest queue behind them. */
	for (int i = 0; i < 2; i++)
		CHECK(stat_worker_submit(w, pipe_with(NULL, &hang_w[i]), 1, 100 + i) == 0);
	for (int i = 2; i < STAT_WORKER_JOBS; i++) {
		keep[i] = pipe_with(STAT_LINE, NULL);
		CHECK(stat_worker_submit(w, keep[i], 1, 100 + i) == 0);
	}
	extra = pipe_with(STAT_LINE, NULL);
	t0 = mono_ns();
	CHECK(stat_worker_submit(w, extra, 1, 999) == -EAGAIN);
	CHECK(mono_ns() - t0 < SLACK_NS);
	/* Refused: the fd is still ours. */
	CHECK(fcntl(extra, F_GETFD) >= 0);
	close(extra);
	/* Freeing with reads queued closes their fds: unhang the workers
	 * first, as a finished exec would. */
	before = keep[STAT_WORKER_JOBS - 1];
	close(hang_w[0]);
	close(hang_w[1]);
	stat_worker_free(w);
	CHECK(fcntl(before, F_GETFD) < 0 && errno == EBADF);
}

static void test_real_stat(sd_event *e)
{
	struct stat_worker *w;
	pid_t tid = (pid_t)syscall(SYS_gettid);
	int fd;

	nresults = 0;
	REQUIRE(stat_worker_new(&w, e, 0, 1, 0, on_done, NULL) == 0);
	fd = procfs_task_open(getpid(), tid, "stat");
	REQUIRE(fd >= 0);
	CHECK(stat_worker_submit(w, fd, tid, 5) == 0);
	run_until(e, 1, 10000);
	CHECK(nresults == 1 && results[0].r == 0);
	CHECK(results[0].st.pid == tid);
	CHECK(strcmp(results[0].st.comm, "test-stat-worke") == 0);
	stat_worker_free(w);
}

static char seen_cmdline[64];
static size_t seen_cmdline_len;
static bool seen_cmdline_set;

/* The command line is the worker's until done returns: copied here. */
static void on_done_cmdline(const struct stat_result *res, void *userdata)
{
	on_done(res, userdata);
	seen_cmdline_set = res->cmdline != NULL;
	seen_cmdline_len = 0;
	if (res->cmdline) {
		REQUIRE(res->cmdline_len < sizeof(seen_cmdline));
		CHECK(res->cmdline[res->cmdline_len] == '\0');
		memcpy(seen_cmdline, res->cmdline, res->cmdline_len);
		seen_cmdline_len = res->cmdline_len;
	}
}

/* A pipe's read end holding len bytes, NULs and all. */
static int pipe_bytes(const char *bytes, size_t len)
{
	int p[2];

	REQUIRE(pipe2(p, O_CLOEXEC) == 0);
	REQUIRE(write(p[1], bytes, len) == (ssize_t)len);
	close(p[1]);
	return p[0];
}

/* With a cmdline fd the result carries its bytes, NULs kept; without
 * one, or from an empty file (a kernel thread's), none. */
static void test_cmdline(sd_event *e)
{
	static const char ARGV[] = "hog\0" "21\0";
	struct stat_worker *w;

	nresults = 0;
	REQUIRE(stat_worker_new(&w, e, 0, 1, 0, on_done_cmdline, NULL) == 0);
	CHECK(stat_worker_submit_cmdline(w, pipe_with(STAT_LINE, NULL),
					  pipe_bytes(ARGV, sizeof(ARGV) - 1), 4242, 1) == 0);
	run_until(e, 1, 10000);
	CHECK(result_of(1) && result_of(1)->r == 0);
	CHECK(seen_cmdline_set && seen_cmdline_len == sizeof(ARGV) - 1);
	CHECK(memcmp(seen_cmdline, ARGV, sizeof(ARGV) - 1) == 0);

	CHECK(stat_worker_submit(w, pipe_with(STAT_LINE, NULL), 4242, 2) == 0);
	run_until(e, 2, 10000);
	CHECK(result_of(2) && result_of(2)->r == 0 && !seen_cmdline_set);

	CHECK(stat_worker_submit_cmdline(w, pipe_with(STAT_LINE, NULL), pipe_bytes("", 0), 4242,
					  3) == 0);
	run_until(e, 3, 10000);
	CHECK(result_of(3) && result_of(3)->r == 0 && !seen_cmdline_set);
	stat_worker_free(w);
}

int main(void)
{
	sd_event *e;

	REQUIRE(sd_event_new(&e) >= 0);
	test_hang_does_not_block(e);
	test_full_queue(e);
	test_real_stat(e);
	test_cmdline(e);
	sd_event_unref(e);
	return CHECK_EXIT();
}
