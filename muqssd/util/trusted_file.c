/* Opening configuration and rule files with the checks sshd makes. */
#include "trusted_file.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"

static int check_stat(const char *path, const struct stat *st)
{
	uid_t me = geteuid();

	if (S_ISDIR(st->st_mode))
		return log_error_errno(EISDIR, "%s: is a directory, refusing it", path);
	if (!S_ISREG(st->st_mode))
		return log_error_errno(EINVAL, "%s: not a regular file, refusing it", path);
	/* The caller's own files pass for tests and check-config run by a
	 * user; the daemon runs as root, so only root's pass there. */
	if (st->st_uid != 0 && st->st_uid != me)
		return log_error_errno(EPERM, "%s: owned by uid %u, not root, refusing it", path,
				       (unsigned)st->st_uid);
	if (st->st_mode & (S_IWGRP | S_IWOTH))
		return log_error_errno(EPERM,
				       "%s: writable by group or others (mode %04o), refusing it",
				       path, (unsigned)(st->st_mode & 07777));
	return 0;
}

int trusted_file_open(const char *path, FILE **ret)
{
	struct stat st;
	FILE *f;
	int fd, r;

	/* O_NONBLOCK: opening a FIFO must not wait for a writer. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		r = -errno;
		if (r != -ENOENT)
			log_error_errno(r, "%s: %m", path);
		return r;
	}
	if (fstat(fd, &st) < 0) {
		r = log_error_errno(errno, "%s: %m", path);
		goto fail;
	}
	r = check_stat(path, &st);
	if (r < 0)
		goto fail;
	/* Reads of a regular file never wait anyway; clear it for clarity. */
	(void)fcntl(fd, F_SETFL, 0);
	f = fdopen(fd, "re");
	if (!f) {
		r = log_error_errno(errno, "%s: %m", path);
		goto fail;
	}
	*ret = f;
	return 0;
fail:
	close(fd);
	return r;
}
