#include "deadman.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/pidfd.h>
#include <time.h>
#include <unistd.h>

#include <fcntl.h>
#include <linux/futex.h>
#include <sys/syscall.h>

#include "enforce.h"
#include "sched_attr.h"

enum slot_kind {
	SLOT_FREE = 0,
	SLOT_BOOST,
	SLOT_STOP,
	SLOT_SLICE,
	SLOT_PIN,
};

struct slot {
	_Atomic int kind;
	pid_t tid;
	int pidfd;			/* stop */
	union {
		struct sched_attr_v1 base;	/* boost: what the task goes back to */
		struct {
			uint64_t ours_ns, request_ns;
		} slice;			/* ours, and the request it had */
		struct {
			cpu_set_t ours, mask;
		} pin;				/* ours, and the mask it had */
	};
};

struct deadman {
	pthread_t thread;
	bool running;
	_Atomic uint64_t deadline_ns;	/* 0: disarmed */
	_Atomic uint32_t kicks;		/* bumped at each kick; a waiting thread sleeps on it */
	_Atomic bool waiting;		/* the thread sleeps on kicks */
	_Atomic(const char *) phase;
	_Atomic bool stop;
	_Atomic bool tripped;		/* set by the thread, taken by the loop */
	_Atomic uint64_t trips;
	struct deadman_trip last;	/* written before tripped is set */
	/* The loop's side only: */
	int free_top;
	int free_list[DEADMAN_SLOTS];
	struct slot slots[DEADMAN_SLOTS];
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Our boost only: a tid reused since by someone else's RT task (another
 * priority, or without reset-on-fork) is left alone. No /proc involved. */
static bool drop_boost(const struct slot *s)
{
	struct sched_attr_v1 a;

	if (sched_attr_get(s->tid, &a) < 0 || a.sched_policy != SCHED_FIFO ||
	    a.sched_priority < ENFORCE_BOOST_PRIO_MIN || a.sched_priority > ENFORCE_BOOST_PRIO_MAX ||
	    !(a.sched_flags & SCHED_FLAG_RESET_ON_FORK))
		return false;
	return sched_attr_set_leaving_rt(s->tid, &s->base) == 0;
}

/* A slice still ours on a task not boosted goes back to its own request:
 * the kernel's order, not a long slice that nobody demotes, while the
 * loop is away. The rest of the task's attributes stay as they are. */
static bool drop_slice(const struct slot *s)
{
	struct sched_attr_v1 a;

	if (sched_attr_get(s->tid, &a) < 0 || sched_policy_is_rt((int)a.sched_policy) ||
	    a.sched_runtime != s->slice.ours_ns)
		return false;
	a.sched_flags &= SCHED_FLAG_RESET_ON_FORK;
	a.sched_runtime = s->slice.request_ns;
	return sched_attr_set(s->tid, &a) == 0;
}

/* A pin still ours goes back to the task's own mask: pinned, it could not
 * move to a CPU the kernel would give it while nobody moves it for us. */
static bool drop_pin(const struct slot *s)
{
	cpu_set_t cur;

	if (sched_getaffinity(s->tid, sizeof(cur), &cur) < 0 || !CPU_EQUAL(&cur, &s->pin.ours))
		return false;
	return sched_setaffinity(s->tid, sizeof(s->pin.mask), &s->pin.mask) == 0;
}

static void trip(struct deadman *d, uint64_t late_ns)
{
	struct deadman_trip t = { .late_ns = late_ns, .phase = atomic_load(&d->phase) };

	for (int i = 0; i < DEADMAN_SLOTS; i++) {
		struct slot *s = &d->slots[i];
		int kind = atomic_load_explicit(&s->kind, memory_order_acquire);

		if (kind == SLOT_BOOST && drop_boost(s))
			t.unboosted++;
		else if (kind == SLOT_PIN && drop_pin(s))
			t.unpinned++;
		else if (kind == SLOT_STOP && pidfd_send_signal(s->pidfd, SIGCONT, NULL, 0) == 0)
			t.resumed++;
	}
	/* After the boosts: an unboosted task shows the slice it was boosted with. */
	for (int i = 0; i < DEADMAN_SLOTS; i++) {
		struct slot *s = &d->slots[i];

		if (atomic_load_explicit(&s->kind, memory_order_acquire) == SLOT_SLICE &&
		    drop_slice(s))
			t.unsliced++;
	}
	d->last = t;
	atomic_fetch_add(&d->trips, 1);
	atomic_store_explicit(&d->tripped, true, memory_order_release);
}

/* Until the next kick. A poll would preempt, many times a second, the
 * desktop that has only the kernel to look after it while the loop is
 * held up. The thread says it waits before it looks at kicks, and a kick
 * bumps kicks before it looks at waiting: one of the two sees the other. */
static void wait_for_kick(struct deadman *d, uint32_t seen)
{
	atomic_store(&d->waiting, true);
	if (atomic_load(&d->kicks) == seen)
		(void)syscall(SYS_futex, (uint32_t *)&d->kicks, FUTEX_WAIT_PRIVATE, seen, NULL, NULL, 0);
	atomic_store(&d->waiting, false);
}

