/* The socket's mode and group are never set by a path that follows a
 * symlink: bind() is wrapped to swap the fresh socket for a symlink to a
 * victim file, as a racing user with write access to the directory could,
 * and the victim must keep its mode and group. */
#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "check.h"
#include "control.h"

static char dir[] = "/tmp/muqss-bind-XXXXXX";
static char sock[256], moved[256], victim[256];

int __real_bind(int fd, const struct sockaddr *sa, socklen_t len);
int __wrap_bind(int fd, const struct sockaddr *sa, socklen_t len);

int __wrap_bind(int fd, const struct sockaddr *sa, socklen_t len)
{
	int r = __real_bind(fd, sa, len);

	if (r == 0) {
		CHECK(rename(sock, moved) == 0);
		CHECK(symlink(victim, sock) == 0);
	}
	return r;
}

static int fake_status(void *u, cJSON *o)
{
	return 0;
}

static const struct control_ops ops = { .status = fake_status };

int main(void)
{
	struct control_options opts = { .socket_mode = 0666 };
	struct control_server *server = NULL;
	struct group *g = getgrnam("nogroup");
	struct stat st;
	sd_event *event;
	FILE *f;

	if (!g)
		g = getgrnam("nobody");
	if (geteuid() != 0 || !g) {
		fprintf(stderr, "needs root and a group nogroup or nobody\n");
		return 77;
	}
	REQUIRE(mkdtemp(dir));
	snprintf(sock, sizeof(sock), "%s/control", dir);
	snprintf(moved, sizeof(moved), "%s/control.real", dir);
	snprintf(victim, sizeof(victim), "%s/victim", dir);
	REQUIRE((f = fopen(victim, "w")) && fclose(f) == 0);
	CHECK(chmod(victim, 0600) == 0 && chown(victim, 0, 0) == 0);

	opts.socket_path = sock;
	opts.socket_group = g->gr_name;
	REQUIRE(sd_event_new(&event) >= 0);
	(void)control_server_new(&server, event, &opts, &ops, NULL);

	REQUIRE(stat(victim, &st) == 0);
	if ((st.st_mode & 07777) != 0600 || st.st_gid != 0)
		fprintf(stderr, "victim is now mode %o group %u\n", (unsigned)(st.st_mode & 07777),
			(unsigned)st.st_gid);
	CHECK((st.st_mode & 07777) == 0600);
	CHECK(st.st_gid == 0);
	/* The socket itself was born with its mode. */
	CHECK(lstat(moved, &st) == 0 && S_ISSOCK(st.st_mode) && (st.st_mode & 0777) == 0666);

	control_server_free(server);
	sd_event_unref(event);
	unlink(sock);
	unlink(moved);
	unlink(victim);
	rmdir(dir);
	return CHECK_EXIT();
}
