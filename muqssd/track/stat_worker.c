/* A few threads that read stat through fds the loop opened; see
 * stat_worker.h. One mutex guards three fixed rings of slot indices (free,
 * queued, done); a slot being read belongs to its worker alone. */
#include "stat_worker.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "procfs.h"

#define MAX_THREADS 4

struct job {
	int fd, cmdline_fd;
	struct stat_result res;
};

struct ring {
	unsigned head, count;
	unsigned idx[STAT_WORKER_JOBS];
};

struct stat_worker {
	pthread_mutex_t lock;
	pthread_cond_t wake;
	bool stop;
	struct ring free, queued, done;
	struct job jobs[STAT_WORKER_JOBS];

	long test_delay_ms;	/* see stat_worker.h */
	pthread_t threads[MAX_THREADS];
	unsigned nthreads;
	int efd;
	sd_event_source *source;
	stat_worker_done_func_t done_cb;
	void *userdata;
};

static void ring_push(struct ring *r, unsigned i)
{
	r->idx[(r->head + r->count++) % STAT_WORKER_JOBS] = i;
}

static unsigned ring_pop(struct ring *r)
{
	unsigned i = r->idx[r->head];

	r->head = (r->head + 1) % STAT_WORKER_JOBS;
	r->count--;
	return i;
}

static void read_cmdline(struct job *job)
{
	char *buf = malloc(STAT_WORKER_CMDLINE_MAX);
	ssize_t n;

	if (!buf)
		return;
	n = procfs_read_fd(job->cmdline_fd, buf, STAT_WORKER_CMDLINE_MAX);
	if (n <= 0) {
		free(buf);
		return;
	}
	job->res.cmdline = buf;
	job->res.cmdline_len = (size_t)n;
}

static void *worker_main(void *arg)
{
	struct stat_worker *w = arg;
	const uint64_t one = 1;

	for (;;) {
		struct job *job;
		unsigned i;
		bool wake;

		pthread_mutex_lock(&w->lock);
		while (!w->stop && !w->queued.count)
			pthread_cond_wait(&w->wake, &w->lock);
		if (w->stop) {
			pthread_mutex_unlock(&w->lock);
			return NULL;
		}
		i = ring_pop(&w->queued);
		pthread_mutex_unlock(&w->lock);

		/* The read that may wait on a task mid-exec: no lock held. */
		job = &w->jobs[i];
		if (w->test_delay_ms > 0) {
			struct timespec ts = { w->test_delay_ms / 1000,
					       (w->test_delay_ms % 1000) * 1000000L };

			while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
				;
		}
		job->res.r = procfs_stat_read(job->fd, &job->res.st);
		close(job->fd);
		job->fd = -1;
		if (job->cmdline_fd >= 0) {
			read_cmdline(job);
			close(job->cmdline_fd);
			job->cmdline_fd = -1;
		}

		pthread_mutex_lock(&w->lock);
		/* Results not yet drained have woken the loop already. */
		wake = !w->done.count;
		ring_push(&w->done, i);
		pthread_mutex_unlock(&w->lock);
		if (wake)
			(void)!write(w->efd, &one, sizeof(one));
	}
}

unsigned stat_worker_drain(struct stat_worker *w)
{
	struct stat_result res[STAT_WORKER_JOBS];
	unsigned n = 0;

	pthread_mutex_lock(&w->lock);
	while (w->done.count) {
		unsigned i = ring_pop(&w->done);

		res[n++] = w->jobs[i].res;
		ring_push(&w->free, i);
	}
	pthread_mutex_unlock(&w->lock);
	/* Outside the lock: done may submit again. */
	for (unsigned k = 0; k < n; k++) {
		w->done_cb(&res[k], w->userdata);
		free(res[k].cmdline);
	}
	return n;
}

static int on_done(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct stat_worker *w = userdata;
	uint64_t n;

	/* Reset first: a read finished after this is drained now or wakes us again. */
	(void)!read(fd, &n, sizeof(n));
	(void)stat_worker_drain(w);
	return 0;
}

int stat_worker_submit(struct stat_worker *w, int fd, pid_t tid, uint64_t cookie)
{
	return stat_worker_submit_cmdline(w, fd, -1, tid, cookie);
}

