/* The bus side of rtkit: the object, the name, and each request's life.
 * The caller's uid and pid are asked of the bus asynchronously
 * (GetConnectionCredentials), so the daemon's loop never waits on
 * dbus-daemon, a task it may itself be scheduling; nor on the thread
 * named, whose reads the daemon makes off the loop while the request
 * waits on a timer. Each uid has its own budget of requests
 * (rtkit_budget.c), and each connection a few requests waiting for the
 * bus (rtkit_senders.c), so one user's flood refuses nobody else. */
#include "rtkit.h"

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <systemd/sd-bus.h>

#include "log.h"
#include "ratelimit.h"
#include "read_wait.h"
#include "rtkit-internal.h"
#include "time_util.h"

/* Requests in flight, all callers together: what keeps a flood from
 * growing our memory (about 1 KiB each). It is 4 times dbus-daemon's
 * default max_connections_per_user (256) and a connection may have
 * RTKIT_SENDER_PENDING waiting for their credentials, so no user alone
 * reaches it. PipeWire asks one at a time. */
#define RTKIT_PENDING_MAX 1024
#define RTKIT_SENDER_PENDING 4
/* Lines about refusals that name no uid (the caller not known yet). */
#define RTKIT_LOG_WINDOW_NSEC ((uint64_t)RTKIT_BURST_SEC * 1000000000ULL)

struct rtkit_request {
	struct rtkit_server *s;
	sd_bus_message *m;
	sd_bus_slot *slot;
	bool asking; /* counted in s->senders until its credentials come */
	bool realtime;
	uint64_t process, thread;
	int32_t value; /* priority or nice */
	/* Once authorized: */
	uid_t uid;
	struct rtkit_target t;
	sd_event_source *retry; /* while the daemon reads the thread */
	uint64_t give_up_usec;
	struct rtkit_request *prev, *next;
};

struct rtkit_server {
	sd_event *event;
	sd_bus *bus;
	sd_bus_slot *object_slot;
	sd_bus_slot *name_slot;
	sd_bus_slot *acquired_slot;
	bool queued; /* behind another owner of the name */
	struct rtkit_ops ops;
	void *userdata;
	struct rtkit_request *pending;
	unsigned n_pending;
	struct rtkit_senders *senders;
	struct rtkit_budget *budget;
	struct ratelimit busy_log, creds_log;
	/* Served as properties, read in place by sd-bus. */
	int64_t rttime_usec_max;
	int32_t max_realtime_priority;
	int32_t min_nice_level;
};

/* Its credentials came, or it is dropped before. */
static void request_answered(struct rtkit_request *req)
{
	if (req->asking)
		rtkit_senders_remove(req->s->senders, sd_bus_message_get_sender(req->m));
	req->asking = false;
}

static void request_free(struct rtkit_request *req)
{
	struct rtkit_server *s = req->s;

	request_answered(req);
	if (req->prev)
		req->prev->next = req->next;
	else
		s->pending = req->next;
	if (req->next)
		req->next->prev = req->prev;
	s->n_pending--;
	sd_event_source_disable_unref(req->retry);
	if (req->t.pidfd >= 0)
		close(req->t.pidfd);
	sd_bus_slot_unref(req->slot);
	sd_bus_message_unref(req->m);
	free(req);
}

static int reply_error(sd_bus_message *m, int r, const char *err)
{
	return sd_bus_reply_method_errorf(m, rtkit_error_name(r), "%s", err[0] ? err : strerror(-r));
}

static void reply_sent(int r)
{
	if (r < 0)
		log_warning_errno(r, "rtkit: cannot send a reply, ignoring: %m");
}

/* Carries out an authorized request, unless the daemon is still reading
 * its thread: true when answered. */
static bool request_try(struct rtkit_request *req)
{
	struct rtkit_server *s = req->s;
	const struct rtkit_target *t = &req->t;
	char err[256] = "";
	int r;

	r = rtkit_target_recheck(t, err, sizeof(err));
	if (r >= 0) {
		r = s->ops.adopt(s->userdata, t->pid, t->tid);
		if (r == 0)
			return false;
		if (r < 0)
			snprintf(err, sizeof(err), "thread %d is gone", (int)t->tid);
	}
	if (r > 0 && req->realtime)
		r = s->ops.make_iso(s->userdata, req->uid, t->pid, t->tid, err, sizeof(err));
	else if (r > 0)
		r = s->ops.set_nice(s->userdata, req->uid, t->pid, t->tid, req->value, err,
				    sizeof(err));
	if (r < 0) {
		reply_sent(reply_error(req->m, r, err));
		return true;
	}
	if (req->realtime)
		log_info("rtkit: uid %u put thread %d of %d in iso (asked SCHED_RR %d)",
			 (unsigned)req->uid, (int)t->tid, (int)t->pid, req->value);
	else
		log_info("rtkit: uid %u set nice %d on thread %d of %d", (unsigned)req->uid,
			 req->value, (int)t->tid, (int)t->pid);
	reply_sent(sd_bus_reply_method_return(req->m, NULL));
	return true;
}

