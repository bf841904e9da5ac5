/*
 * libmuqss-client: talk to muqssd, the MuQSS scheduling daemon.
 *
 * Every function that returns int returns 0 (or a documented positive
 * value) on success and a negative errno on failure. After a failure that
 * the daemon explained, muqss_error_message() holds its words, e.g.
 * "permission denied: pid 4242 belongs to uid 1001".
 *
 * Errors common to every request:
 *   -ENOENT, -ECONNREFUSED  (muqss_connect) muqssd is not running
 *   -EPROTO       the daemon speaks another protocol version
 *   -ECONNRESET   the daemon went away
 *   -ETIMEDOUT    no reply within 30 seconds
 *   -EBADMSG      the daemon sent something malformed
 *   -ENOMEM       out of memory
 *
 * A client is not thread safe; use one per thread or lock around it.
 */
#ifndef MUQSS_CLIENT_H
#define MUQSS_CLIENT_H

#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MUQSS_DEFAULT_SOCKET "/run/muqssd/control"

struct muqss_client;

enum muqss_policy {
	MUQSS_POLICY_NORMAL = 0,
	MUQSS_POLICY_ISO = 1,	   /* soft realtime, unprivileged, capped by iso_cpu */
	MUQSS_POLICY_IDLEPRIO = 2, /* only when nothing else wants the CPU */
	MUQSS_POLICY_BATCH = 3,
};

/* Connects to path, or when path is NULL to $MUQSS_SOCKET or else
 * MUQSS_DEFAULT_SOCKET, and says hello. Returns 0 and a client in *ret;
 * -ENOENT or -ECONNREFUSED when no daemon listens there, -EACCES when the
 * socket is closed to us, -EPROTO on a protocol version mismatch. */
int muqss_connect(struct muqss_client **ret, const char *path);
/* Closes the connection; pending async callbacks are called with
 * -ECANCELED. NULL is fine. */
void muqss_close(struct muqss_client *c);

/* The daemon's explanation of the last failed request, or "" . Valid
 * until the next call on c. */
const char *muqss_error_message(const struct muqss_client *c);
/* The daemon's version string, from its hello. */
const char *muqss_server_version(const struct muqss_client *c);

/* Blocking helpers. Each sends one request and waits for its reply. */

/* Every thread of pid. 0; -ESRCH no such process; -EPERM not yours, or
 * leaving idleprio without root; -EOPNOTSUPP the daemon cannot. */
int muqss_set_class(struct muqss_client *c, pid_t pid, enum muqss_policy policy);
/* One thread, by its tid. Same returns as muqss_set_class(). */
int muqss_set_class_tid(struct muqss_client *c, pid_t tid, enum muqss_policy policy);
/* Policy and nice together (-20..19; lowering nice needs root). Same
 * returns as muqss_set_class(), -EINVAL for a nice out of range. */
int muqss_set_class_nice(struct muqss_client *c, pid_t pid, enum muqss_policy policy, int nice);

/* A tunable's value as text ("6", "per-cpu"), to be freed with free().
 * 0; -ENOENT unknown name. Names: rr_interval, interactive, iso_cpu,
 * yield_type, iso_reading. */
int muqss_get_tunable(struct muqss_client *c, const char *name, char **ret);
/* Sets a tunable from text; it takes effect at once. 0; -ERANGE or
 * -EINVAL out of range (the message names the range); -ENOENT unknown
 * name; -EPERM not root or the admin group. */
int muqss_set_tunable(struct muqss_client *c, const char *name, const char *value);
/* Re-reads the daemon's config file. 0; -EPERM; or the load error. */
int muqss_reload(struct muqss_client *c);

/* JSON documents, malloc()ed, to be freed with free(). Their schemas are
 * in PROTOCOL.md and stay stable within a protocol version. */
int muqss_status_json(struct muqss_client *c, char **ret);
/* cpu < 0: every CPU. */
int muqss_queues_json(struct muqss_client *c, int cpu, char **ret);
int muqss_tasks_json(struct muqss_client *c, char **ret);

/* Starts argv[0] (searched in PATH) under policy, applied before the
 * program's first instruction, so its threads and children inherit it.
 * nice is applied when nice_set. Returns 0 and the child's pid in *ret_pid,
 * which the caller must wait for; -ENOENT/-EACCES when argv[0] cannot be
 * executed (the child is reaped); the set-class errors otherwise (the
 * child is killed and reaped, nothing ran). */
int muqss_run(struct muqss_client *c, enum muqss_policy policy, int nice_set, int nice,
	      char *const argv[], pid_t *ret_pid);

/* For callers with an event loop of their own. */

/* error is 0 or -errno; json is the reply body (NULL on error). */
typedef void (*muqss_reply_func_t)(struct muqss_client *c, int error, const char *json,
				   void *userdata);
/* The socket to poll for POLLIN. */
int muqss_get_fd(const struct muqss_client *c);
/* Sends a set-class request (tid 0: every thread of pid) without waiting;
 * callback runs from muqss_dispatch(). 0 or -errno. */
int muqss_set_class_async(struct muqss_client *c, pid_t pid, pid_t tid,
			  enum muqss_policy policy, muqss_reply_func_t callback, void *userdata);
/* Reads what has arrived without blocking and runs the callbacks of the
 * completed replies. Returns how many ran (0 or more), or -errno when the
 * connection failed (every pending callback then ran with that error). */
int muqss_dispatch(struct muqss_client *c);

#ifdef __cplusplus
}
#endif

#endif
