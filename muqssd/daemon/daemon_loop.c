/* Wires the live loop (muqssd/loop/) to the kernel: the tracker as its
 * task source, the enforcer as its lever set, an sd-event timer as its
 * tick. */
#include "daemon.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>
#include <sys/vfs.h>
#include <linux/magic.h>
#include <hwloc.h>

#include "deadman.h"
#include "enforce.h"
#include "log.h"
#include "loop.h"
#include "rules.h"
#include "time_util.h"
#include "sensor.h"
#include "tracker.h"

/* The task source: the tracker. */
static uint64_t src_refresh(void *ctx, uint64_t now, uint64_t until, unsigned budget,
			    uint64_t cold_ns, uint64_t slow_ns)
{
	uint64_t done;

	(void)tracker_refresh_active(ctx, now, until, budget, cold_ns, slow_ns);
	done = now_nsec(CLOCK_MONOTONIC);
	return done > now ? done : now;
}

static void src_foreach_active(void *ctx, tracker_task_func_t fn, void *userdata)
{
	tracker_foreach_active(ctx, fn, userdata);
}

static void src_foreach(void *ctx, tracker_task_func_t fn, void *userdata)
{
	tracker_foreach(ctx, fn, userdata);
}

static size_t src_foreach_thread(void *ctx, pid_t tgid, tracker_task_func_t fn, void *userdata)
{
	return tracker_foreach_thread(ctx, tgid, fn, userdata);
}

static struct tracked_task *src_lookup(void *ctx, pid_t tid)
{
	return tracker_lookup(ctx, tid);
}

static size_t src_count(void *ctx)
{
	return tracker_count(ctx);
}

static size_t src_count_active(void *ctx)
{
	return tracker_count_active(ctx);
}

static const char *src_exe(void *ctx, const struct tracked_task *tt)
{
	return tracker_task_exe(tt);
}

/* The sensor tells lock waits on the IDLEPRIO threads it was told of. */
_Static_assert(SCHED_CLASS_IDLEPRIO == SENSOR_CLASS_IDLEPRIO, "one IDLEPRIO");

static void src_set_class(void *ctx, struct tracked_task *tt, enum sched_class class)
{
	int r = tracker_set_task_class(ctx, tt, (unsigned)class);

	if (r < 0 && r != -EOPNOTSUPP)
		log_debug_errno(r, "tid %d: cannot tell the sensor its class, ignoring: %m", tt->tid);
}

static bool src_tells_wakes(void *ctx)
{
	return tracker_tells_wakes(ctx);
}

static const struct loop_source_ops source_ops = {
	.refresh = src_refresh,
	.foreach_active = src_foreach_active,
	.foreach = src_foreach,
	.foreach_thread = src_foreach_thread,
	.lookup = src_lookup,
	.count = src_count,
	.count_active = src_count_active,
	.exe = src_exe,
	.set_class = src_set_class,
	.tells_wakes = src_tells_wakes,
};

/* The lever set: the enforcer. */
static int lv_boost(void *ctx, const struct enforce_target *t, int prio)
{
	return enforce_boost(ctx, t, prio);
}

static int lv_unboost(void *ctx, const struct enforce_target *t)
{
	return enforce_unboost(ctx, t);
}

static int lv_set_idle(void *ctx, const struct enforce_target *t, bool idle)
{
	return enforce_set_idle(ctx, t, idle);
}

static int lv_set_nice(void *ctx, const struct enforce_target *t, int nice)
{
	return enforce_set_nice(ctx, t, nice);
}

static int lv_set_slice(void *ctx, const struct enforce_target *t, uint64_t ns)
{
	return enforce_set_slice(ctx, t, ns);
}

static bool lv_slice_supported(void *ctx)
{
	return enforce_slice_supported(ctx);
}

static int lv_pin(void *ctx, const struct enforce_target *t, const cpu_set_t *cpus)
{
	return enforce_pin(ctx, t, cpus);
}

static int lv_unpin(void *ctx, const struct enforce_target *t)
{
	return enforce_unpin(ctx, t);
}

