#include "connector.h"

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/connector.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>
#include <netlink/msg.h>

#include "log.h"

/* Room for a storm's worth of events: each is ~100 bytes of payload but
 * costs a whole skb (~1 KiB) of receive buffer. */
#define CONNECTOR_RCVBUF (16 * 1024 * 1024)
#define CONNECTOR_ACK_TIMEOUT_MS 1000
#define CONNECTOR_PROBE_TIMEOUT_MS 1000

struct connector {
	struct nl_sock *sock;
	uint32_t listen_seq;
};

static int send_op(struct connector *c, enum proc_cn_mcast_op op)
{
	struct {
		struct cn_msg msg;
		enum proc_cn_mcast_op op;
	} __attribute__((packed)) req;
	int r;

	memset(&req, 0, sizeof(req));
	req.msg.id.idx = CN_IDX_PROC;
	req.msg.id.val = CN_VAL_PROC;
	req.msg.seq = c->listen_seq;
	req.msg.len = sizeof(req.op);
	req.op = op;
	r = nl_send_simple(c->sock, NLMSG_DONE, 0, &req, sizeof(req));
	return r < 0 ? -EIO : 0;
}

static const struct proc_event *event_of(struct nlmsghdr *h)
{
	struct cn_msg *msg;

	if (h->nlmsg_type != NLMSG_DONE ||
	    (size_t)nlmsg_datalen(h) < sizeof(struct cn_msg) + sizeof(struct proc_event))
		return NULL;
	msg = nlmsg_data(h);
	if (msg->id.idx != CN_IDX_PROC || msg->id.val != CN_VAL_PROC ||
	    msg->len < sizeof(struct proc_event))
		return NULL;
	return (const struct proc_event *)msg->data;
}

struct ack_wait {
	uint32_t seq;
	int err; /* 1 while waiting */
};

static void on_ack_candidate(const struct proc_event *ev, void *userdata)
{
	struct ack_wait *w = userdata;

	/* Acks from other listeners are multicast too; any ack tells us the
	 * group works, and ours carries our error if the kernel refused. */
	if (ev->what == PROC_EVENT_NONE && w->err == 1)
		w->err = (int)ev->event_data.ack.err;
}

static long ms_since(const struct timespec *start)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - start->tv_sec) * 1000 + (now.tv_nsec - start->tv_nsec) / 1000000;
}

/* One deadline for the whole wait: on a busy machine other processes'
 * events arrive all the time, and outside the initial PID namespace the
 * ack never does (connector_probe() then tells). */
static int wait_ack(struct connector *c)
{
	struct ack_wait w = { .seq = c->listen_seq, .err = 1 };
	struct pollfd pfd = { .fd = nl_socket_get_fd(c->sock), .events = POLLIN };
	struct timespec start;
	long left;

	clock_gettime(CLOCK_MONOTONIC, &start);
	while (w.err == 1) {
		int r;

		left = CONNECTOR_ACK_TIMEOUT_MS - ms_since(&start);
		r = left > 0 ? poll(&pfd, 1, (int)left) : 0;
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		/* Without an ack in time (old kernel), assume events flow. */
		if (r == 0)
			return 0;
		r = connector_receive(c, 64, on_ack_candidate, &w);
		if (r < 0 && r != -ENOBUFS)
			return r;
	}
	return -w.err;
}

