/* The INI parser: muqssd.conf through config_load(), the daemon's own entry
 * point, from a memfd so that no file is left behind. */
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "config_file.h"
#include "fuzz.h"

static int memfd = -1;
static char path[64];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_quiet_log();
	memfd = memfd_create("muqssd.conf", MFD_CLOEXEC);
	if (memfd < 0) {
		perror("memfd_create");
		abort();
	}
	/* A memfd is born 0777; config_load() refuses group-writable files. */
	if (fchmod(memfd, 0600) < 0) {
		perror("fchmod");
		abort();
	}
	/* Opened anew for every input, at offset 0. The drop-in directory
	 * "<path>.d" never exists. */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", memfd);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct config c, copy;

	if (ftruncate(memfd, 0) < 0 || pwrite(memfd, data, size, 0) != (ssize_t)size)
		abort();

	config_init_defaults(&c);
	if (config_load(&c, path, false) > 0 && config_copy(&copy, &c) == 0) {
		/* A loaded config can be copied and freed twice over. */
		config_free(&copy);
	}
	config_free(&c);
	return 0;
}
