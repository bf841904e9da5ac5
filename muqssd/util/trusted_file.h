/* Files that steer a root daemon (configuration, rules) must be as
 * trustworthy as the daemon: regular, owned by root, writable by no one
 * else. */
#pragma once

#include <stdio.h>

/* Opens path for reading. Refuses (logged, -EPERM, -EISDIR or -EINVAL) anything
 * but a regular file owned by root (or by the caller, when it is not
 * root) and not writable by group or others. Never blocks on a FIFO.
 * -ENOENT is returned unlogged; other open errors are logged. */
int trusted_file_open(const char *path, FILE **ret);
