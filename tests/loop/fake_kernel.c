/* The fake kernel behind the loop's unit tests (see fake_kernel.h). */
#include "fake_kernel.h"
#include "loop-internal.h" /* the boost priorities */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const lever_names[FK_NR_LEVERS] = {
	[FK_BOOST] = "boost", [FK_UNBOOST] = "unboost", [FK_IDLE] = "idle",
	[FK_NICE] = "nice",   [FK_SLICE] = "slice",	[FK_PIN] = "pin",
	[FK_UNPIN] = "unpin", [FK_STOP] = "stop",	[FK_CONT] = "cont",
	[FK_RELEASE] = "release", [FK_FORGET] = "forget", [FK_UNDO] = "undo",
	[FK_REBASE] = "rebase",
};

const char *fk_lever_name(enum fk_lever lever)
{
	return lever_names[lever];
}

struct fk_task *fk_add_hog(struct fake_kernel *fk, pid_t tid)
{
	struct fk_task *t = fk_add(fk, tid, tid, 1, "hog");

	t->keep_active = true;
	fk_set_state(fk, tid, 'R', 1000);
	return t;
}

struct fk_task *fk_get(struct fake_kernel *fk, pid_t tid)
{
	for (int i = 0; i < FK_MAX_TASKS; i++)
		if (fk->tasks[i].used && fk->tasks[i].tt.tid == tid)
			return &fk->tasks[i];
	return NULL;
}

static struct fk_task *task_of(struct fake_kernel *fk, const struct tracked_task *tt)
{
	return (struct fk_task *)tt; /* tt is the first member */
}

/* Every lever starts here: counts the call and finds the task, or sets
 * *r to the injected failure (or -ESRCH) and returns NULL. */
static struct fk_task *lever_enter(struct fake_kernel *fk, enum fk_lever lever, pid_t tid, int *r)
{
	struct fk_task *t = fk_get(fk, tid);

	fk->calls[lever]++;
	*r = -ESRCH;
	if (!t)
		return NULL;
	t->calls[lever]++;
	*r = t->fail[lever];
	return *r ? NULL : t;
}

static void record(struct fk_task *t)
{
	if (t->recorded)
		return;
	t->recorded = true;
	t->orig = (struct enforce_original){
		.policy = t->tt.policy,
		.nice = t->tt.nice,
		.affinity = t->owner,
	};
}

/* What the tracker would read back: our boost, our SCHED_IDLE, or the
 * owner's policy. */
static void show_policy(struct fk_task *t)
{
	t->tt.policy = t->boost_prio ? SCHED_FIFO : t->idle ? SCHED_IDLE
			: t->recorded ? t->orig.policy : t->tt.policy;
}