static int on_retry(sd_event_source *src, uint64_t usec, void *userdata)
{
	struct rtkit_request *req = userdata;

	if (!request_try(req)) {
		if (read_wait_again(src, usec, req->give_up_usec))
			return 0;
		reply_sent(sd_bus_reply_method_errorf(
			req->m, rtkit_error_name(-EAGAIN),
			"muqssd could not read thread %d in time, try again", (int)req->t.tid));
	}
	request_free(req);
	return 0;
}

/* Authorizes the request and carries it out, or has it wait for the
 * daemon's reads: true when answered (req may be freed). */
static bool request_decide(struct rtkit_request *req, uid_t uid, pid_t caller)
{
	struct rtkit_server *s = req->s;
	char err[256] = "";
	int r;

	req->uid = uid;
	r = rtkit_budget_charge(s->budget, uid, now_nsec(CLOCK_MONOTONIC));
	if (r < 0) {
		if (r == -EBUSY)
			snprintf(err, sizeof(err), "uid %u is past %u requests in %u s, try again later",
				 (unsigned)uid, RTKIT_BURST_ACTIONS, RTKIT_BURST_SEC);
		reply_sent(reply_error(req->m, r, err));
		return true;
	}
	r = rtkit_authorize(uid, caller, req->process, req->thread, &req->t, err, sizeof(err));
	if (r < 0) {
		log_info("rtkit: refused uid %u on thread %llu: %s", (unsigned)uid,
			 (unsigned long long)req->thread, err);
		reply_sent(reply_error(req->m, r, err));
		return true;
	}
	if (request_try(req))
		return true;
	r = read_wait_start(s->event, &req->retry, on_retry, req, &req->give_up_usec);
	if (r < 0) {
		reply_sent(reply_error(req->m, r, ""));
		return true;
	}
	return false;
}

/* Reads UnixUserID and ProcessID out of GetConnectionCredentials' a{sv}. */
static int read_creds(sd_bus_message *reply, uint32_t *uid, uint32_t *pid)
{
	bool have_uid = false, have_pid = false;
	int r;

	r = sd_bus_message_enter_container(reply, 'a', "{sv}");
	if (r < 0)
		return r;
	while ((r = sd_bus_message_enter_container(reply, 'e', "sv")) > 0) {
		const char *key;

		r = sd_bus_message_read(reply, "s", &key);
		if (r < 0)
			return r;
		if (strcmp(key, "UnixUserID") == 0) {
			r = sd_bus_message_read(reply, "v", "u", uid);
			have_uid = r >= 0;
		} else if (strcmp(key, "ProcessID") == 0) {
			r = sd_bus_message_read(reply, "v", "u", pid);
			have_pid = r >= 0;
		} else {
			r = sd_bus_message_skip(reply, "v");
		}
		if (r < 0)
			return r;
		r = sd_bus_message_exit_container(reply);
		if (r < 0)
			return r;
	}
	if (r < 0)
		return r;
	return have_uid && have_pid ? 0 : -ENODATA;
}

static int on_creds(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error)
{
	struct rtkit_request *req = userdata;
	uint32_t uid = 0, pid = 0;
	unsigned dropped;
	int r;

	request_answered(req);
	if (sd_bus_message_is_method_error(reply, NULL))
		r = -sd_bus_message_get_errno(reply);
	else
		r = read_creds(reply, &uid, &pid);
	if (r < 0) {
		/* A caller that hangs up at once makes this; anyone can. */
		if (ratelimit_below(&req->s->creds_log, now_nsec(CLOCK_MONOTONIC), &dropped))
			log_warning_errno(r, "rtkit: cannot read a caller's credentials from the bus "
					  "(%u more since the last such line): %m", dropped);
		(void)sd_bus_reply_method_errorf(req->m, rtkit_error_name(-EIO),
						 "cannot read the caller's credentials");
	} else if (!request_decide(req, (uid_t)uid, (pid_t)pid)) {
		/* Waiting: the bus call is done with, the request is not. */
		req->slot = sd_bus_slot_unref(req->slot);
		return 0;
	}
	request_free(req);
	return 0;
}

