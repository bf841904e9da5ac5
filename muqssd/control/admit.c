/* Who gets a slot on the control socket.
 *
 * The table holds CONTROL_MAX_CLIENTS clients. No uid but root holds more
 * than CONTROL_MAX_PER_UID of them, and the last CONTROL_RESERVED slots go
 * only to root, the admin group and the socket's group, so no user can
 * lock them out. Activity renews a client's idle timeout, but never holds
 * its slot against a newcomer: once the open slots are gone, a newcomer
 * takes the oldest connection of the uid holding the most, when that uid
 * holds at least two more than the newcomer's. So a trickle of requests
 * keeps a connection only while nobody with fewer is waiting. */
#include "control-internal.h"

#include <errno.h>
#include <stdio.h>

#include "log.h"

static unsigned count_uid(const struct control_server *s, uid_t uid)
{
	unsigned n = 0;

	for (const struct control_client *c = s->clients; c; c = c->next)
		n += c->uid == uid;
	return n;
}

/* The oldest connection of the non-root uid holding the most; clients are
 * kept newest first, so the oldest is the last seen. */
static struct control_client *pick_victim(struct control_server *s, unsigned *most)
{
	struct control_client *victim = NULL;

	*most = 0;
	for (struct control_client *c = s->clients; c; c = c->next) {
		unsigned n;

		if (c->uid == 0)
			continue;
		n = count_uid(s, c->uid);
		if (n > *most || (n == *most && victim && victim->uid == c->uid)) {
			*most = n;
			victim = c;
		}
	}
	return victim;
}

int admit_client(struct control_server *s, const struct control_client *c, char *why,
		 size_t len)
{
	unsigned max = s->opts.max_clients, reserved = CONTROL_RESERVED, mine, most;
	struct control_client *victim;

	if (reserved > max / 2)
		reserved = max / 2;
	mine = count_uid(s, c->uid);
	if (c->uid != 0 && mine >= CONTROL_MAX_PER_UID) {
		snprintf(why, len, "too many connections from uid %u (%u), try again later",
			 (unsigned)c->uid, CONTROL_MAX_PER_UID);
		return -EBUSY;
	}
	if (s->n_clients < max - reserved || (c->privileged && s->n_clients < max))
		return 0;
	victim = pick_victim(s, &most);
	if (victim && most >= mine + 2) {
		log_info("control socket full: uid %u's oldest connection makes room for uid %u",
			 (unsigned)victim->uid, (unsigned)c->uid);
		(void)client_reply_error(victim, EBUSY,
					 "dropped to make room: uid %u holds the most connections",
					 (unsigned)victim->uid);
		client_close_now(victim);
		return 0;
	}
	snprintf(why, len, "too many clients (%u), try again later", max);
	return -EBUSY;
}

void admit_refuse(int fd, const char *why)
{
	struct wire_buf b;

	wire_buf_init(&b, 0);
	if (wire_buf_append_error(&b, EBUSY, why) == 0)
		(void)wire_buf_flush(&b, fd);
	wire_buf_free(&b);
}
