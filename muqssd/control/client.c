/* One control client: non-blocking reads a frame at a time, bounded
 * output, and a deadline so a slow or silent client cannot linger. */
#include "control-internal.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "log.h"
#include "time_util.h"

/* Stop reading requests while this much output is unsent: a client that
 * does not read its replies gets no more work done for it. */
#define INPUT_PAUSE_AT (64U * 1024)

void client_touch(struct control_client *c)
{
	uint64_t now;

	if (sd_event_now(c->server->event, CLOCK_MONOTONIC, &now) < 0)
		return;
	(void)sd_event_source_set_time(c->timer, now + c->server->opts.idle_timeout_usec);
}

void client_pause_timeout(struct control_client *c)
{
	(void)sd_event_source_set_enabled(c->timer, SD_EVENT_OFF);
}

void client_restart_timeout(struct control_client *c)
{
	client_touch(c);
	(void)sd_event_source_set_enabled(c->timer, SD_EVENT_ONESHOT);
}

static void client_update_events(struct control_client *c)
{
	uint32_t events = 0;

	/* Replies go in order: no request is read while a list goes out. */
	if (!c->closing && !c->stream && !c->waiting && wire_buf_pending(&c->out) < INPUT_PAUSE_AT)
		events |= EPOLLIN;
	if (wire_buf_pending(&c->out) > 0 || c->stream)
		events |= EPOLLOUT;
	(void)sd_event_source_set_io_events(c->io, events);
}

static int client_flush(struct control_client *c)
{
	size_t before = wire_buf_pending(&c->out);
	int r;

	if (before == 0)
		return 1;
	r = wire_buf_flush(&c->out, c->fd);
	if (r >= 0 && wire_buf_pending(&c->out) < before)
		client_touch(c);
	return r;
}

static int on_client_io(sd_event_source *src, int fd, uint32_t revents, void *userdata)
{
	struct control_client *c = userdata;
	uint64_t turn_start = now_nsec(CLOCK_MONOTONIC);
	/* One client's share of a loop iteration, lists and requests alike. */
	uint64_t turn_end = budget_turn_end(c, turn_start);
	int r;

	if (c->waiting && (revents & (EPOLLHUP | EPOLLERR))) {
		/* Gone while its request waits: that is still carried out,
		 * and then c is freed (its reply cannot be sent). */
		(void)sd_event_source_set_enabled(c->io, SD_EVENT_OFF);
		c->closing = true;
		return 0;
	}
	if (turn_end == 0) {
		if (budget_park(c) >= 0)
			return 0;
		turn_end = turn_start + CONTROL_TURN_NSEC;
	}

	if (c->stream && !c->dead) {
		/* Flush first: the more the client took, the more we may add. */
		if (client_flush(c) >= 0)
			stream_continue(c, turn_end);
	}
	if (!c->closing && (revents & (EPOLLIN | EPOLLHUP | EPOLLERR))) {
		while (!c->closing && !c->stream && !c->waiting &&
		       wire_buf_pending(&c->out) < INPUT_PAUSE_AT &&
		       now_nsec(CLOCK_MONOTONIC) < turn_end) {
			struct muqss_header hdr;
			char *body;

			r = wire_reader_read(&c->in, fd);
			if (r == 0)
				break;
			if (r == -EMSGSIZE) {
				(void)client_reply_error(c, EMSGSIZE,
							 "frame too large: %u bytes (max %u)",
							 (unsigned)c->in.hdr.length,
							 (unsigned)MUQSS_MAX_BODY);
				c->closing = true;
				break;
			}
			if (r < 0) {
				/* Hung up, maybe mid-frame: answer what came whole. */
				if (r != -ECONNRESET)
					log_debug_errno(r, "control client %d: read failed: %m", (int)c->pid);
				c->closing = true;
				break;
			}
			wire_reader_take(&c->in, &hdr, &body);
			/* Asking without reading the answers is not activity. */
			if (wire_buf_pending(&c->out) == 0)
				client_touch(c);
			request_handle(c, &hdr, body);
			if (c->stream)
				stream_continue(c, turn_end);
		}
	}
	budget_charge(c->server, turn_start, now_nsec(CLOCK_MONOTONIC));
	client_resume(c);
	return 0;
}

void client_resume(struct control_client *c)
{
	int r;

	if (c->dead) {
		client_free(c);
		return;
	}
	r = client_flush(c);
	if (r < 0) {
		log_debug_errno(r, "control client %d: write failed: %m", (int)c->pid);
		client_free(c);
		return;
	}
	if (c->closing && wire_buf_pending(&c->out) == 0) {
		client_free(c);
		return;
	}
	client_update_events(c);
}

static int on_client_timeout(sd_event_source *src, uint64_t usec, void *userdata)
{
	struct control_client *c = userdata;

	log_debug("control client pid %d idle for too long, dropping it", (int)c->pid);
	client_free(c);
	return 0;
}

int client_new(struct control_server *s, int fd)
{
	struct control_client *c;
	char why[96];
	int r;

	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->server = s;
	c->fd = fd;
	wire_buf_init(&c->out, CONTROL_OUTPUT_MAX);
	auth_read_peer(c, s->admin_gid, s->socket_gid);
	r = admit_client(s, c, why, sizeof(why));
	if (r < 0) {
		admit_refuse(fd, why);
		goto fail;
	}
	r = sd_event_add_io(s->event, &c->io, fd, EPOLLIN, on_client_io, c);
	if (r < 0)
		goto fail;
	r = sd_event_add_time_relative(s->event, &c->timer, CLOCK_MONOTONIC,
				       s->opts.idle_timeout_usec, 0, on_client_timeout, c);
	if (r < 0)
		goto fail;
	c->next = s->clients;
	if (s->clients)
		s->clients->prev = c;
	s->clients = c;
	s->n_clients++;
	return 0;
fail:
	sd_event_source_disable_unref(c->io);
	free(c);
	return r;
}

void client_free(struct control_client *c)
{
	struct control_server *s = c->server;

	if (c->prev)
		c->prev->next = c->next;
	else
		s->clients = c->next;
	if (c->next)
		c->next->prev = c->prev;
	s->n_clients--;
	budget_forget(c);
	sd_event_source_disable_unref(c->io);
	sd_event_source_disable_unref(c->timer);
	stream_free(c);
	class_request_free(c);
	wire_reader_reset(&c->in);
	wire_buf_free(&c->out);
	close(c->fd);
	free(c);
}

void client_close_now(struct control_client *c)
{
	(void)wire_buf_flush(&c->out, c->fd);
	client_free(c);
}
