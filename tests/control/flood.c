/* Opens many control connections at once, plus one that sends requests
 * and never reads, and checks that every other one gets its status reply.
 *	flood SOCKET N */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "wire.h"

struct conn {
	int fd;
	struct wire_reader in;
	int replies; /* hello, then status */
};

static int open_conn(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		fprintf(stderr, "flood: connect %s: %s\n", path, strerror(errno));
		exit(EXIT_FAILURE);
	}
	return fd;
}

static void send_requests(int fd, int n_status)
{
	struct wire_buf b;

	wire_buf_init(&b, 0);
	wire_buf_append(&b, PROTOCOL_VERSION, MUQSS_MSG_HELLO, "{}", 2);
	for (int i = 0; i < n_status; i++)
		wire_buf_append(&b, PROTOCOL_VERSION, MUQSS_MSG_TASKS, NULL, 0);
	/* Blocking socket: the never-reader's requests may fill it; stop then. */
	while (wire_buf_pending(&b) > 0) {
		int k = wire_buf_flush(&b, fd);
		if (k <= 0)
			break;
	}
	wire_buf_free(&b);
}

int main(int argc, char **argv)
{
	struct conn *c;
	struct pollfd *p;
	int n, done = 0, stuck;
	time_t deadline;

	if (argc != 3) {
		fprintf(stderr, "usage: flood SOCKET N\n");
		return 2;
	}
	n = atoi(argv[2]);
	c = calloc((size_t)n, sizeof(*c));
	p = calloc((size_t)n, sizeof(*p));
	/* The never-reader first, so it is in the way of everyone else. */
	stuck = open_conn(argv[1]);
	send_requests(stuck, 5000);
	for (int i = 0; i < n; i++)
		c[i].fd = open_conn(argv[1]);
	for (int i = 0; i < n; i++)
		send_requests(c[i].fd, 1);
	deadline = time(NULL) + 20;
	while (done < n && time(NULL) < deadline) {
		for (int i = 0; i < n; i++)
			p[i] = (struct pollfd){ .fd = c[i].replies >= 2 ? -1 : c[i].fd, .events = POLLIN };
		if (poll(p, (nfds_t)n, 1000) < 0 && errno != EINTR)
			break;
		for (int i = 0; i < n; i++) {
			struct muqss_header h;
			char *body;
			int k;
			if (!(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			while ((k = wire_reader_read(&c[i].in, c[i].fd)) == 1) {
				wire_reader_take(&c[i].in, &h, &body);
				free(body);
				if (h.type == MUQSS_MSG_ERROR) {
					fprintf(stderr, "flood: client %d got an error\n", i);
					return EXIT_FAILURE;
				}
				if (h.type == MUQSS_MSG_HELLO || h.type == MUQSS_MSG_END)
					c[i].replies++;
				if (c[i].replies == 2) {
					done++;
					break;
				}
			}
			if (k < 0) {
				fprintf(stderr, "flood: client %d: %s\n", i, strerror(-k));
				return EXIT_FAILURE;
			}
		}
	}
	printf("flood: %d of %d clients answered\n", done, n);
	close(stuck);
	free(c);
	free(p);
	return done == n ? EXIT_SUCCESS : EXIT_FAILURE;
}
