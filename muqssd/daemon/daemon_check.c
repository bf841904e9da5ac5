/* --check-config: what the daemon would refuse at start, found without
 * starting it, so that a bad rules file or state dir is a failed check
 * and not a failed boot. */
#include "daemon.h"

#include <errno.h>
#include <limits.h>
#include <unistd.h>

#include "log.h"
#include "rules.h"
#include "state_dir.h"
#include "trusted_path.h"

static int check_state_dir(const char *state_dir)
{
	char name[NAME_MAX + 1];
	int fd, r;

	/* The daemon runs as root and wants the dir its own; a user's check
	 * can only vouch for the directories above it. */
	if (geteuid() == 0)
		r = state_dir_open(state_dir, false, &fd);
	else
		r = trusted_path_parent(state_dir, &fd, name);
	if (r == -ENOENT)
		return 0; /* made at start */
	if (r < 0)
		return r;
	close(fd);
	return 0;
}

int daemon_check_config(const struct config *c)
{
	struct rules *rules = NULL;
	int r, k;

	r = rules_load(&rules, c->rules_dir);
	if (r < 0)
		log_error_errno(r, "cannot load rules from %s: %m", c->rules_dir);
	rules_free(rules);
	k = check_state_dir(c->state_dir);
	if (k < 0 && (!r || k == -ENOMEM))
		r = k;
	return r;
}
