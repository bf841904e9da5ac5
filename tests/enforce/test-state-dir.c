/* The state dir on disk: atomic records, and nothing planted is followed. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "enforce.h"
#include "state_dir.h"

static char base[] = "/tmp/muqss-test-state-XXXXXX";

static void path(char *buf, size_t size, const char *rel)
{
	snprintf(buf, size, "%s/%s", base, rel);
}

static void cleanup(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf -- '%s'", base);
	if (system(cmd) != 0)
		fprintf(stderr, "cleanup failed\n");
}

static int count(int fd, const char *name, void *userdata)
{
	(*(int *)userdata)++;
	return 0;
}

static void test_records(void)
{
	char dir[256], p[300];
	struct state_record r = { .tid = 99, .tgid = 98, .start_time = 7, .nice = 3 }, d;
	int fd, fd2, n = 0;

	path(dir, sizeof(dir), "state");
	CHECK(state_dir_open(dir, false, &fd) == -ENOENT);
	REQUIRE(state_dir_open(dir, true, &fd) == 0);
	CHECK(state_dir_lock(fd) == 0);
	CHECK(state_dir_open(dir, false, &fd2) == 0);
	CHECK(state_dir_lock(fd2) == -EBUSY);
	close(fd2);

	CPU_ZERO(&r.affinity);
	CPU_SET(0, &r.affinity);
	/* A first record under its name at once; once there, rewritten aside. */
	CHECK(state_write_new(fd, &r) == 0);
	CHECK(state_read(fd, "99", &d) == 0 && d.nice == r.nice && d.tgid == 98);
	CHECK(state_write_new(fd, &r) == -EEXIST);
	r.nice = 4;
	CHECK(state_write(fd, &r) == 0);
	CHECK(state_read(fd, "99", &d) == 0 && d.nice == 4 && d.tgid == 98);
	CHECK(state_foreach(fd, count, &n) == 0 && n == 1);

	/* A record under another name is refused. */
	snprintf(p, sizeof(p), "%s/tasks/100", dir);
	CHECK(link(strcat(strcpy((char[300]){ 0 }, dir), "/tasks/99"), p) == 0);
	CHECK(state_read(fd, "100", &d) == -EPERM); /* hard link: nlink 2 */
	unlink(p);

	/* A planted symlink is never followed, neither read nor written through. */
	path(p, sizeof(p), "victim");
	FILE *f = fopen(p, "w");
	REQUIRE(f);
	fputs("precious\n", f);
	fclose(f);
	CHECK(symlinkat(p, fd, "101") == 0);
	CHECK(state_read(fd, "101", &d) == -ELOOP);
	CHECK(symlinkat(p, fd, ".tmp-102") == 0);
	r.tid = 102;
	CHECK(state_write(fd, &r) == 0);
	CHECK(state_read(fd, "102", &d) == 0 && d.tid == 102);
	f = fopen(p, "r");
	char buf[32] = { 0 };
	CHECK(f && fgets(buf, sizeof(buf), f) && !strcmp(buf, "precious\n"));
	if (f)
		fclose(f);
	/* Symlink in place of the record: rename replaces the link itself. */
	CHECK(symlinkat(p, fd, "103") == 0);
	r.tid = 103;
	CHECK(state_write(fd, &r) == 0);
	CHECK(state_read(fd, "103", &d) == 0);
	CHECK(state_remove(fd, 99) == 0 && state_remove(fd, 99) == 0);
	CHECK(state_read(fd, "99", &d) == -ENOENT);
	close(fd);
}

static void test_bad_dirs(void)
{
	char p[256], real[256], q[300];
	struct enforcer *e = NULL;
	int fd;

	/* The state dir itself a symlink. */
	path(real, sizeof(real), "real");
	path(p, sizeof(p), "link");
	CHECK(mkdir(real, 0755) == 0 && symlink(real, p) == 0);
	CHECK(state_dir_open(p, true, &fd) < 0);
	CHECK(enforcer_new(&e, p) < 0 && !e);

	/* tasks/ a symlink. */
	snprintf(q, sizeof(q), "%s/tasks", real);
	CHECK(symlink("/tmp", q) == 0);
	CHECK(state_dir_open(real, true, &fd) < 0);
	unlink(q);

	/* Group- or other-writable. */
	path(p, sizeof(p), "open");
	CHECK(mkdir(p, 0700) == 0 && chmod(p, 0777) == 0);
	CHECK(state_dir_open(p, true, &fd) == -EPERM);

	/* A regular file where the dir should be. */
	path(p, sizeof(p), "file");
	close(open(p, O_CREAT | O_WRONLY, 0600));
	CHECK(state_dir_open(p, true, &fd) < 0);
}

static void test_enforcer_lock(void)
{
	struct enforcer *a = NULL, *b = NULL;
	char p[256];

	path(p, sizeof(p), "locked");
	REQUIRE(enforcer_new(&a, p) == 0);
	CHECK(enforcer_new(&b, p) == -EBUSY && !b);
	CHECK(enforcer_count(a) == 0);
	CHECK(enforcer_restore_all(a) == 0);
	enforcer_free(a);
	REQUIRE(enforcer_new(&b, p) == 0);
	enforcer_free(b);
}

int main(void)
{
	REQUIRE(mkdtemp(base));
	atexit(cleanup);
	test_records();
	test_bad_dirs();
	test_enforcer_lock();
	return CHECK_EXIT();
}