/* The task source. */
static uint64_t src_refresh(void *ctx, uint64_t now, uint64_t until, unsigned idle_budget,
			    uint64_t cold_ns, uint64_t slow_ns)
{
	struct fake_kernel *fk = ctx;
	uint64_t dt;

	/* Held up: every read is taken after the hold, as the tracker
	 * stamps each read when it is taken. */
	now += fk->refresh_hold_ns;
	fk->now = now;
	fk->refresh_hold_ns = 0;
	dt = now > fk->last_refresh_ns ? now - fk->last_refresh_ns : 0;

	/* Every task is read each time but one the loop marked slow, which
	 * is read as the tracker reads it: its facts are exact, and a task
	 * skipped for cold_ns only reads older. A slow one may read older
	 * by much more, which the loop must live with. With tracker_reads,
	 * cold active ones are skipped too (idle ones are still read at
	 * every tick, not at the tracker's sweep), and one whose CPU clock
	 * stood still keeps the state it was read in unless the loop
	 * watches it: a woken task that waits for a CPU ('R', burning
	 * nothing) reads as it was. */
	(void)idle_budget;
	(void)until; /* its reads take no time */
	if (fk->step)
		fk->step(fk, now, fk->step_data);
	fk->last_refresh_ns = now;
	for (int i = 0; i < FK_MAX_TASKS; i++) {
		struct fk_task *t = &fk->tasks[i];
		uint64_t skip_ns = t->tt.slow ? slow_ns : fk->tracker_reads && t->tt.active ? cold_ns : 0;
		bool moves;

		if (!t->used || t->tt.stale)
			continue;
		if (!t->tt.hot && t->tt.refreshed_ns && now - t->tt.refreshed_ns < skip_ns) {
			t->unread_ns += dt;
			continue;
		}
		/* It burns, or it was runnable and blocked since: it ran. */
		moves = (t->want_state == 'R' && !t->stopped && t->burn_permille) ||
			(t->tt.state == 'R' && t->want_state != 'R');
		if (fk->tracker_reads && !moves && !t->tt.watch && t->state_read_ns &&
		    now - t->state_read_ns < TRACKER_STAT_MAX_AGE_NS) {
			t->tt.refreshed_ns = now;
			t->unread_ns = 0;
			t->reads++;
			if (t->tt.state == 'R')
				t->tt.active_ns = now;
			continue;
		}
		t->state_read_ns = now;
		/* Each sleep is a voluntary switch. */
		if ((t->tt.state == 'R' && t->want_state != 'R' && !t->stopped) ||
		    (t->want_state == 'R' && t->blocks))
			t->tt.nvcsw++;
		t->tt.state = t->stopped ? 'T' : t->want_state;
		if (t->tt.state == 'R' && t->burn_permille) {
			t->tt.cpu_ns += (dt + t->unread_ns) * t->burn_permille / 1000;
			if (t->pinned)
				t->tt.last_cpu = fk_pinned_cpu(t);
		}
		t->tt.refreshed_ns = now;
		t->unread_ns = 0;
		t->reads++;
		/* The tracker's active list: runnable or using CPU within
		 * TRACKER_IDLE_AFTER_NS. (The tracker notices an idle task
		 * again only at its next probe; the fake at once.) */
		if (t->tt.state == 'R' || t->tt.cpu_ns != t->refreshed_cpu_ns)
			t->tt.active_ns = now;
		t->refreshed_cpu_ns = t->tt.cpu_ns;
		t->tt.active = t->keep_active || now <= t->tt.active_ns + TRACKER_IDLE_AFTER_NS;
	}
	return now;
}

static void src_foreach(void *ctx, tracker_task_func_t fn, void *userdata)
{
	struct fake_kernel *fk = ctx;

	for (int i = 0; i < FK_MAX_TASKS; i++)
		if (fk->tasks[i].used)
			fn(&fk->tasks[i].tt, userdata);
}

static void src_foreach_active(void *ctx, tracker_task_func_t fn, void *userdata)
{
	struct fake_kernel *fk = ctx;

	for (int i = 0; i < FK_MAX_TASKS; i++)
		if (fk->tasks[i].used && fk->tasks[i].tt.active)
			fn(&fk->tasks[i].tt, userdata);
}

static size_t src_foreach_thread(void *ctx, pid_t tgid, tracker_task_func_t fn, void *userdata)
{
	struct fake_kernel *fk = ctx;
	size_t n = 0;

	for (int i = 0; i < FK_MAX_TASKS; i++)
		if (fk->tasks[i].used && fk->tasks[i].tt.tgid == tgid) {
			fn(&fk->tasks[i].tt, userdata);
			n++;
		}
	return n;
}

static struct tracked_task *src_lookup(void *ctx, pid_t tid)
{
	struct fk_task *t = fk_get(ctx, tid);

	return t ? &t->tt : NULL;
}

static size_t src_count(void *ctx)
{
	struct fake_kernel *fk = ctx;
	size_t n = 0;

	for (int i = 0; i < FK_MAX_TASKS; i++)
		n += fk->tasks[i].used;
	return n;
}

static size_t src_count_active(void *ctx)
{
	struct fake_kernel *fk = ctx;
	size_t n = 0;

	for (int i = 0; i < FK_MAX_TASKS; i++)
		n += fk->tasks[i].used && fk->tasks[i].tt.active;
	return n;
}

static const char *src_exe(void *ctx, const struct tracked_task *tt)
{
	return task_of(ctx, tt)->exe;
}

const struct loop_source_ops fk_source_ops = {
	.refresh = src_refresh,
	.foreach_active = src_foreach_active,
	.foreach = src_foreach,
	.foreach_thread = src_foreach_thread,
	.lookup = src_lookup,
	.count = src_count,
	.count_active = src_count_active,
	.exe = src_exe,
};

