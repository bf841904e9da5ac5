/* Rules: each match kind, the ananicy format, precedence, bad lines,
 * explanations, and the shipped rule set. */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "check.h"
#include "fixtures.h"
#include "log.h"
#include "rules.h"
#include "rules_private.h"

static struct rules *load(const char *dir, const char **log)
{
	struct rules *r = NULL;

	capture_begin();
	CHECK(rules_load(&r, dir) == 0);
	*log = capture_end();
	REQUIRE(r);
	return r;
}

static struct rule_subject subject(const char *comm, const char *exe, const char *cmdline,
				   uid_t uid, const char *cgroup)
{
	return (struct rule_subject){
		.comm = comm, .exe = exe, .cmdline = cmdline, .uid = uid, .cgroup = cgroup,
	};
}

static enum sched_class class_of(const struct rules *r, struct rule_subject s, int *nice)
{
	const struct rule *m = rules_match(r, &s);

	REQUIRE(m);
	if (nice)
		*nice = m->nice_set ? m->nice : 99;
	return m->class;
}

static bool no_match(const struct rules *r, struct rule_subject s)
{
	return rules_match(r, &s) == NULL;
}

static void test_match_kinds(void)
{
	char *dir = tmpdir_new();
	struct rules *r;
	const char *log;
	int nice;

	free(write_file(dir, "10-kinds.rules",
			"# one rule per match kind\n"
			"comm=pipewire class=iso\n"
			"exe=/opt/game/*/bin/game* class=iso nice=-5\n"
			"cmdline=\"--type=(renderer|gpu-process)( |$)\" class=batch nice=5\n"
			"user=root class=normal nice=-1\n"
			"user=4242 class=idleprio\n"
			"cgroup=/system.slice/backup.service class=idleprio nice=19\n"
			"comm=make user=1000 class=batch  # both must match\n"));
	r = load(dir, &log);
	CHECK(rules_count(r) == 7 && rules_bad_lines(r) == 0);

	CHECK(class_of(r, subject("pipewire", "/usr/bin/pipewire", NULL, 1000, NULL), &nice) ==
	      SCHED_CLASS_ISO && nice == 99);
	CHECK(no_match(r, subject("pipewire-pulse", NULL, NULL, 1000, NULL)));

	CHECK(class_of(r, subject("x", "/opt/game/v2/bin/game.x86_64", NULL, 1000, NULL), &nice) ==
	      SCHED_CLASS_ISO && nice == -5);
	CHECK(no_match(r, subject("x", "/opt/other/bin/game", NULL, 1000, NULL)));
	CHECK(no_match(r, subject("x", NULL, NULL, 1000, NULL)));

	CHECK(class_of(r, subject("chrome", "/opt/chrome", "/opt/chrome --type=renderer --lang=en",
				  1000, NULL), &nice) == SCHED_CLASS_BATCH && nice == 5);
	CHECK(class_of(r, subject("chrome", NULL, "chrome --type=gpu-process", 1000, NULL), NULL) ==
	      SCHED_CLASS_BATCH);
	CHECK(no_match(r, subject("chrome", NULL, "chrome --type=rendererx", 1000, NULL)));
	CHECK(no_match(r, subject("chrome", NULL, "chrome", 1000, NULL)));

	CHECK(class_of(r, subject("bash", NULL, NULL, 0, NULL), &nice) == SCHED_CLASS_NORMAL &&
	      nice == -1);
	CHECK(class_of(r, subject("bash", NULL, NULL, 4242, NULL), NULL) == SCHED_CLASS_IDLEPRIO);
	CHECK(no_match(r, subject("bash", NULL, NULL, 4243, NULL)));

	CHECK(class_of(r, subject("tar", NULL, NULL, 1000, "/system.slice/backup.service"), &nice) ==
	      SCHED_CLASS_IDLEPRIO && nice == 19);
	CHECK(class_of(r, subject("tar", NULL, NULL, 1000, "/system.slice/backup.service/sub"),
		       NULL) == SCHED_CLASS_IDLEPRIO);
	/* A prefix ends at a path component. */
	CHECK(no_match(r, subject("tar", NULL, NULL, 1000, "/system.slice/backup.service2")));
	CHECK(no_match(r, subject("tar", NULL, NULL, 1000, NULL)));

	CHECK(class_of(r, subject("make", NULL, NULL, 1000, NULL), NULL) == SCHED_CLASS_BATCH);
	CHECK(no_match(r, subject("make", NULL, NULL, 1001, NULL)));

	/* The cmdline and cgroup rules have no other kind: any subject may
	 * need both read. */
	CHECK(rules_lazy_fields(r, &(struct rule_subject){ .comm = "x", .uid = 1 }) == RULES_LAZY);
	rules_free(r);
	tmpdir_remove(dir);
}

