/* Configuration and rule files, opened through a trusted walk. */
#include "trusted_file.h"

#include <errno.h>
#include <unistd.h>

#include "log.h"
#include "trusted_path.h"

int trusted_file_open(const char *path, FILE **ret)
{
	FILE *f;
	int fd, r;

	r = trusted_path_open(path, 0, &fd);
	if (r < 0)
		return r;
	f = fdopen(fd, "re");
	if (!f) {
		r = log_error_errno(errno, "%s: %m", path);
		close(fd);
		return r;
	}
	*ret = f;
	return 0;
}
