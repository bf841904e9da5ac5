/* IDLEPRIO lock holders. A thread that waits on a lock an IDLEPRIO
 * thread of its process holds would wait until nothing else wants a CPU:
 * MuQSS promotes such a holder to normal until it lets go. The bpf
 * sensor tells both ends of each such wait (SENSOR_EVENT_LOCK_WAIT);
 * the holder is keyed as nice 19 normal, resumed if stopped and queued
 * at once, so the next tick boosts it like any normal task it picks.
 * A waiter names its holder by tid: a holder that exits leaves nothing
 * to undo, and a waiter's end finds it again or finds it gone. */
#include "loop-internal.h"

#include "log.h"

/* As MuQSS keys it: nice 19 normal while it may hold what others need. */
void lock_holder_update(struct loop *l, struct managed_task *m)
{
	bool want = m->tt->state == 'D' || m->lock_waiters > 0;

	if (m->st.class != SCHED_CLASS_IDLEPRIO || want == m->st.idle_promoted)
		return;
	sched_set_idle_promoted(l->core, &m->st, want);
	if (!m->st.running || m->st.cpu < 0)
		return;
	/* Picked already, and run SCHED_IDLE as idle work is: boosted now
	 * as the tick boosts what it picks (between ticks too), and the
	 * CPU's pick looked at again. */
	if (want)
		managed_boost(l, m, BOOST_RUN);
	else
		managed_unboost(l, m);
	l->resched[m->st.cpu] = true;
}

static struct managed_task *holder_of(struct loop *l, const struct managed_task *waiter)
{
	struct tracked_task *tt = l->src.ops->lookup(l->src.ctx, waiter->lock_holder);

	if (!tt || tt->tgid != waiter->tt->tgid || !tt->sched_data)
		return NULL;
	return tt->sched_data;
}

/* Its wait is over, however it ended (the lock, a signal, its exit). */
void lock_waiter_done(struct loop *l, struct managed_task *waiter)
{
	struct managed_task *h;

	if (!waiter->lock_holder)
		return;
	h = holder_of(l, waiter);
	waiter->lock_holder = 0;
	if (l->lock_waits)
		l->lock_waits--;
	if (!h || !h->lock_waiters)
		return;
	h->lock_waiters--;
	lock_holder_update(l, h);
}

/* A stop is its process's: the main thread's (idleprio_gate.c). */
static void resume_process(struct loop *l, struct managed_task *h, uint64_t now)
{
	struct managed_task *leader = managed_leader(l, h);

	if (!leader || !leader->stopped)
		return;
	managed_cont(l, leader);
	leader->cont_until_ns = now + rr_slice_ns(l);
}

static bool may_hold(const struct managed_task *m)
{
	return m->adopted && !m->exempt && m->st.class == SCHED_CLASS_IDLEPRIO;
}

uint64_t loop_lock_wait(struct loop *l, struct tracked_task *waiter, struct tracked_task *holder,
			uint64_t now)
{
	struct managed_task *w = waiter->sched_data, *h = holder ? holder->sched_data : NULL;

	if (!w)
		return 0;
	lock_waiter_done(l, w);
	if (!h || !may_hold(h) || holder->tgid != waiter->tgid || !w->adopted ||
	    w->st.class == SCHED_CLASS_IDLEPRIO ||
	    h->lock_waiters == UINT16_MAX)
		return 0;
	w->lock_holder = holder->tid;
	h->lock_waiters++;
	l->lock_waits++;
	log_debug("idleprio %d holds a lock %d waits on", (int)holder->tid, (int)waiter->tid);
	lock_holder_update(l, h);
	resume_process(l, h, now);
	/* It is runnable now, or soon: the tick need not find it first. */
	(void)loop_queue_now(l, h, now);
	return now;
}

static void forget_one(struct tracked_task *tt, void *userdata)
{
	struct managed_task *m = tt->sched_data;

	if (!m)
		return;
	m->lock_holder = 0;
	m->lock_waiters = 0;
	lock_holder_update(userdata, m);
}

void loop_locks_forget(struct loop *l)
{
	l->lock_waits = 0;
	l->src.ops->foreach(l->src.ctx, forget_one, l);
}
