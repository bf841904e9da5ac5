/* Placeholder until the INI loader lands: built-in defaults only. */
#include "config_file.h"

#include <errno.h>
#include <unistd.h>

#include "log.h"

int config_load(struct config *c, const char *path, bool missing_ok)
{
	(void)c;
	if (access(path, R_OK) < 0) {
		if (missing_ok && errno == ENOENT)
			return 0;
		return log_error_errno(errno, "%s: %m", path);
	}
	return 1;
}
