/* The fixed window of util/ratelimit.c, on a made-up clock: the burst, the
 * window that opens at the first event after the last one ended, and the
 * count of refused events handed over when the next one opens. */
#include <limits.h>
#include <stddef.h>

#include "check.h"
#include "ratelimit.h"

static void test_burst_and_window(void)
{
	struct ratelimit rl = RATELIMIT_INIT(20, 3);
	unsigned dropped = 99;

	CHECK(ratelimit_ended(&rl, 0));
	CHECK(ratelimit_below(&rl, 100, &dropped));
	CHECK_EQ(dropped, 0);
	CHECK(ratelimit_below(&rl, 101, NULL));
	CHECK(ratelimit_below(&rl, 119, NULL));
	CHECK(!ratelimit_below(&rl, 119, &dropped));
	CHECK_EQ(dropped, 0);
	CHECK(!ratelimit_below(&rl, 119, NULL));
	CHECK_EQ(ratelimit_dropped(&rl), 2);
	CHECK(!ratelimit_ended(&rl, 119));
	/* The window is 20 from its first event, not from the last. */
	CHECK(ratelimit_ended(&rl, 120));
	CHECK(ratelimit_below(&rl, 120, &dropped));
	CHECK_EQ(dropped, 2);
	CHECK_EQ(ratelimit_dropped(&rl), 0);
	/* A quiet spell: the next event opens a window at once, nothing dropped. */
	CHECK(ratelimit_below(&rl, 1000, &dropped));
	CHECK_EQ(dropped, 0);
}

/* The window starts at the first event, so time 0 is a time like any. */
static void test_start_at_zero(void)
{
	struct ratelimit rl = RATELIMIT_INIT(10, 1);

	CHECK(ratelimit_below(&rl, 0, NULL));
	CHECK(!ratelimit_below(&rl, 9, NULL));
	CHECK(ratelimit_below(&rl, 10, NULL));
}

static void test_saturates(void)
{
	struct ratelimit rl = RATELIMIT_INIT(10, 1);
	unsigned dropped;

	CHECK(ratelimit_below(&rl, 5, NULL));
	rl.num = UINT_MAX - 1;
	CHECK(!ratelimit_below(&rl, 6, NULL));
	CHECK(!ratelimit_below(&rl, 6, NULL));
	CHECK_EQ(rl.num, UINT_MAX);
	CHECK(ratelimit_below(&rl, 15, &dropped));
	CHECK_EQ(dropped, UINT_MAX - 1);
}

int main(void)
{
	test_burst_and_window();
	test_start_at_zero();
	test_saturates();
	return CHECK_EXIT();
}
