/* Placeholder until enforcement lands: nothing was ever changed. */
#include "restore.h"

int restore_from_state_dir(const char *state_dir)
{
	(void)state_dir;
	return 0;
}
