/* The /proc line parsers: stat, status, schedstat and cgroup, each fed the
 * same text, which the kernel would never write but a reader must survive. */
#include <string.h>

#include "fuzz.h"
#include "procfs_parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const controllers[] = { "", "cpu", "cpuset", "name=systemd" };
	struct procfs_schedstat schedstat;
	struct procfs_status status;
	struct procfs_stat stat;
	char path[64], *text, *nl;

	/* The readers hand the parsers a NUL-terminated buffer. */
	text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';

	(void)procfs_parse_stat(text, &stat);
	(void)procfs_parse_status(text, &status);
	(void)procfs_parse_schedstat(text, &schedstat);
	for (size_t i = 0; i < sizeof(controllers) / sizeof(controllers[0]); i++)
		if (procfs_parse_cgroup(text, controllers[i], path, sizeof(path)) == 0)
			(void)cgroup_path_within(path, "/muqss");

	/* Two paths, split at the first newline. */
	nl = strchr(text, '\n');
	if (nl) {
		*nl = '\0';
		(void)cgroup_path_within(text, nl + 1);
		(void)cgroup_path_within(nl + 1, text);
	}
	free(text);
	return 0;
}
