/* Managed tasks: adopting them into the core, their class, what happens
 * at exec and exit, and putting every task back on the way out. */
#include "loop-internal.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

static bool strv_fnmatch(char **patterns, const char *s)
{
	for (char **p = patterns; p && *p && s; p++)
		if (fnmatch(*p, s, 0) == 0)
			return true;
	return false;
}

/* Tasks the kernel or their owner already gave RT, and what the config
 * exempts, are left alone for good. */
static bool task_exempt(struct loop *l, const struct tracked_task *tt)
{
	if (tt->policy == SCHED_FIFO || tt->policy == SCHED_RR || tt->policy == SCHED_DEADLINE)
		return true;
	return strv_fnmatch(l->config->exempt.comms, tt->comm) ||
	       (l->config->exempt.exes && l->config->exempt.exes[0] &&
		strv_fnmatch(l->config->exempt.exes, l->src.ops->exe(l->src.ctx, tt)));
}

static void idle_list_update(struct loop *l, struct managed_task *m)
{
	bool want = m->st.class == SCHED_CLASS_IDLEPRIO && m->tt->tid == m->tt->tgid;

	if (want && !m->on_idle_list)
		LIST_INSERT_HEAD(&l->idleprio, m, idle_link);
	else if (!want && m->on_idle_list)
		LIST_REMOVE(m, idle_link);
	m->on_idle_list = want;
}

static int set_idle(struct loop *l, struct managed_task *m, bool idle)
{
	int r;

	l->counters.calls_idle++;
	r = l->lv.ops->set_idle(l->lv.ctx, target_of(m), idle);
	/* As for nice (managed_set_nice): ours, not an owner's chrt. */
	if (r == 0 && (idle || m->tt->policy == SCHED_IDLE))
		m->tt->policy = idle ? SCHED_IDLE : SCHED_OTHER;
	if (r == 0)
		m->seen_policy = (int8_t)m->tt->policy;
	return r;
}

void managed_set_class(struct loop *l, struct managed_task *m, enum sched_class class)
{
	bool was_running = m->st.running;
	int cpu = m->st.cpu;

	/* A new task starts normal in the core, and in the kernel a fork's
	 * child has its parent's class already. */
	if (class != m->st.class && l->src.ops->set_class)
		l->src.ops->set_class(l->src.ctx, m->tt, class);
	(void)sched_set_class(l->core, &m->st, class, 0);
	if (class == SCHED_CLASS_IDLEPRIO && !m->idle_policy) {
		if (set_idle(l, m, true) == 0)
			m->idle_policy = true;
	} else if (class != SCHED_CLASS_IDLEPRIO && m->idle_policy) {
		managed_cont(l, m);
		if (set_idle(l, m, false) == 0)
			m->idle_policy = false;
	}
	idle_list_update(l, m);
	if (was_running && cpu >= 0)
		l->resched[cpu] = true;
	log_task(LOG_LEVEL_DEBUG, m->target.tid, m->tt->comm, sched_class_name(m->st.class),
		 "class", "now %s", sched_class_name(m->st.class));
}

static struct managed_task *parent_of(struct loop *l, const struct tracked_task *tt)
{
	struct tracked_task *parent = NULL;

	if (tt->tid != tt->tgid)
		parent = l->src.ops->lookup(l->src.ctx, tt->tgid);
	if (!parent && tt->ppid > 1)
		parent = l->src.ops->lookup(l->src.ctx, tt->ppid);
	return parent ? parent->sched_data : NULL;
}

/* The class a new task starts in: its parent thread's or process's. */
static enum sched_class inherited_class(struct loop *l, const struct tracked_task *tt)
{
	struct managed_task *pm = parent_of(l, tt);

	if (tt->policy == SCHED_IDLE)
		return SCHED_CLASS_IDLEPRIO;
	if (pm && pm->adopted && !pm->exempt)
		return pm->st.class;
	if (tt->policy == SCHED_BATCH)
		return SCHED_CLASS_BATCH;
	return SCHED_CLASS_NORMAL;
}

/* Whether a child forked at fork_ns copied our pin of pm: pm is pinned,
 * or was unpinned up to FORK_COPY_NS before the event (the kernel copies
 * the mask early in a fork and sends the event at its end). */
static bool pin_inherited(const struct managed_task *pm, uint64_t fork_ns)
{
	return pm->pinned_cpu >= 0 || (fork_ns && pm->unpinned_ns + FORK_COPY_NS >= fork_ns);
}