static void test_precedence(void)
{
	char *dir = tmpdir_new();
	struct rules *r;
	const char *log;
	int nice;

	/* In file order: 10 before 20 before sub/30. */
	free(write_file(dir, "10-a.rules",
			"cmdline=--benchmark class=batch\n"
			"exe=/usr/bin/* class=normal nice=1\n"
			"comm=app class=iso\n"
			"comm=dup class=iso\n"
			"user=1000 class=idleprio\n"
			"cgroup=/user.slice class=batch\n"));
	free(write_file(dir, "20-b.rules",
			"comm=dup class=idleprio\n"
			"comm=app user=1000 class=batch nice=3\n"));
	r = load(dir, &log);
	CHECK(rules_bad_lines(r) == 0);
	/* exe (8) beats comm (4), though the comm rule comes later. */
	CHECK(class_of(r, subject("app", "/usr/bin/app", NULL, 1001, NULL), &nice) ==
	      SCHED_CLASS_NORMAL && nice == 1);
	/* cmdline (16) beats exe (8). */
	CHECK(class_of(r, subject("app", "/usr/bin/app", "app --benchmark", 1001, NULL), NULL) ==
	      SCHED_CLASS_BATCH);
	/* comm+user (5) beats comm (4). */
	CHECK(class_of(r, subject("app", NULL, NULL, 1000, NULL), &nice) == SCHED_CLASS_BATCH &&
	      nice == 3);
	/* comm (4) beats cgroup (2) beats user (1). */
	CHECK(class_of(r, subject("app", NULL, NULL, 1001, "/user.slice/x"), NULL) == SCHED_CLASS_ISO);
	CHECK(class_of(r, subject("zz", NULL, NULL, 1000, "/user.slice/x"), NULL) == SCHED_CLASS_BATCH);
	CHECK(class_of(r, subject("zz", NULL, NULL, 1000, NULL), NULL) == SCHED_CLASS_IDLEPRIO);
	/* Equal kinds: the later file wins. */
	CHECK(class_of(r, subject("dup", NULL, NULL, 1001, NULL), NULL) == SCHED_CLASS_IDLEPRIO);
	rules_free(r);
	tmpdir_remove(dir);
}