static int lv_stop(void *ctx, const struct enforce_target *t)
{
	return enforce_stop(ctx, t);
}

static int lv_cont(void *ctx, const struct enforce_target *t)
{
	return enforce_cont(ctx, t);
}

static int lv_rebase(void *ctx, const struct enforce_target *t)
{
	return enforce_rebase(ctx, t);
}

static int lv_release(void *ctx, const struct enforce_target *t)
{
	return enforce_release(ctx, t);
}

static void lv_forget(void *ctx, pid_t tid)
{
	enforce_forget(ctx, tid);
}

static int lv_owner_affinity(void *ctx, pid_t tid, cpu_set_t *ret)
{
	return enforce_owner_affinity(ctx, tid, ret);
}

static int lv_get_original(void *ctx, pid_t tid, struct enforce_original *ret)
{
	return enforce_get_original(ctx, tid, ret);
}

static int lv_undo_inherited(void *ctx, const struct enforce_target *child,
			     const struct enforce_original *orig, const struct loop_inherited *w)
{
	return enforce_undo_inherited(ctx, child, orig, w->affinity, w->idle_policy,
				      w->our_slice_ns, w->our_nice, w->owner_nice);
}

static void lv_restore_all(void *ctx)
{
	int r = enforcer_restore_all(ctx);

	if (r < 0)
		log_error_errno(r, "restoring tasks failed: %m");
}

static const struct loop_lever_ops lever_ops = {
	.boost = lv_boost,
	.unboost = lv_unboost,
	.set_idle = lv_set_idle,
	.set_nice = lv_set_nice,
	.set_slice = lv_set_slice,
	.slice_supported = lv_slice_supported,
	.pin = lv_pin,
	.unpin = lv_unpin,
	.stop = lv_stop,
	.cont = lv_cont,
	.rebase = lv_rebase,
	.release = lv_release,
	.forget = lv_forget,
	.owner_affinity = lv_owner_affinity,
	.get_original = lv_get_original,
	.undo_inherited = lv_undo_inherited,
	.restore_all = lv_restore_all,
};

/* The rule for tt as the loop takes it; NULL when none matches. */
static const struct loop_rule *rule_for(struct daemon *d, const struct tracked_task *tt,
					bool at_start, struct loop_rule *buf)
{
	const struct rule *r = daemon_rules_match(d, tt, at_start);

	if (!r)
		return NULL;
	*buf = (struct loop_rule){ r->class, r->nice_set, r->nice };
	return buf;
}

/* Brings the next tick forward to at_ns, if any: between ticks, up to
 * TICK_IDLE_NS, is too long for a task just queued or a load just
 * started. */
/* The enforcer's proof of a new task's identity, from the bpf sensor. */
static int pidfd_identity(void *ctx, int pidfd, uint64_t *ret_start, pid_t *ret_tgid)
{
	return tracker_pidfd_identity(ctx, pidfd, ret_start, ret_tgid);
}

static void pull_tick(struct daemon *d, uint64_t at_ns)
{
	uint64_t at = at_ns / 1000, now = now_usec(CLOCK_MONOTONIC), next;

	if (!at_ns)
		return;
	if (at < now)
		at = now;
	if (sd_event_source_get_time(d->tick, &next) < 0 || next <= at)
		return;
	(void)sd_event_source_set_time(d->tick, at);
}

void daemon_loop_task_new(struct daemon *d, struct tracked_task *tt)
{
	struct loop_rule buf;

	if (d->loop)
		pull_tick(d, loop_task_new(d->loop, tt, rule_for(d, tt, false, &buf),
					   tracker_event_ns(d->tracker), now_nsec(CLOCK_MONOTONIC)));
}

void daemon_loop_task_woke(struct daemon *d, struct tracked_task *tt)
{
	if (d->loop)
		pull_tick(d, loop_task_woke(d->loop, tt));
}

void daemon_loop_lock_wait(struct daemon *d, struct tracked_task *waiter,
			   struct tracked_task *holder)
{
	if (d->loop)
		pull_tick(d, loop_lock_wait(d->loop, waiter, holder, now_nsec(CLOCK_MONOTONIC)));
}

