/* A request for a task the daemon is still reading (its stat is read off
 * the loop, as a read waits while the task is in an exec) waits for those
 * reads on a timer: tried again every READ_WAIT_RETRY_USEC, for up to
 * READ_WAIT_MAX_USEC. The control socket's SET_CLASS and rtkit's
 * requests wait alike. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include <systemd/sd-event.h>

#define READ_WAIT_RETRY_USEC (2ULL * 1000)
#define READ_WAIT_MAX_USEC (1000ULL * 1000)
#define READ_WAIT_ACCURACY_USEC 500ULL

/* Adds *ret, which calls cb at the first retry, and sets *give_up_usec
 * for read_wait_again(). 0 or -errno. */
static inline int read_wait_start(sd_event *event, sd_event_source **ret,
				  sd_event_time_handler_t cb, void *userdata,
				  uint64_t *give_up_usec)
{
	uint64_t now;
	int r = sd_event_now(event, CLOCK_MONOTONIC, &now);

	if (r >= 0)
		/* Accuracy 0 would be sd-event's default, 250 ms. */
		r = sd_event_add_time(event, ret, CLOCK_MONOTONIC, now + READ_WAIT_RETRY_USEC,
				      READ_WAIT_ACCURACY_USEC, cb, userdata);
	if (r < 0)
		return r;
	*give_up_usec = now + READ_WAIT_MAX_USEC;
	return 0;
}

/* In cb, the task still not read: true when src is armed for another
 * try, false once past give_up_usec (or it could not be armed). */
static inline bool read_wait_again(sd_event_source *src, uint64_t usec, uint64_t give_up_usec)
{
	return usec < give_up_usec &&
	       sd_event_source_set_time(src, usec + READ_WAIT_RETRY_USEC) >= 0 &&
	       sd_event_source_set_enabled(src, SD_EVENT_ONESHOT) >= 0;
}
