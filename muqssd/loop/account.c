/* Accounting one task at a tick: bring the core's view of it up to date
 * with what the source just read, charge the CPU it used, queue it if it
 * woke, dequeue it if it sleeps, and move it between the queues and the
 * hogs. */
#include "loop-internal.h"

#include "sched_attr.h"

/* What it does now is unknown (see tracked_task.stale): pinned or
 * boosted on stale facts it could hold a CPU, or wait behind one, for as
 * long. It gets neither until it reads again. */
static void drop_stale(struct loop *l, struct managed_task *m)
{
	if (m->st.running)
		l->resched[m->st.cpu] = true;
	if (m->st.queued || m->st.running)
		sched_dequeue(l->core, &m->st);
	managed_unboost(l, m);
}

/* Someone else changed the task's policy (chrt): the new one is its base;
 * its class follows it: SCHED_BATCH is MuQSS's batch class, SCHED_OTHER
 * takes a batch or IDLEPRIO task back to normal (SCHED_IDLE becomes
 * IDLEPRIO, below). Our boost never gets here: it reads realtime. */
static void owner_policy(struct loop *l, struct managed_task *m, int policy)
{
	m->seen_policy = (int8_t)policy;
	managed_rebase(l, m);
	if (policy == SCHED_BATCH && (m->st.class == SCHED_CLASS_NORMAL || m->idle_policy))
		managed_set_class(l, m, SCHED_CLASS_BATCH);
	else if (policy == SCHED_OTHER && (m->st.class == SCHED_CLASS_BATCH || m->idle_policy))
		managed_set_class(l, m, SCHED_CLASS_NORMAL);
}

/* Its owner may renice it (nice, renice) or change its policy (chrt,
 * schedtool) under us: what they set is its new base. */
static void follow_owner(struct loop *l, struct managed_task *m, uint64_t now)
{
	struct tracked_task *tt = m->tt;

	if (tt->nice != (m->kernel_nice == NICE_UNSET ? m->st.nice : m->kernel_nice)) {
		sched_set_nice(l->core, &m->st, tt->nice);
		m->kernel_nice = NICE_UNSET;
		managed_rebase(l, m);
		hog_renice(l, m, now);
	}
	if (tt->policy != m->seen_policy && !sched_policy_is_rt(tt->policy))
		owner_policy(l, m, tt->policy);
	if (tt->policy == SCHED_IDLE && !m->idle_policy && m->st.class != SCHED_CLASS_IDLEPRIO)
		managed_set_class(l, m, SCHED_CLASS_IDLEPRIO);
}

/* Takes in what the source read: the CPU time used since the last read
 * (returned), D state, and whether it slept. A hog is a task that used
 * its slice without sleeping; a busy worker that blocks between requests
 * is found R at every tick, and only its voluntary switches tell. */
static uint64_t take_reading(struct loop *l, struct managed_task *m, uint64_t now)
{
	struct tracked_task *tt = m->tt;
	uint64_t delta = tt->cpu_ns > m->seen_cpu_ns ? tt->cpu_ns - m->seen_cpu_ns : 0;

	m->seen_cpu_ns = tt->cpu_ns;
	if (delta)
		m->last_ran_ns = now;
	if (tt->state == 'D' && m->st.class != SCHED_CLASS_IDLEPRIO)
		l->any_d_state = true;
	/* As MuQSS does: IDLEPRIO work that may hold what others wait for
	 * (uninterruptible sleep, a lock) is keyed as nice 19 normal, and
	 * boosted like it when picked, until it lets go. */
	lock_holder_update(l, m);
	if (tt->state != 'R' || tt->nvcsw != m->seen_nvcsw)
		m->slept = true;
	m->seen_nvcsw = tt->nvcsw;
	return delta;
}

/* Charges delta; returns whether its slice ran out. */
static bool charge(struct loop *l, struct managed_task *m, uint64_t delta, bool runnable,
		   uint64_t now)
{
	bool expired = false;

	if (m->st.running) {
		int cpu = m->st.cpu;

		if (delta && sched_charge(l->core, cpu, delta, now) > 0) {
			l->resched[cpu] = true;
			expired = true;
		}
		if (!runnable) {
			sched_dequeue(l->core, &m->st);
			l->resched[cpu] = true;
		}
	} else if (delta) {
		/* It ran outside the core's choice: it pays all the same. */
		expired = deadline_charge(&m->st.dl, delta, m->st.nice,
					  sched_get_config(l->core)->rr_interval_ms, now);
		if (expired && m->st.queued) {
			int cpu = m->st.cpu;

			sched_dequeue(l->core, &m->st);
			(void)sched_enqueue(l->core, &m->st, cpu, now);
		}
	}
	return expired;
}

