/* The control server over socketpairs with a fake daemon: hello, version
 * mismatch, bad JSON and oversize close only their own client; a client
 * that never reads stalls nobody and is dropped; long queues are split;
 * lists stream as the client reads, and hide others' executables; clients
 * that all list at once share a tenth of the loop, and take turns, root
 * ahead of users. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check.h"
#include "control.h"
#include "time_util.h"
#include "wire.h"

static struct config_tunables tunables = { .rr_interval_ms = 6, .iso_cpu = 70 };
static int tunables_changed;
static int queue_len = 3;

static int fake_status(void *u, cJSON *o)
{
	return cJSON_AddStringToObject(o, "version", "test") ? 0 : -ENOMEM;
}

static int task_count, tasks_built;
static uint64_t task_cost_ns, task_busy_ns; /* CPU each task's JSON takes, and all of it */

static int fake_task_ids(void *u, pid_t **ret, size_t *n)
{
	*ret = malloc((task_count + 1) * sizeof(pid_t));
	REQUIRE(*ret);
	for (int i = 0; i < task_count; i++)
		(*ret)[i] = i + 1;
	*n = (size_t)task_count;
	return 0;
}

/* Task 2 is root's and shows its exe only to root; the rest are uid
 * 65534's; tid 3 is gone by the time its turn comes. */
static int fake_task_json(void *u, pid_t tid, cJSON **ret)
{
	cJSON *o;

	if (tid == 3)
		return -ESRCH;
	if (task_cost_ns) {
		/* CPU time, not the clock: a loaded machine preempts us. */
		uint64_t start = now_nsec(CLOCK_THREAD_CPUTIME_ID), now;

		while ((now = now_nsec(CLOCK_THREAD_CPUTIME_ID)) < start + task_cost_ns)
			;
		task_busy_ns += now - start;
	}
	o = cJSON_CreateObject();
	REQUIRE(o && cJSON_AddNumberToObject(o, "tid", tid - 1) &&
	      cJSON_AddStringToObject(o, "comm", "a-rather-long-comm") &&
	      cJSON_AddNumberToObject(o, "uid", tid == 2 ? 0 : 65534) &&
	      cJSON_AddNumberToObject(o, "euid", tid == 2 ? 0 : 65534) &&
	      cJSON_AddStringToObject(o, "exe", tid == 2 ? "/usr/sbin/secret" : "/bin/mine"));
	tasks_built++;
	*ret = o;
	return 0;
}

static int fake_queues(void *u, int cpu, cJSON *a)
{
	if (cpu >= 2)
		return -EINVAL;
	for (int c = 0; c < 2; c++) {
		cJSON *o, *q;

		if (cpu >= 0 && c != cpu)
			continue;
		o = cJSON_CreateObject();
		cJSON_AddNumberToObject(o, "cpu", c);
		q = cJSON_AddArrayToObject(o, "queue");
		for (int i = 0; i < queue_len; i++) {
			cJSON *e = cJSON_CreateObject();
			cJSON_AddNumberToObject(e, "tid", i);
			cJSON_AddStringToObject(e, "comm", "a-rather-long-comm");
			cJSON_AddStringToObject(e, "class", "normal");
			cJSON_AddNumberToObject(e, "deadline_rel_ns", 123456789);
			cJSON_AddItemToArray(q, e);
		}
		cJSON_AddItemToArray(a, o);
	}
	return 0;
}

/* The daemon has read the task once asked adopt_ready_after times; it
 * holds start time 7 for every task. */
static int adopt_calls, adopt_ready_after, set_class_calls;

static int fake_adopt(void *u, pid_t pid, pid_t tid, uint64_t start_time)
{
	if (++adopt_calls <= adopt_ready_after)
		return 0;
	return start_time == CONTROL_NO_START_TIME || start_time == 7 ? 1 : -ESRCH;
}

