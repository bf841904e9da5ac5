/* Authorization of requests that act on a task. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "control.h"

struct control_client;

/* May c put pid (every thread, or just tid when tid > 0) in class? 0 when
 * allowed; -EPERM or -ESRCH with the reason for the caller in err (-ESRCH
 * too for a task /proc hides from the caller: auth_may_see()). The
 * rules are auth_task()'s; root and the admin group are its admins, and
 * the control socket grants no nice past RLIMIT_NICE. */
int auth_set_class(struct control_client *c, pid_t pid, pid_t tid, enum sched_class class,
		   bool nice_set, int nice, char *err, size_t errlen);
