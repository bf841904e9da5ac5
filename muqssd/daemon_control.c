/* Placeholder until the control socket lands. */
#include "daemon.h"

int daemon_control_start(struct daemon *d)
{
	return 0;
}

void daemon_control_stop(struct daemon *d)
{
}
