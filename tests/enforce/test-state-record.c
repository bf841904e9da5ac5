/* State records and stat lines: encode, decode, refuse garbage. */
#include "check.h"
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "state_record.h"
#include "task_stat.h"

static void test_cpulist(void)
{
	char buf[64];
	cpu_set_t s, t;

	CPU_ZERO(&s);
	CHECK(cpulist_format(&s, buf, sizeof(buf)) == -EINVAL);
	CPU_SET(0, &s);
	CPU_SET(1, &s);
	CPU_SET(2, &s);
	CPU_SET(5, &s);
	CPU_SET(1023, &s);
	REQUIRE(cpulist_format(&s, buf, sizeof(buf)) > 0);
	CHECK(!strcmp(buf, "0-2,5,1023"));
	CHECK(cpulist_parse(buf, &t) == 0);
	CHECK(CPU_EQUAL(&s, &t));
	CHECK(cpulist_format(&s, buf, 4) == -ENOBUFS);
	CHECK(cpulist_parse("", &t) == -EINVAL);
	CHECK(cpulist_parse("3-1", &t) == -EINVAL);
	CHECK(cpulist_parse("1,", &t) == -EINVAL);
	CHECK(cpulist_parse("1024", &t) == -EINVAL);
	CHECK(cpulist_parse("-1", &t) == -EINVAL);
	CHECK(cpulist_parse("0 ", &t) == -EINVAL);
}

static void test_roundtrip(void)
{
	struct state_record r = {
		.tid = 4242, .tgid = 4200, .start_time = 123456789012ULL,
		.policy = 3, .priority = 0, .nice = -7, .reset_on_fork = true,
		.slice_ns = 2800000, .changed = STATE_CHANGED_POLICY | STATE_CHANGED_AFFINITY,
		.stopped = true, .boosted = true, .created_ns = 987654321098ULL,
		.boot_id = "0f4c7c3e-5d0b-4b8a-9d6e-2a1b3c4d5e6f",
	}, d;
	char buf[STATE_RECORD_MAX];

	CPU_ZERO(&r.affinity);
	CPU_SET(1, &r.affinity);
	REQUIRE(state_record_encode(&r, buf, sizeof(buf)) > 0);
	REQUIRE(state_record_decode(buf, &d) == 0);
	CHECK(d.tid == r.tid && d.tgid == r.tgid && d.start_time == r.start_time);
	CHECK(d.policy == 3 && d.nice == -7 && d.reset_on_fork && d.slice_ns == 2800000);
	CHECK(d.changed == r.changed && d.stopped && d.boosted);
	CHECK(d.created_ns == r.created_ns);
	CHECK(!strcmp(d.boot_id, r.boot_id));
	CHECK(CPU_EQUAL(&d.affinity, &r.affinity));
	CHECK(d.unpinned_ns == 0);
	CHECK(state_record_encode(&r, buf, 10) == -ENOBUFS);
	/* After an unpin: when, and the pin it ended. */
	r.unpinned_ns = 55555555555ULL;
	CPU_ZERO(&r.unpinned_from);
	CPU_SET(3, &r.unpinned_from);
	REQUIRE(state_record_encode(&r, buf, sizeof(buf)) > 0);
	REQUIRE(state_record_decode(buf, &d) == 0);
	CHECK(d.unpinned_ns == r.unpinned_ns && CPU_EQUAL(&d.unpinned_from, &r.unpinned_from));
	CHECK(CPU_COUNT(&d.pinned_cpus) == 0);
	/* Every CPU we pinned it to. */
	CPU_ZERO(&r.pinned_cpus);
	CPU_SET(1, &r.pinned_cpus);
	CPU_SET(3, &r.pinned_cpus);
	REQUIRE(state_record_encode(&r, buf, sizeof(buf)) > 0);
	CHECK(strstr(buf, "pinned_cpus=1,3\n") != NULL);
	REQUIRE(state_record_decode(buf, &d) == 0);
	CHECK(CPU_EQUAL(&d.pinned_cpus, &r.pinned_cpus));
}

