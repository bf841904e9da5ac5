/* The /proc parsers on fixture text. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "procfs_parse.h"

/* A real line from a 6.x kernel with the comm replaced. */
#define STAT_TAIL                                                                   \
	" 4242 4242 0 -1 4194304 102 0 0 0 7 3 0 0 20 0 1 0 987654 5570560 256 "    \
	"18446744073709551615 94000000000000 94000000100000 140000000000000 0 0 0 0 " \
	"0 0 0 0 0 17 1 0 0 0 0 0 94000000200000 94000000300000 94000000400000 "      \
	"140000000500000 140000000600000 140000000600000 140000000700000 0\n"

static void test_stat(void)
{
	struct procfs_stat st;

	CHECK(procfs_parse_stat("1234 (a) b) R 1000" STAT_TAIL, &st) == 0);
	CHECK(st.pid == 1234);
	CHECK(strcmp(st.comm, "a) b") == 0);
	CHECK(st.state == 'R');
	CHECK(st.ppid == 1000);
	CHECK(st.session == 4242);
	CHECK(st.flags == 4194304);
	CHECK(st.utime == 7 && st.stime == 3);
	CHECK(st.nice == 0);
	CHECK(st.start_time == 987654);
	CHECK(st.processor == 1);
	CHECK(st.rt_priority == 0 && st.policy == 0);

	CHECK(procfs_parse_stat("77 (with space (x)) S 1" STAT_TAIL, &st) == 0);
	CHECK(strcmp(st.comm, "with space (x)") == 0);
	CHECK(st.state == 'S' && st.ppid == 1 && st.start_time == 987654);

	CHECK(procfs_parse_stat("5 () D 2" STAT_TAIL, &st) == 0);
	CHECK(st.comm[0] == '\0' && st.state == 'D' && st.ppid == 2);

	/* Kernel thread flag, negative nice, SCHED_FIFO 50 on CPU 3. */
	CHECK(procfs_parse_stat("9 (kworker/0:1) I 2 0 0 0 -1 2129984 0 0 0 0 0 0 0 0 "
				"-51 -5 1 0 123 0 0 18446744073709551615 0 0 0 0 0 0 0 "
				"2147483647 0 1 0 0 17 3 50 1 0 0 0 0 0 0 0 0 0 0 0\n", &st) == 0);
	CHECK(st.flags & PF_KTHREAD_FLAG);
	CHECK(st.nice == -5 && st.processor == 3 && st.rt_priority == 50 && st.policy == 1);

	/* A comm longer than 15 bytes cannot happen, but must not overflow. */
	CHECK(procfs_parse_stat("6 (0123456789abcdefghij) S 1" STAT_TAIL, &st) == 0);
	CHECK(strlen(st.comm) == 15);

	CHECK(procfs_parse_stat("", &st) < 0);
	CHECK(procfs_parse_stat("1234 (trunc) R 1 2 3", &st) < 0);
	CHECK(procfs_parse_stat("1234 noparen R 1" STAT_TAIL, &st) < 0);
	CHECK(procfs_parse_stat("x (a) R 1" STAT_TAIL, &st) < 0);
	CHECK(procfs_parse_stat("12 )a( R 1" STAT_TAIL, &st) < 0);
}

static void test_status(void)
{
	static const char text[] =
		"Name:\tcat\nUmask:\t0022\nState:\tR (running)\nTgid:\t4321\nNgid:\t0\n"
		"Pid:\t4322\nPPid:\t100\nTracerPid:\t0\nUid:\t1000\t65534\t1000\t1000\n"
		"Gid:\t100\t101\t100\t100\nFDSize:\t64\n"
		"voluntary_ctxt_switches:\t4096\nnonvoluntary_ctxt_switches:\t7\n";
	struct procfs_status s;

	CHECK(procfs_parse_status(text, &s) == 0);
	CHECK(s.tgid == 4321 && s.ruid == 1000 && s.euid == 65534);
	CHECK(s.rgid == 100 && s.egid == 101);
	CHECK(s.nvcsw == 4096);
	CHECK(s.ppid == 100);
	CHECK(s.kthread); /* no Kthread line and no memory */
	CHECK(procfs_parse_status("Tgid:\t1\nUid:\t0 0 0 0\nGid:\t0 0 0 0\n", &s) == 0);
	CHECK(s.nvcsw == 0 && s.ppid == 0);
	CHECK(procfs_parse_status("Tgid:\t9\nPPid:\t2\nUid:\t0 0 0 0\nGid:\t0 0 0 0\n"
				  "Kthread:\t1\n", &s) == 0);
	CHECK(s.kthread && s.ppid == 2);
	CHECK(procfs_parse_status("Tgid:\t9\nUid:\t0 0 0 0\nGid:\t0 0 0 0\nKthread:\t0\n", &s) == 0);
	CHECK(!s.kthread);
	CHECK(procfs_parse_status("Tgid:\t9\nUid:\t0 0 0 0\nGid:\t0 0 0 0\nVmSize:\t100 kB\n", &s) == 0);
	CHECK(!s.kthread);
	CHECK(procfs_parse_status("Name:\tx\nTgid:\t1\n", &s) < 0);
	CHECK(procfs_parse_status("", &s) < 0);
}

static void test_schedstat(void)
{
	struct procfs_schedstat s;

	CHECK(procfs_parse_schedstat("123456789 2345 17\n", &s) == 0);
	CHECK(s.cpu_ns == 123456789 && s.wait_ns == 2345 && s.timeslices == 17);
	CHECK(procfs_parse_schedstat("1 2\n", &s) < 0);
	CHECK(procfs_parse_schedstat("garbage", &s) < 0);
}

static void test_cgroup(void)
{
	static const char hybrid[] = "9:name=systemd:/\n8:pids:/\n2:cpu,cpuacct:/grp/sub\n"
				     "1:memory:/m\n0::/unified/x\n";
	char buf[256];

	CHECK(procfs_parse_cgroup(hybrid, "", buf, sizeof(buf)) == 0);
	CHECK(strcmp(buf, "/unified/x") == 0);
	CHECK(procfs_parse_cgroup(hybrid, "cpu", buf, sizeof(buf)) == 0);
	CHECK(strcmp(buf, "/grp/sub") == 0);
	CHECK(procfs_parse_cgroup(hybrid, "cpuacct", buf, sizeof(buf)) == 0);
	CHECK(procfs_parse_cgroup(hybrid, "name=systemd", buf, sizeof(buf)) == 0);
	CHECK(strcmp(buf, "/") == 0);
	CHECK(procfs_parse_cgroup(hybrid, "blkio", buf, sizeof(buf)) == -ENOENT);
	CHECK(procfs_parse_cgroup(hybrid, "cpu", buf, 4) == -ENAMETOOLONG);
	CHECK(procfs_parse_cgroup("1:cpu:/a\n", "", buf, sizeof(buf)) == -ENOENT);
	CHECK(procfs_parse_cgroup("nonsense\n", "", buf, sizeof(buf)) == -EINVAL);

	CHECK(cgroup_path_within("/a", "/a"));
	CHECK(cgroup_path_within("/a/b", "/a"));
	CHECK(cgroup_path_within("/a/b", "/a/"));
	CHECK(!cgroup_path_within("/ab", "/a"));
	CHECK(!cgroup_path_within("/", "/a"));
	CHECK(cgroup_path_within("/anything", "/"));
}

int main(void)
{
	test_stat();
	test_status();
	test_schedstat();
	test_cgroup();
	return CHECK_EXIT();
}