static void test_ananicy(void)
{
	char *dir = tmpdir_new(), *sub, *expect;
	struct rules *r;
	const char *log;
	int nice;

	/* Laid out as /etc/ananicy.d is, types after the rules in name order
	 * to show that types load first. */
	free(write_file(dir, "zz-types.types",
			"// not JSON\n"
			"{\"type\": \"LowLatency_RT\", \"nice\": -11, \"latency_nice\": -11, \"sched\": \"rr\", \"rtprio\": 30}\n"
			"{\"type\": \"BG_CPUIO\", \"nice\": 16, \"ioclass\": \"idle\", \"sched\": \"idle\", \"latency_nice\": 11}\n"
			"{\"type\": \"Doc-View\", \"nice\": -3}\n"
			"{\"type\": \"Heavy_CPU\", \"nice\": 9, \"ioclass\": \"best-effort\", \"ionice\": 7, \"cgroup\": \"cpu90\"}\n"
			"{\"type\": \"Compiler\", \"nice\": 19, \"sched\": \"batch\", \"ioclass\": \"idle\"}\n"
			"{\"type\": \"BG_IO\", \"ioclass\": \"idle\"}\n"));
	if (asprintf(&sub, "%s/00-default", dir) < 0)
		abort();
	REQUIRE(mkdir(sub, 0755) == 0);
	free(write_file(sub, "audio.rules",
			"# PipeWire\n"
			"{ \"name\": \"pipewire\", \"type\": \"LowLatency_RT\" }\n"
			"{\"name\": \"tracker-miner-fs-3\", \"type\": \"BG_CPUIO\"}\n"
			"{\"name\": \"evince\", \"type\": \"Doc-View\"}\n"
			"{\"name\": \"makepkg\", \"type\": \"Heavy_CPU\", \"nice\": 10}\n"
			"{\"name\": \"clang\", \"type\": \"Compiler\", \"sched\": \"other\"}\n"
			"{\"name\": \"rsync\", \"type\": \"BG_IO\"}\n"
			"{\"name\": \"irqbalance\", \"ioclass\": \"idle\", \"oom_score_adj\": -100}\n"
			"{\"name\": \"foo\", \"type\": \"Nope\"}\n"
			"{\"name\": \"bar\", \"sched\": \"deadline\"}\n"
			"{\"name\": \"baz\", \"nice\": 30}\n"
			"{\"name\": \"qux\", \"nice\": 1.5}\n"
			"{\"type\": \"Doc-View\"}\n"
			"{\"name\": \"broken\"\n"
			"[\"name\", \"x\"]\n"
			"{\"name\": \"steam\", \"sched\": \"fifo\", \"nice\": -1}\n"));
	r = load(dir, &log);
	/* Bad: "// not JSON", Nope, deadline, 30, 1.5, no name, broken, array. */
	CHECK(rules_bad_lines(r) == 8);
	CHECK(rules_count(r) == 6);
	if (asprintf(&expect, "%s/zz-types.types:1: a .types file holds only JSON objects", dir) < 0)
		abort();
	CHECK(captured(log, expect));
	free(expect);
	if (asprintf(&expect, "%s/00-default/audio.rules:9: unknown type \"Nope\", ignoring the line", dir) < 0)
		abort();
	CHECK(captured(log, expect));
	free(expect);
	CHECK(captured(log, "audio.rules:10: sched: not one of rr|fifo|iso|idle|batch|other|normal"));
	CHECK(captured(log, "audio.rules:11: nice: not an integer in range -20..19"));
	CHECK(captured(log, "audio.rules:12: nice: not an integer"));
	CHECK(captured(log, "audio.rules:13: a rule needs \"name\""));
	CHECK(captured(log, "audio.rules:14: not valid JSON"));
	CHECK(captured(log, "audio.rules:15: expected key=value"));

	CHECK(class_of(r, subject("pipewire", NULL, NULL, 1000, NULL), &nice) == SCHED_CLASS_ISO &&
	      nice == -11);
	/* ananicy names are not cut; the kernel's comm is. */
	CHECK(class_of(r, subject("tracker-miner-f", NULL, NULL, 1000, NULL), &nice) ==
	      SCHED_CLASS_IDLEPRIO && nice == 16);
	CHECK(class_of(r, subject("pool-spawner", "/usr/libexec/tracker-miner-fs-3", NULL, 1000, NULL),
		       NULL) == SCHED_CLASS_IDLEPRIO);
	CHECK(no_match(r, subject("tracker-miner", NULL, NULL, 1000, NULL)));
	CHECK(class_of(r, subject("evince", NULL, NULL, 1000, NULL), &nice) == SCHED_CLASS_NORMAL &&
	      nice == -3);
	/* The rule's own fields win over its type's. */
	CHECK(class_of(r, subject("makepkg", NULL, NULL, 1000, NULL), &nice) == SCHED_CLASS_NORMAL &&
	      nice == 10);
	CHECK(class_of(r, subject("clang", NULL, NULL, 1000, NULL), &nice) == SCHED_CLASS_NORMAL &&
	      nice == 19);
	CHECK(class_of(r, subject("steam", NULL, NULL, 1000, NULL), &nice) == SCHED_CLASS_ISO &&
	      nice == -1);
	/* Only I/O settings: nothing for muqssd, not an error either. */
	CHECK(no_match(r, subject("rsync", NULL, NULL, 1000, NULL)));
	CHECK(no_match(r, subject("irqbalance", NULL, NULL, 1000, NULL)));
	rules_free(r);
	free(sub);
	tmpdir_remove(dir);
}

