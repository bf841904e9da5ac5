/* Replies to a control client: everything its requests get back goes
 * through here, so output that overflows drops the client in one place. */
#include "control-internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "text.h"

int client_reply(struct control_client *c, uint16_t type, const cJSON *obj)
{
	int r = wire_buf_append_json(&c->out, type, obj);

	if (r == -ENOBUFS) {
		/* It stopped reading long ago; it goes once we are back in the loop. */
		log_debug("control client pid %d: output full, dropping it", (int)c->pid);
		c->dead = true;
		c->closing = true;
	}
	return r;
}

/* Errors echo what the client sent (a tunable or class name): keep the
 * reply valid UTF-8 and free of control characters for whoever prints it. */
static void sanitize(char *s)
{
	unsigned char *p = (unsigned char *)s;
	size_t left = strlen(s);

	while (*p) {
		size_t n = text_utf8_seq(p, left);

		if (n == 0 || (n == 1 && (*p < 0x20 || *p == 0x7f))) {
			*p++ = '?';
			left--;
			continue;
		}
		p += n;
		left -= n;
	}
}

int client_reply_error(struct control_client *c, int error, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	int r;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	sanitize(msg);
	r = wire_buf_append_error(&c->out, error, msg);
	if (r == -ENOBUFS) {
		c->dead = true;
		c->closing = true;
	}
	return r;
}
