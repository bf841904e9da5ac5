/* Floods rtkit on the system bus ($DBUS_SYSTEM_BUS_ADDRESS) as its caller:
 *	rtkit-flood SECONDS CONNECTIONS DEPTH PID OTHER_PID
 * Each connection keeps DEPTH calls in flight, pipelined, alternately
 * asking a nice for the caller's own PID (granted within the budget) and
 * ISO for OTHER_PID (refused, and logged, as another user's), and is
 * replaced by a new connection every CHURN calls, as a loop of busctl
 * would. Prints "sent ok denied other" when SECONDS are up or at SIGTERM. */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#define CHURN 200
#define MAX_CONNECTIONS 64

static const char *const rtkit[] = { "org.freedesktop.RealtimeKit1",
				     "/org/freedesktop/RealtimeKit1",
				     "org.freedesktop.RealtimeKit1" };

struct conn {
	sd_bus *bus;
	unsigned sent, in_flight;
};

static sd_event *event;
static struct conn conns[MAX_CONNECTIONS];
static unsigned depth;
static uint64_t pid, other_pid;
static unsigned long sent, ok, denied, other;

static int on_reply(sd_bus_message *m, void *userdata, sd_bus_error *ret_error);

static int send_one(struct conn *c)
{
	bool own = c->sent % 2 == 0;
	int r;

	if (own)
		r = sd_bus_call_method_async(c->bus, NULL, rtkit[0], rtkit[1], rtkit[2],
					     "MakeThreadHighPriorityWithPID", on_reply, c, "tti",
					     pid, pid, (int32_t)-5);
	else
		r = sd_bus_call_method_async(c->bus, NULL, rtkit[0], rtkit[1], rtkit[2],
					     "MakeThreadRealtimeWithPID", on_reply, c, "ttu",
					     other_pid, (uint64_t)0, (uint32_t)5);
	if (r < 0)
		return r;
	c->sent++;
	c->in_flight++;
	sent++;
	return 0;
}

static int conn_open(struct conn *c)
{
	int r;

	c->bus = sd_bus_flush_close_unref(c->bus);
	*c = (struct conn){ 0 };
	r = sd_bus_open_system(&c->bus);
	if (r >= 0)
		r = sd_bus_attach_event(c->bus, event, 0);
	for (unsigned i = 0; r >= 0 && i < depth; i++)
		r = send_one(c);
	return r;
}

static int on_reply(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
	struct conn *c = userdata;
	const sd_bus_error *e = sd_bus_message_get_error(m);
	int r = 0;

	if (!e)
		ok++;
	else if (strcmp(e->name, SD_BUS_ERROR_ACCESS_DENIED) == 0)
		denied++;
	else
		other++;
	c->in_flight--;
	if (c->sent < CHURN)
		r = send_one(c);
	else if (c->in_flight == 0)
		r = conn_open(c);
	if (r < 0)
		fprintf(stderr, "rtkit-flood: %s\n", strerror(-r));
	return 0;
}

int main(int argc, char **argv)
{
	sigset_t term;
	unsigned n;
	int r;

	if (argc != 6) {
		fprintf(stderr, "usage: rtkit-flood SECONDS CONNECTIONS DEPTH PID OTHER_PID\n");
		return 2;
	}
	n = (unsigned)atoi(argv[2]);
	depth = (unsigned)atoi(argv[3]);
	pid = strtoull(argv[4], NULL, 10);
	other_pid = strtoull(argv[5], NULL, 10);
	if (n == 0 || n > MAX_CONNECTIONS || depth == 0) {
		fprintf(stderr, "rtkit-flood: 1..%d connections, depth > 0\n", MAX_CONNECTIONS);
		return 2;
	}
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	sigprocmask(SIG_BLOCK, &term, NULL);
	r = sd_event_default(&event);
	if (r >= 0)
		r = sd_event_add_signal(event, NULL, SIGTERM, NULL, NULL);
	for (unsigned i = 0; r >= 0 && i < n; i++)
		r = conn_open(&conns[i]);
	if (r >= 0)
		r = sd_event_add_time_relative(event, NULL, CLOCK_MONOTONIC,
					       (uint64_t)atoi(argv[1]) * 1000000, 0, NULL,
					       (void *)(intptr_t)0);
	if (r >= 0)
		r = sd_event_loop(event);
	if (r < 0) {
		fprintf(stderr, "rtkit-flood: %s\n", strerror(-r));
		return 1;
	}
	printf("%lu %lu %lu %lu\n", sent, ok, denied, other);
	return 0;
}
