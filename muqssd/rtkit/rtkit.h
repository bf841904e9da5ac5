/* rtkit's D-Bus API (org.freedesktop.RealtimeKit1 on the system bus), served
 * with MuQSS's classes: a real-time request gets ISO, a high-priority one a
 * nice. What a request does to the daemon goes through struct rtkit_ops. */
#pragma once

#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-event.h>

#define RTKIT_BUS_NAME "org.freedesktop.RealtimeKit1"
#define RTKIT_OBJECT_PATH "/org/freedesktop/RealtimeKit1"

/* What rtkit-daemon advertises by default; PipeWire clamps its requests to
 * them. muqssd does not check RLIMIT_RTTIME (ISO is capped by iso_cpu),
 * but clients set it from RTTimeUSecMax themselves (PipeWire's module-rt
 * does): a thread that spins 200 ms at SCHED_FIFO, ours included, is
 * killed by the kernel, as under rtkit-daemon (bench/README, PipeWire). */
#define RTKIT_MAX_REALTIME_PRIORITY 20
#define RTKIT_MIN_NICE_LEVEL (-15)
#define RTKIT_RTTIME_USEC_MAX 200000

struct rtkit_ops {
	/* 1 when the daemon has read tid, a thread of pid; 0 while its reads
	 * are under way (asked again, see read_wait.h); -ESRCH when it is no
	 * such thread. */
	int (*adopt)(void *userdata, pid_t pid, pid_t tid);
	/* Called after authorization, with tid checked to still be the thread
	 * the caller named; uid: the caller's, whose request it is. Write a
	 * reason into err on failure. */
	int (*make_iso)(void *userdata, uid_t uid, pid_t pid, pid_t tid, char *err, size_t errlen);
	int (*set_nice)(void *userdata, uid_t uid, pid_t pid, pid_t tid, int nice, char *err,
			size_t errlen);
};

/* The thread a request names, and its process held by a pidfd opened
 * before anything was read of it; the caller it was authorized for. */
struct rtkit_target {
	pid_t pid;
	pid_t tid;
	int pidfd;
	uid_t uid;
};

/* rtkit_auth.c. May caller_uid act on thread of process (UINT64_MAX: the
 * caller's own process; thread 0: the process's main thread)? Fills *ret,
 * whose pidfd the caller closes (also on failure: -1 then). It reads
 * only /proc's status, which never waits on the task: this runs on the
 * daemon's loop. 0; -ESRCH no such thread in that process; -EPERM
 * another user's thread (root may name any: auth_owner() with uid 0 as
 * the only admin). err gets the reason for the caller. What the request
 * may then do is auth_task()'s to say, as for the control socket. */
int rtkit_authorize(uid_t caller_uid, pid_t caller_pid, uint64_t process, uint64_t thread,
		    struct rtkit_target *ret, char *err, size_t errlen);
/* rtkit's bounds: priority 1..RTKIT_MAX_REALTIME_PRIORITY, nice
 * RTKIT_MIN_NICE_LEVEL..19. 0 or -EPERM with the reason. */
int rtkit_check_priority(uint32_t priority, char *err, size_t errlen);
int rtkit_check_nice(int32_t nice, char *err, size_t errlen);
/* Is the target still the thread it was when authorized: its process
 * alive, tid one of its threads (a tid reused in another process is
 * not), and still the caller's (a thread may change its real uid, as one
 * of a root process that drops privilege for a while does)? 0, -ESRCH or
 * -EPERM, with the reason in err. */
int rtkit_target_recheck(const struct rtkit_target *t, char *err, size_t errlen);
/* The D-Bus error name rtkit answers -errno with. */
const char *rtkit_error_name(int error);

struct rtkit_server;

/* Connects to the system bus ($DBUS_SYSTEM_BUS_ADDRESS if set) on event,
 * serves the object and asks for the name, queued behind an owner that is
 * already there (logged once). 0 or -errno (logged). */
int rtkit_server_new(struct rtkit_server **ret, sd_event *event, const struct rtkit_ops *ops,
		     void *userdata);
struct rtkit_server *rtkit_server_free(struct rtkit_server *s);
