/* The kernel's proc connector (CONFIG_PROC_EVENTS), through libnl-3.
 *
 * It multicasts one message per task event (fork, exec, exit, uid...) to
 * listeners that sent PROC_CN_MCAST_LISTEN. It needs CAP_NET_ADMIN in the
 * initial user and pid namespaces; elsewhere the kernel refuses the listen
 * request in its ack, and connector_open() fails with that error. */
#pragma once

#include <linux/cn_proc.h>

struct connector;

typedef void (*connector_event_func_t)(const struct proc_event *ev, void *userdata);

/* Opens the socket, joins the group, asks to listen and waits (briefly) for
 * the kernel's ack. Events may queue from here on. */
int connector_open(struct connector **ret);
/* Forks a child that exits at once and waits (up to a second) for its fork
 * event: 0 when it came, -ENODATA when not. A listener outside the
 * initial PID namespace is acked by nobody and hears nothing (or the
 * init namespace's pids, when another listener is on), so a good ack is
 * not proof. Events read meanwhile are dropped: probe before scanning. */
int connector_probe(struct connector *c);
struct connector *connector_free(struct connector *c);
int connector_fd(const struct connector *c);
/* Hands up to max queued events to fn, without blocking. Returns the count
 * read, or -ENOBUFS when the kernel dropped events because the receive
 * buffer overflowed (the events read before that were delivered). */
int connector_receive(struct connector *c, unsigned max, connector_event_func_t fn,
		      void *userdata);