/* A child forked while we pinned or reniced its parent inherited our
 * settings, not its owner's: give it the parent's own back, before it
 * looks like something its owner chose. The kernel copies the mask early
 * in a fork and sends the event at its end, after copying the whole
 * process: a pin that ended up to FORK_COPY_NS before the event counts. */
static void undo_inherited(struct loop *l, struct tracked_task *tt, uint64_t fork_ns)
{
	struct managed_task *pm = parent_of(l, tt);
	struct enforce_original orig;
	struct loop_inherited what;

	if (!pm || !pm->adopted || pm->exempt)
		return;
	what = (struct loop_inherited){
		.affinity = pin_inherited(pm, fork_ns),
		.idle_policy = pm->idle_policy && tt->policy == SCHED_IDLE,
		.our_slice_ns = pm->slice_set ? rr_slice_ns(l) : 0,
		.our_nice = pm->kernel_nice != NICE_UNSET && tt->nice == pm->kernel_nice
				    ? pm->kernel_nice : NICE_UNSET,
		.owner_nice = pm->st.nice,
	};
	if (!what.affinity && !what.idle_policy && !what.our_slice_ns && what.our_nice == NICE_UNSET)
		return;
	if (l->lv.ops->get_original(l->lv.ctx, pm->target.tid, &orig) < 0)
		return;
	if (l->lv.ops->undo_inherited(l->lv.ctx, &(struct enforce_target){ .tid = tt->tid,
								.tgid = tt->tgid,
								.start_time = tt->start_time },
				      &orig, &what) < 0)
		return;
	/* The tracker read these before our change: it is theirs now. */
	if (what.idle_policy && orig.policy != SCHED_IDLE)
		tt->policy = orig.policy;
	if (what.our_nice != NICE_UNSET)
		tt->nice = what.owner_nice;
}

static void apply_rule(struct loop *l, struct managed_task *m, const struct loop_rule *rule)
{
	if (!rule)
		return;
	if (rule->nice_set && rule->nice != m->st.nice && managed_set_nice(l, m, rule->nice) == 0)
		sched_set_nice(l->core, &m->st, rule->nice);
	managed_set_class(l, m, rule->class);
	log_task(LOG_LEVEL_DEBUG, m->target.tid, m->tt->comm, sched_class_name(m->st.class),
		 "rule", "matched a rule");
}

static void adopt(struct loop *l, struct tracked_task *tt, const struct loop_rule *rule,
		  uint64_t event_ns, uint64_t now)
{
	struct managed_task *m = tt->sched_data;

	if (!m) {
		m = calloc(1, sizeof(*m));
		if (!m) {
			log_error_errno(ENOMEM, "cannot track %d: %m", (int)tt->tid);
			return;
		}
		tt->sched_data = m;
		m->pinned_cpu = -1;
		m->kernel_nice = NICE_UNSET;
		m->contend_cpu = m->contend_prev = CONTEND_NONE;
	}
	m->tt = tt;
	m->target = (struct enforce_target){ .tid = tt->tid, .tgid = tt->tgid,
					    .start_time = tt->start_time };
	m->exempt = task_exempt(l, tt);
	if (m->exempt || m->adopted)
		return;
	undo_inherited(l, tt, event_ns);
	/* Forked and not yet exec'd: most such children exec within a few
	 * ms, and one pinned behind a boosted task mid-exec could not finish
	 * it. No pin until it has had the time (an exec starts the window
	 * anew). */
	if (event_ns && (tt->flags & TASK_FLAG_FORKNOEXEC))
		m->settle_until_ns = event_ns + PIN_SETTLE_NS;
	m->met_ns = event_ns ? event_ns : now;
	sched_task_init(l->core, &m->st, (uint64_t)tt->tid, now);
	m->st.data = m;
	m->st.nice = tt->nice;
	deadline_refill(&m->st.dl, tt->nice, sched_get_config(l->core)->rr_interval_ms, now);
	managed_read_allowed(l, m);
	m->st.last_cpu = tt->last_cpu >= 0 && tt->last_cpu < l->nr_os_cpus ? l->os_to_cpu[tt->last_cpu] : 0;
	m->seen_cpu_ns = tt->cpu_ns;
	/* Blocks before we met it are no sleep in its first slice of ours. */
	m->seen_nvcsw = tt->nvcsw;
	m->seen_policy = (int8_t)tt->policy;
	m->adopted = true;
	managed_set_class(l, m, inherited_class(l, tt));
	apply_rule(l, m, rule);
}

