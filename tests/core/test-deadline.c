#include "check.h"
#include "core/deadline.h"

#define MS 1000000ull

static void test_ratios(void)
{
	static const unsigned int table[40] = {
		128, 140, 154, 169, 185, 203, 223, 245, 269, 295, 324, 356, 391, 430,
		473, 520, 572, 629, 691, 760, 836, 919, 1010, 1111, 1222, 1344, 1478,
		1625, 1787, 1965, 2161, 2377, 2614, 2875, 3162, 3478, 3825, 4207, 4627,
		5089,
	};

	for (int nice = -20; nice <= 19; nice++)
		CHECK_EQ(deadline_prio_ratio(nice), table[nice + 20]);
	CHECK_EQ(deadline_prio_ratio(-50), 128);
	CHECK_EQ(deadline_prio_ratio(50), 5089);
}

static void test_offsets(void)
{
	/* ratio * 6 * 8192: 6.29, 41.09 and 250.13 ms. */
	CHECK_EQ(deadline_offset(-20, 6), 6291456);
	CHECK_EQ(deadline_offset(0, 6), 41091072);
	CHECK_EQ(deadline_offset(19, 6), 250134528);
	CHECK_EQ(deadline_offset(0, 1), 836 * 8192);
}

static void test_charge(void)
{
	struct deadline d;

	deadline_refill(&d, 0, 6, 1000 * MS);
	CHECK_EQ(d.slice_ns, 6 * MS);
	CHECK_EQ(d.deadline, 1000 * MS + 41091072);

	CHECK(!deadline_charge(&d, 2 * MS, 0, 6, 1002 * MS));
	CHECK_EQ(d.slice_ns, 4 * MS);
	CHECK_EQ(d.deadline, 1000 * MS + 41091072);	/* charging keeps the deadline */

	/* 100 us left is still enough; 99,999 ns is not. */
	CHECK(!deadline_charge(&d, 4 * MS - 100000, 0, 6, 1006 * MS));
	CHECK(deadline_charge(&d, 1, 0, 6, 1007 * MS));
	CHECK_EQ(d.slice_ns, 6 * MS);
	CHECK_EQ(d.deadline, 1007 * MS + 41091072);

	/* Overrun: still a full refill, never a debt. */
	CHECK(deadline_charge(&d, 50 * MS, 0, 6, 2000 * MS));
	CHECK_EQ(d.slice_ns, 6 * MS);
	CHECK_EQ(d.deadline, 2000 * MS + 41091072);
}

static void test_fork(void)
{
	struct deadline parent, child;

	deadline_refill(&parent, 5, 6, 0);
	CHECK(!deadline_fork(&parent, &child, 5, 6, 3 * MS));
	CHECK_EQ(parent.slice_ns, 3 * MS);
	CHECK_EQ(child.slice_ns, 3 * MS);
	CHECK_EQ(child.deadline, parent.deadline);

	/* 150 us halves to 75 us: the child starts afresh. */
	parent.slice_ns = 150000;
	CHECK(deadline_fork(&parent, &child, 5, 6, 7 * MS));
	CHECK_EQ(parent.slice_ns, 75000);
	CHECK_EQ(child.slice_ns, 6 * MS);
	CHECK_EQ(child.deadline, 7 * MS + deadline_offset(5, 6));
}

static void test_renice(void)
{
	struct deadline d;
	uint64_t before;

	deadline_refill(&d, 0, 6, 500 * MS);
	before = d.deadline;
	deadline_renice(&d, 0, 19, 6);
	CHECK_EQ(d.deadline, before + 250134528 - 41091072);
	deadline_renice(&d, 19, -20, 6);
	CHECK_EQ(d.deadline, before + 6291456 - 41091072);
	CHECK_EQ(d.slice_ns, 6 * MS);
}

int main(void)
{
	test_ratios();
	test_offsets();
	test_charge();
	test_fork();
	test_renice();
	return CHECK_EXIT();
}
