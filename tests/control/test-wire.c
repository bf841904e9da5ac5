/* Framing over a socketpair: partial reads, oversize, bad version, bad
 * JSON and list termination. */
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check.h"
#include "wire.h"

static void pair(int sv[2])
{
	REQUIRE(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
}

static void put_header(int fd, uint16_t version, uint16_t type, uint32_t length)
{
	uint8_t h[MUQSS_HEADER_SIZE];

	memcpy(h, &version, 2);
	memcpy(h + 2, &type, 2);
	memcpy(h + 4, &length, 4);
	CHECK(write(fd, h, sizeof(h)) == (ssize_t)sizeof(h));
}

/* One frame written a byte at a time is seen only when complete. */
static void test_byte_by_byte(void)
{
	struct wire_buf out;
	struct wire_reader r = { 0 };
	struct muqss_header h;
	char *body;
	cJSON *o;
	int sv[2];

	pair(sv);
	wire_buf_init(&out, 0);
	CHECK(wire_buf_append(&out, PROTOCOL_VERSION, MUQSS_MSG_GET, "{\"name\":\"iso_cpu\"}",
			      18) == 0);
	CHECK(wire_buf_append(&out, PROTOCOL_VERSION, MUQSS_MSG_STATUS, NULL, 0) == 0);
	size_t first = MUQSS_HEADER_SIZE + 18;
	for (size_t i = 0; i < first; i++) {
		CHECK(wire_reader_read(&r, sv[1]) == 0);
		CHECK(write(sv[0], out.data + i, 1) == 1);
	}
	REQUIRE(wire_reader_read(&r, sv[1]) == 1);
	wire_reader_take(&r, &h, &body);
	CHECK(h.version == PROTOCOL_VERSION && h.type == MUQSS_MSG_GET && h.length == 18);
	REQUIRE(wire_parse_body(body, h.length, &o) == 0);
	CHECK(strcmp(cJSON_GetObjectItem(o, "name")->valuestring, "iso_cpu") == 0);
	cJSON_Delete(o);
	free(body);

	/* The empty second frame, again a byte at a time. */
	for (size_t i = first; i < out.len; i++) {
		CHECK(wire_reader_read(&r, sv[1]) == 0);
		CHECK(write(sv[0], out.data + i, 1) == 1);
	}
	REQUIRE(wire_reader_read(&r, sv[1]) == 1);
	wire_reader_take(&r, &h, &body);
	CHECK(h.type == MUQSS_MSG_STATUS && h.length == 0 && body == NULL);
	CHECK(wire_parse_body(body, 0, &o) == 0 && cJSON_IsObject(o));
	cJSON_Delete(o);

	/* The same from memory, split at every byte. */
	size_t used, total = 0;
	int k = 0;
	while (total < out.len) {
		k = wire_reader_feed(&r, out.data + total, 1, &used);
		CHECK(used == 1);
		total += used;
		if (k == 1)
			break;
		CHECK(k == 0);
	}
	REQUIRE(k == 1 && total == first);
	wire_reader_take(&r, &h, &body);
	free(body);

	/* A frame cut short by a hang-up is an error, not a frame. */
	CHECK(write(sv[0], out.data, 5) == 5);
	close(sv[0]);
	CHECK(wire_reader_read(&r, sv[1]) == -ECONNRESET);
	wire_reader_reset(&r);
	wire_buf_free(&out);
	close(sv[1]);
}

/* 64 KiB is fine; one byte more is refused from the header alone. */
static void test_oversize(void)
{
	struct wire_reader r = { 0 };
	struct wire_buf out;
	char *big;
	int sv[2];

	pair(sv);
	put_header(sv[0], PROTOCOL_VERSION, MUQSS_MSG_SET, MUQSS_MAX_BODY + 1);
	struct mallinfo2 before = mallinfo2();
	CHECK(wire_reader_read(&r, sv[1]) == -EMSGSIZE);
	struct mallinfo2 after = mallinfo2();
	CHECK(r.body == NULL);
	CHECK(after.uordblks <= before.uordblks + 1024);
	wire_reader_reset(&r);

	/* A length near 4 GiB must not be trusted either. */
	put_header(sv[0], PROTOCOL_VERSION, MUQSS_MSG_SET, UINT32_MAX);
	CHECK(wire_reader_read(&r, sv[1]) == -EMSGSIZE && r.body == NULL);
	wire_reader_reset(&r);
	close(sv[0]);
	close(sv[1]);

	/* The writer holds itself to the same cap. */
	big = malloc(MUQSS_MAX_BODY + 1);
	REQUIRE(big);
	memset(big, ' ', MUQSS_MAX_BODY + 1);
	wire_buf_init(&out, 0);
	CHECK(wire_buf_append(&out, PROTOCOL_VERSION, MUQSS_MSG_OK, big, MUQSS_MAX_BODY + 1) ==
	      -EMSGSIZE);
	CHECK(wire_buf_append(&out, PROTOCOL_VERSION, MUQSS_MSG_OK, big, MUQSS_MAX_BODY) == 0);
	wire_buf_free(&out);

	/* And a bounded buffer refuses what would pass its max. */
	wire_buf_init(&out, 100);
	CHECK(wire_buf_append(&out, PROTOCOL_VERSION, MUQSS_MSG_OK, big, 92) == 0);
	CHECK(wire_buf_append(&out, PROTOCOL_VERSION, MUQSS_MSG_OK, NULL, 0) == -ENOBUFS);
	wire_buf_free(&out);
	free(big);
}

/* A foreign version is reported at the header; its body is left alone. */
static void test_bad_version(void)
{
	struct wire_reader r = { 0 };
	struct muqss_header h;
	char *body;
	int sv[2];

	pair(sv);
	put_header(sv[0], PROTOCOL_VERSION + 1, MUQSS_MSG_HELLO, 10);
	CHECK(write(sv[0], "0123456789", 10) == 10);
	REQUIRE(wire_reader_read(&r, sv[1]) == 1);
	wire_reader_take(&r, &h, &body);
	CHECK(h.version == PROTOCOL_VERSION + 1 && h.length == 10 && body == NULL);
	char rest[16];
	CHECK(read(sv[1], rest, sizeof(rest)) == 10);
	close(sv[0]);
	close(sv[1]);
}

static void test_bad_json(void)
{
	static const char *const bad[] = { "{", "[1,2]", "\"x\"", "{\"a\":}", "nul", "{}}" };
	cJSON *o = NULL;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int k = wire_parse_body(bad[i], strlen(bad[i]), &o);
		if (k != -EBADMSG)
			fprintf(stderr, "accepted bad body %s\n", bad[i]);
		CHECK(k == -EBADMSG);
	}
	CHECK(wire_parse_body("{\"a\":1}", 7, &o) == 0);
	cJSON_Delete(o);
}

