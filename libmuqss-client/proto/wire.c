#include "wire.h"

#include "text.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

void wire_reader_reset(struct wire_reader *r)
{
	free(r->body);
	memset(r, 0, sizeof(*r));
}

/* Called once the header is complete: check the length before allocating. */
static int reader_header_done(struct wire_reader *r)
{
	memcpy(&r->hdr.version, r->hdr_buf, 2);
	memcpy(&r->hdr.type, r->hdr_buf + 2, 2);
	memcpy(&r->hdr.length, r->hdr_buf + 4, 4);
	if (r->hdr.length > MUQSS_MAX_BODY)
		return -EMSGSIZE;
	/* A foreign version's body may mean anything: leave it unread. */
	if (r->hdr.version != PROTOCOL_VERSION || r->hdr.length == 0)
		return 1;
	r->body = malloc((size_t)r->hdr.length + 1);
	if (!r->body)
		return -ENOMEM;
	return 0;
}

int wire_reader_feed(struct wire_reader *r, const void *data, size_t len, size_t *used)
{
	const uint8_t *p = data;
	size_t n;
	int k;

	*used = 0;
	if (r->hdr_len < MUQSS_HEADER_SIZE) {
		n = MUQSS_HEADER_SIZE - r->hdr_len;
		if (n > len)
			n = len;
		memcpy(r->hdr_buf + r->hdr_len, p, n);
		r->hdr_len += n;
		*used += n;
		p += n;
		len -= n;
		if (r->hdr_len < MUQSS_HEADER_SIZE)
			return 0;
		k = reader_header_done(r);
		if (k != 0)
			return k;
	}
	if (!r->body)
		return 1;
	n = r->hdr.length - r->body_len;
	if (n > len)
		n = len;
	memcpy(r->body + r->body_len, p, n);
	r->body_len += n;
	*used += n;
	if (r->body_len < r->hdr.length)
		return 0;
	r->body[r->body_len] = '\0';
	return 1;
}

int wire_reader_read(struct wire_reader *r, int fd)
{
	for (;;) {
		char *dst;
		size_t want;
		ssize_t n;
		int k;

		if (r->hdr_len < MUQSS_HEADER_SIZE) {
			dst = (char *)r->hdr_buf + r->hdr_len;
			want = MUQSS_HEADER_SIZE - r->hdr_len;
		} else if (r->body && r->body_len < r->hdr.length) {
			dst = r->body + r->body_len;
			want = r->hdr.length - r->body_len;
		} else {
			return 1;
		}
		n = recv(fd, dst, want, MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -ECONNRESET;
		if (r->hdr_len < MUQSS_HEADER_SIZE) {
			r->hdr_len += (size_t)n;
			if (r->hdr_len == MUQSS_HEADER_SIZE) {
				k = reader_header_done(r);
				if (k != 0)
					return k;
			}
		} else {
			r->body_len += (size_t)n;
			if (r->body_len == r->hdr.length) {
				r->body[r->body_len] = '\0';
				return 1;
			}
		}
	}
}

void wire_reader_take(struct wire_reader *r, struct muqss_header *hdr, char **body)
{
	*hdr = r->hdr;
	/* Whatever the peer sent, strings parsed from it are valid UTF-8. */
	if (r->body)
		text_fix_utf8(r->body, r->body_len);
	*body = r->body;
	r->body = NULL;
	wire_reader_reset(r);
}

int wire_parse_body(const char *body, size_t len, cJSON **ret)
{
	const char *end = NULL;
	cJSON *o;

	if (!body || len == 0) {
		o = cJSON_CreateObject();
		if (!o)
			return -ENOMEM;
		*ret = o;
		return 0;
	}
	o = cJSON_ParseWithLengthOpts(body, len, &end, false);
	/* cJSON stops at the end of the first value; trailing bytes are junk. */
	while (o && end < body + len && (*end == ' ' || *end == '\n' || *end == '\t' || *end == '\r'))
		end++;
	if (!o || !cJSON_IsObject(o) || end != body + len) {
		cJSON_Delete(o);
		return -EBADMSG;
	}
	*ret = o;
	return 0;
}

void wire_buf_init(struct wire_buf *b, size_t max)
{
	memset(b, 0, sizeof(*b));
	b->max = max;
}

void wire_buf_free(struct wire_buf *b)
{
	free(b->data);
	wire_buf_init(b, b->max);
}

int wire_buf_append(struct wire_buf *b, uint16_t version, uint16_t type, const char *json,
		    size_t len)
{
	uint32_t len32 = (uint32_t)len;
	size_t need;

	if (len > MUQSS_MAX_BODY)
		return -EMSGSIZE;
	/* Reclaim what was sent before growing. */
	if (b->off > 0) {
		memmove(b->data, b->data + b->off, b->len - b->off);
		b->len -= b->off;
		b->off = 0;
	}
	need = b->len + MUQSS_HEADER_SIZE + len;
	if (b->max && need > b->max)
		return -ENOBUFS;
	if (need > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		char *p;

		while (cap < need)
			cap *= 2;
		if (b->max && cap > b->max)
			cap = b->max;
		p = realloc(b->data, cap);
		if (!p)
			return -ENOMEM;
		b->data = p;
		b->cap = cap;
	}
	memcpy(b->data + b->len, &version, 2);
	memcpy(b->data + b->len + 2, &type, 2);
	memcpy(b->data + b->len + 4, &len32, 4);
	if (len) {
		memcpy(b->data + b->len + MUQSS_HEADER_SIZE, json, len);
		/* cJSON copies string bytes as they are, and a process name or
		 * path is any bytes: every frame leaves as valid UTF-8. */
		text_fix_utf8(b->data + b->len + MUQSS_HEADER_SIZE, len);
	}
	b->len = need;
	return 0;
}

int wire_buf_append_json(struct wire_buf *b, uint16_t type, const cJSON *obj)
{
	char *s;
	int r;

	if (!obj)
		return wire_buf_append(b, PROTOCOL_VERSION, type, "{}", 2);
	s = cJSON_PrintUnformatted(obj);
	if (!s)
		return -ENOMEM;
	r = wire_buf_append(b, PROTOCOL_VERSION, type, s, strlen(s));
	cJSON_free(s);
	return r;
}

int wire_buf_append_error(struct wire_buf *b, int error, const char *message)
{
	cJSON *o;
	int r;

	o = cJSON_CreateObject();
	if (!o || !cJSON_AddNumberToObject(o, "errno", error < 0 ? -error : error) ||
	    !cJSON_AddStringToObject(o, "message", message)) {
		cJSON_Delete(o);
		return -ENOMEM;
	}
	r = wire_buf_append_json(b, MUQSS_MSG_ERROR, o);
	cJSON_Delete(o);
	return r;
}

int wire_buf_flush(struct wire_buf *b, int fd)
{
	while (b->off < b->len) {
		ssize_t n = send(fd, b->data + b->off, b->len - b->off,
				 MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			if (errno == EINTR)
				continue;
			return -errno;
		}
		b->off += (size_t)n;
	}
	b->off = b->len = 0;
	return 1;
}