/* Hands m back to the kernel: off the core, unboosted, unpinned. */
static void release_to_kernel(struct loop *l, struct managed_task *m, uint64_t now)
{
	if (m->st.running)
		l->resched[m->st.cpu] = true;
	if (m->st.queued || m->st.running)
		sched_dequeue(l->core, &m->st);
	managed_unboost(l, m);
	managed_unpin(l, m, now);
}

/* A task that is no hog: queued in the core where that is worth it, else
 * left to the kernel. */
static void place(struct loop *l, struct managed_task *m, bool runnable, uint64_t now)
{
	if (!contention_worth_queueing(l, m)) {
		/* What we pinned or boosted under contention goes back. */
		if (m->st.queued || m->st.running || m->boost_prio || m->pinned_cpu >= 0)
			release_to_kernel(l, m, now);
	} else if (runnable && !m->st.queued && !m->st.running) {
		int preempt = -1, cpu;

		cpu = sched_wake(l->core, &m->st, now, &preempt);
		if (cpu >= 0 && managed_pin_or_drop(l, m, cpu, now) && preempt >= 0)
			l->resched[preempt] = true;
	} else if (runnable && (m->st.queued || m->st.running) && m->pinned_cpu != m->st.cpu) {
		/* Queued at its exec, between ticks (loop_queue_now), or
		 * picked while it was too young to pin (PIN_SETTLE_NS). */
		(void)managed_pin_or_drop(l, m, m->st.cpu, now);
	} else if (!runnable && m->st.queued) {
		sched_dequeue(l->core, &m->st);
	}
}

static void account_task(struct tracked_task *tt, void *userdata)
{
	struct loop *l = userdata;
	struct managed_task *m = tt->sched_data;
	uint64_t now = l->last_tick_ns, delta;
	bool runnable, settled, expired, group;

	if (!m || m->exempt || !m->adopted)
		return;
	m->contend_prev = m->contend_cpu;
	m->contend_cpu = CONTEND_NONE;
	if (tt->stale) {
		drop_stale(l, m);
		return;
	}
	follow_owner(l, m, now);
	delta = take_reading(l, m, now);
	runnable = tt->state == 'R';
	expired = charge(l, m, delta, runnable, now);
	group = chatty_account(l, m, delta, now);
	hog_group(l, m, group, now);
	if (!group)
		hog_classify(l, m, expired, runnable, now);
	settled = hog_settled(m, now);
	/* A member of a group runs microseconds at a time: no slice asked. */
	hog_ask_slice(l, m, settled && !m->group_hog);
	if (m->hog) {
		if (runnable)
			contention_count(l, m, settled);
		return;
	}
	/* A thread still waiting for its first run counts too: a pool of
	 * them just started is a crowd before any of it has run. */
	if ((m->st.class == SCHED_CLASS_NORMAL || m->st.class == SCHED_CLASS_BATCH) &&
	    (now - m->last_ran_ns < SWARM_WINDOW_NS || (runnable && !m->last_ran_ns)))
		l->recent_sleepers++;
	place(l, m, runnable, now);
}

void account_tasks(struct loop *l)
{
	l->recent_sleepers = 0;
	l->next_settle_ns = 0;
	l->born_pending = false;
	l->src.ops->foreach_active(l->src.ctx, account_task, l);
	contention_swarm(l);
}

bool loop_queue_now(struct loop *l, struct managed_task *m, uint64_t now)
{
	int preempt;

	/* Only what each tick reads (the active list) may be in the core:
	 * nothing else would ever be charged or demoted. */
	if (!m->adopted || m->exempt || m->hog || m->st.queued || m->st.running ||
	    m->tt->state != 'R' || !m->tt->active || m->tt->stale || !contention_worth_queueing(l, m))
		return false;
	return sched_wake(l->core, &m->st, now, &preempt) >= 0;
}