static int fake_set_class(void *u, pid_t pid, pid_t tid, enum sched_class class, bool nice_set,
			  int nice, char *err, size_t errlen)
{
	set_class_calls++;
	return 0;
}

static struct config_tunables *fake_tunables(void *u)
{
	return &tunables;
}

static void fake_changed(void *u)
{
	tunables_changed++;
}

static int fake_reload(void *u)
{
	return 0;
}

static const struct control_ops ops = {
	.status = fake_status, .task_ids = fake_task_ids, .task_json = fake_task_json,
	.dump_queues = fake_queues,
	.adopt = fake_adopt, .set_class = fake_set_class, .tunables = fake_tunables,
	.tunables_changed = fake_changed, .reload = fake_reload,
};

static sd_event *event;
static struct control_server *server;

static void spin(int rounds)
{
	for (int i = 0; i < rounds; i++)
		CHECK(sd_event_run(event, 1000) >= 0);
}

/* Hang-ups are dispatched one event source per sd_event_run(), in
 * whatever order epoll gives them: wait for the count, not for a number
 * of turns. */
static void spin_until_clients(unsigned n)
{
	uint64_t start = now_nsec(CLOCK_MONOTONIC);

	while (control_server_clients(server) != n) {
		REQUIRE(now_nsec(CLOCK_MONOTONIC) - start < 5ULL * 1000 * 1000 * 1000);
		spin(1);
	}
}

static int connect_client(void)
{
	int sv[2];

	REQUIRE(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv) == 0);
	REQUIRE(control_server_add_fd(server, sv[0]) == 0);
	return sv[1];
}

static void send_frame(int fd, uint16_t version, uint16_t type, const char *json)
{
	struct wire_buf b;

	wire_buf_init(&b, 0);
	CHECK(wire_buf_append(&b, version, type, json, json ? strlen(json) : 0) == 0);
	CHECK(wire_buf_flush(&b, fd) == 1);
	wire_buf_free(&b);
}

/* Spins the loop until a frame arrives; returns its type, the body in *body. */
static int recv_frame(int fd, char **body)
{
	struct wire_reader r = { 0 };
	struct muqss_header h;

	/* Lists get a tenth of the loop: allow a loaded machine seconds. */
	uint64_t give_up = now_nsec(CLOCK_MONOTONIC) + 10ULL * 1000 * 1000 * 1000;

	while (now_nsec(CLOCK_MONOTONIC) < give_up) {
		int k = wire_reader_read(&r, fd);
		if (k == 1) {
			wire_reader_take(&r, &h, body);
			return h.type;
		}
		if (k < 0) {
			wire_reader_reset(&r);
			return k;
		}
		spin(1);
	}
	wire_reader_reset(&r);
	return -ETIMEDOUT;
}

static void expect(int fd, int type, const char *needle)
{
	char *body = NULL;
	int t = recv_frame(fd, &body);

	if (t != type || (needle && (!body || !strstr(body, needle))))
		fprintf(stderr, "expected type %d with \"%s\", got %d: %s\n", type,
			needle ? needle : "", t, body ? body : "(none)");
	CHECK(t == type);
	CHECK(!needle || (body && strstr(body, needle)));
	free(body);
}

static void expect_closed(int fd)
{
	char *body = NULL;

	CHECK(recv_frame(fd, &body) == -ECONNRESET);
	close(fd);
}

/* A client whose SO_PEERCRED says uid (the creator's euid is what the
 * kernel records); needs root. */
static int connect_as(uid_t uid, int *added)
{
	int sv[2];

	REQUIRE(setresuid(-1, uid, 0) == 0);
	REQUIRE(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv) == 0);
	REQUIRE(setresuid(-1, 0, -1) == 0);
	*added = control_server_add_fd(server, sv[0]);
	return sv[1];
}

/* Slots: a per-uid cap, slots kept back for root, and a full table makes
 * room by taking the oldest connection of whoever holds the most. */
