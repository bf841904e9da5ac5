/* trusted_path on real files: every directory and symlink on the way is
 * checked, not the last file alone (issue 34, item 5). Cases that hand a
 * file to another user need root; the rest run as anyone. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "trusted_path.h"

#define NOBODY 65534

static char base[] = "/dev/shm/muqss-test-trust-XXXXXX";

static void cleanup(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf -- '%s'", base);
	if (system(cmd) != 0)
		fprintf(stderr, "cleanup of %s failed\n", base);
}

/* base/rel, in a static buffer of each call's own slot. */
static const char *at(const char *rel)
{
	static char bufs[4][PATH_MAX];
	static unsigned n;
	char *b = bufs[n++ % 4];

	snprintf(b, PATH_MAX, "%s/%s", base, rel);
	return b;
}

static void make_file(const char *rel, mode_t mode)
{
	int fd = open(at(rel), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);

	REQUIRE(fd >= 0);
	REQUIRE(write(fd, "x\n", 2) == 2);
	close(fd);
	REQUIRE(chmod(at(rel), mode) == 0);
}

static void make_dir(const char *rel, mode_t mode)
{
	REQUIRE(mkdir(at(rel), 0700) == 0 && chmod(at(rel), mode) == 0);
}

/* The result of trusted_path_open, the fd closed. */
static int try_open(const char *path, unsigned flags)
{
	int fd = -1, r = trusted_path_open(path, flags, &fd);

	if (r == 0) {
		CHECK(fd >= 0);
		close(fd);
	}
	return r;
}

static void test_files(void)
{
	char buf[4] = { 0 };
	int fd;

	make_file("ok", 0644);
	CHECK(trusted_path_open(at("ok"), 0, &fd) == 0);
	CHECK(read(fd, buf, 3) == 2 && strcmp(buf, "x\n") == 0);
	close(fd);
	CHECK_EQ(try_open(at("missing"), 0), -ENOENT);
	CHECK_EQ(try_open(at("missing/deeper"), 0), -ENOENT);
	make_file("open", 0666);
	CHECK_EQ(try_open(at("open"), 0), -EPERM);
	make_file("group", 0664);
	CHECK_EQ(try_open(at("group"), 0), -EPERM);
	/* A FIFO is refused, and opening it does not wait for a writer. */
	REQUIRE(mkfifo(at("fifo"), 0600) == 0);
	CHECK_EQ(try_open(at("fifo"), 0), -EINVAL);
	/* The wrong kind, each way; a file on the way is not a directory. */
	make_dir("d", 0755);
	CHECK_EQ(try_open(at("d"), 0), -EISDIR);
	CHECK_EQ(try_open(at("d"), TRUSTED_DIR), 0);
	CHECK_EQ(try_open(at("ok"), TRUSTED_DIR), -ENOTDIR);
	CHECK_EQ(try_open(at("ok/x"), 0), -ENOTDIR);
	/* Dots and doubled slashes walk as the kernel walks them. */
	CHECK_EQ(try_open(at("d/../ok"), 0), 0);
	CHECK_EQ(try_open(at(".//d/./"), TRUSTED_DIR), 0);
	CHECK_EQ(try_open(at("d/.."), TRUSTED_DIR), 0);
	CHECK_EQ(try_open("/", TRUSTED_DIR), 0);
	/* A relative path is walked from /, through the current directory. */
	REQUIRE(chdir(base) == 0);
	CHECK_EQ(try_open("ok", 0), 0);
	CHECK_EQ(try_open("open", 0), -EPERM);
	REQUIRE(chdir("/") == 0);
}

static void test_dirs(void)
{
	/* Whoever may write a directory may swap what is in it. */
	make_dir("wide", 0777);
	make_file("wide/f", 0644);
	CHECK_EQ(try_open(at("wide"), TRUSTED_DIR), -EPERM);
	CHECK_EQ(try_open(at("wide/f"), 0), -EPERM);
	make_dir("gw", 0775);
	make_file("gw/f", 0644);
	CHECK_EQ(try_open(at("gw/f"), 0), -EPERM);
	/* Sticky, as /tmp and /dev/shm: no one may move what another owns,
	 * so what we own in it stays put. The sticky dir itself is not
	 * what a config may name. */
	make_dir("sticky", 01777);
	make_file("sticky/f", 0644);
	make_dir("sticky/d", 0755);
	make_file("sticky/d/f", 0644);
	CHECK_EQ(try_open(at("sticky/f"), 0), 0);
	CHECK_EQ(try_open(at("sticky/d/f"), 0), 0);
	CHECK_EQ(try_open(at("sticky"), TRUSTED_DIR), -EPERM);
}

