#include "fixtures.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

char *tmpdir_new(void)
{
	const char *base = getenv("TMPDIR");
	char *dir;

	if (asprintf(&dir, "%s/muqss-test-XXXXXX", base ? base : "/tmp") < 0)
		abort();
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		abort();
	}
	return dir;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

void tmpdir_remove(char *dir)
{
	nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
	free(dir);
}

char *write_file(const char *dir, const char *name, const char *text)
{
	char *path;
	FILE *f;

	if (asprintf(&path, "%s/%s", dir, name) < 0)
		abort();
	f = fopen(path, "we");
	if (!f) {
		perror(path);
		abort();
	}
	fputs(text, f);
	fclose(f);
	/* Whatever the umask: a group-writable file would be refused. */
	chmod(path, 0644);
	return path;
}

static int saved_stderr = -1;
static int capture_fd = -1;

void capture_begin(void)
{
	fflush(stderr);
	capture_fd = memfd_create("capture", MFD_CLOEXEC);
	saved_stderr = dup(STDERR_FILENO);
	if (capture_fd < 0 || saved_stderr < 0 || dup2(capture_fd, STDERR_FILENO) < 0)
		abort();
}

const char *capture_end(void)
{
	static char buf[65536];
	ssize_t n;

	fflush(stderr);
	dup2(saved_stderr, STDERR_FILENO);
	close(saved_stderr);
	n = pread(capture_fd, buf, sizeof(buf) - 1, 0);
	close(capture_fd);
	buf[n > 0 ? n : 0] = '\0';
	/* Echo it, so a failing test shows what was logged. */
	fputs(buf, stderr);
	return buf;
}

bool captured(const char *log, const char *needle)
{
	if (strstr(log, needle))
		return true;
	printf("expected in the log: %s\nlog was:\n%s\n", needle, log);
	return false;
}
