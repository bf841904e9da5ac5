/* Files that steer a root daemon (configuration, rules), read as a FILE. */
#pragma once

#include <stdio.h>

/* Opens path for reading through trusted_path_open(): a regular file,
 * trusted, as is every directory and symlink on the way. -ENOENT is
 * returned unlogged; every refusal and other error is logged. */
int trusted_file_open(const char *path, FILE **ret);
