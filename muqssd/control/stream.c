/* List replies (TASKS, QUEUES) sent as the client reads them.
 *
 * A list is work at SCHED_FIFO 20 in proportion to every task, so it is
 * never done at once: each turn of the loop adds items to a client's output
 * until STREAM_HIGH bytes wait unsent or CONTROL_TURN_NSEC has passed, and
 * the next turn comes when the client has read below that (EPOLLOUT). A
 * slow reader thus costs its output (STREAM_HIGH plus one frame) and the
 * tid snapshot (4 bytes a task), and a fast one a bounded slice of each
 * loop iteration. TASKS lists the tasks tracked when the request came that
 * still exist when their turn comes; QUEUES goes a CPU at a time. Under
 * /proc's hidepid=, either leaves out what /proc hides from the caller. */
#include "control-internal.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "time_util.h"

#define STREAM_HIGH (64U * 1024)

struct list_stream {
	uint16_t type;
	pid_t *tids; /* TASKS */
	size_t n, next;
	int cpu, cpu_last; /* QUEUES: next CPU, last CPU (-1: until -EINVAL) */
	bool own_only;	   /* /proc hides others' processes from the caller */
	unsigned count;
};

/* An item too big for one frame is split on its list field, in order. */
static int reply_item(struct control_client *c, cJSON *item, const char *split)
{
	char *text = cJSON_PrintUnformatted(item);
	cJSON *list, *half, *copy;
	size_t len;
	int n, r;

	if (!text)
		return -ENOMEM;
	len = strlen(text);
	if (len <= MUQSS_MAX_BODY) {
		r = wire_buf_append(&c->out, PROTOCOL_VERSION, MUQSS_MSG_ITEM, text, len);
		cJSON_free(text);
		if (r == -ENOBUFS)
			c->dead = c->closing = true;
		return r;
	}
	cJSON_free(text);
	list = split ? cJSON_GetObjectItem(item, split) : NULL;
	n = cJSON_GetArraySize(list);
	if (!cJSON_IsArray(list) || n < 2)
		return -EMSGSIZE;
	/* The second half goes into a copy of item; the first stays. */
	copy = cJSON_Duplicate(item, true);
	half = copy ? cJSON_CreateArray() : NULL;
	if (!half) {
		cJSON_Delete(copy);
		return -ENOMEM;
	}
	for (int i = n / 2; i < n; i++)
		cJSON_AddItemToArray(half, cJSON_DetachItemFromArray(list, n / 2));
	cJSON_ReplaceItemInObject(copy, split, half);
	r = reply_item(c, item, split);
	if (r >= 0)
		r = reply_item(c, copy, split);
	cJSON_Delete(copy);
	return r;
}

/* A full output stops the list (the client is dropped); an item that
 * cannot be sent is skipped, and not counted. */
static int emit(struct control_client *c, cJSON *item, const char *split)
{
	int r = reply_item(c, item, split);

	if (r == -ENOBUFS || r == -ENOMEM)
		return r;
	if (r < 0)
		log_warning_errno(r, "cannot send a list item: %m, ignoring");
	else
		c->stream->count++;
	return 0;
}

/* /proc shows a process's executable to its owner and root only
 * (ptrace_may_access); so does TASKS. */
static void hide_exe(const struct control_client *c, cJSON *task)
{
	double uid = cJSON_GetNumberValue(cJSON_GetObjectItem(task, "uid"));
	double euid = cJSON_GetNumberValue(cJSON_GetObjectItem(task, "euid"));

	if (c->uid == 0 || (uid == (double)c->uid && euid == (double)c->uid))
		return;
	/* Deleted first: should the null fail to allocate, exe is absent. */
	cJSON_DeleteItemFromObject(task, "exe");
	(void)cJSON_AddNullToObject(task, "exe");
}

static bool shown(const struct control_client *c, pid_t tid)
{
	return auth_may_see(c, c->stream->own_only, tid);
}