int stat_worker_submit_cmdline(struct stat_worker *w, int fd, int cmdline_fd, pid_t tid,
			       uint64_t cookie)
{
	unsigned i;

	pthread_mutex_lock(&w->lock);
	if (!w->free.count) {
		pthread_mutex_unlock(&w->lock);
		return -EAGAIN;
	}
	i = ring_pop(&w->free);
	w->jobs[i] = (struct job){ .fd = fd, .cmdline_fd = cmdline_fd,
				   .res = { .tid = tid, .cookie = cookie } };
	ring_push(&w->queued, i);
	pthread_cond_signal(&w->wake);
	pthread_mutex_unlock(&w->lock);
	return 0;
}

static int start_threads(struct stat_worker *w, unsigned nthreads, int fifo_prio)
{
	struct sched_param sp = { .sched_priority = fifo_prio };
	pthread_attr_t attr;
	sigset_t all, old;
	int r = 0;

	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	if (fifo_prio > 0 && pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED) == 0 &&
	    pthread_attr_setschedpolicy(&attr, SCHED_FIFO) == 0)
		(void)pthread_attr_setschedparam(&attr, &sp);
	/* Signals are the loop's (signalfd): the workers take none. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	while (w->nthreads < nthreads) {
		r = pthread_create(&w->threads[w->nthreads], &attr, worker_main, w);
		if (r == EPERM) {
			/* Not allowed FIFO (not root): the creator's policy. */
			pthread_attr_setinheritsched(&attr, PTHREAD_INHERIT_SCHED);
			r = pthread_create(&w->threads[w->nthreads], &attr, worker_main, w);
		}
		if (r)
			break;
		w->nthreads++;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	return -r;
}

int stat_worker_new(struct stat_worker **ret, sd_event *event, int64_t priority,
		    unsigned nthreads, int fifo_prio, stat_worker_done_func_t done,
		    void *userdata)
{
	pthread_mutexattr_t ma;
	struct stat_worker *w;
	int r;

	if (nthreads < 1 || nthreads > MAX_THREADS)
		return -EINVAL;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	/* The loop takes the lock too: a worker holding it runs at the
	 * loop's priority, whatever preempts it otherwise. */
	pthread_mutexattr_init(&ma);
	(void)pthread_mutexattr_setprotocol(&ma, PTHREAD_PRIO_INHERIT);
	pthread_mutex_init(&w->lock, &ma);
	pthread_mutexattr_destroy(&ma);
	pthread_cond_init(&w->wake, NULL);
	for (unsigned i = 0; i < STAT_WORKER_JOBS; i++) {
		w->jobs[i].fd = w->jobs[i].cmdline_fd = -1;
		ring_push(&w->free, i);
	}
	w->done_cb = done;
	w->userdata = userdata;
	if (getenv("MUQSSD_TEST_STAT_DELAY_MS")) {
		w->test_delay_ms = atol(getenv("MUQSSD_TEST_STAT_DELAY_MS"));
		log_warning("test hook on: every stat read waits %ld ms first", w->test_delay_ms);
	}
	w->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (w->efd < 0) {
		r = -errno;
		goto fail;
	}
	r = sd_event_add_io(event, &w->source, w->efd, EPOLLIN, on_done, w);
	if (r < 0)
		goto fail;
	(void)sd_event_source_set_priority(w->source, priority);
	r = start_threads(w, nthreads, fifo_prio);
	if (r < 0)
		goto fail;
	*ret = w;
	return 0;
fail:
	stat_worker_free(w);
	return r;
}

struct stat_worker *stat_worker_free(struct stat_worker *w)
{
	if (!w)
		return NULL;
	pthread_mutex_lock(&w->lock);
	w->stop = true;
	pthread_cond_broadcast(&w->wake);
	pthread_mutex_unlock(&w->lock);
	for (unsigned i = 0; i < w->nthreads; i++)
		pthread_join(w->threads[i], NULL);
	while (w->queued.count) {
		struct job *job = &w->jobs[ring_pop(&w->queued)];

		close(job->fd);
		if (job->cmdline_fd >= 0)
			close(job->cmdline_fd);
	}
	/* Finished, never drained: their command lines. */
	while (w->done.count)
		free(w->jobs[ring_pop(&w->done)].res.cmdline);
	sd_event_source_disable_unref(w->source);
	if (w->efd >= 0)
		close(w->efd);
	pthread_cond_destroy(&w->wake);
	pthread_mutex_destroy(&w->lock);
	free(w);
	return NULL;
}
