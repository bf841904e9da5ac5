/* The games the bridge has registered, each watched through its pidfd, and
 * the muqssd requests that register and unregister them. No scheduling
 * logic here: muqssd decides, as for `muqssctl iso`. */
#pragma once

#include <stdbool.h>
#include <sys/types.h>
#include <systemd/sd-event.h>

enum games_mode {
	GAMES_MODE_ISO,	 /* the game's threads become SCHED_ISO */
	GAMES_MODE_NICE, /* the game is normal, with a nice */
};

struct games_options {
	enum games_mode mode;
	int nice;	    /* GAMES_MODE_NICE: the nice to ask for */
	const char *socket; /* NULL: $MUQSS_SOCKET or the default */
};

struct games;

/* Called after a game was added or removed (also when it exited). */
typedef void (*games_changed_func_t)(struct games *g, pid_t pid, bool registered,
				     void *userdata);

int games_new(struct games **ret, sd_event *event, const struct games_options *opts,
	      games_changed_func_t changed, void *userdata);
/* Puts every registered game back, then frees. */
struct games *games_free(struct games *g);

/* gamemoded's answers: 0 done; -1 refused (already registered, not
 * registered, no such process, muqssd said no). pidfd is the game's, or -1
 * to open one; it is duplicated, not taken. */
int games_register(struct games *g, pid_t pid, int pidfd);
int games_unregister(struct games *g, pid_t pid);
/* 0 no game registered; 1 others are; 2 pid is. */
int games_query(const struct games *g, pid_t pid);
unsigned games_count(const struct games *g);
/* Fills up to n pids of registered games; returns how many there are. */
unsigned games_list(const struct games *g, pid_t *pids, unsigned n);
/* The pid a pidfd refers to (from /proc/self/fdinfo), or -errno. */
pid_t games_pidfd_pid(int pidfd);
