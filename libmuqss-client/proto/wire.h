/* Framing: an incremental frame reader and a bounded output buffer.
 * Shared by the daemon's control server and libmuqss-client. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cjson/cJSON.h>

#include "protocol.h"

/* Reads one frame at a time, never past its end, so a peer's next frame
 * stays in the socket until asked for. */
struct wire_reader {
	uint8_t hdr_buf[MUQSS_HEADER_SIZE];
	size_t hdr_len;
	struct muqss_header hdr; /* valid once hdr_len == MUQSS_HEADER_SIZE */
	char *body;		 /* allocated only after the length is checked */
	size_t body_len;
};

/* Reads from fd without blocking. Returns 1 when a whole frame is in *r
 * (take it with wire_reader_take()), 0 when more bytes are needed,
 * -EMSGSIZE when the header announces a body over MUQSS_MAX_BODY (nothing
 * is allocated), -ECONNRESET on end of file (a frame cut short included),
 * -ENOMEM, or another -errno from recv(). A header with a foreign version
 * is returned as soon as the header is in (body unread): the caller
 * decides. */
int wire_reader_read(struct wire_reader *r, int fd);
/* The same, from memory: consumes at most len bytes, stores how many in
 * *used. */
int wire_reader_feed(struct wire_reader *r, const void *data, size_t len, size_t *used);
/* Hands over the complete frame's header and body (NUL-terminated, *body
 * owned by the caller; NULL for an empty body) and resets the reader. */
void wire_reader_take(struct wire_reader *r, struct muqss_header *hdr, char **body);
void wire_reader_reset(struct wire_reader *r);

/* Parses a body as one JSON object. NULL body parses as {}. Returns 0 or
 * -EBADMSG (not JSON, or not an object), -ENOMEM. */
int wire_parse_body(const char *body, size_t len, cJSON **ret);

/* Output: frames are appended whole, then flushed as the socket allows. */
struct wire_buf {
	char *data;
	size_t len; /* bytes queued */
	size_t off; /* bytes already sent */
	size_t cap;
	size_t max; /* 0: unbounded */
};

void wire_buf_init(struct wire_buf *b, size_t max);
void wire_buf_free(struct wire_buf *b);
static inline size_t wire_buf_pending(const struct wire_buf *b)
{
	return b->len - b->off;
}
/* Appends one frame. -EMSGSIZE if json is over MUQSS_MAX_BODY, -ENOBUFS if
 * the buffer would pass its max, -ENOMEM. */
int wire_buf_append(struct wire_buf *b, uint16_t version, uint16_t type, const char *json,
		    size_t len);
/* Serializes obj (NULL: {}) and appends it. */
int wire_buf_append_json(struct wire_buf *b, uint16_t type, const cJSON *obj);
/* Appends {"errno": error, "message": message} as an ERROR frame. */
int wire_buf_append_error(struct wire_buf *b, int error, const char *message);
/* Sends without blocking. Returns 1 when everything is out, 0 when the
 * socket is full, -errno (EPIPE, ECONNRESET...) otherwise. */
int wire_buf_flush(struct wire_buf *b, int fd);