static void test_slots(void)
{
	struct control_options opts = { .no_listen = true, .max_clients = 40 };
	int a[17], b[8], c, root, added;

	REQUIRE(control_server_new(&server, event, &opts, &ops, NULL) == 0);
	for (int i = 0; i < 17; i++) {
		a[i] = connect_as(65534, &added);
		CHECK(added == (i < 16 ? 0 : -EBUSY));
	}
	expect(a[16], MUQSS_MSG_ERROR, "too many connections from uid 65534 (16)");
	close(a[16]);
	for (int i = 0; i < 8; i++) {
		b[i] = connect_as(65533, &added);
		CHECK(added == 0);
	}
	/* 24 of 40 taken: the rest are kept back. Uid 65532 gets in by
	 * taking uid 65534's oldest connection. */
	CHECK(control_server_clients(server) == 24);
	c = connect_as(65532, &added);
	CHECK(added == 0 && control_server_clients(server) == 24);
	expect(a[0], MUQSS_MSG_ERROR, "dropped to make room");
	/* Uid 65533 (8) takes from 65534 (15) too, but 65534 cannot take
	 * from itself: told the table is full. */
	b[0] = (close(b[0]), connect_as(65533, &added));
	CHECK(added == 0);
	expect(a[1], MUQSS_MSG_ERROR, "dropped to make room");
	spin_until_clients(23);
	close(connect_as(65531, &added));
	CHECK(added == 0 && control_server_clients(server) == 24);
	c = (close(c), connect_as(65534, &added));
	CHECK(added == -EBUSY);
	expect(c, MUQSS_MSG_ERROR, "too many clients (40)");
	spin_until_clients(22);
	/* The open slots full again; root takes a kept-back one and is
	 * answered at once. */
	c = (close(c), connect_as(65530, &added));
	CHECK(added == 0);
	a[0] = connect_as(65529, &added);
	CHECK(added == 0);
	spin_until_clients(24);
	root = connect_as(0, &added);
	CHECK(added == 0 && control_server_clients(server) == 25);
	send_frame(root, PROTOCOL_VERSION, MUQSS_MSG_HELLO, "{}");
	expect(root, MUQSS_MSG_HELLO, NULL);
	send_frame(root, PROTOCOL_VERSION, MUQSS_MSG_STATUS, NULL);
	expect(root, MUQSS_MSG_OK, "\"clients\":25");
	for (int i = 0; i < 16; i++)
		close(a[i]);
	for (int i = 0; i < 8; i++)
		close(b[i]);
	close(c);
	close(root);
	spin_until_clients(0);
	server = control_server_free(server);
}

static int hello(void)
{
	int fd = connect_client();

	send_frame(fd, PROTOCOL_VERSION, MUQSS_MSG_HELLO, "{\"client\":\"test\"}");
	expect(fd, MUQSS_MSG_HELLO, "\"protocol\":1");
	return fd;
}

/* Six clients list at once, 25 ms of CPU each: all of it takes no more
 * than about a tenth of the time, but not much less, and every client has
 * items before any has its whole list. */
