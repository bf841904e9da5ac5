/* The control plane's share of the loop, all clients together.
 *
 * Each client's turn is bounded (CONTROL_TURN_NSEC), but ten clients that
 * loop on a 20,000-task list each take their turn on every iteration, and
 * the loop runs at SCHED_FIFO 20: it held 58% of a CPU against the tasks
 * it schedules. So requests and lists share CONTROL_SHARE_NSEC in every
 * CONTROL_WINDOW_NSEC. A client that comes when the share is spent, or
 * while others wait, is parked (its io source off) at the back of a queue;
 * each window lets the queue's head in, as many as the share has turns.
 * A turn that runs past the share is not paid back: a turn is measured on
 * the clock, and one the loop spent preempted would park every client for
 * as many windows as it lasted.
 *
 * Root, the admin group and the socket's group (the privileged, who may
 * take a reserved slot) queue ahead of everyone else: 320 users' trickle
 * of STATUS filled the share, and root's `set` waited 1.2 s behind them. */
#include "control-internal.h"

#include "log.h"
#include "time_util.h"

#define TURNS_PER_WINDOW (CONTROL_SHARE_NSEC / CONTROL_TURN_NSEC)
/* Privileged turns in a row before one of the others', so root's lists
 * slow users down but do not stop them. */
#define BUDGET_FIRST_IN_ROW 3U

static void budget_refill(struct control_budget *b, uint64_t now)
{
	if (now < b->window_end)
		return;
	b->used = 0;
	b->window_end = now + CONTROL_WINDOW_NSEC;
}

static bool budget_waiting(const struct control_budget *b)
{
	return !TAILQ_EMPTY(&b->parked_first) || !TAILQ_EMPTY(&b->parked);
}

uint64_t budget_turn_end(struct control_client *c, uint64_t now)
{
	struct control_budget *b = &c->server->budget;
	uint64_t left;

	budget_refill(b, now);
	if (b->used >= CONTROL_SHARE_NSEC)
		return 0;
	if (budget_waiting(b) && !c->granted)
		return 0; /* others wait before it */
	c->granted = false;
	left = CONTROL_SHARE_NSEC - b->used;
	return now + (left < CONTROL_TURN_NSEC ? left : CONTROL_TURN_NSEC);
}

static struct park_queue *queue_of(struct control_budget *b, const struct control_client *c)
{
	return c->privileged ? &b->parked_first : &b->parked;
}

static void queue_remove(struct control_budget *b, struct control_client *c)
{
	TAILQ_REMOVE(queue_of(b, c), c, park_link);
	c->parked = false;
}

static int arm_window(struct control_server *s);

/* The head of the privileged queue, unless the others have waited
 * BUDGET_FIRST_IN_ROW turns. */
static struct control_client *next_in(struct control_budget *b)
{
	struct control_client *first = TAILQ_FIRST(&b->parked_first);
	struct control_client *other = TAILQ_FIRST(&b->parked);

	if (first && (!other || b->first_in_row < BUDGET_FIRST_IN_ROW)) {
		b->first_in_row++;
		return first;
	}
	b->first_in_row = 0;
	return other;
}

static void let_in(struct control_budget *b)
{
	struct control_client *c = next_in(b);

	queue_remove(b, c);
	if (!c->waiting)
		client_restart_timeout(c);
	c->granted = true;
	(void)sd_event_source_set_enabled(c->io, SD_EVENT_ON);
}

void budget_charge(struct control_server *s, uint64_t start, uint64_t end)
{
	struct control_budget *b = &s->budget;

	if (end > start)
		b->used += end - start;
	/* A turn cut short (its client's output full) leaves share to the next. */
	if (budget_waiting(b) && b->used + CONTROL_TURN_NSEC / 2 < CONTROL_SHARE_NSEC)
		let_in(b);
}

static int on_window(sd_event_source *src, uint64_t usec, void *userdata)
{
	struct control_server *s = userdata;
	struct control_budget *b = &s->budget;

	budget_refill(b, now_nsec(CLOCK_MONOTONIC));
	for (unsigned i = 0; i < TURNS_PER_WINDOW && budget_waiting(b); i++)
		let_in(b);
	if (budget_waiting(b))
		(void)arm_window(s);
	return 0;
}

static int arm_window(struct control_server *s)
{
	struct control_budget *b = &s->budget;
	/* sd-event counts µs on the same clock. An accuracy of 0 would be
	 * its default, 250 ms: the share came once in 100-200 ms. */
	uint64_t at = b->window_end / 1000 + 1;
	int r;

	if (!b->resume)
		r = sd_event_add_time(s->event, &b->resume, CLOCK_MONOTONIC, at, 1, on_window, s);
	else {
		r = sd_event_source_set_time(b->resume, at);
		if (r >= 0)
			r = sd_event_source_set_enabled(b->resume, SD_EVENT_ONESHOT);
	}
	if (r < 0)
		return log_error_errno(r, "cannot arm the control window timer: %m");
	return 0;
}

int budget_park(struct control_client *c)
{
	struct control_budget *b = &c->server->budget;
	int r;

	r = arm_window(c->server);
	if (r >= 0)
		r = sd_event_source_set_enabled(c->io, SD_EVENT_OFF);
	if (r < 0)
		return r;
	c->parked = true;
	/* 256 clients in turn wait 1.3 s, more behind root's lists. */
	client_pause_timeout(c);
	/* Let in, but the share ran out first: it keeps its place. */
	if (c->granted)
		TAILQ_INSERT_HEAD(queue_of(b, c), c, park_link);
	else
		TAILQ_INSERT_TAIL(queue_of(b, c), c, park_link);
	c->granted = false;
	b->parks++;
	return 0;
}

void budget_forget(struct control_client *c)
{
	if (c->parked)
		queue_remove(&c->server->budget, c);
}

void budget_init(struct control_server *s)
{
	TAILQ_INIT(&s->budget.parked_first);
	TAILQ_INIT(&s->budget.parked);
}

void budget_free(struct control_server *s)
{
	s->budget.resume = sd_event_source_disable_unref(s->budget.resume);
}
