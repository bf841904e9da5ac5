/* Authorization of requests that act on a task. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "control.h"

struct control_client;

/* May c put pid (every thread, or just tid when tid > 0) in class? 0 when
 * allowed; -EPERM or -ESRCH with the reason for the caller in err. Root
 * and the admin group may act on anyone; others on tasks whose real uid
 * is theirs, never out of IDLEPRIO, and to a lower nice only where the
 * kernel would let them (RLIMIT_NICE), thread by thread, from the nice
 * they set (not the daemon's translation of it). */
int auth_set_class(struct control_client *c, pid_t pid, pid_t tid, enum sched_class class,
		   bool nice_set, int nice, char *err, size_t errlen);
