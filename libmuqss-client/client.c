/* The connection: hello, a queue of requests waiting for their replies,
 * and dispatch of what arrives. */
#include "client-internal.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "proc.h"

const char *client_policy_name(enum muqss_policy policy)
{
	switch (policy) {
	case MUQSS_POLICY_NORMAL: return MUQSS_CLASS_NAME_NORMAL;
	case MUQSS_POLICY_ISO: return MUQSS_CLASS_NAME_ISO;
	case MUQSS_POLICY_IDLEPRIO: return MUQSS_CLASS_NAME_IDLEPRIO;
	case MUQSS_POLICY_BATCH: return MUQSS_CLASS_NAME_BATCH;
	}
	return NULL;
}

static int send_all(int fd, const struct wire_buf *b)
{
	size_t off = 0;

	while (off < b->len) {
		ssize_t n = send(fd, b->data + off, b->len - off, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0) {
			struct pollfd p = { .fd = fd, .events = POLLOUT };
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN)
				return -errno;
			int k = poll(&p, 1, CLIENT_TIMEOUT_MS);
			if (k == 0)
				return -ETIMEDOUT;
			if (k < 0 && errno != EINTR)
				return -errno;
			continue;
		}
		off += (size_t)n;
	}
	return 0;
}

int client_request(struct muqss_client *c, uint16_t type, const cJSON *body,
		   muqss_reply_func_t callback, void *userdata)
{
	struct pending *p;
	struct wire_buf b;
	int r;

	if (c->fd < 0)
		return -ENOTCONN;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	wire_buf_init(&b, 0);
	r = wire_buf_append_json(&b, type, body);
	if (r >= 0)
		r = send_all(c->fd, &b);
	wire_buf_free(&b);
	if (r < 0) {
		free(p);
		return r;
	}
	p->type = type;
	p->callback = callback;
	p->userdata = userdata;
	if (c->tail)
		c->tail->next = p;
	else
		c->head = p;
	c->tail = p;
	return 0;
}

static struct pending *pop(struct muqss_client *c)
{
	struct pending *p = c->head;

	c->head = p->next;
	if (!c->head)
		c->tail = NULL;
	return p;
}

/* Queues come one ITEM per CPU, or several for a long queue: join them. */
static cJSON *finish_list(struct pending *p)
{
	bool queues = p->type == MUQSS_MSG_QUEUES;
	cJSON *doc = cJSON_CreateObject(), *list, *item, *prev = NULL;

	if (!doc || !cJSON_AddNumberToObject(doc, "version", PROTOCOL_VERSION) ||
	    !(list = cJSON_AddArrayToObject(doc, queues ? "cpus" : "tasks"))) {
		cJSON_Delete(doc);
		return NULL;
	}
	while (p->items && (item = cJSON_DetachItemFromArray(p->items, 0))) {
		if (queues && prev &&
		    cJSON_GetNumberValue(cJSON_GetObjectItem(prev, "cpu")) ==
			    cJSON_GetNumberValue(cJSON_GetObjectItem(item, "cpu"))) {
			cJSON *dst = cJSON_GetObjectItem(prev, "queue"),
			      *src = cJSON_GetObjectItem(item, "queue"), *e;
			while (dst && src && (e = cJSON_DetachItemFromArray(src, 0)))
				cJSON_AddItemToArray(dst, e);
			cJSON_Delete(item);
			continue;
		}
		cJSON_AddItemToArray(list, item);
		prev = item;
	}
	return doc;
}

static void complete(struct muqss_client *c, int error, const char *json)
{
	struct pending *p = pop(c);

	if (p->callback)
		p->callback(c, error, json, p->userdata);
	cJSON_Delete(p->items);
	free(p);
}

/* One frame for the oldest request. -EBADMSG when it makes no sense. */
static int handle_frame(struct muqss_client *c, const struct muqss_header *h, const char *body)
{
	struct pending *p = c->head;
	cJSON *o = NULL;
	int r;

	if (h->version != PROTOCOL_VERSION) {
		snprintf(c->error, sizeof(c->error),
			 "protocol version mismatch: muqssd speaks %u, this client speaks %u",
			 (unsigned)h->version, (unsigned)PROTOCOL_VERSION);
		return -EPROTO;
	}
	if (!p)
		return -EBADMSG;
	r = wire_parse_body(body, h->length, &o);
	if (r < 0)
		return r;
	switch (h->type) {
	case MUQSS_MSG_ERROR: {
		const char *msg = cJSON_GetStringValue(cJSON_GetObjectItem(o, "message"));
		double e = cJSON_GetNumberValue(cJSON_GetObjectItem(o, "errno"));
		snprintf(c->error, sizeof(c->error), "%s", msg ? msg : "unknown error");
		/* Range first: a missing errno is NaN, 1e300 no int at all. */
		complete(c, e >= 1 && e < 4096 ? -(int)e : -EIO, NULL);
		break;
	}
	case MUQSS_MSG_HELLO:
	case MUQSS_MSG_OK:
		complete(c, 0, body ? body : "{}");
		break;
	case MUQSS_MSG_ITEM:
		if (!p->items && !(p->items = cJSON_CreateArray())) {
			r = -ENOMEM;
			break;
		}
		cJSON_AddItemToArray(p->items, o);
		o = NULL;
		break;
	case MUQSS_MSG_END: {
		cJSON *doc = finish_list(p);
		char *text = doc ? cJSON_PrintUnformatted(doc) : NULL;
		cJSON_Delete(doc);
		if (!text) {
			r = -ENOMEM;
			break;
		}
		complete(c, 0, text);
		cJSON_free(text);
		break;
	}
	default:
		r = -EBADMSG;
	}
	cJSON_Delete(o);
	return r < 0 ? r : 1;
}

