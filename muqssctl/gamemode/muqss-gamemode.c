/* muqss-gamemode: owns com.feralinteractive.GameMode on the user's session
 * bus and answers what gamemoded 1.7 answers there, by asking muqssd,
 * under the user's own credentials, to make each game ISO (or nice). */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-event.h>

#include "games.h"

#define GM_NAME "com.feralinteractive.GameMode"
#define GM_PATH "/com/feralinteractive/GameMode"
#define GM_GAMES_PATH GM_PATH "/Games"

struct bridge {
	sd_bus *bus;
	struct games *games;
};

static int reply_int(sd_bus_message *m, int v)
{
	return sd_bus_reply_method_return(m, "i", v);
}

/* The int forms name the game by pid; ByPID adds the requester first. */
static int read_pid(sd_bus_message *m, bool by_pid, pid_t *game)
{
	int32_t requester, pid;
	int r;

	if (by_pid)
		r = sd_bus_message_read(m, "ii", &requester, &pid);
	else
		r = sd_bus_message_read(m, "i", &pid);
	*game = pid;
	return r;
}

/* ByPIDFd: the requester's pidfd, then the game's. *fd is the message's. */
static int read_pidfd(sd_bus_message *m, pid_t *game, int *fd)
{
	int requester, r;

	r = sd_bus_message_read(m, "hh", &requester, fd);
	if (r < 0)
		return r;
	*game = games_pidfd_pid(*fd);
	return 0;
}

/* A pid means something only in the caller's pid namespace. Called from
 * another one (a Flatpak or other sandboxed game passing its own pid), it
 * would name some other process here: refused, as gamemoded refuses it.
 * xdg-desktop-portal, in ours, passes host pids or pidfds. The bus gives
 * the caller's pid as of its connection: a caller gone since cannot be
 * read and is refused too. */
static bool caller_shares_pidns(sd_bus_message *m)
{
	sd_bus_creds *creds = NULL;
	struct stat theirs, ours;
	char path[64];
	pid_t pid = 0;
	bool same = false;

	if (sd_bus_query_sender_creds(m, SD_BUS_CREDS_PID, &creds) >= 0 &&
	    sd_bus_creds_get_pid(creds, &pid) >= 0) {
		snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)pid);
		same = stat(path, &theirs) == 0 && stat("/proc/self/ns/pid", &ours) == 0 &&
		       theirs.st_dev == ours.st_dev && theirs.st_ino == ours.st_ino;
	}
	sd_bus_creds_unref(creds);
	if (!same)
		fprintf(stderr, "muqss-gamemode: %s from pid %d: refused, the caller is in "
				"another pid namespace (it must pass a pidfd)\n",
			sd_bus_message_get_member(m), (int)pid);
	return same;
}

enum verb { REGISTER, UNREGISTER, QUERY };

static int handle(sd_bus_message *m, struct bridge *b, enum verb verb, int form)
{
	pid_t pid;
	int fd = -1, r;

	r = form == 2 ? read_pidfd(m, &pid, &fd) : read_pid(m, form == 1, &pid);
	if (r < 0)
		return r;
	if (form != 2 && !caller_shares_pidns(m))
		return reply_int(m, -1);
	if (pid <= 0)
		return reply_int(m, verb == QUERY ? games_query(b->games, 0) : -1);
	switch (verb) {
	case REGISTER: return reply_int(m, games_register(b->games, pid, fd));
	case UNREGISTER: return reply_int(m, games_unregister(b->games, pid));
	default: return reply_int(m, games_query(b->games, pid));
	}
}

#define VERB(fn, verb, form)                                                        \
	static int fn(sd_bus_message *m, void *userdata, sd_bus_error *e)           \
	{                                                                           \
		return handle(m, userdata, verb, form);                             \
	}
VERB(register_game, REGISTER, 0)
VERB(register_by_pid, REGISTER, 1)
VERB(register_by_pidfd, REGISTER, 2)
VERB(unregister_game, UNREGISTER, 0)
VERB(unregister_by_pid, UNREGISTER, 1)
VERB(unregister_by_pidfd, UNREGISTER, 2)
VERB(query_status, QUERY, 0)
VERB(query_by_pid, QUERY, 1)
VERB(query_by_pidfd, QUERY, 2)

static int list_games(sd_bus_message *m, void *userdata, sd_bus_error *e)
{
	struct bridge *b = userdata;
	sd_bus_message *reply = NULL;
	unsigned n = games_count(b->games);
	pid_t *pids = calloc(n ? n : 1, sizeof(pid_t));
	int r = pids ? sd_bus_message_new_method_return(m, &reply) : -ENOMEM;

	if (r >= 0)
		r = sd_bus_message_open_container(reply, 'a', "(io)");
	n = pids ? games_list(b->games, pids, n) : 0;
	for (unsigned i = 0; r >= 0 && i < n; i++) {
		char path[64];

		snprintf(path, sizeof(path), GM_GAMES_PATH "/%d", (int)pids[i]);
		r = sd_bus_message_append(reply, "(io)", (int32_t)pids[i], path);
	}
	if (r >= 0)
		r = sd_bus_message_close_container(reply);
	if (r >= 0)
		r = sd_bus_send(NULL, reply, NULL);
	sd_bus_message_unref(reply);
	free(pids);
	return r;
}

static int get_client_count(sd_bus *bus, const char *path, const char *interface,
			    const char *property, sd_bus_message *reply, void *userdata,
			    sd_bus_error *e)
{
	struct bridge *b = userdata;

	return sd_bus_message_append(reply, "i", (int32_t)games_count(b->games));
}

