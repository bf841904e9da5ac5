/* Walking a path from / the way the kernel does, with sshd's checks
 * (safe_path: owner root, not writable by group or others) made on every
 * directory and symlink on the way, not on the last file alone. */
#include "trusted_path.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"

#define LINKS_MAX 40 /* the kernel's MAXSYMLINKS */

struct walk {
	const char *path;     /* as the caller named it, for messages */
	char todo[PATH_MAX];  /* what is left to walk, from next on */
	const char *next;
	char at[PATH_MAX];    /* where the walk is, for messages; "" is / */
	int dir_fd;	      /* O_PATH fd of at, checked */
	unsigned links;
};

/* at/name, or at itself for "." */
static void entry_path(const struct walk *w, const char *name, char *buf, size_t size)
{
	if (strcmp(name, ".") == 0)
		snprintf(buf, size, "%s", w->at[0] ? w->at : "/");
	else
		snprintf(buf, size, "%s/%s", w->at, name);
}

__attribute__((format(printf, 4, 5)))
static int refuse(const struct walk *w, const char *name, int err, const char *fmt, ...)
{
	char where[PATH_MAX + NAME_MAX + 2], why[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	entry_path(w, name, where, sizeof(where));
	if (strcmp(where, w->path) == 0)
		return log_error_errno(err, "%s: %s, refusing it", w->path, why);
	return log_error_errno(err, "%s: %s: %s, refusing it", w->path, where, why);
}

static const char *kind(const struct stat *st)
{
	return S_ISLNK(st->st_mode) ? "symlink " : S_ISDIR(st->st_mode) ? "directory " : "";
}

/* Who could have put this entry here, or changed it. */
static int check_owner(const struct walk *w, const char *name, const struct stat *st)
{
	if (st->st_uid != 0 && st->st_uid != geteuid())
		return refuse(w, name, EPERM, "%sowned by uid %u, not root", kind(st),
			      (unsigned)st->st_uid);
	return 0;
}

/* A directory passed through: sticky ones may be open to all, since what
 * we open in them must be trusted-owned, and no one else may move that. */
static int check_passage(const struct walk *w, const char *name, const struct stat *st)
{
	int r = check_owner(w, name, st);

	if (r == 0 && (st->st_mode & (S_IWGRP | S_IWOTH)) && !(st->st_mode & S_ISVTX))
		r = refuse(w, name, EPERM, "directory writable by group or others (mode %04o)",
			   (unsigned)(st->st_mode & 07777));
	return r;
}

/* The entry name in the walk's directory, not followed, owner checked. */
static int open_entry(const struct walk *w, const char *name, struct stat *st)
{
	char where[PATH_MAX + NAME_MAX + 2];
	int fd, r;

	fd = openat(w->dir_fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0 && fstat(fd, st) < 0) {
		close(fd);
		fd = -1;
	}
	if (fd < 0) {
		r = -errno;
		entry_path(w, name, where, sizeof(where));
		if (r != -ENOENT)
			log_error_errno(r, "%s: %s: %m", w->path, where);
		return r;
	}
	r = check_owner(w, name, st);
	if (r < 0) {
		close(fd);
		return r;
	}
	return fd;
}

static int set_dir(struct walk *w, int fd)
{
	if (w->dir_fd >= 0)
		close(w->dir_fd);
	w->dir_fd = fd;
	return 0;
}

static int enter_root(struct walk *w)
{
	struct stat st;
	int fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC), r;

	if (fd < 0 || fstat(fd, &st) < 0) {
		r = log_error_errno(errno, "%s: /: %m", w->path);
		if (fd >= 0)
			close(fd);
		return r;
	}
	w->at[0] = '\0';
	set_dir(w, fd);
	return check_passage(w, ".", &st);
}

static int enter_parent(struct walk *w)
{
	char *slash = strrchr(w->at, '/');
	struct stat st;
	int fd, r;

	fd = openat(w->dir_fd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		r = log_error_errno(errno, "%s: %s/..: %m", w->path, w->at);
		if (fd >= 0)
			close(fd);
		return r;
	}
	if (slash)
		*slash = '\0';
	set_dir(w, fd);
	return check_passage(w, ".", &st);
}

/* Puts the symlink's target in front of what is left to walk. */
static int follow(struct walk *w, const char *name, int link_fd)
{
	char target[PATH_MAX], todo[PATH_MAX];
	ssize_t n;

	if (++w->links > LINKS_MAX)
		return refuse(w, name, ELOOP, "too many levels of symlinks");
	n = readlinkat(link_fd, "", target, sizeof(target));
	if (n < 0)
		return log_error_errno(errno, "%s: reading the symlink %s/%s: %m", w->path, w->at,
				       name);
	if ((size_t)n >= sizeof(target) ||
	    (size_t)snprintf(todo, sizeof(todo), "%.*s/%s", (int)n, target, w->next) >= sizeof(todo))
		return refuse(w, name, ENAMETOOLONG, "symlink target too long");
	memcpy(w->todo, todo, sizeof(todo));
	w->next = w->todo;
	return target[0] == '/' ? enter_root(w) : 0;
}