/* A list reply: items then END, all in one write, read back in order. */
static void test_list_end(void)
{
	struct wire_reader r = { 0 };
	struct wire_buf out;
	struct muqss_header h;
	char *body;
	int sv[2], items = 0;

	pair(sv);
	wire_buf_init(&out, 0);
	for (int i = 0; i < 3; i++) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddNumberToObject(o, "cpu", i);
		CHECK(wire_buf_append_json(&out, MUQSS_MSG_ITEM, o) == 0);
		cJSON_Delete(o);
	}
	CHECK(wire_buf_append(&out, PROTOCOL_VERSION, MUQSS_MSG_END, "{\"count\":3}", 11) == 0);
	CHECK(wire_buf_append_error(&out, EPERM, "permission denied") == 0);
	CHECK(wire_buf_flush(&out, sv[0]) == 1);
	for (;;) {
		REQUIRE(wire_reader_read(&r, sv[1]) == 1);
		wire_reader_take(&r, &h, &body);
		if (h.type == MUQSS_MSG_END) {
			free(body);
			break;
		}
		CHECK(h.type == MUQSS_MSG_ITEM);
		cJSON *o;
		REQUIRE(wire_parse_body(body, h.length, &o) == 0);
		CHECK(cJSON_GetObjectItem(o, "cpu")->valueint == items);
		items++;
		cJSON_Delete(o);
		free(body);
	}
	CHECK(items == 3);
	/* The reader stopped at END: the next frame is still there. */
	REQUIRE(wire_reader_read(&r, sv[1]) == 1);
	wire_reader_take(&r, &h, &body);
	CHECK(h.type == MUQSS_MSG_ERROR && strstr(body, "permission denied"));
	free(body);
	CHECK(wire_reader_read(&r, sv[1]) == 0);
	wire_buf_free(&out);
	close(sv[0]);
	close(sv[1]);
}

int main(void)
{
	test_byte_by_byte();
	test_oversize();
	test_bad_version();
	test_bad_json();
	test_list_end();
	return CHECK_EXIT();
}