/* A gone task is left out too: its owner cannot be told. */
static void drop_hidden(const struct control_client *c, cJSON *cpu)
{
	cJSON *queue = cJSON_GetObjectItem(cpu, "queue"), *e, *next;

	for (e = cJSON_IsArray(queue) ? queue->child : NULL; e; e = next) {
		double tid = cJSON_GetNumberValue(cJSON_GetObjectItem(e, "tid"));

		next = e->next;
		if (!(tid >= 1 && tid <= INT_MAX) || !shown(c, (pid_t)tid))
			cJSON_Delete(cJSON_DetachItemViaPointer(queue, e));
	}
}

static int step_task(struct control_client *c)
{
	struct control_server *s = c->server;
	struct list_stream *l = c->stream;
	pid_t tid = l->tids[l->next++];
	cJSON *o = NULL;
	int r;

	if (!shown(c, tid))
		return 0;
	r = s->ops.task_json(s->userdata, tid, &o);
	if (r == -ESRCH)
		return 0; /* gone since the request */
	if (r < 0)
		return r;
	hide_exe(c, o);
	r = emit(c, o, NULL);
	cJSON_Delete(o);
	return r;
}

static int step_cpu(struct control_client *c)
{
	struct control_server *s = c->server;
	struct list_stream *l = c->stream;
	cJSON *array = cJSON_CreateArray(), *item;
	int r;

	if (!array)
		return -ENOMEM;
	r = s->ops.dump_queues(s->userdata, l->cpu, array);
	if (l->cpu_last < 0 && (r == -EINVAL || (r == 0 && !array->child)))
		r = 1; /* past the last CPU: done */
	l->cpu++;
	for (item = array->child; r == 0 && item; item = item->next) {
		if (l->own_only)
			drop_hidden(c, item);
		r = emit(c, item, "queue");
	}
	cJSON_Delete(array);
	return r;
}

static bool stream_done(const struct list_stream *l)
{
	if (l->type == MUQSS_MSG_TASKS)
		return l->next >= l->n;
	return l->cpu_last >= 0 && l->cpu > l->cpu_last;
}

static void stream_end(struct control_client *c, int r)
{
	struct list_stream *l = c->stream;
	cJSON *end;

	c->stream = NULL;
	if (!c->dead && r < 0) {
		/* Items may have gone out already: ERROR still ends the reply. */
		(void)client_reply_error(c, r, "%s: %s",
					 l->type == MUQSS_MSG_QUEUES ? "queues" : "tasks",
					 strerror(-r));
	} else if (!c->dead) {
		end = cJSON_CreateObject();
		if (end && cJSON_AddNumberToObject(end, "count", l->count))
			(void)client_reply(c, MUQSS_MSG_END, end);
		else
			c->closing = true; /* an unterminated list must not look complete */
		cJSON_Delete(end);
	}
	free(l->tids);
	free(l);
}

void stream_continue(struct control_client *c, uint64_t turn_end)
{
	int r = 0;

	while (c->stream && !c->dead && wire_buf_pending(&c->out) < STREAM_HIGH) {
		if (stream_done(c->stream)) {
			stream_end(c, 0);
			return;
		}
		r = c->stream->type == MUQSS_MSG_TASKS ? step_task(c) : step_cpu(c);
		if (r != 0) {
			stream_end(c, r > 0 ? 0 : r);
			return;
		}
		if (now_nsec(CLOCK_MONOTONIC) >= turn_end)
			break;
	}
	if (c->dead && c->stream)
		stream_end(c, -ENOBUFS);
}

int stream_start(struct control_client *c, uint16_t type, int cpu)
{
	struct control_server *s = c->server;
	struct list_stream *l = calloc(1, sizeof(*l));
	int r;

	if (!l)
		return -ENOMEM;
	l->type = type;
	l->own_only = auth_hidepid_hides(c);
	if (type == MUQSS_MSG_TASKS) {
		r = s->ops.task_ids(s->userdata, &l->tids, &l->n);
		if (r < 0) {
			free(l);
			return r;
		}
	} else {
		l->cpu = cpu < 0 ? 0 : cpu;
		l->cpu_last = cpu;
	}
	c->stream = l;
	return 0;
}

void stream_free(struct control_client *c)
{
	if (!c->stream)
		return;
	free(c->stream->tids);
	free(c->stream);
	c->stream = NULL;
}