static void test_budget(void)
{
	enum { N = 6 };
	struct wire_reader r[N] = { 0 };
	int fd[N], items[N] = { 0 }, done = 0, first_end_items_min = -1;
	/* Idle for seconds is fine here: a loaded machine preempts us. */
	struct control_options opts = { .no_listen = true, .idle_timeout_usec = 60000000 };
	uint64_t start;
	char *body;

	REQUIRE(control_server_new(&server, event, &opts, &ops, NULL) == 0);
	for (int i = 0; i < N; i++)
		fd[i] = hello();
	task_count = 1000;
	task_cost_ns = 25 * 1000;
	task_busy_ns = 0;
	start = now_nsec(CLOCK_MONOTONIC);
	for (int i = 0; i < N; i++)
		send_frame(fd[i], PROTOCOL_VERSION, MUQSS_MSG_TASKS, NULL);
	while (done < N) {
		REQUIRE(now_nsec(CLOCK_MONOTONIC) - start < 20ULL * 1000 * 1000 * 1000);
		/* Waits as the daemon's loop does, on the window's timer. */
		CHECK(sd_event_run(event, 100 * 1000) >= 0);
		for (int i = 0; i < N; i++) {
			struct muqss_header h;
			int k;

			while (items[i] >= 0 && (k = wire_reader_read(&r[i], fd[i])) != 0) {
				REQUIRE(k == 1);
				wire_reader_take(&r[i], &h, &body);
				free(body);
				if (h.type == MUQSS_MSG_ITEM) {
					items[i]++;
					continue;
				}
				CHECK(h.type == MUQSS_MSG_END && items[i] == task_count - 1);
				if (first_end_items_min < 0) {
					first_end_items_min = items[0];
					for (int j = 0; j < N; j++)
						if (items[j] < first_end_items_min)
							first_end_items_min = items[j];
				}
				items[i] = -1;
				done++;
			}
		}
	}
	CHECK(first_end_items_min > 0);
	CHECK(task_busy_ns * 8 <= now_nsec(CLOCK_MONOTONIC) - start);
	/* 150 ms of work is 1.5 s at a tenth; with a window's timer left
	 * at sd-event's default accuracy (250 ms) it took over 13 s. */
	if (now_nsec(CLOCK_MONOTONIC) - start > 6ULL * 1000 * 1000 * 1000)
		fprintf(stderr, "the lists took %.1f s\n",
			(double)(now_nsec(CLOCK_MONOTONIC) - start) / 1e9);
	CHECK(now_nsec(CLOCK_MONOTONIC) - start <= 6ULL * 1000 * 1000 * 1000);
	task_cost_ns = 0;
	for (int i = 0; i < N; i++) {
		wire_reader_reset(&r[i]);
		close(fd[i]);
	}
	fd[0] = hello();
	send_frame(fd[0], PROTOCOL_VERSION, MUQSS_MSG_STATUS, NULL);
	expect(fd[0], MUQSS_MSG_OK, "\"client_turns_put_off\":");
	close(fd[0]);
	spin_until_clients(0);
	server = control_server_free(server);
}

/* Reads what fd has for now; how many list items came. */
static int drain_items(struct wire_reader *r, int fd)
{
	struct muqss_header h;
	char *body;
	int n = 0;

	while (wire_reader_read(r, fd) == 1) {
		wire_reader_take(r, &h, &body);
		free(body);
		n += h.type == MUQSS_MSG_ITEM;
	}
	return n;
}

/* n users, ten a uid from first_uid (under the per-uid cap), each asking
 * for the task list. */
static void users_list(int *fd, int n, uid_t first_uid)
{
	int added;

	for (int i = 0; i < n; i++) {
		fd[i] = connect_as(first_uid + (uid_t)i / 10, &added);
		REQUIRE(added == 0);
		send_frame(fd[i], PROTOCOL_VERSION, MUQSS_MSG_HELLO, "{}");
		send_frame(fd[i], PROTOCOL_VERSION, MUQSS_MSG_TASKS, NULL);
	}
}

/* Forty users' lists fill the share; root, coming last, is let in ahead
 * of them: most of them have had no turn when its answer comes. */
