/* The client side, given a hostile daemon: the input is the byte stream a
 * fake muqssd sends back on a real socket, read by libmuqss-client as
 * replies to hello, status, queues, tasks, get and set-class, and what the
 * library hands over is printed by muqssctl's own tables and top view
 * (to /dev/null). Anyone who can bind the socket path a user points
 * muqssctl at is that daemon. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "fuzz.h"
#include "muqss-client.h"

/* muqssctl's printers are static or private to it: build them in here. */
#include "../../muqssctl/print.c"
#include "../../muqssctl/top.c"

/* top.c's verb needs these; the fuzzer never runs the verb. */
int ctl_connect(struct ctl *ctl)
{
	(void)ctl;
	return EXIT_FAIL;
}

static char sock_path[108];
static int listen_fd = -1;

struct feed {
	const uint8_t *data;
	size_t size;
};

/* The fake daemon: everything at once, then end of file; then it reads
 * what the client sends until the client goes. */
static void *serve(void *arg)
{
	const struct feed *f = arg;
	char sink[4096];
	size_t off = 0;
	int fd = accept(listen_fd, NULL, NULL);

	if (fd < 0)
		return NULL;
	while (off < f->size) {
		ssize_t n = send(fd, f->data + off, f->size - off, MSG_NOSIGNAL);
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	shutdown(fd, SHUT_WR);
	while (read(fd, sink, sizeof(sink)) > 0)
		;
	close(fd);
	return NULL;
}

static char sock_dir[] = "/tmp/muqss-fuzz-client.XXXXXX";

/* Each run made a directory under /tmp and left it there. */
static void remove_socket(void)
{
	unlink(sock_path);
	rmdir(sock_dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	(void)argc;
	(void)argv;
	if (!mkdtemp(sock_dir))
		abort();
	atexit(remove_socket);
	snprintf(sock_path, sizeof(sock_path), "%s/control", sock_dir);
	strcpy(sa.sun_path, sock_path);
	listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (listen_fd < 0 || bind(listen_fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(listen_fd, 4) < 0)
		abort();
	/* The tables go nowhere; only what printing them does matters. */
	if (!freopen("/dev/null", "w", stdout))
		abort();
	return 0;
}

static cJSON *call_json(struct muqss_client *c, int which)
{
	char *text = NULL;
	cJSON *o = NULL;
	int r = which == 0 ? muqss_status_json(c, &text) :
		which == 1 ? muqss_queues_json(c, -1, &text) :
			     muqss_tasks_json(c, &text);

	if (r == 0 && text) {
		ctl_print_json(text); /* --json */
		o = cJSON_Parse(text);
	}
	free(text);
	return o;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct feed f = { data, size };
	struct muqss_client *c = NULL;
	struct top t = { 0 };
	cJSON *status, *queues, *tasks;
	char *text = NULL, buf[1024];
	pthread_t th;

	if (pthread_create(&th, NULL, serve, &f) != 0)
		return 0;
	if (muqss_connect(&c, sock_path) == 0) {
		print_text(buf, sizeof(buf), muqss_server_version(c));
		status = call_json(c, 0);
		queues = call_json(c, 1);
		tasks = call_json(c, 2);
		if (status)
			print_status(status);
		if (queues)
			print_queues(queues);
		if (tasks)
			print_tasks(tasks);
		if (status && queues && tasks) {
			/* Twice, so that shares are computed from two samples. */
			top_account(&t, queues, tasks, 1.0);
			top_account(&t, queues, tasks, 2.0);
			top_draw(&t, status, queues, false);
		}
		if (muqss_get_tunable(c, "rr_interval", &text) == 0)
			print_text(buf, sizeof(buf), text);
		free(text);
		if (muqss_set_class(c, getpid(), MUQSS_POLICY_ISO) < 0)
			print_text(buf, sizeof(buf), muqss_error_message(c));
		cJSON_Delete(status);
		cJSON_Delete(queues);
		cJSON_Delete(tasks);
		free(t.prev);
	}
	muqss_close(c);
	pthread_join(th, NULL);
	return 0;
}