static int request_start(sd_bus_message *m, struct rtkit_server *s, bool realtime, bool with_pid,
			 sd_bus_error *error)
{
	const char *sender = sd_bus_message_get_sender(m);
	uint64_t process = UINT64_MAX, thread;
	struct rtkit_request *req;
	char err[128];
	int32_t value;
	int r;

	if (with_pid)
		r = sd_bus_message_read(m, "tt", &process, &thread);
	else
		r = sd_bus_message_read(m, "t", &thread);
	if (r >= 0)
		r = sd_bus_message_read(m, realtime ? "u" : "i", &value);
	if (r >= 0 && !sender)
		r = -EINVAL; /* not from a peer on the bus */
	if (r < 0)
		return r;
	r = realtime ? rtkit_check_priority((uint32_t)value, err, sizeof(err))
		     : rtkit_check_nice(value, err, sizeof(err));
	if (r < 0)
		return reply_error(m, r, err);
	r = s->n_pending < RTKIT_PENDING_MAX
		    ? rtkit_senders_add(s->senders, sender, RTKIT_SENDER_PENDING,
					RTKIT_PENDING_MAX)
		    : -EBUSY;
	if (r == -EBUSY) {
		unsigned dropped;

		if (ratelimit_below(&s->busy_log, now_nsec(CLOCK_MONOTONIC), &dropped))
			log_notice("rtkit: refused a request of %s: too many in flight (%u more "
				   "refused since the last such line)", sender, dropped);
		return reply_error(m, r, "too many requests in flight, try again later");
	}
	if (r < 0)
		return r;
	req = calloc(1, sizeof(*req));
	if (!req) {
		rtkit_senders_remove(s->senders, sender);
		return -ENOMEM;
	}
	*req = (struct rtkit_request){ .s = s, .m = sd_bus_message_ref(m), .asking = true,
				       .realtime = realtime, .process = process, .thread = thread,
				       .value = value, .t.pidfd = -1, .next = s->pending };
	if (s->pending)
		s->pending->prev = req;
	s->pending = req;
	s->n_pending++;
	r = sd_bus_call_method_async(s->bus, &req->slot, "org.freedesktop.DBus",
				     "/org/freedesktop/DBus", "org.freedesktop.DBus",
				     "GetConnectionCredentials", on_creds, req, "s", sender);
	if (r < 0) {
		request_free(req);
		return r;
	}
	return 1;
}

static int method_realtime(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	return request_start(m, userdata, true, false, error);
}

static int method_realtime_pid(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	return request_start(m, userdata, true, true, error);
}

static int method_high_priority(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	return request_start(m, userdata, false, false, error);
}

static int method_high_priority_pid(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	return request_start(m, userdata, false, true, error);
}

