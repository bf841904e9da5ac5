/* Registered games: one muqssd request at register, one at unregister,
 * and a pidfd that says when the game exits. */
#include "games.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "muqss-client.h"

struct game {
	struct games *g;
	pid_t pid;
	int pidfd;
	int nice_before; /* GAMES_MODE_NICE: put back at unregister */
	sd_event_source *exit_source;
	struct game *next;
};

struct games {
	sd_event *event;
	struct games_options opts;
	games_changed_func_t changed;
	void *userdata;
	struct game *list;
	unsigned n;
};

static struct game **find(struct games *g, pid_t pid)
{
	struct game **p = &g->list;

	while (*p && (*p)->pid != pid)
		p = &(*p)->next;
	return p;
}

/* One connection a request: muqssd drops clients idle for 10 s, and games
 * come and go far apart. */
static int ask(struct games *g, pid_t pid, bool boost, int nice)
{
	struct muqss_client *c;
	int r;

	r = muqss_connect(&c, g->opts.socket);
	if (r < 0) {
		fprintf(stderr, "muqss-gamemode: cannot reach muqssd: %s\n", strerror(-r));
		return r;
	}
	if (g->opts.mode == GAMES_MODE_ISO)
		r = muqss_set_class(c, pid, boost ? MUQSS_POLICY_ISO : MUQSS_POLICY_NORMAL);
	else
		r = muqss_set_class_nice(c, pid, MUQSS_POLICY_NORMAL, nice);
	if (r < 0 && (boost || r != -ESRCH))
		fprintf(stderr, "muqss-gamemode: %s %d: %s\n", boost ? "register" : "unregister",
			(int)pid, muqss_error_message(c)[0] ? muqss_error_message(c) : strerror(-r));
	muqss_close(c);
	return r;
}

static void game_free(struct games *g, struct game *game)
{
	struct game **p = find(g, game->pid);

	*p = game->next;
	g->n--;
	sd_event_source_disable_unref(game->exit_source);
	close(game->pidfd);
	free(game);
}

static int on_exit_game(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct game *game = userdata;
	struct games *g = game->g;
	pid_t pid = game->pid;

	/* Its threads are gone with it: nothing to put back. */
	fprintf(stderr, "muqss-gamemode: game %d exited\n", (int)pid);
	game_free(g, game);
	if (g->changed)
		g->changed(g, pid, false, g->userdata);
	return 0;
}

int games_register(struct games *g, pid_t pid, int pidfd)
{
	struct game *game;
	int r;

	if (pid <= 0 || *find(g, pid))
		return -1;
	game = calloc(1, sizeof(*game));
	if (!game)
		return -1;
	game->g = g;
	game->pid = pid;
	game->pidfd = pidfd >= 0 ? fcntl(pidfd, F_DUPFD_CLOEXEC, 3)
				 : (int)syscall(SYS_pidfd_open, pid, 0);
	if (game->pidfd < 0)
		goto fail;
	errno = 0;
	game->nice_before = getpriority(PRIO_PROCESS, (id_t)pid);
	if (errno)
		goto fail;
	r = sd_event_add_io(g->event, &game->exit_source, game->pidfd, EPOLLIN, on_exit_game, game);
	if (r < 0)
		goto fail;
	r = ask(g, pid, true, g->opts.nice);
	if (r < 0)
		goto fail;
	game->next = g->list;
	g->list = game;
	g->n++;
	fprintf(stderr, "muqss-gamemode: game %d registered\n", (int)pid);
	if (g->changed)
		g->changed(g, pid, true, g->userdata);
	return 0;
fail:
	sd_event_source_disable_unref(game->exit_source);
	if (game->pidfd >= 0)
		close(game->pidfd);
	free(game);
	return -1;
}

int games_unregister(struct games *g, pid_t pid)
{
	struct game *game = *find(g, pid);

	if (!game)
		return -1;
	(void)ask(g, pid, false, game->nice_before);
	game_free(g, game);
	fprintf(stderr, "muqss-gamemode: game %d unregistered\n", (int)pid);
	if (g->changed)
		g->changed(g, pid, false, g->userdata);
	return 0;
}

int games_query(const struct games *g, pid_t pid)
{
	if (!g->list)
		return 0;
	return *find((struct games *)g, pid) ? 2 : 1;
}

unsigned games_count(const struct games *g)
{
	return g->n;
}

unsigned games_list(const struct games *g, pid_t *pids, unsigned n)
{
	unsigned i = 0;

	for (const struct game *game = g->list; game; game = game->next, i++)
		if (i < n)
			pids[i] = game->pid;
	return i;
}

pid_t games_pidfd_pid(int pidfd)
{
	char path[64], line[128];
	pid_t pid = -ENOENT;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", pidfd);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Pid: %d", &pid) == 1)
			break;
	fclose(f);
	/* -1: the process has exited; 0: it is in another pid namespace. */
	return pid > 0 ? pid : -ESRCH;
}

int games_new(struct games **ret, sd_event *event, const struct games_options *opts,
	      games_changed_func_t changed, void *userdata)
{
	struct games *g = calloc(1, sizeof(*g));

	if (!g)
		return -ENOMEM;
	g->event = sd_event_ref(event);
	g->opts = *opts;
	g->changed = changed;
	g->userdata = userdata;
	*ret = g;
	return 0;
}

struct games *games_free(struct games *g)
{
	if (!g)
		return NULL;
	while (g->list) {
		(void)ask(g, g->list->pid, false, g->list->nice_before);
		game_free(g, g->list);
	}
	sd_event_unref(g->event);
	free(g);
	return NULL;
}
