/* The daemon keeps itself above what it grants. */
#include "enforce.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "log.h"
#include "sched_attr.h"

/* What the daemon may hold open: two cached /proc files for each of up
 * to 256 tasks, the stat readers' queue, clients (tracker_fd_budget()). */
#define FD_TABLE_PRESIZE 1024

/* The fd table grows as the daemon opens the /proc files of new tasks,
 * and each growth waits for an RCU grace period (expand_files() calls
 * synchronize_rcu()), which CPUs held by our boosts hold back. Grown once
 * now, to the soft limit at most, it never grows in a tick. */
static void presize_fd_table(void)
{
	struct rlimit rl;
	rlim_t want = FD_TABLE_PRESIZE;
	int fd, high;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < want)
		want = rl.rlim_cur;
	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	high = fcntl(fd, F_DUPFD_CLOEXEC, (int)want - 1);
	if (high >= 0)
		close(high);
	close(fd);
}

int enforce_protect_self(int prio)
{
	struct sched_attr_v1 a = {
		.sched_policy = SCHED_FIFO,
		.sched_priority = (uint32_t)prio,
		.sched_flags = SCHED_FLAG_RESET_ON_FORK,
	};
	int r, ret = 0;

	/* Only the calling thread: the daemon is one thread by design. */
	r = sched_attr_set(0, &a);
	if (r < 0)
		ret = log_warning_errno(r, "cannot run SCHED_FIFO at priority %d, so a boosted task "
				        "could starve muqssd, ignoring: %m", prio);
	/* Locked, a page the tick needs is never swapped out under memory
	 * pressure; on fault, only pages the daemon touches are, not every
	 * page of every library it maps (7 MiB resident at start, not 4). */
	if (mlockall(MCL_CURRENT | MCL_FUTURE | MCL_ONFAULT) < 0) {
		r = log_warning_errno(errno, "cannot lock memory, ignoring: %m");
		if (ret == 0)
			ret = r;
	}
	presize_fd_table();
	return ret;
}