void daemon_loop_events_lost(struct daemon *d)
{
	if (d->loop)
		loop_locks_forget(d->loop);
}

void daemon_loop_task_exec(struct daemon *d, struct tracked_task *tt)
{
	struct loop_rule buf;
	const struct loop_rule *rule;

	if (!d->loop)
		return;
	rule = rule_for(d, tt, false, &buf);
	pull_tick(d, loop_task_exec(d->loop, tt, rule, tracker_event_ns(d->tracker),
				    now_nsec(CLOCK_MONOTONIC)));
}

void daemon_loop_task_forked(struct daemon *d, struct tracked_task *parent, pid_t tid, pid_t tgid,
			     uint64_t fork_ns)
{
	if (d->loop)
		loop_task_forked(d->loop, parent, tid, tgid, fork_ns);
}

void daemon_loop_task_exit(struct daemon *d, struct tracked_task *tt)
{
	if (d->loop)
		loop_task_exit(d->loop, tt);
}

static void match_at_start(struct tracked_task *tt, void *userdata)
{
	struct daemon *d = userdata;
	struct loop_rule buf;

	if (tt->tid == tt->tgid)
		loop_process_matched(d->loop, tt->tgid, rule_for(d, tt, true, &buf));
}

int daemon_adopt(struct daemon *d, pid_t tid, bool defer)
{
	return d->tracker ? tracker_adopt(d->tracker, tid, defer) : 1;
}

int daemon_set_class(struct daemon *d, pid_t pid, pid_t tid, enum sched_class class,
		     bool nice_set, int nice, char *err, size_t errlen)
{
	if (!d->loop) {
		snprintf(err, errlen, "the scheduler is not running");
		return -EAGAIN;
	}
	return loop_set_class(d->loop, pid, tid, class, nice_set, nice, err, errlen);
}

int daemon_owner_nice(struct daemon *d, pid_t tid, int kernel_nice)
{
	return d->loop ? loop_owner_nice(d->loop, tid, kernel_nice) : kernel_nice;
}

int daemon_task_class(struct daemon *d, pid_t tid)
{
	return d->loop ? loop_task_class(d->loop, tid) : -ESRCH;
}

int daemon_dump_queues(struct daemon *d, int cpu, cJSON *array)
{
	return d->loop ? loop_dump_queues(d->loop, cpu, now_nsec(CLOCK_MONOTONIC), array) : 0;
}

