/* A SET_CLASS request once parsed and authorized. Its task may be new to
 * the daemon, whose reads of it are made off the loop (a stat read waits
 * for an exec to end): the request then waits, retried on a timer, and the
 * client's later requests wait behind it. */
#include "control-internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "log.h"
#include "read_wait.h"

/* The thread named, or the process. */
static pid_t request_id(const struct class_request *q)
{
	return q->tid > 0 ? q->tid : q->pid;
}

static bool alive(const struct class_request *q)
{
	return q->pidfd < 0 || syscall(SYS_pidfd_send_signal, q->pidfd, 0, NULL, 0) == 0;
}

/* Answers q unless the daemon is still reading its task: true when answered. */
static bool class_request_try(struct control_client *c, struct class_request *q)
{
	struct control_server *s = c->server;
	pid_t id = request_id(q);
	char err[256] = "";
	int r;

	if (!alive(q)) {
		(void)client_reply_error(c, ESRCH, "no such process: %d", (int)q->pid);
		return true;
	}
	r = s->ops.adopt ? s->ops.adopt(s->userdata, q->pid, q->tid, q->start_time) : 1;
	if (r == 0)
		return false;
	if (r < 0) {
		(void)client_reply_error(c, ESRCH, "no such process: %d", (int)id);
		return true;
	}
	r = s->ops.set_class(s->userdata, q->pid, q->tid, q->class, q->nice_set, q->nice, err,
			     sizeof(err));
	if (r < 0) {
		if (!err[0])
			snprintf(err, sizeof(err), "cannot set class of %d: %s", (int)id, strerror(-r));
		(void)client_reply_error(c, r, "%s", err);
		return true;
	}
	log_info("uid %u put %s %d in %s", (unsigned)c->uid, q->tid > 0 ? "thread" : "pid", (int)id,
		 sched_class_name(q->class));
	(void)client_reply(c, MUQSS_MSG_OK, NULL);
	return true;
}

static int on_retry(sd_event_source *src, uint64_t usec, void *userdata)
{
	struct control_client *c = userdata;
	struct class_request *q = c->waiting;

	if (!class_request_try(c, q)) {
		if (read_wait_again(src, usec, q->give_up_usec))
			return 0;
		(void)client_reply_error(c, EAGAIN,
					 "muqssd could not read task %d in time, try again",
					 (int)request_id(q));
	}
	class_request_free(c);
	client_restart_timeout(c);
	client_resume(c);
	return 0;
}

void class_request_run(struct control_client *c, struct class_request *q)
{
	struct control_server *s = c->server;
	struct class_request *w;
	uint64_t give_up;

	if (class_request_try(c, q))
		goto done;
	w = malloc(sizeof(*w));
	if (!w || read_wait_start(s->event, &c->retry, on_retry, c, &give_up) < 0) {
		free(w);
		(void)client_reply_error(c, ENOMEM, "set_class: out of memory");
		goto done;
	}
	*w = *q;
	w->give_up_usec = give_up;
	c->waiting = w;
	client_pause_timeout(c);
	return; /* the pidfd is the waiting request's now */
done:
	if (q->pidfd >= 0)
		close(q->pidfd);
}

void class_request_free(struct control_client *c)
{
	c->retry = sd_event_source_disable_unref(c->retry);
	if (!c->waiting)
		return;
	if (c->waiting->pidfd >= 0)
		close(c->waiting->pidfd);
	free(c->waiting);
	c->waiting = NULL;
}
