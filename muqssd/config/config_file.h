/* Loading muqssd.conf and its muqssd.conf.d drop-ins. */
#pragma once

#include <stdbool.h>

#include "config.h"

/* Loads path, then path's ".d" directory (every muqssd.conf.d/NAME.conf, in name
 * order) on top of *c. Logs every bad value with file, line, key and the
 * allowed range. Returns 1 when the file was read, 0 when it is missing and
 * missing_ok, -errno otherwise; on error *c is left unchanged. */
int config_load(struct config *c, const char *path, bool missing_ok);
