#include "state_dir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "trusted_path.h"

#define TMP_PREFIX ".tmp-"

static int check_dir(int fd, const char *what)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return log_error_errno(errno, "cannot stat %s: %m", what);
	if (!S_ISDIR(st.st_mode))
		return log_error_errno(ENOTDIR, "%s is not a directory, refusing", what);
	if (st.st_uid != geteuid())
		return log_error_errno(EPERM, "%s is owned by uid %u, not by us, refusing",
				       what, (unsigned)st.st_uid);
	if (st.st_mode & (S_IWGRP | S_IWOTH))
		return log_error_errno(EPERM, "%s is writable by group or others (mode %03o), refusing",
				       what, (unsigned)(st.st_mode & 07777));
	return 0;
}

/* O_NOFOLLOW on the last component: a symlink planted in place of the
 * directory fails with ELOOP (or ENOTDIR) instead of being followed. */
static int open_dir(int at, const char *path, bool create, const char *what)
{
	int fd, r;

	if (create && mkdirat(at, path, 0755) < 0 && errno != EEXIST)
		return log_error_errno(errno, "cannot create %s: %m", what);
	fd = openat(at, path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		r = -errno;
		if (r == -ENOENT)
			return r;
		if (r == -ELOOP || r == -ENOTDIR)
			return log_error_errno(r, "%s is a symlink or not a directory, refusing: %m",
					       what);
		return log_error_errno(r, "cannot open %s: %m", what);
	}
	r = check_dir(fd, what);
	if (r < 0) {
		close(fd);
		return r;
	}
	return fd;
}

int state_dir_open(const char *state_dir, bool create, int *ret_fd)
{
	char name[NAME_MAX + 1];
	int parent, top, fd;

	/* Its parents too: whoever may write one could move the state dir
	 * away, with the records --restore needs, or put another there. */
	top = trusted_path_parent(state_dir, &parent, name);
	if (top < 0)
		return top;
	top = open_dir(parent, name, create, state_dir);
	close(parent);
	if (top < 0)
		return top;
	fd = open_dir(top, "tasks", create, "the state dir's tasks/");
	close(top);
	if (fd < 0)
		return fd;
	*ret_fd = fd;
	return 0;
}

int state_dir_lock(int dir_fd)
{
	if (flock(dir_fd, LOCK_EX | LOCK_NB) < 0)
		return errno == EWOULDBLOCK ? -EBUSY : -errno;
	return 0;
}

/* A new file: O_EXCL never writes through whatever was planted there.
 * One left by a write cut short is unlinked first; it is rarely there,
 * and unlinking it every time was a failed system call per record (65 a
 * second under a compile). */
static int state_create(int dir_fd, const char *name)
{
	int flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
	int fd = openat(dir_fd, name, flags, 0600);

	if (fd >= 0 || errno != EEXIST)
		return fd >= 0 ? fd : -errno;
	if (unlinkat(dir_fd, name, 0) < 0)
		return -errno;
	fd = openat(dir_fd, name, flags, 0600);
	return fd >= 0 ? fd : -errno;
}

/* Writes the record into fd and closes it. */
static int write_close(int fd, const struct state_record *rec)
{
	char buf[STATE_RECORD_MAX];
	ssize_t n;
	int len, r = 0;

	len = state_record_encode(rec, buf, sizeof(buf));
	if (len < 0) {
		close(fd);
		return len;
	}
	n = write(fd, buf, (size_t)len);
	if (n < 0)
		r = -errno;
	else if (n != len)
		r = -EIO;
	if (close(fd) < 0 && r == 0)
		r = -errno;
	return r;
}

int state_write(int dir_fd, const struct state_record *rec)
{
	char tmp[32], name[16];
	int fd, r;

	snprintf(tmp, sizeof(tmp), TMP_PREFIX "%d", (int)rec->tid);
	snprintf(name, sizeof(name), "%d", (int)rec->tid);
	fd = state_create(dir_fd, tmp);
	if (fd < 0)
		return fd;
	r = write_close(fd, rec);
	if (r == 0 && renameat(dir_fd, tmp, dir_fd, name) < 0)
		r = -errno;
	if (r < 0)
		(void)unlinkat(dir_fd, tmp, 0);
	return r;
}

int state_write_new(int dir_fd, const struct state_record *rec)
{
	char name[16];
	int fd, r;

	snprintf(name, sizeof(name), "%d", (int)rec->tid);
	fd = openat(dir_fd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	r = write_close(fd, rec);
	if (r < 0)
		(void)unlinkat(dir_fd, name, 0);
	return r;
}

int state_boot_id(char ret[STATE_BOOT_ID_LEN + 1])
{
	char buf[STATE_BOOT_ID_LEN + 2];
	ssize_t n;
	int fd;

	fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n < 0)
		return -errno;
	if (n != STATE_BOOT_ID_LEN + 1 || buf[STATE_BOOT_ID_LEN] != '\n')
		return -EBADMSG;
	memcpy(ret, buf, STATE_BOOT_ID_LEN);
	ret[STATE_BOOT_ID_LEN] = '\0';
	return 0;
}

int state_remove(int dir_fd, pid_t tid)
{
	char name[16];

	snprintf(name, sizeof(name), "%d", (int)tid);
	if (unlinkat(dir_fd, name, 0) < 0 && errno != ENOENT)
		return -errno;
	return 0;
}

int state_read(int dir_fd, const char *name, struct state_record *ret)
{
	char buf[STATE_RECORD_MAX];
	struct stat st;
	ssize_t n;
	int fd, r;

	fd = openat(dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		r = -errno;
		goto out;
	}
	if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() || st.st_nlink != 1) {
		r = -EPERM;
		goto out;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	if (n < 0) {
		r = -errno;
		goto out;
	}
	buf[n] = '\0';
	r = state_record_decode(buf, ret);
	if (r == 0) {
		char expect[16];

		snprintf(expect, sizeof(expect), "%d", (int)ret->tid);
		if (strcmp(expect, name) != 0)
			r = -EBADMSG;
	}
out:
	close(fd);
	return r;
}

static bool is_record_name(const char *s)
{
	if (!*s || *s == '0')
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

int state_foreach(int dir_fd, state_foreach_func_t f, void *userdata)
{
	struct dirent *de;
	DIR *d;
	int fd, r = 0;

	fd = openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -errno;
	}
	while ((de = readdir(d))) {
		if (!strncmp(de->d_name, TMP_PREFIX, strlen(TMP_PREFIX))) {
			(void)unlinkat(dir_fd, de->d_name, 0);
			continue;
		}
		if (!is_record_name(de->d_name))
			continue;
		r = f(dir_fd, de->d_name, userdata);
		if (r < 0)
			break;
	}
	closedir(d);
	return r;
}
