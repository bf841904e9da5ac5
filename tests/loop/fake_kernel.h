/* A fake kernel for the live loop's unit tests: a table of tasks the test
 * scripts tick by tick (states, CPU clocks), served as the loop's task
 * source, and a lever set that records what the loop asked for, counts
 * every call and fails on request. No root, no processes, no clock. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sched.h>
#include <sys/types.h>
#include <hwloc.h>

#include "config.h"
#include "loop.h"

#define FK_MAX_TASKS 512

enum fk_lever {
	FK_BOOST,
	FK_UNBOOST,
	FK_IDLE,
	FK_NICE,
	FK_SLICE,
	FK_PIN,
	FK_UNPIN,
	FK_STOP,
	FK_CONT,
	FK_RELEASE,
	FK_FORGET,
	FK_UNDO,
	FK_REBASE,
	FK_NR_LEVERS,
};

struct fk_task {
	struct tracked_task tt;	/* what the source serves the loop */
	bool used;
	/* The script: the state it is in when not stopped, and the share of
	 * each refresh interval it spends on a CPU while in R (1000 = all). */
	char want_state;
	unsigned burn_permille;
	const char *exe;
	bool keep_active;	/* never moved to the idle list */
	/* In R, it blocks a moment between any two refreshes (a worker
	 * between requests): its voluntary switches grow, its state read
	 * is R. */
	bool blocks;
	uint64_t refreshed_cpu_ns;
	uint64_t unread_ns;	/* skipped while slow: its burn is owed */
	uint64_t state_read_ns;	/* with tracker_reads: its last state read */
	unsigned reads;		/* refreshes that read it */
	cpu_set_t owner;	/* the owner's affinity (owner_affinity, pin) */
	/* What the levers made of it. */
	int boost_prio;		/* 0: not boosted */
	bool pinned;
	cpu_set_t pin;		/* when pinned: the mask it was given */
	cpu_set_t asked;	/* the mask the last pin asked for */
	unsigned pin_einval;	/* pins that met none of the owner's mask */
	bool idle;		/* SCHED_IDLE by the loop */
	uint64_t slice_ns;	/* 0: none asked */
	bool stopped;
	bool recorded;		/* a lever changed it: get_original answers */
	struct enforce_original orig;
	int fail[FK_NR_LEVERS];	/* -errno that lever returns for this task, or 0 */
	unsigned calls[FK_NR_LEVERS];
	/* The last undo_inherited asked for this task (as the child). */
	bool undone;
	struct loop_inherited undo;
};

struct fake_kernel;
typedef void (*fk_step_func_t)(struct fake_kernel *fk, uint64_t now, void *userdata);

struct fake_kernel {
	struct fk_task tasks[FK_MAX_TASKS];
	int nr_os_cpus;
	uint64_t last_refresh_ns;
	unsigned calls[FK_NR_LEVERS];
	bool slice_supported;
	/* Reads as the tracker makes them (tracker_refresh_active()): cold
	 * tasks skipped, and the state of one whose CPU clock stood still
	 * not read unless it is watched (src_refresh()). Off: every task is
	 * read in full at every tick. */
	bool tracker_reads;
	/* Ticks after which a boosted task was off the active list (fk_done
	 * fails on any). */
	unsigned boosted_idle;
	/* The next refresh is held up this long (a slow read, a host
	 * pause) before its reads: fk.now moves on with it. */
	uint64_t refresh_hold_ns;
	/* Called at the start of every refresh: the test's script. */
	fk_step_func_t step;
	void *step_data;

	hwloc_topology_t topo;
	struct config config;
	struct loop *loop;
	uint64_t now;
};

/* A fake kernel on a synthetic topology ("pu:2"); config has its
 * defaults, for the test to change before fk_start(). */
void fk_init(struct fake_kernel *fk, const char *topology);
/* loop_new() over the tasks added so far, at now. */
void fk_start(struct fake_kernel *fk, uint64_t now);
/* loop_restore_all(), loop_free() and everything else. */
void fk_done(struct fake_kernel *fk);

/* A task: tgid == tid for a main thread. State S, nice 0, SCHED_OTHER,
 * last CPU 0, active (until it has been neither runnable nor on a CPU
 * for TRACKER_IDLE_AFTER_NS, as in the tracker), owner mask every CPU. */
struct fk_task *fk_add(struct fake_kernel *fk, pid_t tid, pid_t tgid, pid_t ppid, const char *comm);
struct fk_task *fk_get(struct fake_kernel *fk, pid_t tid);
/* A task that burns a whole CPU for good: once the loop has seen it use
 * a slice it is a hog, and the loop acts on everything it may contend
 * with. Without one, normal work is left to the kernel. */
struct fk_task *fk_add_hog(struct fake_kernel *fk, pid_t tid);
/* Takes it out of the table (call loop_task_exit() first). */
void fk_remove(struct fake_kernel *fk, pid_t tid);

/* Runs every CPU bound work: 'R' burning a whole CPU, or 'S'. */
void fk_set_state(struct fake_kernel *fk, pid_t tid, char state, unsigned burn_permille);

/* One tick of the loop at fk->now + dt; returns the interval the loop
 * asked for. */
uint64_t fk_tick(struct fake_kernel *fk, uint64_t dt);
/* Ticks every dt until a tick reads tid (a settled hog is read only
 * every TICK_HOG_READ_NS). Returns how long that took. */
uint64_t fk_tick_until_read(struct fake_kernel *fk, pid_t tid, uint64_t dt);
/* Ticks at the loop's own pace for at least span ns. Returns the ticks. */
unsigned fk_run(struct fake_kernel *fk, uint64_t span);

/* A boost priority with every rank (by key among the sleepers armed on
 * a CPU) read as the bottom of its range: BOOST_WAKE or BOOST_NEXT. */
int fk_boost_level(int prio);

/* The logical CPU the task is pinned to (the lowest in its pin), or -1. */
int fk_pinned_cpu(const struct fk_task *t);
void fk_reset_calls(struct fake_kernel *fk);
unsigned fk_calls_total(const struct fake_kernel *fk);
const char *fk_lever_name(enum fk_lever lever);

extern const struct loop_source_ops fk_source_ops;
extern const struct loop_lever_ops fk_lever_ops;

/* Where the loop's own dump (loop_dump_queues) shows a task. */
struct fk_view {
	bool found;	/* running, queued, or a hog */
	bool running;	/* the core's pick on cpu */
	bool queued;
	bool hog;
	bool boosted;	/* what the loop believes */
	int cpu;	/* OS CPU of the queue it is listed under */
};
struct fk_view fk_view(struct fake_kernel *fk, pid_t tid);
