/* Scheduling: adopting tasks into the core, class changes, the tick timer,
 * and putting every task back on the way out. */
#include "daemon.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/vfs.h>
#include <linux/magic.h>

#include "log.h"
#include "rules.h"
#include "sched_loop.h"
#include "time_util.h"

static enum sched_class core_class(enum muqss_class c)
{
	switch (c) {
	case MUQSS_CLASS_ISO: return SCHED_CLASS_ISO;
	case MUQSS_CLASS_IDLEPRIO: return SCHED_CLASS_IDLEPRIO;
	case MUQSS_CLASS_BATCH: return SCHED_CLASS_BATCH;
	default: return SCHED_CLASS_NORMAL;
	}
}

static bool strv_fnmatch(char **patterns, const char *s)
{
	for (char **p = patterns; p && *p && s; p++)
		if (fnmatch(*p, s, 0) == 0)
			return true;
	return false;
}

/* Tasks the kernel or their owner already gave RT, and what the config
 * exempts, are left alone for good. */
static bool task_exempt(struct daemon *d, const struct tracked_task *tt)
{
	if (tt->policy == SCHED_FIFO || tt->policy == SCHED_RR || tt->policy == SCHED_DEADLINE)
		return true;
	return strv_fnmatch(d->config.exempt.comms, tt->comm) ||
	       strv_fnmatch(d->config.exempt.exes, tracker_task_exe(tt));
}

static void idle_list_update(struct sched_loop *l, struct managed_task *m)
{
	bool want = m->class == MUQSS_CLASS_IDLEPRIO && m->tt->tid == m->tt->tgid;

	if (want && !m->on_idle_list)
		LIST_INSERT_HEAD(&l->idleprio, m, idle_link);
	else if (!want && m->on_idle_list)
		LIST_REMOVE(m, idle_link);
	m->on_idle_list = want;
}

void managed_set_class(struct sched_loop *l, struct managed_task *m, enum muqss_class class)
{
	bool was_running = m->st.running;
	int cpu = m->st.cpu;

	m->class = class;
	(void)sched_set_class(l->core, &m->st, core_class(class), 0);
	if (class == MUQSS_CLASS_IDLEPRIO && !m->idle_policy) {
		if (enforce_set_idle(l->enf, &m->target, true) == 0)
			m->idle_policy = true;
	} else if (class != MUQSS_CLASS_IDLEPRIO && m->idle_policy) {
		managed_cont(l, m);
		if (enforce_set_idle(l->enf, &m->target, false) == 0)
			m->idle_policy = false;
	}
	idle_list_update(l, m);
	if (was_running && cpu >= 0)
		l->resched[cpu] = true;
	log_task(LOG_LEVEL_DEBUG, m->target.tid, m->tt->comm, sched_class_name(m->st.class),
		 "class", "now %s", sched_class_name(m->st.class));
}

/* The class a new task starts in: its parent thread's or process's. */
static enum muqss_class inherited_class(struct daemon *d, const struct tracked_task *tt)
{
	struct tracked_task *parent = NULL;
	struct managed_task *pm;

	if (tt->policy == SCHED_IDLE)
		return MUQSS_CLASS_IDLEPRIO;
	if (tt->tid != tt->tgid)
		parent = tracker_lookup(d->tracker, tt->tgid);
	if (!parent && tt->ppid > 1)
		parent = tracker_lookup(d->tracker, tt->ppid);
	pm = parent ? parent->sched_data : NULL;
	if (pm && pm->adopted)
		return pm->class;
	if (tt->policy == SCHED_BATCH)
		return MUQSS_CLASS_BATCH;
	return MUQSS_CLASS_NORMAL;
}

/* A child forked while we pinned or reniced its parent inherited our
 * settings, not its owner's: give it the parent's own back, before it
 * looks like something its owner chose. The kernel copies the mask early
 * in a fork and sends the event at its end, after copying the whole
 * process: a pin that ended up to FORK_COPY_NS before the event counts. */
