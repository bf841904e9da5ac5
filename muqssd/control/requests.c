/* The requests of PROTOCOL.md, one frame at a time. */
#include "control-internal.h"
#include "auth.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "log.h"
#include "proc.h"

static void reply_errno(struct control_client *c, int r, const char *what)
{
	(void)client_reply_error(c, r, "%s: %s", what, strerror(r < 0 ? -r : r));
}

static void handle_hello(struct control_client *c, const cJSON *req)
{
	cJSON *o = cJSON_CreateObject();

	if (!o || !cJSON_AddStringToObject(o, "server", "muqssd") ||
	    !cJSON_AddStringToObject(o, "version", MUQSS_VERSION) ||
	    !cJSON_AddNumberToObject(o, "protocol", PROTOCOL_VERSION)) {
		reply_errno(c, -ENOMEM, "hello");
		c->closing = true;
	} else {
		(void)client_reply(c, MUQSS_MSG_HELLO, o);
		c->hello = true;
	}
	cJSON_Delete(o);
}

static void handle_status(struct control_client *c)
{
	struct control_server *s = c->server;
	cJSON *o = cJSON_CreateObject();
	int r = o ? s->ops.status(s->userdata, o) : -ENOMEM;

	if (r >= 0 && !cJSON_AddNumberToObject(o, "protocol", PROTOCOL_VERSION))
		r = -ENOMEM;
	if (r >= 0 && !cJSON_AddNumberToObject(o, "clients", s->n_clients))
		r = -ENOMEM;
	if (r >= 0 && !cJSON_AddNumberToObject(o, "client_turns_put_off", s->budget.parks))
		r = -ENOMEM;
	if (r < 0)
		reply_errno(c, r, "status");
	else
		(void)client_reply(c, MUQSS_MSG_OK, o);
	cJSON_Delete(o);
}

static void handle_get(struct control_client *c, const cJSON *req)
{
	struct control_server *s = c->server;
	const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(req, "name"));
	cJSON *o = cJSON_CreateObject();
	char err[256];
	int r;

	if (!o) {
		reply_errno(c, -ENOMEM, "get");
		return;
	}
	r = tunables_get(s->ops.tunables(s->userdata), name, o, err, sizeof(err));
	if (r == -ENOMEM)
		reply_errno(c, r, "get");
	else if (r < 0)
		(void)client_reply_error(c, r, "%s", err);
	else
		(void)client_reply(c, MUQSS_MSG_OK, o);
	cJSON_Delete(o);
}

static void handle_set(struct control_client *c, const cJSON *req)
{
	struct control_server *s = c->server;
	const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(req, "name"));
	const char *value = cJSON_GetStringValue(cJSON_GetObjectItem(req, "value"));
	struct config_tunables *live, next;
	char err[256];
	int r;

	if (!name || !value) {
		(void)client_reply_error(c, EINVAL, "set needs a name and a value");
		return;
	}
	if (!c->admin) {
		(void)client_reply_error(c, EPERM, "permission denied: changing tunables needs root");
		return;
	}
	live = s->ops.tunables(s->userdata);
	next = *live;
	r = tunables_set(&next, name, value, err, sizeof(err));
	if (r < 0) {
		(void)client_reply_error(c, r, "%s", err);
		return;
	}
	*live = next;
	log_info("tunable %s set to %s by uid %u", name, value, (unsigned)c->uid);
	s->ops.tunables_changed(s->userdata);
	(void)client_reply(c, MUQSS_MSG_OK, NULL);
}

static void handle_reload(struct control_client *c)
{
	struct control_server *s = c->server;
	int r;

	if (!c->admin) {
		(void)client_reply_error(c, EPERM, "permission denied: reload needs root");
		return;
	}
	r = s->ops.reload(s->userdata);
	if (r < 0)
		(void)client_reply_error(c, r, "reload failed, the old configuration stays: %s",
					 strerror(-r));
	else
		(void)client_reply(c, MUQSS_MSG_OK, NULL);
}

/* A class a client may ask for: any but rt, which muqssd never grants. */
static int class_from_name(const char *name, enum sched_class *ret)
{
	int c = sched_class_from_name(name);

	if (c < 0 || c == SCHED_CLASS_RT)
		return -EINVAL;
	*ret = (enum sched_class)c;
	return 0;
}

/*
 * The pid is pinned by a pidfd for the length of the request, which
 * catches a process that dies while we decide. pidfd_open(2) refuses a
 * thread that leads no process (EINVAL, ENOENT since Linux 6.9): such a
 * pid names no process here either, or the daemon would change the whole
 * process of a thread whose owner alone was checked. The client's start time,
 * which catches a pid reused since the client looked, is checked against
 * the daemon's table (ops.adopt): a read of the task's stat here could
 * wait for its exec to end.
 */
