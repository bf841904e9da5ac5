/* The frame decoder: bytes through wire_reader_feed() in pieces of varying
 * size, each whole frame's body through wire_parse_body(), and what parses
 * back out through wire_buf_append_json(). Both ends of the socket use
 * this code, so it stands for the client library's reader too.
 *
 * The first input byte sets the piece size (1..16 bytes, or all at once),
 * so that a header or a body split anywhere is tried. */
#include <errno.h>
#include <string.h>

#include "fuzz.h"
#include "wire.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_quiet_log();
	return 0;
}

static void frame_check(const struct muqss_header *hdr, const char *body)
{
	struct wire_buf out;
	cJSON *obj = NULL;
	size_t len = body ? strlen(body) : 0;

	/* The reader promises a NUL-terminated body of the announced length
	 * (the body may hold a NUL of its own). */
	if (hdr->length > MUQSS_MAX_BODY || len > hdr->length)
		__builtin_trap();
	if (hdr->version == PROTOCOL_VERSION && hdr->length > 0 && !body)
		__builtin_trap();
	if (wire_parse_body(body, body ? hdr->length : 0, &obj) < 0)
		return;
	wire_buf_init(&out, 2 * MUQSS_MAX_BODY);
	(void)wire_buf_append_json(&out, hdr->type, obj);
	(void)wire_buf_append_error(&out, EINVAL, body ? body : "");
	wire_buf_free(&out);
	cJSON_Delete(obj);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct wire_reader r = { 0 };
	size_t piece;

	if (size == 0)
		return 0;
	piece = data[0] % 17;
	if (piece == 0)
		piece = size;
	data++;
	size--;

	while (size > 0) {
		size_t n = size < piece ? size : piece, used = 0;

		/* Feed one piece, taking frames as they complete. */
		while (n > 0) {
			struct muqss_header hdr;
			char *body;
			int k = wire_reader_feed(&r, data, n, &used);

			if (used > n)
				__builtin_trap();
			data += used;
			size -= used;
			n -= used;
			if (k < 0) {
				/* The server closes such a client: start over. */
				wire_reader_reset(&r);
				if (used == 0 && n > 0) {
					data++;
					size--;
					n--;
				}
				continue;
			}
			if (k == 0)
				break;
			wire_reader_take(&r, &hdr, &body);
			frame_check(&hdr, body);
			free(body);
		}
	}
	wire_reader_reset(&r);
	return 0;
}