static void test_budget_privileged(void)
{
	enum { N = 40 };
	struct control_options opts = { .no_listen = true, .idle_timeout_usec = 60000000 };
	struct wire_reader r[N] = { 0 };
	int fd[N], items[N] = { 0 }, root, added, moved = 0;
	uint64_t start = now_nsec(CLOCK_MONOTONIC);
	char *body = NULL;
	bool all_going;

	REQUIRE(control_server_new(&server, event, &opts, &ops, NULL) == 0);
	task_count = 400;
	task_cost_ns = 50 * 1000;
	users_list(fd, N, 65500);
	do {
		REQUIRE(now_nsec(CLOCK_MONOTONIC) - start < 20ULL * 1000 * 1000 * 1000);
		spin(1);
		all_going = true;
		for (int i = 0; i < N; i++) {
			items[i] += drain_items(&r[i], fd[i]);
			all_going &= items[i] > 0;
		}
	} while (!all_going);
	for (int i = 0; i < N; i++)
		items[i] = 0;
	root = connect_as(0, &added);
	REQUIRE(added == 0);
	send_frame(root, PROTOCOL_VERSION, MUQSS_MSG_HELLO, "{}");
	CHECK(recv_frame(root, &body) == MUQSS_MSG_HELLO);
	free(body);
	send_frame(root, PROTOCOL_VERSION, MUQSS_MSG_STATUS, NULL);
	CHECK(recv_frame(root, &body) == MUQSS_MSG_OK);
	free(body);
	for (int i = 0; i < N; i++)
		moved += (items[i] += drain_items(&r[i], fd[i])) > 0;
	/* In turn, root waited for all forty. */
	if (moved >= N / 2)
		fprintf(stderr, "%d of %d users had a turn before root's answer\n", moved, N);
	CHECK(moved < N / 2);
	task_cost_ns = 0;
	for (int i = 0; i < N; i++) {
		wire_reader_reset(&r[i]);
		close(fd[i]);
	}
	close(root);
	spin_until_clients(0);
	server = control_server_free(server);
}

/* Waiting in the queue for a turn is not idling: 120 users' lists at
 * once wait 0.6 s a round, longer than a 0.4 s idle timeout, and every
 * one of them ends whole. */
static void test_budget_queue_not_idle(void)
{
	enum { N = 120 };
	struct control_options opts = { .no_listen = true, .idle_timeout_usec = 400 * 1000 };
	struct wire_reader r[N] = { 0 };
	int fd[N], ended = 0, dropped = 0;
	bool done[N] = { false };
	uint64_t start = now_nsec(CLOCK_MONOTONIC);

	REQUIRE(control_server_new(&server, event, &opts, &ops, NULL) == 0);
	task_count = 100;
	task_cost_ns = 50 * 1000;
	users_list(fd, N, 65400);
	while (ended + dropped < N) {
		REQUIRE(now_nsec(CLOCK_MONOTONIC) - start < 60ULL * 1000 * 1000 * 1000);
		CHECK(sd_event_run(event, 100 * 1000) >= 0);
		for (int i = 0; i < N; i++) {
			struct muqss_header h;
			char *body;
			int k;

			while (!done[i] && (k = wire_reader_read(&r[i], fd[i])) != 0) {
				if (k < 0) {
					done[i] = true;
					dropped++;
					break;
				}
				wire_reader_take(&r[i], &h, &body);
				free(body);
				if (h.type == MUQSS_MSG_END) {
					done[i] = true;
					ended++;
				}
			}
		}
	}
	if (dropped)
		fprintf(stderr, "%d of %d clients dropped while waiting their turn\n", dropped, N);
	CHECK(dropped == 0);
	task_cost_ns = 0;
	for (int i = 0; i < N; i++) {
		wire_reader_reset(&r[i]);
		close(fd[i]);
	}
	spin_until_clients(0);
	server = control_server_free(server);
}

/* A SET_CLASS whose task the daemon is still reading waits, off the
 * loop's back, and the client's next request waits behind it. */
