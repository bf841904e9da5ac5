/* The daemon keeps itself above what it grants. */
#include "enforce.h"

#include <errno.h>
#include <sys/mman.h>

#include "log.h"
#include "sched_attr.h"

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
	return ret;
}