/* One component on the way: a directory to enter or a symlink to follow. */
static int step(struct walk *w, const char *name)
{
	struct stat st;
	size_t len = strlen(w->at);
	int fd, r;

	if (strcmp(name, ".") == 0)
		return 0;
	if (strcmp(name, "..") == 0)
		return enter_parent(w);
	fd = open_entry(w, name, &st);
	if (fd < 0)
		return fd;
	if (S_ISLNK(st.st_mode))
		r = follow(w, name, fd);
	else if (!S_ISDIR(st.st_mode))
		r = refuse(w, name, ENOTDIR, "not a directory");
	else if (len + 1 + strlen(name) >= sizeof(w->at))
		r = refuse(w, name, ENAMETOOLONG, "path too long");
	else
		r = check_passage(w, name, &st);
	if (r < 0 || S_ISLNK(st.st_mode)) {
		close(fd);
		return r;
	}
	snprintf(w->at + len, sizeof(w->at) - len, "/%s", name);
	return set_dir(w, fd);
}

/* Cuts the next component off what is left: 1, or 0 when none is left. */
static int next_component(struct walk *w, char name[NAME_MAX + 1])
{
	size_t n;

	w->next += strspn(w->next, "/");
	if (!*w->next)
		return 0;
	n = strcspn(w->next, "/");
	if (n > NAME_MAX)
		return log_error_errno(ENAMETOOLONG, "%s: a component is too long", w->path);
	memcpy(name, w->next, n);
	name[n] = '\0';
	w->next += n;
	return 1;
}

/* Walks every component but the last, whose name it leaves in name ("."
 * when the path ends at a directory, as "/" or "a/.." do). */
static int walk_to_last(struct walk *w, char name[NAME_MAX + 1])
{
	for (;;) {
		int r = next_component(w, name);

		if (r <= 0) {
			strcpy(name, ".");
			return r;
		}
		if (w->next[strspn(w->next, "/")] == '\0' && strcmp(name, "..") != 0)
			return 0;
		r = step(w, name);
		if (r < 0)
			return r;
	}
}

static int walk_begin(struct walk *w, const char *path)
{
	char cwd[PATH_MAX];
	int n;

	*w = (struct walk){ .path = path, .dir_fd = -1 };
	if (path[0] == '/') {
		n = snprintf(w->todo, sizeof(w->todo), "%s", path);
	} else {
		/* getcwd's answer has no symlinks; its directories are checked too. */
		if (!getcwd(cwd, sizeof(cwd)))
			return log_error_errno(errno, "%s: cannot find the current directory: %m", path);
		n = snprintf(w->todo, sizeof(w->todo), "%s/%s", cwd, path);
	}
	if (n < 0 || (size_t)n >= sizeof(w->todo))
		return log_error_errno(ENAMETOOLONG, "%s: %m", path);
	w->next = w->todo;
	return enter_root(w);
}

static void walk_end(struct walk *w)
{
	if (w->dir_fd >= 0)
		close(w->dir_fd);
	w->dir_fd = -1;
}

/* The last component, found trusted-owned: its kind and mode, then a
 * real fd on the very object that was checked. */
static int open_last(const struct walk *w, const char *name, int path_fd,
		     const struct stat *st, unsigned flags)
{
	struct stat again;
	int fd;

	if ((flags & TRUSTED_DIR) && !S_ISDIR(st->st_mode))
		return refuse(w, name, ENOTDIR, "not a directory");
	if (!(flags & TRUSTED_DIR) && S_ISDIR(st->st_mode))
		return refuse(w, name, EISDIR, "is a directory");
	if (!(flags & TRUSTED_DIR) && !S_ISREG(st->st_mode))
		return refuse(w, name, EINVAL, "not a regular file");
	if (st->st_mode & (S_IWGRP | S_IWOTH))
		return refuse(w, name, EPERM, "%swritable by group or others (mode %04o)", kind(st),
			      (unsigned)(st->st_mode & 07777));
	if (flags & TRUSTED_DIR)
		fd = openat(path_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	else
		/* O_NONBLOCK: no FIFO can be there now, but one swapped in
		 * since must not hang us either; the ino check catches it. */
		fd = openat(w->dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return log_error_errno(errno, "%s: %m", w->path);
	if (fstat(fd, &again) < 0 || again.st_dev != st->st_dev || again.st_ino != st->st_ino) {
		close(fd);
		return refuse(w, name, EAGAIN, "replaced while being opened");
	}
	if (!(flags & TRUSTED_DIR))
		(void)fcntl(fd, F_SETFL, 0);
	return fd;
}

int trusted_path_open(const char *path, unsigned flags, int *ret_fd)
{
	char name[NAME_MAX + 1];
	struct walk w;
	struct stat st;
	int fd = -1, r;

	r = walk_begin(&w, path);
	while (r >= 0) {
		r = walk_to_last(&w, name);
		if (r < 0)
			break;
		r = fd = open_entry(&w, name, &st);
		if (r < 0 || !S_ISLNK(st.st_mode))
			break;
		if (flags & TRUSTED_NOFOLLOW)
			r = refuse(&w, name, ELOOP, "is a symlink");
		else
			r = follow(&w, name, fd);
		close(fd);
		fd = -1;
	}
	if (r >= 0) {
		r = open_last(&w, name, fd, &st, flags);
		if (r >= 0)
			*ret_fd = r;
	}
	if (fd >= 0)
		close(fd);
	walk_end(&w);
	return r < 0 ? r : 0;
}

int trusted_path_parent(const char *path, int *ret_dir_fd, char ret_name[NAME_MAX + 1])
{
	struct walk w;
	int r;

	r = walk_begin(&w, path);
	if (r >= 0)
		r = walk_to_last(&w, ret_name);
	if (r >= 0 && strcmp(ret_name, ".") == 0)
		r = log_error_errno(EINVAL, "%s: names a directory by . or .., refusing it", path);
	if (r < 0) {
		walk_end(&w);
		return r;
	}
	*ret_dir_fd = w.dir_fd;
	return 0;
}
