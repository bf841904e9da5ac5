/* Paths that steer a root daemon (configuration, drop-ins, rules, the
 * state dir) must be as trustworthy as the daemon, and so must every
 * directory and symlink on the way to them: whoever may write one of
 * those may swap what is behind it.
 *
 * Trusted means: owned by root (or by the caller, when it is not root:
 * tests and --check-config run by a user), and for what is opened, not
 * writable by group or others. A directory on the way may be writable by
 * others only when it is sticky (/tmp, /dev/shm): there no one can rename
 * or remove what another owns, so an entry we trust stays put. A symlink
 * is followed only when trusted itself, and its target is walked by the
 * same rules. */
#pragma once

#include <limits.h>

enum trusted_flags {
	TRUSTED_DIR = 1 << 0,	   /* want a directory; else a regular file */
	TRUSTED_NOFOLLOW = 1 << 1, /* the last component may not be a symlink */
};

/* Opens path for reading (a file: O_RDONLY; a directory: O_RDONLY |
 * O_DIRECTORY), walking from / one component at a time with openat, so
 * that what is checked is what is opened. Refuses (logged, naming path
 * and the component at fault) what is not trusted: -EPERM for owner or
 * mode, -EISDIR, -ENOTDIR or -EINVAL for the wrong kind, -ELOOP for a
 * symlink under TRUSTED_NOFOLLOW or too many of them. Never blocks on a
 * FIFO. -ENOENT, anywhere on the way, is returned unlogged. */
int trusted_path_open(const char *path, unsigned flags, int *ret_fd);

/* Walks to path's last component the same way and returns an O_PATH fd
 * of the trusted directory that holds it, and the component's name,
 * without looking at the component itself: for what the caller checks
 * and creates on its own terms (the state dir). */
int trusted_path_parent(const char *path, int *ret_dir_fd, char ret_name[NAME_MAX + 1]);
