/* Hostile text: the name a process gives itself with prctl() reaches
 * frames, log lines and terminals. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cjson/cJSON.h>

#include "check.h"
#include "log.h"
#include "text.h"
#include "wire.h"

/* The name from issue 16: a quote, a newline, a colour, two bytes that are
 * not UTF-8. */
static const char hostile[] = "a\"\n\x1b[31mX\xff\xfeZ";

static bool valid_utf8(const char *s, size_t len)
{
	for (size_t i = 0; i < len;) {
		size_t n = text_utf8_seq((const unsigned char *)s + i, len - i);
		if (n == 0)
			return false;
		i += n;
	}
	return true;
}

static void test_fix(void)
{
	char s[] = "ok \xc3\xa9 \xff\xfe \xe2\x82 \xed\xa0\x80 \xf4\x90\x80\x80 \xc0\xaf end";
	size_t len = strlen(s);

	CHECK(!valid_utf8(s, len));
	CHECK(text_fix_utf8(s, len) == 2 + 2 + 3 + 4 + 2);
	CHECK(strlen(s) == len);
	CHECK(valid_utf8(s, len));
	CHECK(strncmp(s, "ok \xc3\xa9 ?? ?? ??? ???? ?? end", len) == 0);
}

static void test_escape(void)
{
	char buf[128];

	CHECK(strcmp(text_escape(hostile, buf, sizeof(buf)),
		     "a\"\\x0a\\x1b[31mX\\xff\\xfeZ") == 0);
	CHECK(strcmp(text_escape("back\\slash \xc3\xa9 \xc2\x9b", buf, sizeof(buf)),
		     "back\\\\slash \xc3\xa9 \\xc2\\x9b") == 0);
	CHECK(strcmp(text_escape(NULL, buf, sizeof(buf)), "") == 0);
	/* Cut on a whole escape, never inside one. */
	CHECK(strcmp(text_escape("ab\x1b", buf, 6), "ab") == 0);
	CHECK(strcmp(text_escape("ab\xc3\xa9", buf, 4), "ab") == 0);
}

/* What a frame carries is valid UTF-8 whatever the strings in it. */
static void test_wire(void)
{
	struct wire_buf b;
	cJSON *o = cJSON_CreateObject();
	char *p;

	wire_buf_init(&b, 0);
	REQUIRE(o && cJSON_AddStringToObject(o, "comm", hostile));
	REQUIRE(wire_buf_append_json(&b, 4, o) == 0);
	CHECK(valid_utf8(b.data + 8, b.len - 8));
	p = strndup(b.data + 8, b.len - 8);
	CHECK(p && strcmp(p, "{\"comm\":\"a\\\"\\n\\u001b[31mX??Z\"}") == 0);
	free(p);
	cJSON_Delete(o);
	wire_buf_free(&b);
}

/* A log line: one line, no ESC, whatever the task's name. */
static void test_log(void)
{
	char out[4096];
	int fds[2], saved;
	ssize_t n;

	REQUIRE(pipe(fds) == 0);
	saved = dup(STDERR_FILENO);
	REQUIRE(dup2(fds[1], STDERR_FILENO) == STDERR_FILENO);
	unsetenv("JOURNAL_STREAM");
	log_init("test");
	log_set_level(LOG_LEVEL_DEBUG);
	log_task(LOG_LEVEL_WARNING, 42, hostile, "iso", "boost", "boosted %s", hostile);
	log_info("exec comm=%s", hostile);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(fds[1]);
	n = read(fds[0], out, sizeof(out) - 1);
	REQUIRE(n > 0);
	out[n] = '\0';
	fputs(out, stderr);
	CHECK(strcmp(out,
		     "test: warning: 42 (a\"\\x0a\\x1b[31mX\\xff\\xfeZ): boosted a\"\\x0a\\x1b[31mX\\xff\\xfeZ\n"
		     "test: exec comm=a\"\\x0a\\x1b[31mX\\xff\\xfeZ\n") == 0);
}

int main(void)
{
	test_fix();
	test_escape();
	test_wire();
	test_log();
	return CHECK_EXIT();
}