static const sd_bus_vtable rtkit_vtable[] = {
	SD_BUS_VTABLE_START(0),
	SD_BUS_METHOD_WITH_NAMES("MakeThreadRealtime", "tu",
				 SD_BUS_PARAM(thread) SD_BUS_PARAM(priority), "", ,
				 method_realtime, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_NAMES("MakeThreadRealtimeWithPID", "ttu",
				 SD_BUS_PARAM(process) SD_BUS_PARAM(thread) SD_BUS_PARAM(priority),
				 "", , method_realtime_pid, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_NAMES("MakeThreadHighPriority", "ti",
				 SD_BUS_PARAM(thread) SD_BUS_PARAM(priority), "", ,
				 method_high_priority, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_NAMES("MakeThreadHighPriorityWithPID", "tti",
				 SD_BUS_PARAM(process) SD_BUS_PARAM(thread) SD_BUS_PARAM(priority),
				 "", , method_high_priority_pid, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_PROPERTY("RTTimeUSecMax", "x", NULL, offsetof(struct rtkit_server, rttime_usec_max),
			SD_BUS_VTABLE_PROPERTY_CONST),
	SD_BUS_PROPERTY("MaxRealtimePriority", "i", NULL,
			offsetof(struct rtkit_server, max_realtime_priority),
			SD_BUS_VTABLE_PROPERTY_CONST),
	SD_BUS_PROPERTY("MinNiceLevel", "i", NULL, offsetof(struct rtkit_server, min_nice_level),
			SD_BUS_VTABLE_PROPERTY_CONST),
	SD_BUS_VTABLE_END,
};

static int on_name(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error)
{
	struct rtkit_server *s = userdata;
	uint32_t ret;
	int r;

	if (sd_bus_message_is_method_error(reply, NULL)) {
		const sd_bus_error *e = sd_bus_message_get_error(reply);
		log_warning("rtkit: cannot own %s: %s, ignoring", RTKIT_BUS_NAME,
			    e && e->message ? e->message : "error");
		return 0;
	}
	r = sd_bus_message_read(reply, "u", &ret);
	if (r < 0)
		return log_warning_errno(r, "rtkit: bad reply to RequestName, ignoring: %m"), 0;
	s->queued = ret == 2; /* DBUS_REQUEST_NAME_REPLY_IN_QUEUE */
	if (s->queued)
		log_notice("rtkit: %s is taken by another service (rtkit-daemon?); muqssd waits in "
			   "the bus's queue for it", RTKIT_BUS_NAME);
	else
		log_info("rtkit: serving %s", RTKIT_BUS_NAME);
	return 0;
}

/* Sent once the name is ours, also when an owner before us let it go. */
static int on_name_acquired(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
	struct rtkit_server *s = userdata;
	const char *name;

	if (sd_bus_message_read(m, "s", &name) >= 0 && strcmp(name, RTKIT_BUS_NAME) == 0 &&
	    s->queued) {
		s->queued = false;
		log_info("rtkit: serving %s, which its previous owner let go", RTKIT_BUS_NAME);
	}
	return 0;
}

int rtkit_server_new(struct rtkit_server **ret, sd_event *event, const struct rtkit_ops *ops,
		     void *userdata)
{
	struct rtkit_server *s;
	int r;

	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->ops = *ops;
	s->userdata = userdata;
	s->event = sd_event_ref(event);
	s->busy_log = (struct ratelimit)RATELIMIT_INIT(RTKIT_LOG_WINDOW_NSEC, 1);
	s->creds_log = s->busy_log;
	s->rttime_usec_max = RTKIT_RTTIME_USEC_MAX;
	s->max_realtime_priority = RTKIT_MAX_REALTIME_PRIORITY;
	s->min_nice_level = RTKIT_MIN_NICE_LEVEL;
	r = rtkit_senders_new(&s->senders);
	if (r >= 0)
		r = rtkit_budget_new(&s->budget);
	if (r < 0)
		goto fail;
	r = sd_bus_open_system(&s->bus);
	if (r < 0) {
		log_error_errno(r, "rtkit: cannot connect to the system bus: %m");
		goto fail;
	}
	r = sd_bus_add_object_vtable(s->bus, &s->object_slot, RTKIT_OBJECT_PATH, RTKIT_BUS_NAME,
				     rtkit_vtable, s);
	if (r >= 0)
		r = sd_bus_match_signal_async(s->bus, &s->acquired_slot, "org.freedesktop.DBus",
					      "/org/freedesktop/DBus", "org.freedesktop.DBus",
					      "NameAcquired", on_name_acquired, NULL, s);
	if (r >= 0)
		r = sd_bus_request_name_async(s->bus, &s->name_slot, RTKIT_BUS_NAME,
					      SD_BUS_NAME_QUEUE, on_name, s);
	if (r >= 0)
		r = sd_bus_attach_event(s->bus, event, SD_EVENT_PRIORITY_NORMAL);
	if (r < 0) {
		log_error_errno(r, "rtkit: cannot serve %s: %m", RTKIT_BUS_NAME);
		goto fail;
	}
	*ret = s;
	return 0;
fail:
	rtkit_server_free(s);
	return r;
}

struct rtkit_server *rtkit_server_free(struct rtkit_server *s)
{
	if (!s)
		return NULL;
	while (s->pending)
		request_free(s->pending);
	sd_bus_slot_unref(s->name_slot);
	sd_bus_slot_unref(s->acquired_slot);
	sd_bus_slot_unref(s->object_slot);
	if (s->bus) {
		(void)sd_bus_detach_event(s->bus);
		sd_bus_close_unref(s->bus);
	}
	rtkit_budget_free(s->budget);
	rtkit_senders_free(s->senders);
	sd_event_unref(s->event);
	free(s);
	return NULL;
}
