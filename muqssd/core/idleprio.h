/*
 * SCHED_IDLEPRIO promotion. An idle-priority task that may hold something
 * other tasks wait for is keyed like a nice 19 normal task until it lets
 * go; otherwise a busy machine could starve it while it holds a lock and
 * stall everyone waiting on it. The daemon gathers the facts from /proc.
 */
#ifndef MUQSS_CORE_IDLEPRIO_H
#define MUQSS_CORE_IDLEPRIO_H

#include <stdbool.h>
#include <stdint.h>

#define IDLEPRIO_KEY_BIAS UINT64_C(0xF000000000000000)

struct idleprio_facts {
	bool uninterruptible;	/* state D: likely inside the kernel holding resources */
	bool exiting;		/* must be let run to release what it has */
	bool signal_pending;	/* e.g. SIGKILL: let it act on it */
	bool frozen;		/* the freezer waits for it */
	bool blocking_others;	/* the daemon saw others wait on it (futex, lock) */
};

/* True if the task should run as normal at nice 19 instead of idle. */
bool idleprio_should_promote(const struct idleprio_facts *facts);

#endif