int connector_open(struct connector **ret)
{
	struct connector *c;
	int r, fd, size = CONNECTOR_RCVBUF;

	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->listen_seq = (uint32_t)getpid();
	c->sock = nl_socket_alloc();
	if (!c->sock) {
		free(c);
		return -ENOMEM;
	}
	nl_socket_disable_seq_check(c->sock);
	nl_socket_disable_auto_ack(c->sock);
	nl_socket_disable_msg_peek(c->sock);
	r = nl_connect(c->sock, NETLINK_CONNECTOR);
	if (r < 0) {
		r = r == -NLE_PERM ? -EPERM : -EPROTONOSUPPORT;
		goto fail;
	}
	r = nl_socket_add_membership(c->sock, CN_IDX_PROC);
	if (r < 0) {
		r = -EPERM;
		goto fail;
	}
	fd = nl_socket_get_fd(c->sock);
	(void)nl_socket_set_buffer_size(c->sock, size, 0);
	/* SO_RCVBUF is capped by net.core.rmem_max; root may go past it. */
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size));
	r = nl_socket_set_nonblocking(c->sock);
	if (r < 0) {
		r = -EIO;
		goto fail;
	}
	r = send_op(c, PROC_CN_MCAST_LISTEN);
	if (r < 0)
		goto fail;
	r = wait_ack(c);
	if (r < 0)
		goto fail;
	*ret = c;
	return 0;
fail:
	connector_free(c);
	return r;
}

struct probe_wait {
	pid_t parent, child;
	bool seen;
};

static void on_probe_candidate(const struct proc_event *ev, void *userdata)
{
	struct probe_wait *w = userdata;

	if (ev->what == PROC_EVENT_FORK && ev->event_data.fork.child_pid == w->child &&
	    ev->event_data.fork.parent_tgid == w->parent)
		w->seen = true;
}

int connector_probe(struct connector *c)
{
	struct probe_wait w = { .parent = getpid() };
	struct pollfd pfd = { .fd = nl_socket_get_fd(c->sock), .events = POLLIN };
	struct timespec start;
	long left;

	w.child = fork();
	if (w.child < 0)
		return -errno;
	if (w.child == 0)
		_exit(0);
	while (waitpid(w.child, NULL, 0) < 0 && errno == EINTR)
		;
	clock_gettime(CLOCK_MONOTONIC, &start);
	while (!w.seen && (left = CONNECTOR_PROBE_TIMEOUT_MS - ms_since(&start)) > 0) {
		int r = poll(&pfd, 1, (int)left);

		if (r < 0 && errno != EINTR)
			return -errno;
		if (r <= 0)
			continue;
		r = connector_receive(c, 256, on_probe_candidate, &w);
		if (r < 0 && r != -ENOBUFS)
			return r;
	}
	return w.seen ? 0 : -ENODATA;
}

struct connector *connector_free(struct connector *c)
{
	if (!c)
		return NULL;
	(void)send_op(c, PROC_CN_MCAST_IGNORE);
	nl_socket_free(c->sock);
	free(c);
	return NULL;
}

int connector_fd(const struct connector *c)
{
	return nl_socket_get_fd(c->sock);
}

int connector_receive(struct connector *c, unsigned max, connector_event_func_t fn,
		      void *userdata)
{
	unsigned count = 0;

	while (count < max) {
		struct sockaddr_nl peer;
		unsigned char *buf = NULL;
		struct nlmsghdr *h;
		int n;

		n = nl_recv(c->sock, &peer, &buf, NULL);
		if (n == 0 || n == -NLE_AGAIN)
			break; /* drained */
		if (n < 0) {
			/* libnl maps ENOBUFS to NLE_NOMEM. */
			return n == -NLE_NOMEM ? -ENOBUFS : -EIO;
		}
		/* Only the kernel may speak on this group. */
		if (peer.nl_pid != 0) {
			free(buf);
			continue;
		}
		for (h = (struct nlmsghdr *)buf; nlmsg_ok(h, n); h = nlmsg_next(h, &n)) {
			const struct proc_event *ev = event_of(h);

			if (ev) {
				/* The payload sits 4 bytes off an 8-byte boundary
				 * (cn_msg is 20 bytes): read it through a copy. */
				struct proc_event aligned;

				memcpy(&aligned, ev, sizeof(aligned));
				fn(&aligned, userdata);
				count++;
			}
		}
		free(buf);
	}
	return (int)count;
}