static void undo_inherited(struct daemon *d, struct tracked_task *tt)
{
	struct tracked_task *parent = tracker_lookup(d->tracker, tt->tid != tt->tgid ? tt->tgid : tt->ppid);
	struct managed_task *pm = parent ? parent->sched_data : NULL;
	uint64_t fork_ns = tracker_event_ns(d->tracker);
	struct enforce_original orig;
	bool pinned;

	if (!pm || !pm->adopted || pm->exempt)
		return;
	pinned = pm->pinned_cpu >= 0 || (fork_ns && pm->unpinned_ns + FORK_COPY_NS >= fork_ns);
	if ((pinned || pm->idle_policy || pm->slice_set) &&
	    enforce_get_original(d->loop->enf, parent->tid, &orig) == 0) {
		if (pinned &&
		    sched_setaffinity(tt->tid, sizeof(orig.affinity), &orig.affinity) < 0 &&
		    errno != ESRCH)
			log_debug_errno(errno, "cannot give %d its affinity back, ignoring: %m",
					(int)tt->tid);
		/* The child is IDLEPRIO by inheritance all the same; its
		 * record must hold the owner's policy, not ours. */
		if (pm->idle_policy && tt->policy == SCHED_IDLE && orig.policy != SCHED_IDLE &&
		    sched_setscheduler(tt->tid, orig.policy, &(struct sched_param){ 0 }) == 0)
			tt->policy = orig.policy;
		if (pm->slice_set)
			(void)enforce_reset_inherited_slice(d->loop->enf, tt->tid,
							    rr_slice_ns(d->loop), orig.slice_ns);
	}
	if (pm->kernel_nice != NICE_UNSET && tt->nice == pm->kernel_nice &&
	    setpriority(PRIO_PROCESS, (id_t)tt->tid, pm->st.nice) == 0)
		tt->nice = pm->st.nice;
}

/* A matching rule sets the class (same numbering as enum muqss_class)
 * and, optionally, the nice. */
static void apply_rules(struct daemon *d, struct managed_task *m)
{
	const struct rule *rule = daemon_rules_match(d, m->tt);

	if (!rule)
		return;
	if (rule->nice_set && rule->nice != m->st.nice &&
	    enforce_set_nice(d->loop->enf, &m->target, rule->nice) == 0) {
		sched_set_nice(d->loop->core, &m->st, rule->nice);
		/* The last stat read predates it: not the owner's renice. */
		m->tt->nice = rule->nice;
	}
	managed_set_class(d->loop, m, (enum muqss_class)rule->class);
	log_task(LOG_LEVEL_DEBUG, m->target.tid, m->tt->comm, sched_class_name(m->st.class),
		 "rule", "matched a rule");
}

static void adopt(struct daemon *d, struct tracked_task *tt)
{
	struct sched_loop *l = d->loop;
	struct managed_task *m = tt->sched_data;
	uint64_t now = now_nsec(CLOCK_MONOTONIC);

	if (!m) {
		m = calloc(1, sizeof(*m));
		if (!m) {
			log_error_errno(ENOMEM, "cannot track %d: %m", (int)tt->tid);
			return;
		}
		tt->sched_data = m;
		m->pinned_cpu = -1;
		m->kernel_nice = NICE_UNSET;
	}
	m->tt = tt;
	m->target = (struct enforce_target){ tt->tid, tt->tgid, tt->start_time };
	m->exempt = task_exempt(d, tt);
	if (m->exempt || m->adopted)
		return;
	undo_inherited(d, tt);
	sched_task_init(l->core, &m->st, (uint64_t)tt->tid, now);
	m->st.data = m;
	m->st.nice = tt->nice;
	deadline_refill(&m->st.dl, tt->nice, sched_get_config(l->core)->rr_interval_ms, now);
	managed_read_allowed(l, m);
	m->st.last_cpu = tt->last_cpu >= 0 && tt->last_cpu < l->nr_cpus ? tt->last_cpu : 0;
	m->seen_cpu_ns = tt->cpu_ns;
	m->adopted = true;
	managed_set_class(l, m, inherited_class(d, tt));
	apply_rules(d, m);
}

static void release(struct sched_loop *l, struct managed_task *m, bool gone)
{
	int cpu = m->st.running ? m->st.cpu : -1;

	if (m->adopted)
		sched_task_done(l->core, &m->st);
	if (cpu >= 0)
		l->resched[cpu] = true;
	if (m->on_idle_list)
		LIST_REMOVE(m, idle_link);
	m->on_idle_list = false;
	if (gone)
		enforce_forget(l->enf, m->target.tid);
	else
		(void)enforce_release(l->enf, &m->target);
}

void daemon_sched_task_new(struct daemon *d, struct tracked_task *tt)
{
	if (d->loop)
		adopt(d, tt);
}

/* Brings the next tick forward to TICK_ACTIVE_NS after the last one, or
 * now: between ticks, up to TICK_IDLE_NS, is too long for new work. */
