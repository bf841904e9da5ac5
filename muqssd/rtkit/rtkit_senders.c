/* Requests waiting for the bus to say who sent them, counted by sender.
 * Until GetConnectionCredentials answers, a request is known only by its
 * connection's unique name (which the bus never gives twice), so that is
 * what a flood is bounded by: a few waiting per connection, so that one
 * user's pipelined flood cannot fill the room every other caller needs
 * to be asked about. A sender is kept only while it has requests waiting. */
#include "rtkit-internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define BUCKETS 256

struct sender {
	struct sender *next;
	unsigned n;
	char name[];
};

struct rtkit_senders {
	struct sender *bucket[BUCKETS];
	unsigned total;
};

int rtkit_senders_new(struct rtkit_senders **ret)
{
	*ret = calloc(1, sizeof(**ret));
	return *ret ? 0 : -ENOMEM;
}

struct rtkit_senders *rtkit_senders_free(struct rtkit_senders *s)
{
	if (!s)
		return NULL;
	for (size_t i = 0; i < BUCKETS; i++)
		while (s->bucket[i]) {
			struct sender *next = s->bucket[i]->next;

			free(s->bucket[i]);
			s->bucket[i] = next;
		}
	free(s);
	return NULL;
}

/* FNV-1a. */
static struct sender **slot_of(struct rtkit_senders *s, const char *name)
{
	uint32_t h = 2166136261u;
	struct sender **p;

	for (const unsigned char *c = (const unsigned char *)name; *c; c++)
		h = (h ^ *c) * 16777619u;
	for (p = &s->bucket[h % BUCKETS]; *p; p = &(*p)->next)
		if (strcmp((*p)->name, name) == 0)
			break;
	return p;
}

int rtkit_senders_add(struct rtkit_senders *s, const char *sender, unsigned per_sender,
		      unsigned total)
{
	struct sender **p;

	if (s->total >= total)
		return -EBUSY;
	p = slot_of(s, sender);
	if (!*p) {
		size_t len = strlen(sender) + 1;

		*p = calloc(1, sizeof(**p) + len);
		if (!*p)
			return -ENOMEM;
		memcpy((*p)->name, sender, len);
	}
	if ((*p)->n >= per_sender)
		return -EBUSY;
	(*p)->n++;
	s->total++;
	return 0;
}

void rtkit_senders_remove(struct rtkit_senders *s, const char *sender)
{
	struct sender **p = slot_of(s, sender), *gone;

	if (!*p)
		return;
	s->total--;
	if (--(*p)->n > 0)
		return;
	gone = *p;
	*p = gone->next;
	free(gone);
}
