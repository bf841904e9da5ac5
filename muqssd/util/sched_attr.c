#include "sched_attr.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

int sched_attr_get(pid_t tid, struct sched_attr_v1 *ret)
{
	memset(ret, 0, sizeof(*ret));
	if (syscall(SYS_sched_getattr, tid, ret, (unsigned)sizeof(*ret), 0u) < 0)
		return -errno;
	return 0;
}

int sched_attr_set(pid_t tid, const struct sched_attr_v1 *attr)
{
	struct sched_attr_v1 a = *attr;

	/* Version 0 size: the uclamp fields are not ours to change. */
	a.size = 48;
	if (syscall(SYS_sched_setattr, tid, &a, 0u) < 0)
		return -errno;
	return 0;
}

/* The kernel clears reset-on-fork before it changes the policy, and fork
 * copies its parent without a lock: a child forked in between starts
 * SCHED_FIFO without the flag, and keeps it. A task flipped in a loop
 * gave 98 to 336 such children in about 5,800 forks (bench/README, "A
 * boost copied through fork"). Out of the policy with the flag still
 * set, then the flag as asked: a child forked between the two only
 * loses a negative nice and a slice request, as reset-on-fork does. */
int sched_attr_set_leaving_rt(pid_t tid, const struct sched_attr_v1 *attr)
{
	struct sched_attr_v1 a = *attr;
	int r;

	if (!sched_policy_is_rt((int)a.sched_policy) && !(a.sched_flags & SCHED_FLAG_RESET_ON_FORK)) {
		a.sched_flags |= SCHED_FLAG_RESET_ON_FORK;
		r = sched_attr_set(tid, &a);
		if (r < 0)
			return r;
	}
	return sched_attr_set(tid, attr);
}

static bool kernel_at_least(unsigned major, unsigned minor)
{
	struct utsname u;
	unsigned ma, mi;

	if (uname(&u) < 0 || sscanf(u.release, "%u.%u", &ma, &mi) != 2)
		return false;
	return ma > major || (ma == major && mi >= minor);
}

/* Since 6.12 sched_getattr() reports a normal task's slice in
 * sched_runtime and sched_setattr() takes it as a request; before, the
 * field read 0 and was ignored. A daemon already running SCHED_FIFO cannot
 * read its own slice, so the release is the fallback. */
bool sched_slice_probe(uint64_t *default_ns)
{
	struct sched_attr_v1 a;
	FILE *f;

	*default_ns = 0;
	f = fopen("/sys/kernel/debug/sched/base_slice_ns", "re");
	if (f) {
		unsigned long long v;

		if (fscanf(f, "%llu", &v) == 1)
			*default_ns = v;
		fclose(f);
	}
	if (sched_attr_get(0, &a) < 0)
		return false;
	if (a.sched_policy == SCHED_OTHER || a.sched_policy == SCHED_BATCH ||
	    a.sched_policy == SCHED_IDLE) {
		if (!*default_ns)
			*default_ns = a.sched_runtime;
		return a.sched_runtime > 0;
	}
	return kernel_at_least(6, 12);
}
