/* Undoing what a (possibly dead) muqssd instance did to tasks. */
#pragma once

/* Reads every state file in state_dir, puts each recorded task that is
 * still the same task (tid + start time) back as it was: SIGCONT, policy,
 * priority, nice, affinity. Removes the state files. Returns 0 or -errno. */
int restore_from_state_dir(const char *state_dir);