static void test_symlinks(void)
{
	char name[NAME_MAX + 1];
	int fd;

	make_dir("real", 0755);
	make_file("real/f", 0644);
	/* A trusted link, to a file or on the way, absolute or relative. */
	REQUIRE(symlink(at("real/f"), at("abs")) == 0);
	REQUIRE(symlink("real", at("rel")) == 0);
	REQUIRE(symlink("../real/f", at("real/up")) == 0);
	CHECK_EQ(try_open(at("abs"), 0), 0);
	CHECK_EQ(try_open(at("rel/f"), 0), 0);
	CHECK_EQ(try_open(at("rel/up"), 0), 0);
	CHECK_EQ(try_open(at("rel"), TRUSTED_DIR), 0);
	/* Not the last component, when the caller says so. */
	CHECK_EQ(try_open(at("abs"), TRUSTED_NOFOLLOW), -ELOOP);
	CHECK_EQ(try_open(at("rel/f"), TRUSTED_NOFOLLOW), 0);
	/* A link to an untrusted place is as untrusted as the place. */
	make_dir("wide2", 0777);
	make_file("wide2/f", 0644);
	REQUIRE(symlink(at("wide2"), at("to-wide")) == 0);
	CHECK_EQ(try_open(at("to-wide/f"), 0), -EPERM);
	REQUIRE(symlink(at("wide2/f"), at("to-wide-f")) == 0);
	CHECK_EQ(try_open(at("to-wide-f"), 0), -EPERM);
	/* Loops end. */
	REQUIRE(symlink("loop-b", at("loop-a")) == 0 && symlink("loop-a", at("loop-b")) == 0);
	CHECK_EQ(try_open(at("loop-a"), 0), -ELOOP);
	/* The parent walk stops before the last component, link or not. */
	CHECK_EQ(trusted_path_parent(at("rel/new"), &fd, name), 0);
	CHECK(strcmp(name, "new") == 0 && faccessat(fd, "f", F_OK, 0) == 0);
	close(fd);
	CHECK_EQ(trusted_path_parent(at("to-wide/new"), &fd, name), -EPERM);
}

/* What a user other than root owns, on the way or at the end. */
static void test_owners(void)
{
	char name[NAME_MAX + 1];
	int fd;

	if (geteuid() != 0) {
		printf("not root: the cases with files of uid %d are not run\n", NOBODY);
		return;
	}
	make_file("theirs", 0644);
	REQUIRE(chown(at("theirs"), NOBODY, NOBODY) == 0);
	CHECK_EQ(try_open(at("theirs"), 0), -EPERM);
	/* Their directory, though mode 0755: they may swap what is in it. */
	make_dir("their-dir", 0755);
	make_file("their-dir/f", 0644);
	REQUIRE(chown(at("their-dir"), NOBODY, NOBODY) == 0);
	CHECK_EQ(try_open(at("their-dir/f"), 0), -EPERM);
	CHECK_EQ(try_open(at("their-dir"), TRUSTED_DIR), -EPERM);
	CHECK_EQ(trusted_path_parent(at("their-dir/state"), &fd, name), -EPERM);
	/* Their symlink to root's private file: never followed. */
	make_file("secret", 0600);
	REQUIRE(symlink(at("secret"), at("their-link")) == 0);
	REQUIRE(lchown(at("their-link"), NOBODY, NOBODY) == 0);
	CHECK_EQ(try_open(at("their-link"), 0), -EPERM);
	CHECK_EQ(try_open(at("secret"), 0), 0);
	/* In a sticky directory, only what root owns. */
	make_dir("sticky2", 01777);
	make_file("sticky2/theirs", 0644);
	REQUIRE(chown(at("sticky2/theirs"), NOBODY, NOBODY) == 0);
	CHECK_EQ(try_open(at("sticky2/theirs"), 0), -EPERM);
	make_dir("sticky2/their-dir", 0755);
	make_file("sticky2/their-dir/f", 0644);
	REQUIRE(chown(at("sticky2/their-dir"), NOBODY, NOBODY) == 0);
	CHECK_EQ(try_open(at("sticky2/their-dir/f"), 0), -EPERM);
}

int main(void)
{
	/* /dev/shm is itself sticky and root's: the case the tests live in. */
	REQUIRE(mkdtemp(base));
	atexit(cleanup);
	REQUIRE(chmod(base, 0755) == 0);
	test_files();
	test_dirs();
	test_symlinks();
	test_owners();
	return CHECK_EXIT();
}
