/* Placeholder until the scheduling loop lands. */
#include "daemon.h"

#include <errno.h>
#include <stdio.h>

int daemon_sched_start(struct daemon *d)
{
	return 0;
}

void daemon_sched_stop(struct daemon *d)
{
}

int daemon_set_class(struct daemon *d, pid_t pid, pid_t tid, enum muqss_class class,
		     bool nice_set, int nice, char *err, size_t errlen)
{
	snprintf(err, errlen, "scheduling is not implemented yet");
	return -EOPNOTSUPP;
}

int daemon_dump_queues(struct daemon *d, int cpu, cJSON *array)
{
	return 0;
}

void daemon_tunables_changed(struct daemon *d)
{
}
