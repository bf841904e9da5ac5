/* libmuqss-client example: print the daemon's version and rr_interval,
 * then ask for ISO for this process through the async interface, the way
 * a program with its own poll loop would.
 *
 *	cc example.c $(pkg-config --cflags --libs libmuqss-client)
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <muqss-client.h>

static void on_reply(struct muqss_client *c, int error, const char *json, void *userdata)
{
	int *done = userdata;

	if (error < 0)
		fprintf(stderr, "ISO refused: %s\n", muqss_error_message(c));
	else
		printf("this process now runs as ISO\n");
	*done = 1;
}

int main(int argc, char **argv)
{
	struct muqss_client *c;
	char *rr = NULL;
	int done = 0, r;

	r = muqss_connect(&c, argc > 1 ? argv[1] : NULL);
	if (r < 0) {
		fprintf(stderr, "cannot connect to muqssd: %s\n", strerror(-r));
		return EXIT_FAILURE;
	}
	printf("muqssd %s\n", muqss_server_version(c));
	r = muqss_get_tunable(c, "rr_interval", &rr);
	if (r == 0)
		printf("rr_interval = %s ms\n", rr);
	free(rr);

	r = muqss_set_class_async(c, getpid(), 0, MUQSS_POLICY_ISO, on_reply, &done);
	while (r >= 0 && !done) {
		struct pollfd p = { .fd = muqss_get_fd(c), .events = POLLIN };
		if (poll(&p, 1, 5000) <= 0)
			break;
		r = muqss_dispatch(c);
	}
	muqss_close(c);
	return done ? EXIT_SUCCESS : EXIT_FAILURE;
}