static const sd_bus_vtable gamemode_vtable[] = {
	SD_BUS_VTABLE_START(0),
	SD_BUS_METHOD("RegisterGame", "i", "i", register_game, 0),
	SD_BUS_METHOD("UnregisterGame", "i", "i", unregister_game, 0),
	SD_BUS_METHOD("QueryStatus", "i", "i", query_status, 0),
	SD_BUS_METHOD("RegisterGameByPID", "ii", "i", register_by_pid, 0),
	SD_BUS_METHOD("UnregisterGameByPID", "ii", "i", unregister_by_pid, 0),
	SD_BUS_METHOD("QueryStatusByPID", "ii", "i", query_by_pid, 0),
	SD_BUS_METHOD("RegisterGameByPIDFd", "hh", "i", register_by_pidfd, 0),
	SD_BUS_METHOD("UnregisterGameByPIDFd", "hh", "i", unregister_by_pidfd, 0),
	SD_BUS_METHOD("QueryStatusByPIDFd", "hh", "i", query_by_pidfd, 0),
	SD_BUS_METHOD("ListGames", "", "a(io)", list_games, 0),
	SD_BUS_PROPERTY("ClientCount", "i", get_client_count, 0,
			SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
	SD_BUS_SIGNAL("GameRegistered", "io", 0),
	SD_BUS_SIGNAL("GameUnregistered", "io", 0),
	SD_BUS_VTABLE_END,
};

static void on_changed(struct games *g, pid_t pid, bool registered, void *userdata)
{
	struct bridge *b = userdata;
	char path[64];

	snprintf(path, sizeof(path), GM_GAMES_PATH "/%d", (int)pid);
	(void)sd_bus_emit_signal(b->bus, GM_PATH, GM_NAME,
				 registered ? "GameRegistered" : "GameUnregistered", "io",
				 (int32_t)pid, path);
	(void)sd_bus_emit_properties_changed(b->bus, GM_PATH, GM_NAME, "ClientCount", NULL);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: muqss-gamemode [--mode iso|nice] [--nice N] [--socket PATH]\n"
		   "Serves com.feralinteractive.GameMode on the session bus with muqssd.\n"
		   "  --mode iso   a registered game becomes SCHED_ISO (default)\n"
		   "  --mode nice  it is put in the normal class with --nice N (default -5;\n"
		   "               a nice below the current one needs muqssd's admin group)\n"
		   "  --socket     muqssd's control socket ($MUQSS_SOCKET, or the default)\n");
}

static int parse_args(int argc, char **argv, struct games_options *o)
{
	static const struct option opts[] = {
		{ "mode", required_argument, NULL, 'm' },
		{ "nice", required_argument, NULL, 'n' },
		{ "socket", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 },
	};
	char *end;
	int c;

	*o = (struct games_options){ .mode = GAMES_MODE_ISO, .nice = -5 };
	while ((c = getopt_long(argc, argv, "m:n:s:hV", opts, NULL)) >= 0) {
		switch (c) {
		case 'm':
			if (strcmp(optarg, "iso") == 0)
				o->mode = GAMES_MODE_ISO;
			else if (strcmp(optarg, "nice") == 0)
				o->mode = GAMES_MODE_NICE;
			else
				return -EINVAL;
			break;
		case 'n':
			o->nice = (int)strtol(optarg, &end, 10);
			if (*end || o->nice < -20 || o->nice > 19)
				return -EINVAL;
			break;
		case 's': o->socket = optarg; break;
		case 'h': usage(stdout); exit(EXIT_SUCCESS);
		case 'V': printf("muqss-gamemode %s\n", MUQSS_VERSION); exit(EXIT_SUCCESS);
		default: return -EINVAL;
		}
	}
	return optind == argc ? 0 : -EINVAL;
}

int main(int argc, char **argv)
{
	struct games_options o;
	struct bridge b = { 0 };
	sd_event *event = NULL;
	sigset_t mask;
	int r;

	if (parse_args(argc, argv, &o) < 0) {
		usage(stderr);
		return 2;
	}
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	r = sd_event_default(&event);
	if (r >= 0)
		r = sd_event_add_signal(event, NULL, SIGTERM, NULL, NULL);
	if (r >= 0)
		r = sd_event_add_signal(event, NULL, SIGINT, NULL, NULL);
	if (r >= 0)
		r = games_new(&b.games, event, &o, on_changed, &b);
	if (r >= 0)
		r = sd_bus_open_user(&b.bus);
	if (r < 0) {
		fprintf(stderr, "muqss-gamemode: cannot connect to the session bus: %s\n",
			strerror(-r));
		goto out;
	}
	r = sd_bus_add_object_vtable(b.bus, NULL, GM_PATH, GM_NAME, gamemode_vtable, &b);
	if (r >= 0)
		r = sd_bus_attach_event(b.bus, event, SD_EVENT_PRIORITY_NORMAL);
	if (r >= 0)
		r = sd_bus_request_name(b.bus, GM_NAME, 0);
	if (r < 0) {
		fprintf(stderr, "muqss-gamemode: cannot own %s: %s%s\n", GM_NAME, strerror(-r),
			r == -EEXIST ? " (is gamemoded running?)" : "");
		goto out;
	}
	(void)sd_notify(0, "READY=1");
	r = sd_event_loop(event);
	(void)sd_notify(0, "STOPPING=1");
out:
	/* Games go back before the name is let go. */
	b.games = games_free(b.games);
	sd_bus_flush_close_unref(b.bus);
	sd_event_unref(event);
	return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
