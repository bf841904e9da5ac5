/* Each uid's budget of rtkit requests, as rtkit-daemon keeps it:
 * RTKIT_BURST_ACTIONS in a window of RTKIT_BURST_SEC that opens at the
 * uid's first request; past that its requests are refused until the
 * window ends. So one user's flood costs that user alone. Root is not
 * counted: it may set any policy itself, and rtkit must keep answering it
 * whatever a user does. A refused flood is logged in two lines a window
 * (when it starts being refused, and how many were), not one a request. */
#include "rtkit-internal.h"

#include <errno.h>
#include <stdlib.h>

#include "log.h"
#include "ratelimit.h"

#define BURST_NSEC ((uint64_t)RTKIT_BURST_SEC * 1000000000ULL)

struct budget_user {
	uid_t uid;
	struct ratelimit requests;
};

struct rtkit_budget {
	struct budget_user *users;
	size_t n, allocated;
};

int rtkit_budget_new(struct rtkit_budget **ret)
{
	*ret = calloc(1, sizeof(**ret));
	return *ret ? 0 : -ENOMEM;
}

struct rtkit_budget *rtkit_budget_free(struct rtkit_budget *b)
{
	if (b)
		free(b->users);
	free(b);
	return NULL;
}

static void log_refused(uid_t uid, unsigned refused)
{
	log_notice("rtkit: uid %u had %u requests refused in its last %u s", (unsigned)uid,
		   refused, RTKIT_BURST_SEC);
}

/* A uid whose window ended is as good as a new one: dropped, so the table
 * holds only the uids that asked in the last RTKIT_BURST_SEC. */
static void forget_ended(struct rtkit_budget *b, uint64_t now)
{
	for (size_t i = 0; i < b->n;) {
		struct budget_user *u = &b->users[i];

		if (!ratelimit_ended(&u->requests, now)) {
			i++;
			continue;
		}
		if (ratelimit_dropped(&u->requests))
			log_refused(u->uid, ratelimit_dropped(&u->requests));
		*u = b->users[--b->n];
	}
}

static struct budget_user *user_of(struct rtkit_budget *b, uid_t uid, uint64_t now)
{
	for (size_t i = 0; i < b->n; i++)
		if (b->users[i].uid == uid)
			return &b->users[i];
	forget_ended(b, now);
	if (b->n == b->allocated) {
		size_t allocated = b->allocated ? 2 * b->allocated : 8;
		struct budget_user *users = reallocarray(b->users, allocated, sizeof(*users));

		if (!users)
			return NULL;
		b->users = users;
		b->allocated = allocated;
	}
	b->users[b->n] = (struct budget_user){
		.uid = uid, .requests = RATELIMIT_INIT(BURST_NSEC, RTKIT_BURST_ACTIONS)
	};
	return &b->users[b->n++];
}

int rtkit_budget_charge(struct rtkit_budget *b, uid_t uid, uint64_t now_nsec)
{
	struct budget_user *u;
	unsigned dropped;

	if (uid == 0)
		return 0;
	u = user_of(b, uid, now_nsec);
	if (!u)
		return -ENOMEM;
	if (ratelimit_below(&u->requests, now_nsec, &dropped)) {
		if (dropped)
			log_refused(uid, dropped);
		return 0;
	}
	if (ratelimit_dropped(&u->requests) == 1)
		log_notice("rtkit: uid %u is past %u requests in %u s; refusing it until its "
			   "window ends", (unsigned)uid, RTKIT_BURST_ACTIONS, RTKIT_BURST_SEC);
	return -EBUSY;
}