static void test_malformed(void)
{
	static const char *const bad[] = {
		"",
		"garbage",
		/* missing affinity */
		"version=1\ntid=5\ntgid=5\nstart=1\npolicy=0\nnice=0\nchanged=1\n",
		"version=2\ntid=5\ntgid=5\nstart=1\npolicy=0\nnice=0\naffinity=0\nchanged=1\n",
		"version=1\ntid=0\ntgid=5\nstart=1\npolicy=0\nnice=0\naffinity=0\nchanged=1\n",
		"version=1\ntid=5\ntgid=5\nstart=x\npolicy=0\nnice=0\naffinity=0\nchanged=1\n",
		"version=1\ntid=5\ntgid=5\nstart=1\npolicy=0\nnice=42\naffinity=0\nchanged=1\n",
		"version=1\ntid=5\ntgid=5\nstart=1\npolicy=0\nnice=0\naffinity=\nchanged=1\n",
		"version=1\ntid=5\ntgid=5\nstart=1\npolicy=0\nnice=0\naffinity=0\nchanged=99\n",
		"version=1\ntid=5\ntgid=5\nstart=-1\npolicy=0\nnice=0\naffinity=0\nchanged=1\n",
		/* What muqssd never records (issue 16): PID 1, a realtime
		 * or deadline policy to put back, a priority. */
		"version=1\ntid=1\ntgid=1\nstart=1\npolicy=0\nnice=0\naffinity=0\nchanged=1\n",
		"version=1\ntid=5\ntgid=1\nstart=1\npolicy=0\nnice=0\naffinity=0\nchanged=1\n",
		"version=1\ntid=5\ntgid=5\nstart=1\npolicy=1\npriority=99\nnice=0\naffinity=0\nchanged=1\n",
		"version=1\ntid=5\ntgid=5\nstart=1\npolicy=2\nnice=0\naffinity=0\nchanged=1\n",
		"version=1\ntid=5\ntgid=5\nstart=1\npolicy=6\nnice=0\naffinity=0\nchanged=1\n",
		"version=1\ntid=5\ntgid=5\nstart=1\npolicy=0\npriority=1\nnice=0\naffinity=0\nchanged=1\n",
		"version=1\ntid=5\ntgid=5\nstart=1\npolicy=0\nnice=0\naffinity=0\nchanged=1\nboot_id=x\n",
		("version=1\ntid=5\ntgid=5\nstart=1\npolicy=0\nnice=0\naffinity=0\nchanged=1\n"
		 "boot_id=0f4c7c3e-5d0b-4b8a-9d6e-2a1b3c4d5e6f0\n"),
		/* An unpin with no pin, or a bad one. */
		"version=1\ntid=5\ntgid=5\nstart=1\npolicy=0\nnice=0\naffinity=0\nchanged=0\nunpinned_ns=9\n",
		("version=1\ntid=5\ntgid=5\nstart=1\npolicy=0\nnice=0\naffinity=0\nchanged=0\n"
		 "unpinned_ns=9\nunpinned_from=\n"),
		("version=1\ntid=5\ntgid=5\nstart=1\npolicy=0\nnice=0\naffinity=0\nchanged=0\n"
		 "unpinned_ns=x\nunpinned_from=1\n"),
	};
	const char *good = "version=1\ntid=5\ntgid=5\nstart=1\npolicy=0\nnice=0\n"
			   "affinity=0\nchanged=1\nfuture_key=7\n";
	struct state_record r;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (state_record_decode(bad[i], &r) != -EBADMSG)
			CHECK_FAIL("accepted bad record %zu", i);
	}
	CHECK(state_record_decode(good, &r) == 0);
	/* An older muqssd's record has no creation time. */
	CHECK(r.tid == 5 && !r.stopped && !r.boosted && r.created_ns == 0);
}

static void test_stat_parse(void)
{
	/* comm with spaces and a ')' of its own. */
	const char *line =
		"77 (a b) c) S 1 77 77 0 -1 2097216 0 0 0 0 0 0 0 0 20 -5 1 0 98765 0 0 "
		"18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 1 3 2 0 0 0\n";
	struct task_stat st;

	CHECK(task_stat_parse(line, &st) == 0);
	CHECK(st.flags == 2097216 && (st.flags & TASK_PF_KTHREAD));
	CHECK(st.nice == -5);
	CHECK(st.start_time == 98765);
	CHECK(st.rt_priority == 3 && st.policy == 2);
	CHECK(task_stat_parse("77 (x) S 1 2 3", &st) == -EBADMSG);
	CHECK(task_stat_parse("no parens", &st) == -EBADMSG);
	CHECK(task_stat_read(1, 1, &st) == 0 || st.start_time == 0);
}

int main(void)
{
	test_cpulist();
	test_roundtrip();
	test_malformed();
	test_stat_parse();
	return CHECK_EXIT();
}