static void release(struct loop *l, struct managed_task *m, bool gone)
{
	int cpu = m->st.running ? m->st.cpu : -1;

	lock_waiter_done(l, m);
	if (m->adopted)
		sched_task_done(l->core, &m->st);
	if (cpu >= 0)
		l->resched[cpu] = true;
	if (m->on_idle_list)
		LIST_REMOVE(m, idle_link);
	m->on_idle_list = false;
	if (gone)
		l->lv.ops->forget(l->lv.ctx, m->target.tid);
	else
		(void)l->lv.ops->release(l->lv.ctx, target_of(m));
}

uint64_t loop_task_new(struct loop *l, struct tracked_task *tt, const struct loop_rule *rule,
		       uint64_t event_ns, uint64_t now)
{
	adopt(l, tt, rule, event_ns, now);
	return cadence_pull(l, tt->sched_data);
}

uint64_t loop_task_woke(struct loop *l, struct tracked_task *tt)
{
	return cadence_pull(l, tt->sched_data);
}

/* A task that exec'd is running: it gets its run queue and class now,
 * not at the next tick. The debug line times it against the kernel's
 * exec event (bench/README, "What watching costs"). */
static bool queue_at_exec(struct loop *l, struct managed_task *m, uint64_t event_ns, uint64_t now)
{
	if (!event_ns)
		return false;
	m->met_ns = event_ns;
	m->settle_until_ns = event_ns + PIN_SETTLE_NS;
	/* A new program starts on its owner's mask: a launcher (taskset)
	 * may be about to set one equal to our pin, which we could not tell
	 * from ours and would undo at the unpin. */
	managed_unpin(l, m, now);
	if (m->adopted && !m->exempt)
		managed_read_allowed(l, m);
	if (!loop_queue_now(l, m, now))
		return false;
	log_debug("queued tid=%d cpu=%d class=%s event_ns=%llu queued_ns=%llu", (int)m->target.tid,
		  m->st.cpu, sched_class_name(m->st.class), (unsigned long long)event_ns,
		  (unsigned long long)now);
	return true;
}

uint64_t loop_task_exec(struct loop *l, struct tracked_task *tt, const struct loop_rule *rule,
			uint64_t event_ns, uint64_t now)
{
	struct managed_task *m = tt->sched_data;

	if (!m) {
		/* The tracker may meet a task first at its exec. */
		adopt(l, tt, rule, event_ns, now);
	} else if (!m->boost_prio && task_exempt(l, tt) != m->exempt) {
		/* An exec can move a task into or out of an exemption; our
		 * own boost is no foreign RT policy. */
		if (!m->exempt)
			release(l, m, false);
		m->adopted = false;
		adopt(l, tt, rule, event_ns, now);
	} else if (m->adopted && !m->exempt) {
		apply_rule(l, m, rule);
	}
	m = tt->sched_data;
	if (m && queue_at_exec(l, m, event_ns, now))
		return l->last_tick_ns + TICK_ACTIVE_NS;
	return cadence_pull(l, m);
}

void loop_task_forked(struct loop *l, struct tracked_task *parent, pid_t tid, pid_t tgid,
		      uint64_t fork_ns)
{
	struct managed_task *pm = parent->sched_data;
	struct enforce_original orig;

	if (!pm || !pm->adopted || pm->exempt || !pin_inherited(pm, fork_ns) ||
	    l->lv.ops->get_original(l->lv.ctx, pm->target.tid, &orig) < 0)
		return;
	(void)l->lv.ops->undo_inherited(l->lv.ctx, &(struct enforce_target){ .tid = tid, .tgid = tgid },
					&orig, &(struct loop_inherited){ .affinity = true,
									 .our_nice = NICE_UNSET });
}

void loop_task_exit(struct loop *l, struct tracked_task *tt)
{
	struct managed_task *m = tt->sched_data;

	if (!m)
		return;
	release(l, m, true);
	free(m);
	tt->sched_data = NULL;
}

struct match_req {
	struct loop *l;
	const struct loop_rule *rule;
};

static void match_one(struct tracked_task *tt, void *userdata)
{
	const struct match_req *req = userdata;
	struct managed_task *m = tt->sched_data;

	if (m && m->adopted && !m->exempt)
		apply_rule(req->l, m, req->rule);
}

void loop_process_matched(struct loop *l, pid_t tgid, const struct loop_rule *rule)
{
	if (rule)
		l->src.ops->foreach_thread(l->src.ctx, tgid, match_one,
					   &(struct match_req){ l, rule });
}

