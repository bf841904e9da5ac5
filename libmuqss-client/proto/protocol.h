/*
 * The muqssd control protocol, shared by the daemon and libmuqss-client.
 * PROTOCOL.md at the top of the tree is the prose version of this file.
 *
 * A stream of frames over a Unix stream socket. Every frame is a fixed
 * 8-byte header in host byte order (both ends are on one machine), then
 * `length` bytes of JSON text (no NUL):
 *
 *	u16 version	PROTOCOL_VERSION of the sender
 *	u16 type	enum muqss_msg
 *	u32 length	body length, at most MUQSS_MAX_BODY
 *
 * The header layout itself never changes; the version says what the
 * message types and bodies mean.
 *
 * The client speaks first with HELLO and waits for HELLO back. Then it
 * sends requests; every request gets exactly one reply, in order: OK with
 * an object, ERROR, or (for QUEUES and TASKS) any number of ITEM frames
 * closed by END. Requests may be pipelined.
 */
#pragma once

#include <stdint.h>

/* Bump it if any of the message types or bodies below change. */
#define PROTOCOL_VERSION 1

#define MUQSS_HEADER_SIZE 8
/* Bodies above this are refused from the header alone, before any
 * allocation, and the connection is closed. */
#define MUQSS_MAX_BODY (64 * 1024)

struct muqss_header {
	uint16_t version;
	uint16_t type;
	uint32_t length;
};

enum muqss_msg {
	/* client: {"client": "muqssctl 0.1.0"}
	 * server: {"server": "muqssd", "version": "0.1.0", "protocol": 1} */
	MUQSS_MSG_HELLO = 1,

	/* Replies. */
	MUQSS_MSG_OK = 2,    /* object, request specific; {} when nothing to say */
	MUQSS_MSG_ERROR = 3, /* {"errno": 1, "message": "permission denied: ..."} */
	MUQSS_MSG_ITEM = 4,  /* one element of a list reply */
	MUQSS_MSG_END = 5,   /* {"count": N}: the list is complete */

	/* Requests. */
	MUQSS_MSG_STATUS = 16,	  /* {} -> OK status object */
	MUQSS_MSG_GET = 17,	  /* {"name"?: "rr_interval"} -> OK {"rr_interval": 6, ...} */
	MUQSS_MSG_SET = 18,	  /* {"name": "rr_interval", "value": "10"} -> OK {} */
	MUQSS_MSG_SET_CLASS = 19, /* see below -> OK {} */
	MUQSS_MSG_QUEUES = 20,	  /* {"cpu"?: N} -> ITEM per CPU ..., END */
	MUQSS_MSG_TASKS = 21,	  /* {} -> ITEM per task ..., END */
	MUQSS_MSG_RELOAD = 22,	  /* {} -> OK {} */
};

/*
 * SET_CLASS body:
 *	"pid":        process; every thread of it unless "tid" is given
 *	"tid"?:       one thread (pid may then be 0: the daemon finds it)
 *	"class":      "normal" | "iso" | "idleprio" | "batch"
 *	"nice"?:      -20..19
 *	"start_time"?: the target's start time (field 22 of /proc/PID/stat)
 *	              as the client saw it; a mismatch means the pid was
 *	              reused and the request fails with ESRCH.
 *
 * A QUEUES ITEM is one CPU: {"cpu": 0, "queue": [entry...]}. A CPU whose
 * queue does not fit in one frame is sent as several ITEMs with the same
 * "cpu", each holding the next part of the queue in order.
 */

/* Wire names of the classes. */
#define MUQSS_CLASS_NAME_NORMAL "normal"
#define MUQSS_CLASS_NAME_ISO "iso"
#define MUQSS_CLASS_NAME_IDLEPRIO "idleprio"
#define MUQSS_CLASS_NAME_BATCH "batch"