/* The lever set. */
static int lv_boost(void *ctx, const struct enforce_target *target, int prio)
{
	struct fk_task *t;
	int r;

	t = lever_enter(ctx, FK_BOOST, target->tid, &r);
	if (!t)
		return r;
	record(t);
	t->boost_prio = prio;
	show_policy(t);
	return 0;
}

static int lv_unboost(void *ctx, const struct enforce_target *target)
{
	struct fk_task *t;
	int r;

	t = lever_enter(ctx, FK_UNBOOST, target->tid, &r);
	if (!t)
		return r;
	t->boost_prio = 0;
	show_policy(t);
	return 0;
}

static int lv_set_idle(void *ctx, const struct enforce_target *target, bool idle)
{
	struct fk_task *t;
	int r;

	t = lever_enter(ctx, FK_IDLE, target->tid, &r);
	if (!t)
		return r;
	record(t);
	t->idle = idle;
	show_policy(t);
	return 0;
}

static int lv_set_nice(void *ctx, const struct enforce_target *target, int nice)
{
	struct fk_task *t;
	int r;

	t = lever_enter(ctx, FK_NICE, target->tid, &r);
	if (!t)
		return r;
	record(t);
	t->tt.nice = nice;
	return 0;
}

static int lv_set_slice(void *ctx, const struct enforce_target *target, uint64_t ns)
{
	struct fk_task *t;
	int r;

	t = lever_enter(ctx, FK_SLICE, target->tid, &r);
	if (!t)
		return r;
	record(t);
	t->slice_ns = ns;
	return 0;
}

static bool lv_slice_supported(void *ctx)
{
	return ((struct fake_kernel *)ctx)->slice_supported;
}

static int lv_pin(void *ctx, const struct enforce_target *target, const cpu_set_t *cpus)
{
	struct fk_task *t;
	cpu_set_t both;
	int r;

	t = lever_enter(ctx, FK_PIN, target->tid, &r);
	if (!t)
		return r;
	t->asked = *cpus;
	CPU_AND(&both, cpus, &t->owner);
	if (CPU_COUNT(&both) == 0) {
		t->pin_einval++;
		return -EINVAL;
	}
	record(t);
	t->pinned = true;
	t->pin = both;
	return 0;
}

static int lv_unpin(void *ctx, const struct enforce_target *target)
{
	struct fk_task *t;
	int r;

	t = lever_enter(ctx, FK_UNPIN, target->tid, &r);
	if (!t)
		return r;
	t->pinned = false;
	return 0;
}

/* SIGSTOP and SIGCONT act on the whole thread group. */
static int signal_group(struct fake_kernel *fk, enum fk_lever lever, const struct enforce_target *target,
			bool stop)
{
	int r;
	struct fk_task *t = lever_enter(fk, lever, target->tid, &r);

	if (!t)
		return r;
	for (int i = 0; i < FK_MAX_TASKS; i++)
		if (fk->tasks[i].used && fk->tasks[i].tt.tgid == t->tt.tgid)
			fk->tasks[i].stopped = stop;
	return 0;
}

static int lv_stop(void *ctx, const struct enforce_target *target)
{
	return signal_group(ctx, FK_STOP, target, true);
}

static int lv_cont(void *ctx, const struct enforce_target *target)
{
	return signal_group(ctx, FK_CONT, target, false);
}

static void put_back(struct fk_task *t)
{
	if (t->recorded) {
		t->tt.nice = t->orig.nice;
		t->tt.policy = t->orig.policy;
	}
	t->boost_prio = 0;
	t->idle = false;
	t->pinned = false;
	t->slice_ns = 0;
	t->recorded = false;
}

/* As the enforcer: what the task shows now is its new original. */
static int lv_rebase(void *ctx, const struct enforce_target *target)
{
	struct fk_task *t;
	int r;

	t = lever_enter(ctx, FK_REBASE, target->tid, &r);
	if (!t)
		return r;
	if (t->recorded) {
		t->orig.nice = t->tt.nice;
		if (!t->boost_prio)
			t->orig.policy = t->tt.policy;
	}
	return 0;
}

static int lv_release(void *ctx, const struct enforce_target *target)
{
	struct fk_task *t;
	int r;

	t = lever_enter(ctx, FK_RELEASE, target->tid, &r);
	if (!t)
		return r;
	put_back(t);
	return 0;
}