static void test_bad_native_lines(void)
{
	static const char *const expected[] = {
		"bad.rules:2: expected key=value",
		"bad.rules:3: class: \"realtime\" is not one of iso|normal|idleprio|batch",
		"bad.rules:4: nice: \"-21\" is out of range -20..19",
		"bad.rules:5: unknown key \"name\"",
		"bad.rules:6: no class=",
		"bad.rules:7: no comm, exe, cmdline, user, cgroup or ancestor key to match",
		"bad.rules:8: cmdline: \"(unclosed\": ",
		"bad.rules:9: user: no user \"no-such-user-muqss\"",
		"bad.rules:10: unterminated quote",
		"bad.rules:11: comm given twice",
		"bad.rules:12: exe: \"bin/foo\" is not an absolute path glob",
		"bad.rules:13: cgroup: \"user.slice\" does not start with /",
		"bad.rules:14: comm: empty value",
	};
	char *dir = tmpdir_new();
	struct rules *r;
	const char *log;

	free(write_file(dir, "bad.rules",
			"comm=good1 class=iso\n"
			"comm pipewire class=iso\n"
			"comm=a class=realtime\n"
			"comm=a class=normal nice=-21\n"
			"name=a class=iso\n"
			"comm=a\n"
			"class=iso nice=1\n"
			"cmdline=(unclosed class=iso\n"
			"user=no-such-user-muqss class=iso\n"
			"cmdline=\"abc class=iso\n"
			"comm=a comm=b class=iso\n"
			"exe=bin/foo class=iso\n"
			"cgroup=user.slice class=iso\n"
			"comm= class=iso\n"
			"   # indented comment\n"
			"\n"
			"comm=\"Web Content\" class=normal nice=2\n"
			"comm=good2 class=idleprio\n"));
	r = load(dir, &log);
	CHECK(rules_bad_lines(r) == sizeof(expected) / sizeof(expected[0]));
	CHECK(rules_count(r) == 3);
	for (size_t i = 0; i < sizeof(expected) / sizeof(expected[0]); i++)
		CHECK(captured(log, expected[i]));
	CHECK(class_of(r, subject("good1", NULL, NULL, 0, NULL), NULL) == SCHED_CLASS_ISO);
	CHECK(class_of(r, subject("Web Content", NULL, NULL, 0, NULL), NULL) == SCHED_CLASS_NORMAL);
	CHECK(class_of(r, subject("good2", NULL, NULL, 0, NULL), NULL) == SCHED_CLASS_IDLEPRIO);
	rules_free(r);
	tmpdir_remove(dir);
}

static void test_explain(void)
{
	char *dir = tmpdir_new(), *expect;
	struct rules *r;
	struct rule_subject s;
	const char *log;
	char buf[1024];

	free(write_file(dir, "10.rules", "comm=pipewire class=iso nice=-5\nuser=1000 class=batch\n"));
	free(write_file(dir, "20.rules", "{\"name\": \"pipewire\", \"sched\": \"rr\"}\n"));
	r = load(dir, &log);
	s = subject("pipewire", "/usr/bin/pipewire", NULL, 1000, "/user.slice");
	CHECK(rules_explain(r, &s, buf, sizeof(buf)) == 1);
	printf("explain: %s\n", buf);
	if (asprintf(&expect, "ananicy rule %s/20.rules:1 matched because comm is \"pipewire\"; "
		     "it sets class iso. 2 other rules matched but lost on precedence", dir) < 0)
		abort();
	CHECK(captured(buf, expect));
	free(expect);

	s = subject("bash", "/usr/bin/bash", NULL, 0, "/user.slice");
	CHECK(rules_explain(r, &s, buf, sizeof(buf)) == 0);
	printf("explain: %s\n", buf);
	CHECK(captured(buf, "no rule matched: comm \"bash\", exe /usr/bin/bash, uid 0, cgroup /user.slice (3 rules loaded)"));

	/* Truncation is safe. */
	CHECK(rules_explain(r, &s, buf, 10) == 0 && strlen(buf) == 9);
	rules_free(r);
	tmpdir_remove(dir);
}

/* A rule file anyone may write would let anyone steer root: refused. */
static void test_untrusted_file(void)
{
	char *dir = tmpdir_new(), *path;
	struct rules *r = NULL;
	const char *log;

	path = write_file(dir, "10-open.rules", "comm=game class=iso\n");
	CHECK(chmod(path, 0666) == 0);
	capture_begin();
	CHECK(rules_load(&r, dir) == -EPERM && r == NULL);
	log = capture_end();
	CHECK(captured(log, "10-open.rules: writable by group or others (mode 0666), refusing it"));
	CHECK(chmod(path, 0644) == 0);
	CHECK(rules_load(&r, dir) == 0 && rules_count(r) == 1);
	rules_free(r);
	free(path);
	tmpdir_remove(dir);
}