static void fail_all(struct muqss_client *c, int error)
{
	while (c->head)
		complete(c, error, NULL);
}

int muqss_dispatch(struct muqss_client *c)
{
	int n = 0, r;

	for (;;) {
		struct muqss_header h;
		char *body;
		bool was_list;

		if (c->fd < 0)
			return -ENOTCONN;
		r = wire_reader_read(&c->in, c->fd);
		if (r == 0)
			return n;
		if (r < 0)
			break;
		wire_reader_take(&c->in, &h, &body);
		was_list = h.type == MUQSS_MSG_ITEM;
		r = handle_frame(c, &h, body);
		free(body);
		if (r < 0)
			break;
		if (!was_list)
			n++;
	}
	/* The stream is unusable from here on. */
	close(c->fd);
	c->fd = -1;
	fail_all(c, r);
	return r;
}

struct call_result {
	bool done;
	int error;
	char *json;
};

static void on_call_reply(struct muqss_client *c, int error, const char *json, void *userdata)
{
	struct call_result *res = userdata;

	res->done = true;
	res->error = error;
	if (json && !(res->json = strdup(json)))
		res->error = -ENOMEM;
}

int client_call(struct muqss_client *c, uint16_t type, const cJSON *body, char **ret)
{
	struct call_result res = { 0 };
	int r;

	c->error[0] = '\0';
	r = client_request(c, type, body, on_call_reply, &res);
	if (r < 0)
		return r;
	while (!res.done) {
		struct pollfd p = { .fd = c->fd, .events = POLLIN };
		r = poll(&p, 1, CLIENT_TIMEOUT_MS);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			/* Replies are matched by order: after a lost one, nothing is. */
			r = r == 0 ? -ETIMEDOUT : -errno;
			close(c->fd);
			c->fd = -1;
			fail_all(c, r);
			break;
		}
		r = muqss_dispatch(c);
		if (r < 0 && !res.done)
			res = (struct call_result){ .done = true, .error = r };
	}
	if (res.error < 0 || !ret)
		free(res.json);
	else
		*ret = res.json;
	return res.error;
}

int muqss_connect(struct muqss_client **ret, const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct muqss_client *c;
	cJSON *hello;
	char *reply = NULL;
	int r;

	if (!path)
		path = getenv("MUQSS_SOCKET");
	if (!path || !*path)
		path = MUQSS_DEFAULT_SOCKET;
	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c->fd < 0) {
		r = -errno;
		goto fail;
	}
	if (connect(c->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		r = -errno;
		goto fail;
	}
	hello = cJSON_CreateObject();
	if (!hello || !cJSON_AddStringToObject(hello, "client", "libmuqss-client " MUQSS_VERSION)) {
		cJSON_Delete(hello);
		r = -ENOMEM;
		goto fail;
	}
	r = client_call(c, MUQSS_MSG_HELLO, hello, &reply);
	cJSON_Delete(hello);
	if (r < 0)
		goto fail;
	cJSON *o = cJSON_Parse(reply);
	const char *v = cJSON_GetStringValue(cJSON_GetObjectItem(o, "version"));
	c->server_version = strdup(v ? v : "unknown");
	cJSON_Delete(o);
	free(reply);
	if (!c->server_version) {
		r = -ENOMEM;
		goto fail;
	}
	*ret = c;
	return 0;
fail:
	muqss_close(c);
	return r;
}

void muqss_close(struct muqss_client *c)
{
	if (!c)
		return;
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	fail_all(c, -ECANCELED);
	wire_reader_reset(&c->in);
	free(c->server_version);
	free(c);
}

int muqss_get_fd(const struct muqss_client *c)
{
	return c->fd;
}

const char *muqss_error_message(const struct muqss_client *c)
{
	return c->error;
}

const char *muqss_server_version(const struct muqss_client *c)
{
	return c->server_version ? c->server_version : "";
}