static void test_class_wait(int fd)
{
	char req[128], *body = NULL;
	int calls;

	snprintf(req, sizeof(req), "{\"pid\":%d,\"class\":\"iso\"}", (int)getpid());
	adopt_calls = set_class_calls = 0;
	adopt_ready_after = 3;
	send_frame(fd, PROTOCOL_VERSION, MUQSS_MSG_SET_CLASS, req);
	send_frame(fd, PROTOCOL_VERSION, MUQSS_MSG_STATUS, NULL);
	CHECK(recv_frame(fd, &body) == MUQSS_MSG_OK && !strstr(body, "version"));
	free(body);
	CHECK(adopt_calls == 4 && set_class_calls == 1);
	expect(fd, MUQSS_MSG_OK, "\"version\":\"test\"");

	/* The client's start time against the daemon's. */
	snprintf(req, sizeof(req), "{\"pid\":%d,\"class\":\"iso\",\"start_time\":8}",
		 (int)getpid());
	send_frame(fd, PROTOCOL_VERSION, MUQSS_MSG_SET_CLASS, req);
	snprintf(req, sizeof(req), "no such process: %d", (int)getpid());
	expect(fd, MUQSS_MSG_ERROR, req);
	CHECK(set_class_calls == 1);

	/* Never read: told after READ_WAIT_MAX_USEC, longer than this server's
	 * idle timeout, which must not cut the wait. */
	adopt_calls = 0;
	adopt_ready_after = 1 << 30;
	snprintf(req, sizeof(req), "{\"pid\":%d,\"class\":\"iso\"}", (int)getpid());
	send_frame(fd, PROTOCOL_VERSION, MUQSS_MSG_SET_CLASS, req);
	expect(fd, MUQSS_MSG_ERROR, "could not read task");
	CHECK(set_class_calls == 1 && adopt_calls > 10);

	/* A client gone while its request waits: the request is still
	 * carried out, then the client freed. */
	calls = control_server_clients(server);
	fd = hello();
	adopt_calls = 0;
	adopt_ready_after = 5;
	send_frame(fd, PROTOCOL_VERSION, MUQSS_MSG_SET_CLASS, req);
	spin(1);
	close(fd);
	spin_until_clients((unsigned)calls);
	CHECK(set_class_calls == 2);
	adopt_ready_after = 0;
}