static void test_missing_dir_and_helpers(void)
{
	struct rules *r = NULL;
	char cmd[] = "sleep\0" "10\0";

	CHECK(rules_load(&r, "/nonexistent/muqss-rules") == 0);
	CHECK(rules_count(r) == 0);
	CHECK(rules_match(r, &(struct rule_subject){ .comm = "x" }) == NULL);
	rules_free(r);
	CHECK(strcmp(rules_cmdline_join(cmd, sizeof(cmd) - 1), "sleep 10") == 0);
	CHECK(rule_class_from_string("idleprio") == SCHED_CLASS_IDLEPRIO);
	CHECK(rule_class_from_string("rt") == -EINVAL);
}

/* The shipped set loads cleanly and does what its comments say. */
static void test_shipped_rules(void)
{
	const char *src = getenv("MUQSS_SOURCE_ROOT");
	char *dir;
	struct rules *r;
	const char *log;

	REQUIRE(src);
	if (asprintf(&dir, "%s/conf/muqssd.rules.d", src) < 0)
		abort();
	r = load(dir, &log);
	CHECK(rules_bad_lines(r) == 0 && rules_count(r) > 20);
	CHECK(class_of(r, subject("pipewire", "/usr/bin/pipewire", NULL, 1000, NULL), NULL) == SCHED_CLASS_ISO);
	CHECK(class_of(r, subject("Xorg", "/usr/lib/xorg/Xorg", NULL, 0, NULL), NULL) == SCHED_CLASS_ISO);
	CHECK(class_of(r, subject("tracker-miner-f", "/usr/libexec/tracker-miner-fs-3", NULL, 1000, NULL),
		       NULL) == SCHED_CLASS_IDLEPRIO);
	CHECK(class_of(r, subject("updatedb.plocat", "/usr/sbin/updatedb.plocate", NULL, 0, NULL),
		       NULL) == SCHED_CLASS_IDLEPRIO);
	CHECK(class_of(r, subject("cc1", "/usr/libexec/gcc/x86_64-linux-gnu/12/cc1", NULL, 1000, NULL),
		       NULL) == SCHED_CLASS_BATCH);
	CHECK(no_match(r, subject("make", "/usr/bin/make", "make -j2", 1000, NULL)));
	CHECK(no_match(r, subject("bash", "/usr/bin/bash", NULL, 1000, NULL)));
	/* The shipped set needs no cmdline or cgroup to decide a process
	 * (but for launchers, whose command lines come with their exec). */
	CHECK(rules_lazy_fields(r, &(struct rule_subject){ .comm = "cc1", .uid = 1000 }) == 0);
	CHECK(rules_lazy_fields(r, &(struct rule_subject){ .comm = "bash", .uid = 0 }) == 0);
	rules_free(r);
	free(dir);
}

/* cmdline and cgroup are read only for a subject that meets a rule's
 * other kinds. */
static void test_lazy_fields(void)
{
	char *dir = tmpdir_new();
	struct rule_subject s = { .comm = "chrome", .exe = "/opt/chrome/chrome", .uid = 1000 };
	struct rules *r;
	const char *log;

	free(write_file(dir, "10-lazy.rules",
			"comm=chrome cmdline=--type=renderer class=batch\n"
			"exe=/opt/* user=1000 cgroup=/user.slice/app.slice class=idleprio\n"
			"comm=make class=batch\n"));
	r = load(dir, &log);
	CHECK(rules_bad_lines(r) == 0);
	CHECK(rules_lazy_fields(r, &s) == RULES_LAZY);
	s.uid = 1001;
	CHECK(rules_lazy_fields(r, &s) == RULE_MATCH_CMDLINE);
	s.comm = "firefox";
	s.exe = "/usr/bin/firefox";
	CHECK(rules_lazy_fields(r, &s) == 0);
	s.comm = "make";
	CHECK(rules_lazy_fields(r, &s) == 0);
	CHECK(rules_lazy_fields(NULL, &s) == 0);
	rules_free(r);
	tmpdir_remove(dir);
}

/* The exe is read (a readlink of /proc at each exec) only where a rule may
 * need it: an exe glob, or a comm past the kernel's 15 bytes. */
