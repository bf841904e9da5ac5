/* The loader child (see sensor_bpf_load.h): the programs of
 * sensor_bpf.bpf.c through their generated skeleton, loaded and attached
 * here, and their fds sent to the daemon. Nothing here is freed: the
 * child exits as soon as it has answered. */
#include "sensor_bpf_load.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "sensor_bpf.skel.h"

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif

#define KERNEL_BTF "/sys/kernel/btf/vmlinux"
#define OWN_PIDNS "/proc/self/ns/pid"

static int fail(struct sensor_bpf_load_reply *reply, int r, const char *what)
{
	if (r == -EPERM || r == -EACCES)
		snprintf(reply->why, sizeof(reply->why), "%s: %s; it needs CAP_BPF and "
			 "CAP_PERFMON, and no kernel lockdown", what, strerror(-r));
	else
		snprintf(reply->why, sizeof(reply->why), "%s: %s", what, strerror(-r));
	return reply->err = r;
}

/* What the kernel must offer before anything is loaded. */
static int check_kernel(struct sensor_bpf_load_reply *reply, bool scope_all, struct stat *pidns)
{
	int fd;

	if (access(KERNEL_BTF, R_OK) < 0)
		return fail(reply, -errno, "no kernel BTF at " KERNEL_BTF);
	/* The programs name tasks by this namespace's pids, as the daemon
	 * does: the child is in the daemon's. */
	if (stat(OWN_PIDNS, pidns) < 0)
		return fail(reply, -errno, "cannot tell our PID namespace (" OWN_PIDNS ")");
	if (!scope_all) {
		/* Threads are seeded by a pidfd of their own. */
		fd = (int)syscall(SYS_pidfd_open, getpid(), PIDFD_THREAD);
		if (fd < 0)
			return fail(reply, -errno, "no pidfd for threads (PIDFD_THREAD, Linux 6.9)");
		close(fd);
	}
	return 0;
}

/* Lock waits are told with a kfunc that finds a task by tid: a kernel
 * without it gets the sensor without them. */
static bool have_task_kfuncs(void)
{
	struct btf *btf = btf__load_vmlinux_btf();
	bool all = btf && btf__find_by_name_kind(btf, "bpf_task_from_pid", BTF_KIND_FUNC) > 0 &&
		   btf__find_by_name_kind(btf, "bpf_task_release", BTF_KIND_FUNC) > 0;

	btf__free(btf);
	return all;
}

/* Fills fds (maps, then one link per program) and reply's counts. */
static int load(struct sensor_bpf_load_reply *reply, bool scope_all, uint64_t wake_after_ns,
		int fds[SENSOR_BPF_MAX_FDS])
{
	struct sensor_bpf_skel *skel;
	struct bpf_program *prog;
	struct stat pidns;
	int r;

	r = check_kernel(reply, scope_all, &pidns);
	if (r < 0)
		return r;
	skel = sensor_bpf_skel__open();
	if (!skel)
		return fail(reply, -errno, "cannot open the programs");
	skel->rodata->scope_all = scope_all;
	skel->rodata->pidns_inum = (uint32_t)pidns.st_ino;
	skel->rodata->wake_after_ns = wake_after_ns;
	skel->rodata->lock_holders = have_task_kfuncs();
	r = sensor_bpf_skel__load(skel);
	if (r < 0)
		return fail(reply, r, "the kernel refused the programs (the verifier's log "
			    "shows at --log-level debug)");
	fds[SENSOR_BPF_FD_EVENTS] = bpf_map__fd(skel->maps.muqss_events);
	fds[SENSOR_BPF_FD_SCOPE] = bpf_map__fd(skel->maps.muqss_scope);
	fds[SENSOR_BPF_FD_WAKE_CLASS] = bpf_map__fd(skel->maps.muqss_wake_class);
	fds[SENSOR_BPF_FD_BSS] = bpf_map__fd(skel->maps.bss);
	reply->bss_size = bpf_map__value_size(skel->maps.bss);
	reply->lost_offset = offsetof(struct sensor_bpf_skel__bss, lost);
	/* One by one rather than sensor_bpf_skel__attach(): each link's fd
	 * is what keeps its program attached once the child is gone. */
	bpf_object__for_each_program(prog, skel->obj) {
		struct bpf_link *link;

		if (!bpf_program__autoattach(prog))
			continue;
		if (reply->nlinks == SENSOR_BPF_MAX_LINKS)
			return fail(reply, -E2BIG, "more programs than SENSOR_BPF_MAX_LINKS");
		link = bpf_program__attach(prog);
		if (!link)
			return fail(reply, -errno, "cannot attach the programs");
		fds[SENSOR_BPF_FD_MAPS + reply->nlinks++] = bpf_link__fd(link);
	}
	return 0;
}

static void answer(int sock, const struct sensor_bpf_load_reply *reply, const int *fds,
		   unsigned nfds)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * SENSOR_BPF_MAX_FDS)];
		struct cmsghdr align;
	} control;
	struct iovec iov = { .iov_base = (void *)reply, .iov_len = sizeof(*reply) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *cmsg;

	if (nfds) {
		memset(&control, 0, sizeof(control));
		msg.msg_control = control.buf;
		msg.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		cmsg = CMSG_FIRSTHDR(&msg);
		cmsg->cmsg_level = SOL_SOCKET;
		cmsg->cmsg_type = SCM_RIGHTS;
		cmsg->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(cmsg), fds, sizeof(int) * nfds);
	}
	/* A daemon gone meanwhile hears nothing: no SIGPIPE for that. */
	(void)sendmsg(sock, &msg, MSG_NOSIGNAL);
}

_Noreturn void sensor_bpf_load_child(int sock, pid_t daemon, bool scope_all,
				      uint64_t wake_after_ns)
{
	struct sensor_bpf_load_reply reply = { 0 };
	int fds[SENSOR_BPF_MAX_FDS];

	/* Should the daemon be killed mid-load, the programs this child
	 * attaches must not outlive it by the rest of the load. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != daemon)
		_exit(1);
	prctl(PR_SET_NAME, "muqssd-bpf-load");
	if (load(&reply, scope_all, wake_after_ns, fds) < 0)
		answer(sock, &reply, fds, 0);
	else
		answer(sock, &reply, fds, SENSOR_BPF_FD_MAPS + reply.nlinks);
	/* No atexit handler, no stdio flush: they are the daemon's. */
	_exit(reply.err < 0 ? 1 : 0);
}