static void pull_tick(struct sched_loop *l)
{
	uint64_t at = (l->last_tick_ns + TICK_ACTIVE_NS) / 1000, now = now_usec(CLOCK_MONOTONIC);
	uint64_t next;

	if (at < now)
		at = now;
	if (sd_event_source_get_time(l->tick, &next) < 0 || next <= at)
		return;
	(void)sd_event_source_set_time(l->tick, at);
}

/* A task that exec'd is running: it gets its run queue and class now,
 * not at the next tick. The debug line times it against the kernel's
 * exec event (bench/track/bench-track.py, reaction-daemon). */
static void queue_at_exec(struct daemon *d, struct tracked_task *tt)
{
	struct managed_task *m = tt->sched_data;
	uint64_t event_ns = tracker_event_ns(d->tracker);
	uint64_t now = now_nsec(CLOCK_MONOTONIC);

	if (!m || !event_ns)
		return;
	m->settle_until_ns = event_ns + PIN_SETTLE_NS;
	/* A new program starts on its owner's mask: a launcher (taskset)
	 * may be about to set one equal to our pin, which we could not tell
	 * from ours and would undo at the unpin. */
	managed_unpin(d->loop, m);
	if (m->adopted && !m->exempt)
		managed_read_allowed(d->loop, m);
	if (!sched_loop_queue_now(d->loop, m, now))
		return;
	pull_tick(d->loop);
	log_debug("queued tid=%d cpu=%d class=%s event_ns=%llu queued_ns=%llu", (int)tt->tid,
		  m->st.cpu, sched_class_name(m->st.class), (unsigned long long)event_ns,
		  (unsigned long long)now);
}

void daemon_sched_task_exec(struct daemon *d, struct tracked_task *tt)
{
	struct managed_task *m = tt->sched_data;

	if (!d->loop)
		return;
	if (!m) {
		/* The tracker may meet a task first at its exec. */
		adopt(d, tt);
	} else if (!m->boost_prio && task_exempt(d, tt) != m->exempt) {
		/* An exec can move a task into or out of an exemption; our
		 * own boost is no foreign RT policy. */
		if (!m->exempt)
			release(d->loop, m, false);
		m->adopted = false;
		adopt(d, tt);
	} else if (m->adopted && !m->exempt) {
		apply_rules(d, m);
	}
	queue_at_exec(d, tt);
}

void daemon_sched_task_exit(struct daemon *d, struct tracked_task *tt)
{
	struct managed_task *m = tt->sched_data;

	if (!m)
		return;
	if (d->loop)
		release(d->loop, m, true);
	free(m);
	tt->sched_data = NULL;
}

/* Every lever is recorded before it is pulled, inside the tick. On a disk
 * filesystem a record write can wait for writeback (ext4 flushes a file
 * renamed over another), which holds a boosted task unchecked for as long:
 * a second was seen. /run is a tmpfs under systemd. */
static void warn_unless_in_memory(const char *dir)
{
	struct statfs sfs;

	if (statfs(dir, &sfs) < 0 || sfs.f_type == TMPFS_MAGIC || sfs.f_type == RAMFS_MAGIC)
		return;
	log_warning("state directory %s is not on a tmpfs: writing its records may wait "
		    "for the disk and stall scheduling; use one in memory (/run under systemd)", dir);
}

static int on_tick(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct sched_loop *l = userdata;
	uint64_t now = now_nsec(CLOCK_MONOTONIC), took;

	/* A late or long tick leaves a boosted task unchecked that long. */
	if (l->last_tick_ns && now - l->last_tick_ns > l->tick_ns + TICK_LATE_NS)
		log_debug("tick %llu us late", (unsigned long long)(now - l->last_tick_ns - l->tick_ns) / 1000);
	sched_loop_tick(l, now);
	took = now_nsec(CLOCK_MONOTONIC) - now;
	if (took > TICK_LATE_NS)
		log_debug("tick took %llu us", (unsigned long long)took / 1000);
	(void)sd_event_source_set_time(s, now_usec(CLOCK_MONOTONIC) + l->tick_ns / 1000);
	return sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
}

static void config_to_core(const struct config_tunables *t, struct sched_config *c)
{
	sched_config_defaults(c);
	c->rr_interval_ms = t->rr_interval_ms;
	c->interactive = t->interactive;
	c->iso_cpu = t->iso_cpu;
	c->yield_type = (int)t->yield_type;
	c->iso_mode = t->iso_reading == ISO_READING_PER_CPU ? ISO_MODE_PER_CPU : ISO_MODE_MACHINE;
	c->tick_ns = TICK_ACTIVE_NS;
}

static void adopt_one(struct tracked_task *tt, void *userdata)
{
	adopt(userdata, tt);
}

