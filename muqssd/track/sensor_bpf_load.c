/* The daemon's half of loading the bpf sensor (see sensor_bpf_load.h):
 * fork the loader child, take its answer and its fds, reap it. */
#include "sensor_bpf_load.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "time_util.h"

static int fail(int r, char *why, size_t size, const char *what)
{
	snprintf(why, size, "%s: %s", what, strerror(-r));
	return r;
}

static void close_all(const int *fds, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		close(fds[i]);
}

/* Waits for the child's answer, never longer than the timeout. */
static int wait_answer(int sock, char *why, size_t why_size)
{
	uint64_t deadline = now_nsec(CLOCK_MONOTONIC) + SENSOR_BPF_LOAD_TIMEOUT_MS * 1000000ULL;
	struct pollfd pfd = { .fd = sock, .events = POLLIN };

	for (;;) {
		uint64_t now = now_nsec(CLOCK_MONOTONIC);
		int r;

		if (now >= deadline) {
			snprintf(why, why_size, "the loader did not answer within %d ms",
				 SENSOR_BPF_LOAD_TIMEOUT_MS);
			return -ETIMEDOUT;
		}
		r = poll(&pfd, 1, (int)((deadline - now + 999999) / 1000000));
		if (r > 0)
			return 0;
		if (r < 0 && errno != EINTR)
			return fail(-errno, why, why_size, "cannot wait for the loader");
	}
}

/* The answer and its fds; on failure nothing is left open. */
static int receive(int sock, struct sensor_bpf_fds *ret, char *why, size_t why_size)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * SENSOR_BPF_MAX_FDS)];
		struct cmsghdr align;
	} control;
	struct sensor_bpf_load_reply reply;
	struct iovec iov = { .iov_base = &reply, .iov_len = sizeof(reply) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = control.buf, .msg_controllen = sizeof(control.buf) };
	struct cmsghdr *cmsg;
	int fds[SENSOR_BPF_MAX_FDS];
	unsigned nfds = 0;
	ssize_t n;

	n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	if (n < 0)
		return fail(-errno, why, why_size, "cannot read the loader's answer");
	for (cmsg = CMSG_FIRSTHDR(&msg); cmsg; cmsg = CMSG_NXTHDR(&msg, cmsg)) {
		size_t len;

		if (cmsg->cmsg_level != SOL_SOCKET || cmsg->cmsg_type != SCM_RIGHTS)
			continue;
		len = (cmsg->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		if (len > SENSOR_BPF_MAX_FDS - nfds)
			len = SENSOR_BPF_MAX_FDS - nfds; /* MSG_CTRUNC below */
		memcpy(fds + nfds, CMSG_DATA(cmsg), len * sizeof(int));
		nfds += (unsigned)len;
	}
	if (n == 0) {
		close_all(fds, nfds);
		return fail(-ECHILD, why, why_size, "the loader exited without an answer");
	}
	if ((size_t)n != sizeof(reply) || (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC))) {
		close_all(fds, nfds);
		return fail(-EBADMSG, why, why_size, "the loader's answer is malformed");
	}
	if (reply.err < 0) {
		close_all(fds, nfds);
		reply.why[sizeof(reply.why) - 1] = '\0';
		snprintf(why, why_size, "%s", reply.why);
		return reply.err;
	}
	if (reply.nlinks > SENSOR_BPF_MAX_LINKS || nfds != SENSOR_BPF_FD_MAPS + reply.nlinks) {
		close_all(fds, nfds);
		return fail(-EBADMSG, why, why_size, "the loader sent the wrong fds");
	}
	memcpy(ret->map, fds, sizeof(ret->map));
	memcpy(ret->link, fds + SENSOR_BPF_FD_MAPS, reply.nlinks * sizeof(int));
	ret->nlinks = reply.nlinks;
	ret->bss_size = reply.bss_size;
	ret->lost_offset = reply.lost_offset;
	return 0;
}

int sensor_bpf_load(bool scope_all, uint64_t wake_after_ns, struct sensor_bpf_fds *ret,
		    char *why, size_t why_size)
{
	pid_t daemon = getpid(), child;
	int sv[2], r;

	for (unsigned i = 0; i < SENSOR_BPF_FD_MAPS; i++)
		ret->map[i] = -1;
	ret->nlinks = 0;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return fail(-errno, why, why_size, "cannot make the loader's socket");
	/* The daemon is still single-threaded here (the tracker opens its
	 * sensor before any thread starts), so the child may allocate. */
	child = fork();
	if (child < 0) {
		r = fail(-errno, why, why_size, "cannot fork the loader");
		close(sv[0]);
		close(sv[1]);
		return r;
	}
	if (child == 0) {
		close(sv[0]);
		sensor_bpf_load_child(sv[1], daemon, scope_all, wake_after_ns);
	}
	close(sv[1]);
	r = wait_answer(sv[0], why, why_size);
	if (r == 0)
		r = receive(sv[0], ret, why, why_size);
	close(sv[0]);
	/* Answered or not, the child has nothing left to do: the kill
	 * bounds the reap. */
	kill(child, SIGKILL);
	while (waitpid(child, NULL, 0) < 0 && errno == EINTR)
		;
	return r;
}

void sensor_bpf_fds_close(struct sensor_bpf_fds *fds)
{
	for (unsigned i = 0; i < SENSOR_BPF_FD_MAPS; i++)
		if (fds->map[i] >= 0)
			close(fds->map[i]);
	close_all(fds->link, fds->nlinks);
	for (unsigned i = 0; i < SENSOR_BPF_FD_MAPS; i++)
		fds->map[i] = -1;
	fds->nlinks = 0;
}