int main(void)
{
	struct control_options opts = { .no_listen = true, .idle_timeout_usec = 300000 };
	int good, bad, quiet;
	char *body;

	REQUIRE(sd_event_new(&event) >= 0);
	REQUIRE(control_server_new(&server, event, &opts, &ops, NULL) == 0);

	good = hello();
	send_frame(good, PROTOCOL_VERSION, MUQSS_MSG_GET, "{\"name\":\"rr_interval\"}");
	expect(good, MUQSS_MSG_OK, "\"rr_interval\":6");
	send_frame(good, PROTOCOL_VERSION, MUQSS_MSG_SET, "{\"name\":\"rr_interval\",\"value\":\"0\"}");
	expect(good, MUQSS_MSG_ERROR, "rr_interval must be 1..1000 ms");
	send_frame(good, PROTOCOL_VERSION, MUQSS_MSG_SET,
		   "{\"name\":\"iso_reading\",\"value\":\"per-cpu\"}");
	expect(good, MUQSS_MSG_OK, NULL);
	CHECK(tunables.iso_reading == ISO_READING_PER_CPU && tunables_changed == 1);
	send_frame(good, PROTOCOL_VERSION, MUQSS_MSG_SET_CLASS, "{\"pid\":1,\"class\":\"rt\"}");
	expect(good, MUQSS_MSG_ERROR, "unknown class: rt");
	send_frame(good, PROTOCOL_VERSION, 999, NULL);
	expect(good, MUQSS_MSG_ERROR, "unknown request type 999");
	test_class_wait(good);

	/* A foreign version: told both versions, then closed. */
	bad = connect_client();
	send_frame(bad, PROTOCOL_VERSION + 1, MUQSS_MSG_HELLO, "{\"future\":true}");
	expect(bad, MUQSS_MSG_ERROR, "client speaks 2, muqssd speaks 1");
	expect_closed(bad);

	/* Requests before hello. */
	bad = connect_client();
	send_frame(bad, PROTOCOL_VERSION, MUQSS_MSG_STATUS, NULL);
	expect(bad, MUQSS_MSG_ERROR, "expected hello first");
	expect_closed(bad);

	/* Invalid JSON. */
	bad = hello();
	send_frame(bad, PROTOCOL_VERSION, MUQSS_MSG_GET, "{\"name\":");
	expect(bad, MUQSS_MSG_ERROR, "malformed request");
	expect_closed(bad);

	/* Oversize: refused from the header. */
	bad = hello();
	{
		uint8_t h[MUQSS_HEADER_SIZE];
		uint16_t v = PROTOCOL_VERSION, t = MUQSS_MSG_SET;
		uint32_t len = MUQSS_MAX_BODY + 1;
		memcpy(h, &v, 2);
		memcpy(h + 2, &t, 2);
		memcpy(h + 4, &len, 4);
		CHECK(write(bad, h, sizeof(h)) == sizeof(h));
	}
	expect(bad, MUQSS_MSG_ERROR, "frame too large: 65537 bytes (max 65536)");
	expect_closed(bad);

	/* A truncated frame, then hang-up. */
	bad = hello();
	CHECK(write(bad, "\x01\x00\x10\x00\x05", 5) == 5);
	close(bad);
	spin(3);

	/* The good client never noticed. */
	send_frame(good, PROTOCOL_VERSION, MUQSS_MSG_STATUS, NULL);
	expect(good, MUQSS_MSG_OK, "\"version\":\"test\"");
	CHECK(control_server_clients(server) == 1);

	/* Long queues are split over frames and arrive whole, in order. */
	queue_len = 3000;
	send_frame(good, PROTOCOL_VERSION, MUQSS_MSG_QUEUES, NULL);
	{
		int items = 0, entries = 0, next_tid = 0, t;
		while ((t = recv_frame(good, &body)) == MUQSS_MSG_ITEM) {
			cJSON *o = cJSON_Parse(body), *e;
			CHECK(o);
			cJSON_ArrayForEach(e, cJSON_GetObjectItem(o, "queue")) {
				int tid = (int)cJSON_GetNumberValue(cJSON_GetObjectItem(e, "tid"));
				CHECK(tid == next_tid);
				next_tid = (next_tid + 1) % queue_len;
				entries++;
			}
			cJSON_Delete(o);
			free(body);
			items++;
		}
		REQUIRE(t == MUQSS_MSG_END && strstr(body, "\"count\""));
		free(body);
		CHECK(entries == 2 * queue_len && items > 2);
	}
	queue_len = 3;

	/* Tasks stream, one ITEM per task, in order, then END with the count;
	 * a task gone before its turn is left out. Root sees every exe. */
	task_count = 5;
	send_frame(good, PROTOCOL_VERSION, MUQSS_MSG_TASKS, NULL);
	expect(good, MUQSS_MSG_ITEM, "\"tid\":0,");
	expect(good, MUQSS_MSG_ITEM, "\"exe\":\"/usr/sbin/secret\"");
	expect(good, MUQSS_MSG_ITEM, "\"tid\":3,");
	expect(good, MUQSS_MSG_ITEM, "\"tid\":4,");
	expect(good, MUQSS_MSG_END, "\"count\":4");

	/* Anyone else sees only the exe of their own processes, as in /proc. */
	if (geteuid() == 0) {
		int sv[2];

		REQUIRE(setresuid(-1, 65534, 0) == 0);
		REQUIRE(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv) == 0);
		REQUIRE(setresuid(-1, 0, -1) == 0);
		REQUIRE(control_server_add_fd(server, sv[0]) == 0);
		send_frame(sv[1], PROTOCOL_VERSION, MUQSS_MSG_HELLO, "{}");
		expect(sv[1], MUQSS_MSG_HELLO, NULL);
		send_frame(sv[1], PROTOCOL_VERSION, MUQSS_MSG_TASKS, NULL);
		expect(sv[1], MUQSS_MSG_ITEM, "\"exe\":\"/bin/mine\"");
		expect(sv[1], MUQSS_MSG_ITEM, "\"exe\":null");
		expect(sv[1], MUQSS_MSG_ITEM, "\"exe\":\"/bin/mine\"");
		expect(sv[1], MUQSS_MSG_ITEM, "\"exe\":\"/bin/mine\"");
		expect(sv[1], MUQSS_MSG_END, "\"count\":4");
		close(sv[1]);
		spin(3);
		CHECK(control_server_clients(server) == 1);
	}

	/* A client that sends and never reads: the loop goes on, others are
	 * served, and it is dropped after the idle timeout. */
	quiet = hello();
	for (int i = 0; i < 20000; i++) {
		struct wire_buf b;
		wire_buf_init(&b, 0);
		CHECK(wire_buf_append(&b, PROTOCOL_VERSION, MUQSS_MSG_QUEUES, NULL, 0) == 0);
		if (wire_buf_flush(&b, quiet) != 1) {
			wire_buf_free(&b);
			break;
		}
		wire_buf_free(&b);
		if (i % 100 == 0)
			spin(1);
	}
	spin(5);
	send_frame(good, PROTOCOL_VERSION, MUQSS_MSG_STATUS, NULL);
	expect(good, MUQSS_MSG_OK, "\"version\":\"test\"");
	CHECK(control_server_clients(server) == 2);
	for (int i = 0; i < 100 && control_server_clients(server) > 1; i++) {
		/* Keep the good one busy so only the quiet one times out. */
		send_frame(good, PROTOCOL_VERSION, MUQSS_MSG_STATUS, NULL);
		expect(good, MUQSS_MSG_OK, NULL);
		usleep(20000);
	}
	CHECK(control_server_clients(server) == 1);
	close(quiet);

	close(good);
	spin_until_clients(0);

	/* More tasks than fit in a client's output (4 MiB): they go out as
	 * the client reads, a bounded batch per loop turn, and arrive whole. */
	good = hello();
	task_count = 60000;
	tasks_built = 0;
	send_frame(good, PROTOCOL_VERSION, MUQSS_MSG_TASKS, NULL);
	spin(1);
	CHECK(tasks_built > 0 && tasks_built < 20000);
	{
		int items = 0, t;

		while ((t = recv_frame(good, &body)) == MUQSS_MSG_ITEM) {
			free(body);
			items++;
		}
		REQUIRE(t == MUQSS_MSG_END && strstr(body, "\"count\":59999"));
		free(body);
		CHECK(items == task_count - 1);
	}
	send_frame(good, PROTOCOL_VERSION, MUQSS_MSG_STATUS, NULL);
	expect(good, MUQSS_MSG_OK, "\"version\":\"test\"");

	/* A client that asks and never reads costs a bounded batch, not the
	 * list, and goes at the idle timeout. */
	quiet = hello();
	tasks_built = 0;
	send_frame(quiet, PROTOCOL_VERSION, MUQSS_MSG_TASKS, NULL);
	for (int i = 0; i < 100 && control_server_clients(server) > 1; i++) {
		send_frame(good, PROTOCOL_VERSION, MUQSS_MSG_STATUS, NULL);
		expect(good, MUQSS_MSG_OK, NULL);
		usleep(20000);
	}
	CHECK(control_server_clients(server) == 1);
	CHECK(tasks_built > 0 && tasks_built < 20000);
	close(quiet);
	task_count = 0;
	send_frame(good, PROTOCOL_VERSION, MUQSS_MSG_TASKS, NULL);
	expect(good, MUQSS_MSG_END, "\"count\":0");
	close(good);
	spin_until_clients(0);
	server = control_server_free(server);
	test_budget();
	if (geteuid() == 0) {
		test_slots();
		test_budget_privileged();
		test_budget_queue_not_idle();
	}
	sd_event_unref(event);
	return CHECK_EXIT();
}
