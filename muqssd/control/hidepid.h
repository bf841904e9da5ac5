/* What /proc shows of other users' processes (its mount's hidepid= and
 * gid=), which TASKS and QUEUES follow for callers other than root and the
 * admin group. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The kernel's values (fs/proc/root.c). */
enum hidepid_mode {
	HIDEPID_MODE_OFF = 0,
	HIDEPID_MODE_NOACCESS = 1,
	HIDEPID_MODE_INVISIBLE = 2,
	HIDEPID_MODE_PTRACEABLE = 4,
};

struct hidepid {
	enum hidepid_mode mode;
	gid_t gid; /* its members see every process, except under ptraceable */
};

/* The options of the proc mount at /proc in mountinfo text (len bytes):
 * the mount numbered mnt_id, or when mnt_id is 0 the last one listed at
 * /proc. 0; -ENOENT: no such proc mount; -EINVAL: hidepid= or gid= not
 * understood. */
int hidepid_parse(const char *text, size_t len, uint64_t mnt_id, struct hidepid *ret);

/* The mount of /proc this process sees. When that cannot be told, the
 * strictest mode (invisible) with a warning; -ENOMEM passed up. */
int hidepid_read(struct hidepid *ret);

/* Does h hide other users' processes from a caller who is neither root
 * nor admin? in_gid: the caller is a member of h->gid. Under ptraceable
 * the kernel asks ptrace access alone, so gid= does not count. */
bool hidepid_hides(const struct hidepid *h, bool in_gid);

/* The owner rule for a task of real uid uid and effective uid euid: both
 * the caller's. ptrace_may_access() asks as much, and more (saved uid,
 * gids, dumpable), which muqssd does not track. */
static inline bool hidepid_owner_sees(uid_t caller, uid_t uid, uid_t euid)
{
	return uid == caller && euid == caller;
}