void daemon_tunables_changed(struct daemon *d)
{
	if (d->loop)
		(void)loop_set_tunables(d->loop, &d->config.tunables);
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

/* The loop is back after the deadman dropped our boosts: make sure of
 * it (a boost being made as it tripped), and say so once a second. */
static void take_over(struct daemon *d, uint64_t now)
{
	struct deadman_trip trip;

	if (!deadman_take_trip(d->deadman, &trip))
		return;
	enforcer_drop_all_boosts(d->enf);
	loop_boosts_dropped(d->loop, now);
	d->counters.deadman_trips++;
	if (now - d->last_trip_log_ns < 1000000000ULL)
		return;
	d->last_trip_log_ns = now;
	log_warning("deadman: the loop was held up %s, %llu ms past its deadline; dropped %u "
		    "boosts, %u slices and %u pins, resumed %u stopped processes (%llu trips so far)",
		    trip.phase ? trip.phase : "", (unsigned long long)trip.late_ns / 1000000,
		    trip.unboosted, trip.unsliced, trip.unpinned, trip.resumed,
		    (unsigned long long)d->counters.deadman_trips);
}

/* Of took, the part that was ours: the tick's CPU time, unless it blocked
 * (a voluntary switch: a lock, a sleep), which counts in full. The rest it
 * was runnable and not run: preempted, or its CPU stolen by the host. */
static uint64_t tick_own_ns(const struct rusage *before, uint64_t took)
{
	struct rusage after;
	uint64_t ran;

	if (getrusage(RUSAGE_THREAD, &after) < 0 || after.ru_nvcsw != before->ru_nvcsw)
		return took;
	ran = (rusage_cpu_usec(&after) - rusage_cpu_usec(before)) * 1000ULL;
	return ran < took ? ran : took;
}

static int on_tick(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct daemon *d = userdata;
	uint64_t start = now_nsec(CLOCK_MONOTONIC), now, bound = daemon_tick_bound_ns(d);
	uint64_t next_ns, took, upkept, read_end;
	struct tick_split split;
	struct rusage ru;
	bool ru_ok = getrusage(RUSAGE_THREAD, &ru) == 0;

	/* Forks and exits the sensor queued without waking us: in the table
	 * before the tick decides. */
	if (d->tracker)
		tracker_receive(d->tracker);
	now = now_nsec(CLOCK_MONOTONIC);
	if (d->tracker)
		tracker_wake_tick(d->tracker, now);
	deadman_kick(d->deadman, now + bound, "in its tick");
	take_over(d, now);
	if (d->test_stall_ns && d->test_stall_pending) {
		struct timespec ts = { (time_t)(d->test_stall_ns / 1000000000ULL),
				       (long)(d->test_stall_ns % 1000000000ULL) };

		d->test_stall_pending = false;
		log_info("test: stalling the tick for %llu ms", (unsigned long long)d->test_stall_ns / 1000000);
		while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
			;
	}
	upkept = now_nsec(CLOCK_MONOTONIC);
	next_ns = loop_tick(d->loop, now);
	took = now_nsec(CLOCK_MONOTONIC) - start;
	read_end = loop_tick_read_end_ns(d->loop);
	if (read_end < upkept)
		read_end = upkept;
	split = (struct tick_split){ now - start, upkept - now, read_end - upkept,
				     start + took > read_end ? start + took - read_end : 0 };
	/* The first tick is armed at 0: it is due when it runs. */
	daemon_lateness_note(d, usec ? usec * 1000 : start, start, took,
			     ru_ok ? tick_own_ns(&ru, took) : took, &split);
	now = now_nsec(CLOCK_MONOTONIC);
	deadman_kick(d->deadman, now + next_ns + bound, "between ticks");
	d->tick_due_ns = (now / 1000 + next_ns / 1000) * 1000;
	d->own_late_ns = 0;
	(void)sd_event_source_set_time(s, d->tick_due_ns / 1000);
	return sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
}

/* Runs as the loop goes to wait for events, after each handler: the time
 * since the loop last woke was our own work. The part of it past the
 * tick's due time is ours in the tick's lateness; the rest of that
 * lateness the loop waited to be run (for the kernel or the host). A
 * wait cut short by a signal leaves no wake time: that lateness counts
 * as ours, the side to err on. */
static int on_tick_prepare(sd_event_source *s, void *userdata)
{
	struct daemon *d = userdata;
	uint64_t now = now_nsec(CLOCK_MONOTONIC), woke_us, from;

	if (!d->tick_due_ns || now <= d->tick_due_ns ||
	    sd_event_now(d->event, CLOCK_MONOTONIC, &woke_us) < 0)
		return 0;
	from = woke_us * 1000 > d->tick_due_ns ? woke_us * 1000 : d->tick_due_ns;
	if (now > from)
		d->own_late_ns += now - from;
	return 0;
}

/* Test hook (MUQSSD_TEST_STALL_MS in the environment at start): SIGUSR2
 * holds the next tick that long, as a loop blocked in a read would be. */
static int on_sigusr2(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
	struct daemon *d = userdata;

	d->test_stall_pending = true;
	return 0;
}

static void test_stall_setup(struct daemon *d)
{
	const char *ms = getenv("MUQSSD_TEST_STALL_MS");
	sigset_t mask;

	if (!ms || atoi(ms) <= 0)
		return;
	d->test_stall_ns = (uint64_t)atoi(ms) * 1000000ULL;
	sigemptyset(&mask);
	sigaddset(&mask, SIGUSR2);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	if (sd_event_add_signal(d->event, NULL, SIGUSR2, on_sigusr2, d) < 0)
		d->test_stall_ns = 0;
	else
		log_warning("test hook on: SIGUSR2 stalls the tick for %s ms", ms);
}

int daemon_loop_start(struct daemon *d)
{
	struct loop_source src = { &source_ops, d->tracker };
	struct loop_levers lv;
	hwloc_topology_t topo;
	int r;

	/* One rules file we cannot trust stops the start, as a bad config
	 * does, before anything is changed: running without the rules
	 * would be a silent downgrade. */
	r = daemon_rules_load(d);
	if (r < 0)
		return r;
	r = enforcer_new(&d->enf, d->config.state_dir);
	if (r < 0)
		return log_error_errno(r, "cannot open the state directory %s: %m", d->config.state_dir);
	warn_unless_in_memory(d->config.state_dir);
	if (d->config.autogroup == AUTOGROUP_OFF)
		(void)enforce_autogroup_off(d->enf);
	lv = (struct loop_levers){ &lever_ops, d->enf };
	if (hwloc_topology_init(&topo) < 0)
		return log_error_errno(errno ? errno : EINVAL, "cannot read the CPU topology: %m");
	if (hwloc_topology_load(topo) < 0) {
		r = log_error_errno(errno ? errno : EINVAL, "cannot read the CPU topology: %m");
		hwloc_topology_destroy(topo);
		return r;
	}
	r = loop_new(&d->loop, topo, &d->config, &src, &lv, now_nsec(CLOCK_MONOTONIC));
	/* The core keeps what it needs of the topology; hwloc's own copy is
	 * large on a large machine and would stay locked in memory. */
	hwloc_topology_destroy(topo);
	if (r < 0)
		return log_error_errno(r, "cannot start the scheduler: %m");
	/* The scan found its tasks before there was a loop to take a rule. */
	tracker_foreach(d->tracker, match_at_start, d);
	/* Above every boost we grant, so a boosted spinner never starves us. */
	(void)enforce_protect_self(ENFORCE_DAEMON_PRIO);
	/* And above us, the thread that ends our boosts if we stall. */
	r = deadman_start(&d->deadman, ENFORCE_DAEMON_PRIO + 1);
	if (r < 0)
		return log_error_errno(r, "cannot start the deadman thread: %m");
	enforcer_set_deadman(d->enf, d->deadman);
	if (d->tracker)
		enforcer_set_identity_source(d->enf, pidfd_identity, d->tracker);
	test_stall_setup(d);
	/* Accuracy 1 us: sd-event's default of 250 ms would coalesce the tick away. */
	r = sd_event_add_time(d->event, &d->tick, CLOCK_MONOTONIC, 0, 1, on_tick, d);
	if (r < 0)
		return log_error_errno(r, "cannot arm the scheduler tick: %m");
	/* A tick that is due goes before any client's request (a flood of
	 * them would hold every boost unchecked), right after the proc
	 * connector's events, which keep the table fresh for it. */
	(void)sd_event_source_set_priority(d->tick, SD_EVENT_PRIORITY_IMPORTANT + 1);
	r = sd_event_source_set_prepare(d->tick, on_tick_prepare);
	if (r < 0)
		return log_error_errno(r, "cannot watch the loop's idle times: %m");
	log_info("scheduler: %d CPUs, rr_interval %u ms, EEVDF slice %s", loop_nr_cpus(d->loop),
		 d->config.tunables.rr_interval_ms,
		 enforce_slice_supported(d->enf) ? "supported" : "unsupported");
	return 0;
}

void daemon_loop_stop(struct daemon *d)
{
	/* Putting every task back may take a while: that is no stall. */
	deadman_kick(d->deadman, 0, NULL);
	d->tick = sd_event_source_disable_unref(d->tick);
	if (d->loop) {
		tracker_finish_pending(d->tracker);
		loop_restore_all(d->loop);
	} else if (d->enf)
		lv_restore_all(d->enf);
	d->loop = loop_free(d->loop);
	d->enf = enforcer_free(d->enf);
	deadman_stop(d->deadman);
	d->deadman = NULL;
	daemon_rules_free(d);
}
