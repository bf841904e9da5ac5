/* The daemon's request handling: bytes into a socketpair served by the
 * real control server (framing, hello, authorization, every request) with
 * a fake daemon behind it, as tests/control/test-server.c drives it.
 *
 * The first input byte holds flags: bit 0 sends a proper HELLO first, so
 * that the rest reaches the requests; bit 1 makes the peer an unprivileged
 * user (uid 65534) instead of root, so that authorization is tried. The
 * fake daemon changes nothing; a SET_CLASS or a GET may read /proc and
 * the scheduling policy of a fuzzed pid, no more. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "control-internal.h"
#include "fuzz.h"

static const struct config_tunables tunables_default = {
	.rr_interval_ms = 6, .interactive = 1, .iso_cpu = 70, .yield_type = 1,
};
static struct config_tunables tunables;

static int fake_status(void *u, cJSON *o)
{
	return cJSON_AddStringToObject(o, "version", "fuzz") ? 0 : -ENOMEM;
}

static int fake_task_ids(void *u, pid_t **ret, size_t *n)
{
	*ret = malloc(2 * sizeof(pid_t));
	if (!*ret)
		return -ENOMEM;
	(*ret)[0] = 1;
	(*ret)[1] = 2; /* gone by its turn */
	*n = 2;
	return 0;
}

static int fake_task_json(void *u, pid_t tid, cJSON **ret)
{
	cJSON *e;

	if (tid != 1)
		return -ESRCH;
	e = cJSON_CreateObject();
	if (!e || !cJSON_AddNumberToObject(e, "tid", 1) || !cJSON_AddNumberToObject(e, "uid", 0) ||
	    !cJSON_AddStringToObject(e, "exe", "/sbin/init")) {
		cJSON_Delete(e);
		return -ENOMEM;
	}
	*ret = e;
	return 0;
}

static int fake_queues(void *u, int cpu, cJSON *a)
{
	cJSON *o;

	if (cpu >= 2)
		return -EINVAL;
	o = cJSON_CreateObject();
	if (!o)
		return -ENOMEM;
	cJSON_AddItemToArray(a, o);
	return cJSON_AddNumberToObject(o, "cpu", cpu < 0 ? 0 : cpu) &&
			       cJSON_AddArrayToObject(o, "queue") ? 0 : -ENOMEM;
}

static int fake_set_class(void *u, pid_t pid, pid_t tid, enum sched_class class, bool nice_set,
			  int nice, char *err, size_t errlen)
{
	if (nice_set && (nice < -20 || nice > 19))
		__builtin_trap(); /* the server must have checked it */
	return 0;
}

static struct config_tunables *fake_tunables(void *u)
{
	return &tunables;
}

static void fake_changed(void *u)
{
}

static int fake_reload(void *u)
{
	return 0;
}

static const struct control_ops ops = {
	.status = fake_status, .task_ids = fake_task_ids, .task_json = fake_task_json,
	.dump_queues = fake_queues,
	.set_class = fake_set_class, .tunables = fake_tunables,
	.tunables_changed = fake_changed, .reload = fake_reload,
};

static sd_event *event;
static struct control_server *server;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct control_options opts = { .no_listen = true };

	fuzz_quiet_log();
	if (sd_event_new(&event) < 0 ||
	    control_server_new(&server, event, &opts, &ops, NULL) < 0)
		abort();
	return 0;
}

/* Reads and drops what the server sent; false once it closed. */
static bool drain(int fd)
{
	char buf[16384];

	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);

		if (n > 0)
			continue;
		return n < 0 && (errno == EAGAIN || errno == EINTR);
	}
}

/* The bytes the fake client sends: maybe a HELLO frame, then the input. */
static uint8_t *client_bytes(bool hello, const uint8_t *data, size_t size, size_t *ret_len)
{
	static const char body[] = "{\"client\":\"fuzz\"}";
	struct muqss_header h = {
		.version = PROTOCOL_VERSION,
		.type = MUQSS_MSG_HELLO,
		.length = sizeof(body) - 1,
	};
	size_t head = hello ? MUQSS_HEADER_SIZE + sizeof(body) - 1 : 0;
	uint8_t *out = malloc(head + size + 1);

	if (!out)
		return NULL;
	if (hello) {
		memcpy(out, &h.version, 2);
		memcpy(out + 2, &h.type, 2);
		memcpy(out + 4, &h.length, 4);
		memcpy(out + MUQSS_HEADER_SIZE, body, sizeof(body) - 1);
	}
	memcpy(out + head, data, size);
	*ret_len = head + size;
	return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t len, off = 0;
	uint8_t *bytes;
	bool open = true;
	int sv[2];

	if (size == 0)
		return 0;
	tunables = tunables_default;
	bytes = client_bytes(data[0] & 1, data + 1, size - 1, &len);
	if (!bytes)
		return 0;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv) < 0 ||
	    control_server_add_fd(server, sv[0]) < 0)
		abort();
	if (data[0] & 2) {
		/* The newest client is at the head of the list. */
		server->clients->uid = 65534;
		server->clients->gid = 65534;
		server->clients->admin = false;
	}

	/* Write while the server reads, then hang up and wait for it to
	 * close: a connection that outlives its input is a bug. */
	for (int i = 0; i < 2000 && (open || control_server_clients(server) > 0); i++) {
		if (off < len) {
			ssize_t n = send(sv[1], bytes + off, len - off, MSG_DONTWAIT | MSG_NOSIGNAL);

			if (n > 0)
				off += (size_t)n;
			else if (n < 0 && errno != EAGAIN && errno != EINTR)
				off = len; /* the server closed first */
			if (off == len)
				(void)shutdown(sv[1], SHUT_WR);
		} else if (i == 0) {
			(void)shutdown(sv[1], SHUT_WR);
		}
		if (sd_event_run(event, 1000) < 0)
			abort();
		open = drain(sv[1]);
	}
	if (control_server_clients(server) > 0) {
		fprintf(stderr, "the server kept a client whose input had ended\n");
		__builtin_trap();
	}
	close(sv[1]);
	free(bytes);
	return 0;
}
