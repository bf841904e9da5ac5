/* What --restore refuses to believe (issue 16): a record is root's file,
 * but a state dir on disk outlives a reboot and a record may be forged or
 * stale. Each record here would make restore act on the wrong task; the
 * test checks that nothing happens, and the log says why. Nothing here
 * ever writes to a task the test did not start: the PID 1 and kernel
 * thread records carry a start time that does not match, so even a
 * restore that believed them would find the task "gone". */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "children.h"
#include "enforce-internal.h"
#include "restore.h"
#include "sched_attr.h"
#include "state_dir.h"

static const char *dir;
static char boot_id[STATE_BOOT_ID_LEN + 1];

static int policy_of(pid_t pid)
{
	struct sched_attr_v1 a;

	REQUIRE(sched_attr_get(pid, &a) == 0);
	return (int)a.sched_policy;
}

/* A record as the enforcer writes it: this boot, SCHED_BATCH to put back. */
static struct state_record record_for(pid_t pid)
{
	struct state_record r = {
		.tid = pid, .tgid = pid, .policy = SCHED_BATCH,
		.changed = STATE_CHANGED_POLICY,
	};
	struct task_stat st;

	if (task_stat_read(pid, pid, &st) == 0)
		r.start_time = st.start_time;
	REQUIRE(sched_getaffinity(pid, sizeof(r.affinity), &r.affinity) == 0);
	memcpy(r.boot_id, boot_id, sizeof(r.boot_id));
	return r;
}

/* Writes rec (raw text when text is set) alone into a fresh state dir,
 * runs a restore there with stderr captured, and returns what it logged. */
static char *restore_one(const struct state_record *rec, const char *text)
{
	static int n;
	static char out[4096];
	char sub[128], path[200], log[160];
	int fd, saved, logfd;
	ssize_t len;
	FILE *f;

	snprintf(sub, sizeof(sub), "%s/s%d", dir, n++);
	REQUIRE(state_dir_open(sub, true, &fd) == 0);
	if (rec) {
		REQUIRE(state_write(fd, rec) == 0);
	} else {
		snprintf(path, sizeof(path), "%s/tasks/4242", sub);
		f = fopen(path, "w");
		REQUIRE(f && fputs(text, f) >= 0 && fclose(f) == 0);
	}
	close(fd);
	snprintf(log, sizeof(log), "%s.log", sub);
	logfd = open(log, O_CREAT | O_RDWR | O_TRUNC | O_CLOEXEC, 0600);
	REQUIRE(logfd >= 0);
	fflush(stderr);
	saved = dup(STDERR_FILENO);
	REQUIRE(dup2(logfd, STDERR_FILENO) == STDERR_FILENO);
	(void)restore_from_state_dir(sub);
	fflush(stderr);
	REQUIRE(dup2(saved, STDERR_FILENO) == STDERR_FILENO);
	close(saved);
	len = pread(logfd, out, sizeof(out) - 1, 0);
	close(logfd);
	out[len > 0 ? len : 0] = '\0';
	fputs(out, stderr);
	return out;
}

static void expect_refused(const char *log, const char *why)
{
	if (!strstr(log, why) || !strstr(log, "1 record(s) refused"))
		CHECK_FAIL("wanted a refusal because %s", why);
}

int main(void)
{
	struct state_record r;
	char text[512], cpus[64];
	pid_t child;

	if (geteuid() != 0) {
		fprintf(stderr, "skip: changing other tasks' policies needs root\n");
		return 77;
	}
	dir = test_state_dir("restore-trust");
	REQUIRE(state_boot_id(boot_id) == 0);
	child = child_spawn(false, 30);
	CHECK(policy_of(child) == SCHED_OTHER);

	/* From another boot: that pid and start time are someone else now. */
	r = record_for(child);
	memcpy(r.boot_id, "00000000-0000-4000-8000-000000000000", sizeof(r.boot_id));
	expect_refused(restore_one(&r, NULL), "it is from another boot");
	CHECK(policy_of(child) == SCHED_OTHER);
	/* Without a boot id (written by hand, or by an older muqssd). */
	r.boot_id[0] = '\0';
	expect_refused(restore_one(&r, NULL), "it carries no boot id");
	CHECK(policy_of(child) == SCHED_OTHER);

	/* SCHED_FIFO 50 "to put back": restoring it would grant it. */
	r = record_for(child);
	REQUIRE(cpulist_format(&r.affinity, cpus, sizeof(cpus)) > 0);
	snprintf(text, sizeof(text),
		 "version=1\ntid=%d\ntgid=%d\nstart=%llu\npolicy=%d\npriority=50\nnice=0\n"
		 "affinity=%s\nchanged=1\nboot_id=%s\n",
		 (int)child, (int)child, (unsigned long long)r.start_time, SCHED_FIFO, cpus,
		 boot_id);
	expect_refused(restore_one(NULL, text), "Bad message");
	CHECK(policy_of(child) == SCHED_OTHER);

	/* The restoring process itself. */
	r = record_for(getpid());
	expect_refused(restore_one(&r, NULL), "it names muqssd itself");
	CHECK(policy_of(getpid()) == SCHED_OTHER);

	/* A kernel thread (kthreadd), with a start time it does not have. */
	r = record_for(2);
	r.start_time += 12345;
	expect_refused(restore_one(&r, NULL), "it names a kernel thread");

	/* PID 1, the same way: refused before anything reads it. */
	r = record_for(1);
	r.start_time += 12345;
	snprintf(text, sizeof(text),
		 "version=1\ntid=1\ntgid=1\nstart=%llu\npolicy=0\nnice=0\naffinity=0\n"
		 "changed=2\nboot_id=%s\n", (unsigned long long)r.start_time, boot_id);
	expect_refused(restore_one(NULL, text), "Bad message");

	/* And a record that is all it should be is restored. */
	r = record_for(child);
	(void)restore_one(&r, NULL);
	CHECK(policy_of(child) == SCHED_BATCH);
	child_kill(child);
	return CHECK_EXIT();
}
