/* What the bus side of rtkit (rtkit_bus.c) keeps per caller: each uid's
 * budget of requests, and the requests each connection has waiting for
 * the bus to say who sent them. */
#pragma once

#include <stdint.h>
#include <sys/types.h>

/* rtkit-daemon's defaults (actions-burst-sec, actions-per-burst-sec). */
#define RTKIT_BURST_SEC 20
#define RTKIT_BURST_ACTIONS 25

/* rtkit_budget.c */
struct rtkit_budget;

int rtkit_budget_new(struct rtkit_budget **ret);
struct rtkit_budget *rtkit_budget_free(struct rtkit_budget *b);
/* Counts a request of uid at now_nsec (CLOCK_MONOTONIC): 0 when it is
 * within uid's budget (root's always is); -EBUSY past it, logged at the
 * first refusal of a window and summed up when the next opens; -ENOMEM. */
int rtkit_budget_charge(struct rtkit_budget *b, uid_t uid, uint64_t now_nsec);

/* rtkit_senders.c */
struct rtkit_senders;

int rtkit_senders_new(struct rtkit_senders **ret);
struct rtkit_senders *rtkit_senders_free(struct rtkit_senders *s);
/* One more request of sender (a unique name) waits for its credentials:
 * 0; -EBUSY when sender already has per_sender waiting, or all senders
 * together total; -ENOMEM. */
int rtkit_senders_add(struct rtkit_senders *s, const char *sender, unsigned per_sender,
		      unsigned total);
/* Its credentials came (or it was dropped): one fewer waits. */
void rtkit_senders_remove(struct rtkit_senders *s, const char *sender);