static void test_need_exe(void)
{
	static const struct {
		const char *rules;
		bool exe;
	} cases[] = {
		{ "comm=make class=batch\n", false },
		{ "comm=make cmdline=-j2 class=batch\nuser=1000 class=batch\n", false },
		{ "exe=/usr/bin/* class=batch\n", true },
		{ "comm=tracker-miner-fs-3 class=idleprio\n", true },
	};
	const char *log;

	CHECK(!rules_need_exe(NULL));
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *dir = tmpdir_new();
		struct rules *r;

		free(write_file(dir, "10-exe.rules", cases[i].rules));
		r = load(dir, &log);
		CHECK(rules_bad_lines(r) == 0);
		CHECK(rules_need_exe(r) == cases[i].exe);
		rules_free(r);
		tmpdir_remove(dir);
	}
}

/* A community-sized set: how long one match takes. */
/* Patterns glibc takes seconds or minutes to compile are refused with a
 * reason; useful ones pass. Every refused one here once hung the fuzzer
 * or would. */
static void test_regex_guard(void)
{
	static const char *const good[] = {
		"--type=(renderer|gpu-process)( |$)", "^/usr/bin/(python|perl)[0-9.]* ",
		".{0,500}", "(x?)?", "(-[a-z]+ )*--daemon", "^$", "(a|b)+c", "\\bfoo\\b",
	};
	static const struct {
		const char *pattern, *reason;
	} bad[] = {
		{ "x+++", "adjacent repetition operators" },
		{ "*x", "a repetition operator with nothing to repeat" },
		{ "(a)\\1", "back-references are not supported" },
		{ "(^)*(^)*(^)*(^)*(^)*(^)*(^)*(^)*(^)*(^)*", "a repetition of something that can match empty" },
		{ "(x|^)+", "a repetition of something that can match empty" },
		{ "(x*)*", "a repetition of something that can match empty" },
		{ "((a|)b?){3}", "a repetition of something that can match empty" },
		{ "(a{1,300}){2}", "too complex (repetitions expand past 512 nodes)" },
		{ "(^x){9}", "too complex (more than 8 anchors)" },
		{ "^^^^^^^^^", "too complex (more than 8 anchors)" },
		{ "(((((((((((((((((((((((((((((((((x)))))))))))))))))))))))))))))))))", "groups nested too deep" },
	};
	const char *reason;

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		reason = NULL;
		if (rules_regex_check(good[i], &reason) != 0)
			printf("refused %s: %s\n", good[i], reason);
		CHECK(rules_regex_check(good[i], &reason) == 0);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		reason = NULL;
		CHECK(rules_regex_check(bad[i].pattern, &reason) == -EINVAL);
		if (!reason || strcmp(reason, bad[i].reason) != 0)
			printf("%s: got \"%s\"\n", bad[i].pattern, reason ? reason : "(none)");
		CHECK(reason && strcmp(reason, bad[i].reason) == 0);
	}
	CHECK(rules_regex_check("^^^^^^^^", &reason) == 0);
}

static void test_match_cost(void)
{
	char *dir = tmpdir_new(), *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	struct rules *r;
	struct timespec a, b;
	const char *log;
	const int n_rules = 2000, n_match = 20000;
	int hits = 0;

	for (int i = 0; i < n_rules; i++)
		fprintf(f, "{\"name\": \"prog%d\", \"nice\": %d}\n", i, i % 20);
	fclose(f);
	free(write_file(dir, "big.rules", text));
	free(text);
	r = load(dir, &log);
	CHECK(rules_count(r) == (size_t)n_rules);
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (int i = 0; i < n_match; i++) {
		char comm[16];

		snprintf(comm, sizeof(comm), "prog%d", (i * 7) % (2 * n_rules));
		hits += rules_match(r, &(struct rule_subject){ .comm = comm, .exe = "/usr/bin/x" }) != NULL;
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	CHECK(hits > 0 && hits < n_match);
	printf("match cost: %.2f us per process against %d ananicy rules\n",
	       ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / n_match / 1e3,
	       n_rules);
	rules_free(r);
	tmpdir_remove(dir);
}

int main(void)
{
	log_init("test");
	test_match_kinds();
	test_precedence();
	test_ananicy();
	test_bad_native_lines();
	test_explain();
	test_untrusted_file();
	test_missing_dir_and_helpers();
	test_shipped_rules();
	test_lazy_fields();
	test_need_exe();
	test_regex_guard();
	test_match_cost();
	return CHECK_EXIT();
}