static void lv_forget(void *ctx, pid_t tid)
{
	int r;
	struct fk_task *t = lever_enter(ctx, FK_FORGET, tid, &r);

	if (t)
		t->recorded = false;
}

static int lv_owner_affinity(void *ctx, pid_t tid, cpu_set_t *ret)
{
	struct fk_task *t = fk_get(ctx, tid);

	if (!t)
		return -ESRCH;
	*ret = t->owner;
	return 0;
}

static int lv_get_original(void *ctx, pid_t tid, struct enforce_original *ret)
{
	struct fk_task *t = fk_get(ctx, tid);

	if (!t || !t->recorded)
		return -ENOENT;
	*ret = t->orig;
	return 0;
}

static int lv_undo_inherited(void *ctx, const struct enforce_target *child,
			     const struct enforce_original *parent_orig, const struct loop_inherited *what)
{
	struct fk_task *t;
	int r;

	t = lever_enter(ctx, FK_UNDO, child->tid, &r);
	if (!t)
		return r;
	t->undone = true;
	t->undo = *what;
	/* The mask is the kernel's; policy and nice are left as the tracker
	 * read them, before this call: the loop corrects its copy. */
	if (what->affinity)
		t->owner = parent_orig->affinity;
	return 0;
}

static void lv_restore_all(void *ctx)
{
	struct fake_kernel *fk = ctx;

	for (int i = 0; i < FK_MAX_TASKS; i++)
		if (fk->tasks[i].used) {
			put_back(&fk->tasks[i]);
			fk->tasks[i].stopped = false;
		}
}