static void kick(struct deadman *d)
{
	atomic_fetch_add(&d->kicks, 1);
	if (atomic_load(&d->waiting))
		(void)syscall(SYS_futex, (uint32_t *)&d->kicks, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static void *deadman_main(void *arg)
{
	struct deadman *d = arg;
	volatile char stack[16384];
	uint64_t tripped_for = 0;

	/* Fault the stack in now: it is locked as it is touched. */
	memset((char *)stack, 0, sizeof(stack));
	while (!atomic_load(&d->stop)) {
		uint32_t seen = atomic_load(&d->kicks);
		uint64_t deadline = atomic_load(&d->deadline_ns), now;
		struct timespec ts;

		if (!deadline || deadline == tripped_for) {
			/* Disarmed, or tripped and waiting for the loop. */
			wait_for_kick(d, seen);
			continue;
		}
		ts = (struct timespec){ (time_t)(deadline / 1000000000ULL),
					(long)(deadline % 1000000000ULL) };
		if (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0)
			continue;
		now = mono_ns();
		if (atomic_load(&d->deadline_ns) != deadline || now < deadline)
			continue;
		trip(d, now - deadline);
		tripped_for = deadline;
	}
	return NULL;
}

int deadman_start(struct deadman **ret, int fifo_prio)
{
	struct sched_param sp = { .sched_priority = fifo_prio };
	pthread_attr_t attr;
	sigset_t all, old;
	struct deadman *d;
	int r;

	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	/* Touch the table now: with mlockall(MCL_ONFAULT) that locks it. */
	memset(d, 0, sizeof(*d));
	for (int i = 0; i < DEADMAN_SLOTS; i++) {
		d->free_list[i] = DEADMAN_SLOTS - 1 - i;
		d->slots[i].pidfd = -1;
	}
	d->free_top = DEADMAN_SLOTS;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	if (pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED) == 0 &&
	    pthread_attr_setschedpolicy(&attr, SCHED_FIFO) == 0)
		(void)pthread_attr_setschedparam(&attr, &sp);
	/* Signals are the loop's (signalfd): the thread takes none. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = pthread_create(&d->thread, &attr, deadman_main, d);
	if (r == EPERM) {
		/* Not allowed FIFO (not root): still better than nothing. */
		pthread_attr_setinheritsched(&attr, PTHREAD_INHERIT_SCHED);
		r = pthread_create(&d->thread, &attr, deadman_main, d);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (r) {
		free(d);
		return -r;
	}
	d->running = true;
	*ret = d;
	return 0;
}

void deadman_stop(struct deadman *d)
{
	if (!d)
		return;
	if (d->running) {
		atomic_store(&d->stop, true);
		atomic_store(&d->deadline_ns, 1); /* due at once, if it sleeps towards one */
		kick(d);
		pthread_join(d->thread, NULL);
	}
	for (int i = 0; i < DEADMAN_SLOTS; i++)
		if (d->slots[i].pidfd >= 0)
			close(d->slots[i].pidfd);
	free(d);
}

void deadman_kick(struct deadman *d, uint64_t deadline_ns, const char *phase)
{
	if (!d)
		return;
	atomic_store(&d->phase, phase);
	atomic_store(&d->deadline_ns, deadline_ns);
	kick(d);
}

bool deadman_take_trip(struct deadman *d, struct deadman_trip *ret)
{
	if (!d || !atomic_exchange_explicit(&d->tripped, false, memory_order_acquire))
		return false;
	*ret = d->last;
	return true;
}

uint64_t deadman_trips(const struct deadman *d)
{
	return d ? atomic_load(&d->trips) : 0;
}

bool deadman_full(const struct deadman *d)
{
	return d && d->free_top == 0;
}

static int slot_take(struct deadman *d)
{
	return d->free_top ? d->free_list[--d->free_top] : -ENOSPC;
}

/* A free slot for tid, filled by the caller and then published. */
static struct slot *slot_for(struct deadman *d, pid_t tid, int *index)
{
	int i = slot_take(d);

	*index = i;
	if (i < 0)
		return NULL;
	d->slots[i].tid = tid;
	return &d->slots[i];
}

static int slot_publish(struct slot *s, int kind, int index)
{
	atomic_store_explicit(&s->kind, kind, memory_order_release);
	return index;
}

int deadman_note_boost(struct deadman *d, pid_t tid, const struct sched_attr_v1 *base)
{
	int i;
	struct slot *s = slot_for(d, tid, &i);

	if (!s)
		return i;
	s->base = *base;
	return slot_publish(s, SLOT_BOOST, i);
}

int deadman_note_slice(struct deadman *d, pid_t tid, uint64_t ours_ns, uint64_t request_ns)
{
	int i;
	struct slot *s = slot_for(d, tid, &i);

	if (!s)
		return i;
	s->slice.ours_ns = ours_ns;
	s->slice.request_ns = request_ns;
	return slot_publish(s, SLOT_SLICE, i);
}

int deadman_note_pin(struct deadman *d, pid_t tid, const cpu_set_t *ours, const cpu_set_t *mask)
{
	int i;
	struct slot *s = slot_for(d, tid, &i);

	if (!s)
		return i;
	s->pin.ours = *ours;
	s->pin.mask = *mask;
	return slot_publish(s, SLOT_PIN, i);
}

int deadman_note_stop(struct deadman *d, int pidfd)
{
	int i = slot_take(d), fd;

	if (i < 0)
		return i;
	fd = fcntl(pidfd, F_DUPFD_CLOEXEC, 0);
	if (fd < 0) {
		d->free_list[d->free_top++] = i;
		return -errno;
	}
	d->slots[i].pidfd = fd;
	atomic_store_explicit(&d->slots[i].kind, SLOT_STOP, memory_order_release);
	return i;
}

void deadman_release(struct deadman *d, int slot)
{
	struct slot *s;
	int fd;

	if (!d || slot < 0 || slot >= DEADMAN_SLOTS)
		return;
	s = &d->slots[slot];
	atomic_store_explicit(&s->kind, SLOT_FREE, memory_order_release);
	/* The thread may be signalling through it right now: a pidfd closed
	 * under it is at worst EBADF, never another process. */
	fd = s->pidfd;
	s->pidfd = -1;
	if (fd >= 0)
		close(fd);
	d->free_list[d->free_top++] = slot;
}
