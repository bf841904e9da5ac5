/* The crash-restore records on disk: state_dir/tasks/<tid>, one small
 * file per task, replaced atomically (write a new file, rename over). */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include "state_record.h"

/* Opens state_dir/tasks and returns its fd. The state dir and tasks must
 * be real directories (not symlinks) owned by us and not group- or
 * other-writable, and every directory above must be trusted as
 * trusted_path.h says; -EPERM otherwise. With create, missing ones are
 * made; without, a missing state dir is -ENOENT. */
int state_dir_open(const char *state_dir, bool create, int *ret_fd);
/* Exclusive, non-blocking: -EBUSY if a live muqssd holds the dir. */
int state_dir_lock(int dir_fd);

/* Written aside and renamed over the old record, so none is ever torn. */
int state_write(int dir_fd, const struct state_record *r);
/* A task's first record, written under its name at once: one system call
 * less than state_write(), a third of the record's cost in an exec storm.
 * A crash mid-write leaves a torn file that restore refuses, and the
 * change it was for never came: a change waits for its record. -EEXIST
 * when the name is taken. */
int state_write_new(int dir_fd, const struct state_record *r);
/* ENOENT is not an error. */
int state_remove(int dir_fd, pid_t tid);
/* Reads tasks/<name>. A symlink, a non-regular file, a file not ours or
 * one that does not parse is refused (-ELOOP, -EPERM, -EBADMSG). */
int state_read(int dir_fd, const char *name, struct state_record *ret);

/* This boot's id, for the records: a record from another boot names tasks
 * that are gone, whatever pid and start time it gives. */
int state_boot_id(char ret[STATE_BOOT_ID_LEN + 1]);

typedef int (*state_foreach_func_t)(int dir_fd, const char *name, void *userdata);
/* Calls f for every entry that looks like a record ("<digits>") and
 * removes stale temporary files. Stops at the first negative return. */
int state_foreach(int dir_fd, state_foreach_func_t f, void *userdata);