static void restore_one(struct tracked_task *tt, void *userdata)
{
	struct loop *l = userdata;
	struct managed_task *m = tt->sched_data;

	if (!m)
		return;
	if (m->adopted && !m->exempt)
		sched_task_done(l->core, &m->st);
	free(m);
	tt->sched_data = NULL;
}

void loop_restore_all(struct loop *l)
{
	/* The enforcer puts back every task it recorded, in one pass. */
	l->lv.ops->restore_all(l->lv.ctx);
	l->src.ops->foreach(l->src.ctx, restore_one, l);
	LIST_INIT(&l->idleprio);
}

static void adopt_one(struct tracked_task *tt, void *userdata)
{
	struct loop *l = userdata;

	adopt(l, tt, NULL, 0, l->last_tick_ns);
}

int loop_new(struct loop **ret, struct hwloc_topology *topo, const struct config *config,
	     const struct loop_source *src, const struct loop_levers *levers, uint64_t now)
{
	struct sched_config cfg;
	struct loop *l;
	size_t n;
	int r;

	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->src = *src;
	l->lv = *levers;
	l->config = config;
	l->last_tick_ns = now;
	LIST_INIT(&l->idleprio);
	loop_config_from_tunables(&config->tunables, &cfg);
	r = sched_new(&l->core, topo, &cfg);
	if (r < 0)
		goto fail;
	l->nr_cpus = sched_nr_cpus(l->core);
	for (int cpu = 0; cpu < l->nr_cpus; cpu++) {
		int os = (int)topology_os_index(sched_topology(l->core), cpu);
		if (os >= l->nr_os_cpus)
			l->nr_os_cpus = os + 1;
	}
	n = (size_t)l->nr_cpus;
	l->resched = calloc(n, sizeof(bool));
	l->hogs = calloc(n, sizeof(unsigned));
	l->pinned_hogs = calloc(n, sizeof(unsigned));
	l->settled_pinned = calloc(n, sizeof(unsigned));
	l->contend_pinned = calloc(n, sizeof(unsigned));
	l->wake_boosts = calloc(n, sizeof(unsigned));
	l->os_to_cpu = calloc((size_t)l->nr_os_cpus, sizeof(int));
	if (!l->resched || !l->hogs || !l->pinned_hogs || !l->settled_pinned || !l->contend_pinned ||
	    !l->wake_boosts || !l->os_to_cpu) {
		r = -ENOMEM;
		goto fail;
	}
	for (int cpu = 0; cpu < l->nr_cpus; cpu++)
		l->os_to_cpu[topology_os_index(sched_topology(l->core), cpu)] = cpu;
	l->tick_ns = l->pull_ns = TICK_ACTIVE_NS;
	l->src.ops->foreach(l->src.ctx, adopt_one, l);
	*ret = l;
	return 0;
fail:
	loop_free(l);
	return r;
}

static void drop_one(struct tracked_task *tt, void *userdata)
{
	free(tt->sched_data);
	tt->sched_data = NULL;
}

struct loop *loop_free(struct loop *l)
{
	if (!l)
		return NULL;
	l->src.ops->foreach(l->src.ctx, drop_one, NULL);
	sched_free(l->core);
	free(l->resched);
	free(l->hogs);
	free(l->pinned_hogs);
	free(l->settled_pinned);
	free(l->contend_pinned);
	free(l->os_to_cpu);
	free(l->wake_boosts);
	free(l->armable);
	free(l);
	return NULL;
}

static void forget_levers(struct tracked_task *tt, void *userdata)
{
	struct managed_task *m = tt->sched_data;
	const uint64_t *now = userdata;

	if (!m)
		return;
	m->boost_prio = 0;
	/* Given back too: set again once the loop still wants them. A child
	 * forked before the deadman unpinned its parent has our pin. */
	m->slice_set = false;
	if (m->pinned_cpu >= 0) {
		m->pinned_cpu = -1;
		m->unpinned_ns = *now;
	}
	if (m->stopped) {
		m->stopped = false;
		m->cont_until_ns = 0;
	}
}

void loop_boosts_dropped(struct loop *l, uint64_t now)
{
	l->src.ops->foreach(l->src.ctx, forget_levers, &now);
	l->reboost = true;
}

const struct loop_counters *loop_counters(const struct loop *l)
{
	return &l->counters;
}

int loop_nr_cpus(const struct loop *l)
{
	return l->nr_cpus;
}
