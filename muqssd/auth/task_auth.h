/* Who may change a task's class and nice: the one rule of both doors, the
 * control socket and rtkit's D-Bus API, so that neither grants what the
 * other refuses. As in oomd: an admin may act on anyone; anyone else on
 * tasks whose real uid is theirs, never out of IDLEPRIO (as in MuQSS),
 * and to a lower nice only where the kernel would let them (RLIMIT_NICE)
 * or the door grants it (rtkit's MinNiceLevel). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "core/task.h"

/* A nice past the lowest: a door that grants no nice beyond RLIMIT_NICE. */
#define AUTH_NO_NICE_GRANT 20

struct auth_caller {
	uid_t uid;
	bool admin;
	int nice_grant; /* the lowest nice granted whatever RLIMIT_NICE says */
};

/* pid's every thread, or just tid when tid > 0 (a thread of pid). */
struct auth_request {
	pid_t pid, tid;
	enum sched_class class;
	bool nice_set;
	int nice;
};

/* What the daemon holds tasks in; either may be NULL. */
struct auth_view {
	/* The class the daemon has given tid (any thread of pid when tid is
	 * 0) is IDLEPRIO: 1, not: 0, or -errno. -EOPNOTSUPP: the kernel
	 * policy (SCHED_IDLE) is asked instead. */
	int (*is_idleprio)(void *userdata, pid_t pid, pid_t tid);
	/* The nice tid's owner set, where the daemon gave the kernel another
	 * (a hog's translated nice); else kernel_nice. */
	int (*owner_nice)(void *userdata, pid_t tid, int kernel_nice);
	void *userdata;
};

/* Is tid of pid (tid 0: its main thread) who's, by real uid? 0; -EPERM or
 * -ESRCH with the reason for the caller in err. */
int auth_owner(const struct auth_caller *who, pid_t pid, pid_t tid, char *err, size_t errlen);
/* May who make request q? 0; -EPERM or -ESRCH with the reason in err. A
 * whole-process request needs every thread to be who's. */
int auth_task(const struct auth_caller *who, const struct auth_view *view,
	      const struct auth_request *q, char *err, size_t errlen);
