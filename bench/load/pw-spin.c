/* A runaway audio client for bench/run's PipeWire row, preloaded into
 * pw-play. pw-play runs its process callback in its main thread; the
 * thread PipeWire makes realtime is the data loop's, which wakes in
 * epoll_wait() every cycle. Once the file named by MUQSS_SPIN_FILE exists,
 * that thread (any thread but the main one) spins on its next wake-up and
 * never returns: the 100% data thread of a broken filter, PipeWire itself
 * unchanged. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <unistd.h>

/* Volatile, so the busy loop is not folded away. */
static volatile uint64_t spin_sink;

int epoll_wait(int epfd, struct epoll_event *events, int maxevents, int timeout)
{
	static int (*real)(int, struct epoll_event *, int, int);
	const char *file = getenv("MUQSS_SPIN_FILE");
	int n;

	if (!real)
		real = (int (*)(int, struct epoll_event *, int, int))dlsym(RTLD_NEXT, "epoll_wait");
	n = real(epfd, events, maxevents, timeout);
	if (n > 0 && file && gettid() != getpid() && access(file, F_OK) == 0)
		for (;;)
			spin_sink++;
	return n;
}
