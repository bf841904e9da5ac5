/* The table of muqssd.conf keys and their value parsers. */
#pragma once

#include "config.h"

/* Where a value came from, for messages: "FILE:LINE: key: ...". */
struct config_pos {
	const char *file;
	unsigned line;
};

/* Applies one "key = value" of section to *c. Logs a bad value or an unknown
 * key with its position and returns -EINVAL; -ENOMEM is passed up. */
int config_key_apply(struct config *c, const struct config_pos *pos, const char *section,
		     const char *key, const char *value);

/* Checks what no single key can: that mode=pid has a pid, and so on. */
int config_validate(const struct config *c, const char *path);