const struct loop_lever_ops fk_lever_ops = {
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

/* Set-up and script. */
void fk_init(struct fake_kernel *fk, const char *topology)
{
	memset(fk, 0, sizeof(*fk));
	if (hwloc_topology_init(&fk->topo) < 0 || hwloc_topology_set_synthetic(fk->topo, topology) < 0 ||
	    hwloc_topology_load(fk->topo) < 0) {
		fprintf(stderr, "cannot build synthetic topology \"%s\"\n", topology);
		exit(1);
	}
	fk->nr_os_cpus = hwloc_get_nbobjs_by_type(fk->topo, HWLOC_OBJ_PU);
	fk->slice_supported = true;
	config_init_defaults(&fk->config);
}

void fk_start(struct fake_kernel *fk, uint64_t now)
{
	struct loop_source src = { &fk_source_ops, fk };
	struct loop_levers lv = { &fk_lever_ops, fk };
	int r;

	fk->now = now;
	fk->last_refresh_ns = now;
	r = loop_new(&fk->loop, fk->topo, &fk->config, &src, &lv, now);
	if (r < 0) {
		fprintf(stderr, "loop_new: %s\n", strerror(-r));
		exit(1);
	}
	hwloc_topology_destroy(fk->topo);
	fk->topo = NULL;
}

void fk_done(struct fake_kernel *fk)
{
	if (fk->boosted_idle) {
		fprintf(stderr, "fake kernel: %u ticks left a boosted task off the active list\n",
			fk->boosted_idle);
		exit(1);
	}
	if (fk->loop) {
		loop_restore_all(fk->loop);
		fk->loop = loop_free(fk->loop);
	}
	if (fk->topo)
		hwloc_topology_destroy(fk->topo);
	config_free(&fk->config);
}

struct fk_task *fk_add(struct fake_kernel *fk, pid_t tid, pid_t tgid, pid_t ppid, const char *comm)
{
	for (int i = 0; i < FK_MAX_TASKS; i++) {
		struct fk_task *t = &fk->tasks[i];

		if (t->used)
			continue;
		memset(t, 0, sizeof(*t));
		t->used = true;
		t->tt.tid = tid;
		t->tt.tgid = tgid;
		t->tt.ppid = ppid;
		snprintf(t->tt.comm, sizeof(t->tt.comm), "%s", comm);
		t->tt.start_time = 1000 + (uint64_t)tid;
		t->tt.state = 'S';
		t->want_state = 'S';
		t->tt.policy = SCHED_OTHER;
		t->tt.active = true;
		t->tt.active_ns = fk->now;
		t->tt.refreshed_ns = fk->now;
		t->exe = "/usr/bin/fake";
		CPU_ZERO(&t->owner);
		for (int cpu = 0; cpu < fk->nr_os_cpus; cpu++)
			CPU_SET(cpu, &t->owner);
		return t;
	}
	fprintf(stderr, "fake kernel: table full\n");
	exit(1);
}

void fk_remove(struct fake_kernel *fk, pid_t tid)
{
	struct fk_task *t = fk_get(fk, tid);

	if (t)
		t->used = false;
}

void fk_set_state(struct fake_kernel *fk, pid_t tid, char state, unsigned burn_permille)
{
	struct fk_task *t = fk_get(fk, tid);

	t->want_state = state;
	t->burn_permille = burn_permille;
}

uint64_t fk_tick(struct fake_kernel *fk, uint64_t dt)
{
	uint64_t next;

	fk->now += dt;
	next = loop_tick(fk->loop, fk->now);
	/* No tick visits a task off the active list: a boost left there
	 * would stay until a sweep finds it running. */
	for (int i = 0; i < FK_MAX_TASKS; i++)
		if (fk->tasks[i].used && fk->tasks[i].boost_prio && !fk->tasks[i].tt.active) {
			if (!fk->boosted_idle++)
				fprintf(stderr, "fake kernel: %d boosted at %d off the active list\n",
					(int)fk->tasks[i].tt.tid, fk->tasks[i].boost_prio);
		}
	return next;
}

uint64_t fk_tick_until_read(struct fake_kernel *fk, pid_t tid, uint64_t dt)
{
	struct fk_task *t = fk_get(fk, tid);
	uint64_t t0 = fk->now;

	do
		fk_tick(fk, dt);
	while (t->tt.refreshed_ns <= t0 && fk->now - t0 < 10 * TICK_HOG_READ_NS);
	return fk->now - t0;
}

unsigned fk_run(struct fake_kernel *fk, uint64_t span)
{
	uint64_t end = fk->now + span, next = 0;
	unsigned n = 0;

	while (fk->now < end) {
		next = fk_tick(fk, next ? next : 1000000);
		n++;
	}
	return n;
}

int fk_boost_level(int prio)
{
	if (prio >= BOOST_WAKE && prio <= BOOST_WAKE_TOP)
		return BOOST_WAKE;
	return prio >= BOOST_NEXT && prio <= BOOST_NEXT_TOP ? BOOST_NEXT : prio;
}

int fk_pinned_cpu(const struct fk_task *t)
{
	if (!t->pinned)
		return -1;
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
		if (CPU_ISSET(cpu, &t->pin))
			return cpu;
	return -1;
}

void fk_reset_calls(struct fake_kernel *fk)
{
	memset(fk->calls, 0, sizeof(fk->calls));
	for (int i = 0; i < FK_MAX_TASKS; i++)
		memset(fk->tasks[i].calls, 0, sizeof(fk->tasks[i].calls));
}

unsigned fk_calls_total(const struct fake_kernel *fk)
{
	unsigned n = 0;

	for (int i = 0; i < FK_NR_LEVERS; i++)
		n += fk->calls[i];
	return n;
}

struct fk_view fk_view(struct fake_kernel *fk, pid_t tid)
{
	struct fk_view v = { .cpu = -1 };
	cJSON *cpus = cJSON_CreateArray(), *c, *o;

	if (!cpus || loop_dump_queues(fk->loop, -1, fk->now, cpus) < 0) {
		fprintf(stderr, "loop_dump_queues failed\n");
		exit(1);
	}
	cJSON_ArrayForEach(c, cpus) {
		cJSON_ArrayForEach(o, cJSON_GetObjectItem(c, "queue")) {
			if (cJSON_GetNumberValue(cJSON_GetObjectItem(o, "tid")) != (double)tid)
				continue;
			v.found = true;
			v.cpu = (int)cJSON_GetNumberValue(cJSON_GetObjectItem(c, "cpu"));
			v.hog = cJSON_IsTrue(cJSON_GetObjectItem(o, "hog"));
			v.running = cJSON_IsTrue(cJSON_GetObjectItem(o, "running"));
			v.boosted = cJSON_IsTrue(cJSON_GetObjectItem(o, "boosted"));
			v.queued = !v.running && !v.hog;
		}
	}
	cJSON_Delete(cpus);
	return v;
}
