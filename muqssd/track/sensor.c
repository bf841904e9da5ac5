/* Choosing a sensor, and passing calls to the one that runs. */
#include "sensor.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "connector.h"
#include "log.h"
#ifdef HAVE_BPF
#include "sensor_bpf.h"
#endif

struct sensor {
	enum sensor_kind kind;
	bool scope_all;
	struct connector *conn;
#ifdef HAVE_BPF
	struct sensor_bpf *bpf;
#endif
};

/* 0 with s->bpf set, or -errno after the one notice that says why. */
static int open_bpf(struct sensor *s, uint64_t wake_after_ns)
{
#ifdef HAVE_BPF
	char why[256] = "";
	int r;

	r = sensor_bpf_open(s->scope_all, wake_after_ns, &s->bpf, why, sizeof(why));
	if (r < 0)
		log_notice("bpf sensor unavailable (%s), using the proc connector", why);
	return r;
#else
	log_notice("bpf sensor unavailable (muqssd was built without it, -Dbpf), "
		   "using the proc connector");
	return -EOPNOTSUPP;
#endif
}

/* 0 with s->conn set, or -errno after the one notice that says why. */
static int open_connector(struct sensor *s, unsigned poll_ms)
{
	int r = connector_open(&s->conn);

	if (r < 0) {
		log_notice("proc connector unavailable (%s), polling /proc every %u ms",
			   strerror(-r), poll_ms);
		return r;
	}
	r = connector_probe(s->conn);
	if (r < 0) {
		log_notice("proc connector delivers no events (%s; it does not outside the "
			   "initial PID namespace), polling /proc every %u ms",
			   r == -ENODATA ? "no fork event for a child of ours within 1 s" :
			   strerror(-r), poll_ms);
		s->conn = connector_free(s->conn);
	}
	return r;
}

int sensor_open(enum sensor_kind want, const struct scope *scope, unsigned poll_ms,
		uint64_t wake_after_ns, struct sensor **ret)
{
	struct sensor *s;

	*ret = NULL;
	if (want == SENSOR_POLL) {
		log_notice("polling /proc every %u ms, as asked", poll_ms);
		return 0;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->scope_all = scope->kind == SCOPE_ALL;
	if (want != SENSOR_CONNECTOR && open_bpf(s, wake_after_ns) == 0)
		s->kind = SENSOR_BPF;
	else if (open_connector(s, poll_ms) == 0)
		s->kind = SENSOR_CONNECTOR;
	else {
		free(s);
		return 0;
	}
	*ret = s;
	return 0;
}

struct sensor *sensor_free(struct sensor *s)
{
	if (!s)
		return NULL;
	connector_free(s->conn);
#ifdef HAVE_BPF
	sensor_bpf_free(s->bpf);
#endif
	free(s);
	return NULL;
}

enum sensor_kind sensor_kind_of(const struct sensor *s)
{
	return s ? s->kind : SENSOR_POLL;
}

int sensor_fd(const struct sensor *s)
{
#ifdef HAVE_BPF
	if (s->bpf)
		return sensor_bpf_fd(s->bpf);
#endif
	return connector_fd(s->conn);
}

struct connector_relay {
	sensor_event_func_t fn;
	void *userdata;
};

/* The connector tells no task's stat. */
static void relay_connector(const struct proc_event *ev, void *userdata)
{
	struct connector_relay *relay = userdata;

	relay->fn(ev, NULL, relay->userdata);
}

int sensor_receive(struct sensor *s, unsigned max, sensor_event_func_t fn, void *userdata)
{
	struct connector_relay relay = { fn, userdata };

#ifdef HAVE_BPF
	if (s->bpf)
		return sensor_bpf_receive(s->bpf, max, fn, userdata);
#endif
	return connector_receive(s->conn, max, relay_connector, &relay);
}

bool sensor_needs_seed(const struct sensor *s)
{
	return s && s->kind == SENSOR_BPF && !s->scope_all;
}

int sensor_seed(struct sensor *s, pid_t tid, uid_t uid, uid_t euid, gid_t gid)
{
#ifdef HAVE_BPF
	if (s && s->bpf && !s->scope_all)
		return sensor_bpf_seed(s->bpf, tid, uid, euid, gid);
#endif
	return 0;
}

bool sensor_has_counters(const struct sensor *s)
{
	return s && s->kind == SENSOR_BPF;
}

int sensor_counters(struct sensor *s, int pidfd, uint64_t now_ns, struct sensor_counters *ret)
{
#ifdef HAVE_BPF
	if (s && s->bpf)
		return sensor_bpf_counters(s->bpf, pidfd, now_ns, ret);
#endif
	return -EOPNOTSUPP;
}

int sensor_task_pidfd(pid_t tid)
{
#ifdef HAVE_BPF
	return sensor_bpf_pidfd(tid);
#else
	return -EOPNOTSUPP;
#endif
}

uint64_t sensor_lost(const struct sensor *s)
{
#ifdef HAVE_BPF
	if (s && s->bpf)
		return sensor_bpf_lost(s->bpf);
#endif
	return 0;
}

int sensor_task_identity(struct sensor *s, int pidfd, uint64_t *ret_start, pid_t *ret_tgid)
{
#ifdef HAVE_BPF
	if (s && s->bpf)
		return sensor_bpf_task_identity(s->bpf, pidfd, ret_start, ret_tgid);
#endif
	return -EOPNOTSUPP;
}

int sensor_set_class(struct sensor *s, int pidfd, unsigned cls)
{
#ifdef HAVE_BPF
	if (s && s->bpf)
		return sensor_bpf_set_class(s->bpf, pidfd, cls, s->scope_all);
#endif
	return -EOPNOTSUPP;
}

int sensor_task_wake_hist(struct sensor *s, int pidfd, uint64_t ret[SENSOR_WAKE_BUCKETS])
{
#ifdef HAVE_BPF
	if (s && s->bpf)
		return sensor_bpf_task_wake_hist(s->bpf, pidfd, ret);
#endif
	return -EOPNOTSUPP;
}

int sensor_class_wake_hists(struct sensor *s,
			    uint64_t ret[SENSOR_WAKE_CLASSES][SENSOR_WAKE_BUCKETS])
{
#ifdef HAVE_BPF
	if (s && s->bpf)
		return sensor_bpf_class_wake_hists(s->bpf, ret);
#endif
	return -EOPNOTSUPP;
}