int daemon_sched_start(struct daemon *d)
{
	struct sched_config cfg;
	struct sched_loop *l;
	hwloc_topology_t topo;
	int r;

	l = calloc(1, sizeof(*l));
	if (!l)
		return log_error_errno(ENOMEM, "out of memory");
	l->d = d;
	LIST_INIT(&l->idleprio);
	if (hwloc_topology_init(&topo) < 0) {
		r = log_error_errno(errno ? errno : EINVAL, "cannot read the CPU topology: %m");
		goto fail;
	}
	if (hwloc_topology_load(topo) < 0) {
		r = log_error_errno(errno ? errno : EINVAL, "cannot read the CPU topology: %m");
		hwloc_topology_destroy(topo);
		goto fail;
	}
	config_to_core(&d->config.tunables, &cfg);
	r = sched_new(&l->core, topo, &cfg);
	/* The core keeps what it needs of the topology; hwloc's own copy is
	 * large on a large machine and would stay locked in memory. */
	hwloc_topology_destroy(topo);
	if (r < 0) {
		log_error_errno(r, "cannot start the scheduler core: %m");
		goto fail;
	}
	l->nr_cpus = sched_nr_cpus(l->core);
	l->resched = calloc((size_t)l->nr_cpus, sizeof(bool));
	l->hogs = calloc((size_t)l->nr_cpus, sizeof(unsigned));
	l->pinned_hogs = calloc((size_t)l->nr_cpus, sizeof(unsigned));
	l->wake_boosts = calloc((size_t)l->nr_cpus, sizeof(unsigned));
	for (int cpu = 0; cpu < l->nr_cpus; cpu++) {
		int os = (int)topology_os_index(sched_topology(l->core), cpu);
		if (os >= l->nr_os_cpus)
			l->nr_os_cpus = os + 1;
	}
	l->os_to_cpu = calloc((size_t)l->nr_os_cpus, sizeof(int));
	if (!l->resched || !l->hogs || !l->pinned_hogs || !l->wake_boosts || !l->os_to_cpu) {
		r = log_error_errno(ENOMEM, "out of memory");
		goto fail;
	}
	for (int cpu = 0; cpu < l->nr_cpus; cpu++)
		l->os_to_cpu[topology_os_index(sched_topology(l->core), cpu)] = cpu;
	r = enforcer_new(&l->enf, d->config.state_dir);
	if (r < 0) {
		log_error_errno(r, "cannot open the state directory %s: %m", d->config.state_dir);
		goto fail;
	}
	warn_unless_in_memory(d->config.state_dir);
	if (d->config.autogroup == AUTOGROUP_OFF)
		(void)enforce_autogroup_off(l->enf);
	/* Above every boost we grant, so a boosted spinner never starves us. */
	(void)enforce_protect_self(ENFORCE_DAEMON_PRIO);
	l->tick_ns = TICK_ACTIVE_NS;
	/* Accuracy 1 us: sd-event's default of 250 ms would coalesce the tick away. */
	r = sd_event_add_time(d->event, &l->tick, CLOCK_MONOTONIC, 0, 1, on_tick, l);
	if (r < 0) {
		log_error_errno(r, "cannot arm the scheduler tick: %m");
		goto fail;
	}
	d->loop = l;
	(void)daemon_rules_load(d);
	tracker_foreach(d->tracker, adopt_one, d);
	log_info("scheduler: %d CPUs, rr_interval %u ms, EEVDF slice %s", l->nr_cpus,
		 cfg.rr_interval_ms, enforce_slice_supported(l->enf) ? "supported" : "unsupported");
	return 0;
fail:
	d->loop = l;
	daemon_sched_stop(d);
	return r;
}

static void drop_one(struct tracked_task *tt, void *userdata)
{
	free(tt->sched_data);
	tt->sched_data = NULL;
}

void daemon_sched_stop(struct daemon *d)
{
	struct sched_loop *l = d->loop;

	if (!l)
		return;
	d->loop = NULL;
	sd_event_source_disable_unref(l->tick);
	if (l->enf) {
		int r = enforcer_restore_all(l->enf);
		if (r < 0)
			log_error_errno(r, "restoring tasks failed: %m");
		enforcer_free(l->enf);
	}
	if (d->tracker)
		tracker_foreach(d->tracker, drop_one, NULL);
	daemon_rules_free(d);
	sched_free(l->core);
	free(l->resched);
	free(l->hogs);
	free(l->pinned_hogs);
	free(l->os_to_cpu);
	free(l->wake_boosts);
	free(l->armable);
	free(l);
}
