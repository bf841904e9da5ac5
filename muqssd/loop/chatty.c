/* Chatty groups. Threads of one process that wake each other in turn (a
 * ring handing on a token, a pipeline) each run microseconds a wake-up
 * and never use up a slice, so none of them is a hog; boosted at each
 * wake-up, together they would hold a CPU ahead of everything else. A
 * group whose members, woken mostly by each other, left no moment of a
 * window with none of them running or runnable is charged as one, the
 * way a hog is: each member is a hog while it lasts. The bpf sensor
 * tells who woke whom; with the others no group is ever found. */
#include "loop-internal.h"

#include "log.h"

/* To become a member, of its wake-ups since the last reading it had at
 * least this many, and three in four by its own process's threads. */
#define CHATTY_MIN_WAKES 2

/* A reading at tick `now` tells of the time since the last tick: the
 * group's window [from, stamp] holds what the ticks in it read, and
 * closes at the first reading of a tick once it is CHATTY_WINDOW_NS
 * long. The group turns busy if its members ran or waited to run for
 * nearly all of it (their sum: they may overlap). Returns false for the
 * group's first reading: it tells of time before the window. */
static bool window_at(struct managed_task *g, uint64_t now)
{
	uint64_t len = g->group_stamp_ns - g->group_from_ns;
	bool busy;

	if (!g->group_from_ns) {
		g->group_from_ns = g->group_stamp_ns = now;
		return false;
	}
	if (g->group_stamp_ns == now)
		return true;
	if (len >= CHATTY_WINDOW_NS) {
		/* Busy once it left no rest; at rest once it rested half. */
		busy = g->group_busy ? g->group_ns * 2 >= len : g->group_ns * 10 >= len * 9;
		if (busy != g->group_busy)
			log_debug("group %d: %s", (int)g->target.tgid,
				  busy ? "busy, charged as one" : "at rest again");
		g->group_busy = busy;
		g->group_ns = 0;
		g->group_from_ns = g->group_stamp_ns;
	}
	g->group_stamp_ns = now;
	return true;
}

bool chatty_account(struct loop *l, struct managed_task *m, uint64_t cpu_delta, uint64_t now)
{
	struct tracked_task *tt = m->tt;
	uint32_t blocks = tt->nvcsw - m->chatty_nvcsw, sib = tt->sib_wakes - m->seen_sib_wakes;
	uint64_t waited = tt->wait_ns > m->seen_wait_ns ? tt->wait_ns - m->seen_wait_ns : 0;
	struct managed_task *g;

	m->chatty_nvcsw = tt->nvcsw;
	m->seen_sib_wakes = tt->sib_wakes;
	m->seen_wait_ns = tt->wait_ns;
	/* Normal work only, as for a hog; one that is a hog on its own
	 * counts as one already. */
	if ((m->st.class != SCHED_CLASS_NORMAL && m->st.class != SCHED_CLASS_BATCH) ||
	    (m->hog && !m->group_hog)) {
		m->chatty = false;
		return false;
	}
	/* No wake-up since the last reading says nothing new. A member
	 * stays one until most of its wake-ups come from elsewhere: a wakeup
	 * queued to an idle CPU counts as no sibling's (sensor_bpf.bpf.c). */
	if (blocks || sib)
		m->chatty = m->chatty ? (uint64_t)sib * 2 >= (uint64_t)blocks
				      : sib >= CHATTY_MIN_WAKES && (uint64_t)sib * 4 >= (uint64_t)blocks * 3;
	g = managed_leader(l, m);
	if (!m->chatty || !g)
		return false;
	if (window_at(g, now))
		g->group_ns += cpu_delta + waited;
	return g->group_busy;
}
