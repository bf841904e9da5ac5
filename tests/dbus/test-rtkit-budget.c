/* rtkit's limits without a bus: each uid's budget of requests (25 in a
 * window of 20 s, as rtkit-daemon), root's none, and the requests each
 * connection may have waiting for its credentials. */
#include <errno.h>
#include <stdio.h>

#include "check.h"
#include "rtkit-internal.h"

#define SEC 1000000000ULL

static void test_budget_per_uid(void)
{
	struct rtkit_budget *b;
	uint64_t t0 = 1000 * SEC;

	REQUIRE(rtkit_budget_new(&b) == 0);
	for (unsigned i = 0; i < RTKIT_BURST_ACTIONS; i++)
		CHECK_EQ(rtkit_budget_charge(b, 65534, t0 + i), 0);
	CHECK_EQ(rtkit_budget_charge(b, 65534, t0 + SEC), -EBUSY);
	for (unsigned i = 0; i < 1000; i++)
		CHECK_EQ(rtkit_budget_charge(b, 65534, t0 + 2 * SEC), -EBUSY);
	/* Another user, and root, as if nobody had asked. */
	for (unsigned i = 0; i < RTKIT_BURST_ACTIONS; i++)
		CHECK_EQ(rtkit_budget_charge(b, 1000, t0 + 3 * SEC), 0);
	CHECK_EQ(rtkit_budget_charge(b, 1000, t0 + 3 * SEC), -EBUSY);
	for (unsigned i = 0; i < 1000; i++)
		CHECK_EQ(rtkit_budget_charge(b, 0, t0 + 3 * SEC), 0);
	/* The window ends RTKIT_BURST_SEC after its first request; refusing
	 * does not prolong it. */
	CHECK_EQ(rtkit_budget_charge(b, 65534, t0 + RTKIT_BURST_SEC * SEC - 1), -EBUSY);
	CHECK_EQ(rtkit_budget_charge(b, 65534, t0 + RTKIT_BURST_SEC * SEC), 0);
	CHECK_EQ(rtkit_budget_charge(b, 1000, t0 + RTKIT_BURST_SEC * SEC), -EBUSY);
	CHECK_EQ(rtkit_budget_charge(b, 1000, t0 + (RTKIT_BURST_SEC + 3) * SEC), 0);
	rtkit_budget_free(b);
}

/* Uids whose window ended are dropped from the table as others come, and
 * come back with a whole budget. */
static void test_budget_many_uids(void)
{
	struct rtkit_budget *b;

	REQUIRE(rtkit_budget_new(&b) == 0);
	for (uid_t u = 1; u <= 100; u++)
		CHECK_EQ(rtkit_budget_charge(b, u, u * RTKIT_BURST_SEC * SEC), 0);
	for (unsigned i = 0; i < RTKIT_BURST_ACTIONS; i++)
		CHECK_EQ(rtkit_budget_charge(b, 1, 101 * RTKIT_BURST_SEC * SEC), 0);
	CHECK_EQ(rtkit_budget_charge(b, 1, 101 * RTKIT_BURST_SEC * SEC), -EBUSY);
	rtkit_budget_free(b);
}

static void test_senders(void)
{
	struct rtkit_senders *s;
	char name[32];

	REQUIRE(rtkit_senders_new(&s) == 0);
	for (int i = 0; i < 4; i++)
		CHECK_EQ(rtkit_senders_add(s, ":1.7", 4, 100), 0);
	CHECK_EQ(rtkit_senders_add(s, ":1.7", 4, 100), -EBUSY);
	CHECK_EQ(rtkit_senders_add(s, ":1.8", 4, 100), 0);
	rtkit_senders_remove(s, ":1.7");
	CHECK_EQ(rtkit_senders_add(s, ":1.7", 4, 100), 0);
	/* A name never added, or removed more often than added, changes nothing. */
	rtkit_senders_remove(s, ":1.9");
	for (int i = 0; i < 4; i++)
		rtkit_senders_remove(s, ":1.7");
	rtkit_senders_remove(s, ":1.7");
	CHECK_EQ(rtkit_senders_add(s, ":1.8", 1, 100), -EBUSY);
	/* All senders together: the total. */
	for (int i = 0; i < 99; i++) {
		snprintf(name, sizeof(name), ":1.%d", 100 + i);
		CHECK_EQ(rtkit_senders_add(s, name, 4, 100), 0);
	}
	CHECK_EQ(rtkit_senders_add(s, ":1.999", 4, 100), -EBUSY);
	rtkit_senders_remove(s, ":1.100");
	CHECK_EQ(rtkit_senders_add(s, ":1.999", 4, 100), 0);
	rtkit_senders_free(s);
}

int main(void)
{
	test_budget_per_uid();
	test_budget_many_uids();
	test_senders();
	return CHECK_EXIT();
}