static void handle_set_class(struct control_client *c, const cJSON *req)
{
	const char *class_name = cJSON_GetStringValue(cJSON_GetObjectItem(req, "class"));
	long pid = 0, tid = 0, nice = 0, start = -1;
	struct class_request q = { .nice_set = cJSON_GetObjectItem(req, "nice") != NULL };
	char err[256] = "";
	int pidfd, r;

	if (!json_get_int(req, "pid", 0, 4194304, &pid) || !json_get_int(req, "tid", 0, 4194304, &tid) ||
	    !json_get_int(req, "nice", -20, 19, &nice) || !json_get_int(req, "start_time", 0, 9e15, &start) ||
	    (pid <= 0 && tid <= 0)) {
		(void)client_reply_error(c, EINVAL, "set_class needs a pid or tid, and nice -20..19");
		return;
	}
	if (class_from_name(class_name, &q.class) < 0) {
		(void)client_reply_error(c, EINVAL, "unknown class: %s (normal, iso, idleprio, batch)",
					 class_name ? class_name : "(none)");
		return;
	}
	if (tid > 0) {
		pid_t tgid;
		r = proc_tgid((pid_t)tid, &tgid);
		if (r < 0 || (pid > 0 && tgid != pid)) {
			(void)client_reply_error(c, ESRCH, "no such process: %ld", tid);
			return;
		}
		pid = tgid;
	}
	pidfd = (int)syscall(SYS_pidfd_open, (pid_t)pid, 0);
	r = pidfd < 0 ? -errno : 0;
	if (r == -ENOSYS) {
		/* No pidfds (before Linux 5.3, or under valgrind): unpinned,
		 * as long as pid names a process, not one of its threads. */
		pid_t tgid;

		r = proc_tgid((pid_t)pid, &tgid) < 0 || tgid != pid ? -ESRCH : 0;
	}
	if (r < 0) {
		if (r == -ESRCH || r == -EINVAL || r == -ENOENT)
			(void)client_reply_error(c, ESRCH, "no such process: %ld", pid);
		else
			reply_errno(c, r, "set_class: cannot hold the process");
		return;
	}
	r = auth_set_class(c, (pid_t)pid, (pid_t)tid, q.class, q.nice_set, (int)nice, err,
			   sizeof(err));
	if (r < 0) {
		(void)client_reply_error(c, r, "%s", err);
		if (pidfd >= 0)
			close(pidfd);
		return;
	}
	q.pid = (pid_t)pid;
	q.tid = (pid_t)tid;
	q.nice = (int)nice;
	q.start_time = start >= 0 ? (uint64_t)start : CONTROL_NO_START_TIME;
	q.pidfd = pidfd;
	class_request_run(c, &q);
}

static void handle_list(struct control_client *c, uint16_t type, const cJSON *req)
{
	long cpu = -1;
	int r;

	if (type == MUQSS_MSG_QUEUES && !json_get_int(req, "cpu", -1, 1 << 20, &cpu)) {
		(void)client_reply_error(c, EINVAL, "cpu must be a CPU number");
		return;
	}
	r = stream_start(c, type, (int)cpu);
	if (r < 0)
		reply_errno(c, r, type == MUQSS_MSG_QUEUES ? "queues" : "tasks");
}

void request_handle(struct control_client *c, const struct muqss_header *hdr, char *body)
{
	cJSON *req = NULL;

	if (hdr->version != PROTOCOL_VERSION) {
		(void)client_reply_error(c, EPROTO,
					 "protocol version mismatch: client speaks %u, muqssd speaks %u",
					 (unsigned)hdr->version, (unsigned)PROTOCOL_VERSION);
		c->closing = true;
		goto out;
	}
	if (wire_parse_body(body, hdr->length, &req) < 0) {
		(void)client_reply_error(c, EBADMSG, "malformed request: body is not a JSON object");
		c->closing = true;
		goto out;
	}
	if (!c->hello && hdr->type != MUQSS_MSG_HELLO) {
		(void)client_reply_error(c, EPROTO, "expected hello first");
		c->closing = true;
		goto out;
	}
	switch (hdr->type) {
	case MUQSS_MSG_HELLO:
		handle_hello(c, req);
		break;
	case MUQSS_MSG_STATUS:
		handle_status(c);
		break;
	case MUQSS_MSG_GET:
		handle_get(c, req);
		break;
	case MUQSS_MSG_SET:
		handle_set(c, req);
		break;
	case MUQSS_MSG_SET_CLASS:
		handle_set_class(c, req);
		break;
	case MUQSS_MSG_QUEUES:
	case MUQSS_MSG_TASKS:
		handle_list(c, hdr->type, req);
		break;
	case MUQSS_MSG_RELOAD:
		handle_reload(c);
		break;
	default:
		(void)client_reply_error(c, EOPNOTSUPP, "unknown request type %u",
					 (unsigned)hdr->type);
		break;
	}
out:
	cJSON_Delete(req);
	free(body);
}
