/* The INI loader: every key, ranges and their messages, drop-ins, errors. */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "config.h"
#include "config_file.h"
#include "fixtures.h"
#include "log.h"

/* Loads text as DIR/muqssd.conf on top of the defaults. */
static int load_text(const char *dir, const char *text, struct config *c, const char **log)
{
	char *path = write_file(dir, "muqssd.conf", text);
	int r;

	capture_begin();
	r = config_load(c, path, false);
	*log = capture_end();
	free(path);
	return r;
}

static void test_missing(void)
{
	char *dir = tmpdir_new(), *path;
	struct config c;
	const char *log;

	if (asprintf(&path, "%s/none.conf", dir) < 0)
		abort();
	config_init_defaults(&c);
	CHECK(config_load(&c, path, true) == 0);
	CHECK(c.tunables.rr_interval_ms == 6);
	CHECK(!c.rtkit);
	capture_begin();
	CHECK(config_load(&c, path, false) == -ENOENT);
	log = capture_end();
	CHECK(captured(log, "none.conf: No such file or directory"));
	/* A directory is not a config file. */
	capture_begin();
	CHECK(config_load(&c, dir, false) == -EISDIR);
	capture_end();
	config_free(&c);
	free(path);
	tmpdir_remove(dir);
}

/* Only a regular file, owned by root (or the caller), that nobody else
 * may write: a FIFO would hang start-up, anyone's file would steer root. */
static void test_untrusted(void)
{
	char *dir = tmpdir_new(), *path, *fifo;
	struct config c;
	const char *log;

	config_init_defaults(&c);
	path = write_file(dir, "muqssd.conf", "[scheduler]\niso_cpu = 50\n");
	CHECK(chmod(path, 0664) == 0);
	capture_begin();
	CHECK(config_load(&c, path, false) == -EPERM);
	log = capture_end();
	CHECK(captured(log, "writable by group or others (mode 0664), refusing it"));
	CHECK(chmod(path, 0646) == 0);
	capture_begin();
	CHECK(config_load(&c, path, false) == -EPERM);
	capture_end();
	if (geteuid() == 0) {
		CHECK(chmod(path, 0644) == 0 && chown(path, 65534, 65534) == 0);
		capture_begin();
		CHECK(config_load(&c, path, false) == -EPERM);
		log = capture_end();
		CHECK(captured(log, "owned by uid 65534, not root, refusing it"));
	}
	CHECK(c.tunables.iso_cpu == 70);
	if (asprintf(&fifo, "%s/fifo.conf", dir) < 0)
		abort();
	CHECK(mkfifo(fifo, 0600) == 0);
	capture_begin();
	CHECK(config_load(&c, fifo, false) == -EINVAL);
	log = capture_end();
	CHECK(captured(log, "not a regular file, refusing it"));
	config_free(&c);
	free(fifo);
	free(path);
	tmpdir_remove(dir);
}

static void test_every_key(void)
{
	char *dir = tmpdir_new();
	struct config c;
	const char *log;

	config_init_defaults(&c);
	REQUIRE(load_text(dir,
			"[scheduler]\n"
			"rr_interval = 12\n"
			"interactive = no\n"
			"iso_cpu = 50\n"
			"yield_type = 2\n"
			"iso_reading = per-cpu\n"
			"[scope]\n"
			"mode = cgroup\n"
			"pid = 1234\n"
			"cgroup = /user.slice/user-1000.slice\n"
			"[exempt]\n"
			"comm = Xorg \"Web Content\"\n"
			"comm = sshd\n"
			"exe = /opt/vendor/bin/* */steam\n"
			"cgroup = /system.slice/a.service /system.slice/b.service\n"
			"[tracking]\n"
			"reconcile_interval_ms = 5000\n"
			"poll_interval_ms = 100\n"
			"force_poll = yes\n"
			"sensor = connector\n"
			"[idleprio]\n"
			"stop_max_ms = 250\n"
			"[control]\n"
			"socket = /tmp/muqss.sock ; inline comment\n"
			"mode = 0660\n"
			"group = muqss\n"
			"admin_group = 1001\n"
			"[rtkit]\n"
			"enable = yes\n"
			"[daemon]\n"
			"state_dir = /var/tmp/muqss\n"
			"rules_dir = /etc/muqssd/other.d\n"
			"log_level = debug\n",
			&c, &log) == 1);
	CHECK(c.tunables.rr_interval_ms == 12);
	CHECK(c.tunables.interactive == 0);
	CHECK(c.tunables.iso_cpu == 50);
	CHECK(c.tunables.yield_type == 2);
	CHECK(c.tunables.iso_reading == ISO_READING_PER_CPU);
	CHECK(c.scope == SCOPE_CGROUP);
	CHECK(c.scope_pid == 1234);
	CHECK(strcmp(c.scope_cgroup, "/user.slice/user-1000.slice") == 0);
	CHECK(strcmp(c.exempt.comms[0], "Xorg") == 0);
	CHECK(strcmp(c.exempt.comms[1], "Web Content") == 0);
	CHECK(strcmp(c.exempt.comms[2], "sshd") == 0);
	CHECK(c.exempt.comms[3] == NULL);
	CHECK(strcmp(c.exempt.exes[0], "/opt/vendor/bin/*") == 0);
	CHECK(strcmp(c.exempt.exes[1], "*/steam") == 0);
	CHECK(strcmp(c.exempt.cgroups[1], "/system.slice/b.service") == 0);
	CHECK(c.reconcile_interval_ms == 5000);
	CHECK(c.poll_interval_ms == 100);
	CHECK(c.force_poll);
	CHECK(c.sensor == SENSOR_CONNECTOR);
	CHECK(c.idleprio_stop_max_ms == 250);
	CHECK(strcmp(c.socket_path, "/tmp/muqss.sock") == 0);
	CHECK(c.socket_mode == 0660);
	CHECK(strcmp(c.socket_group, "muqss") == 0);
	CHECK(strcmp(c.admin_group, "1001") == 0);
	CHECK(c.rtkit);
	CHECK(strcmp(c.state_dir, "/var/tmp/muqss") == 0);
	CHECK(strcmp(c.rules_dir, "/etc/muqssd/other.d") == 0);
	CHECK(c.log_level == LOG_LEVEL_DEBUG);
	config_free(&c);
	tmpdir_remove(dir);
}

struct bad_case {
	const char *text;
	const char *message; /* after "DIR/muqssd.conf:" */
};

/* Each bad value is refused with its line, key and range, and the config
 * stays as it was even though another line was fine. */
static void test_bad_values(void)
{
	static const struct bad_case cases[] = {
		{ "[scheduler]\nrr_interval = 0\n", "2: rr_interval: 0 is out of range 1..1000 ms" },
		{ "[scheduler]\nrr_interval = 1001\n", "2: rr_interval: 1001 is out of range 1..1000 ms" },
		{ "[scheduler]\nrr_interval = -1\n", "2: rr_interval: \"-1\" is not a number in range 1..1000 ms" },
		{ "[scheduler]\nrr_interval = 6ms\n", "2: rr_interval: \"6ms\" is not a number in range 1..1000 ms" },
		{ "[scheduler]\ninteractive = 2\n", "2: interactive: \"2\" is not a boolean" },
		{ "[scheduler]\niso_cpu = 101\n", "2: iso_cpu: 101 is out of range 0..100%" },
		{ "[scheduler]\nyield_type = 3\n", "2: yield_type: 3 is out of range 0..2" },
		{ "[scheduler]\niso_reading = global\n", "2: iso_reading: \"global\" is not one of machine|per-cpu" },
		{ "[scope]\nmode = some\n", "2: mode: \"some\" is not one of all|pid|cgroup" },
		{ "[scope]\npid = 1\n", "2: pid: 1 is out of range 2..4194304" },
		{ "[scope]\ncgroup = user.slice\n", "2: cgroup: \"user.slice\" is not an absolute path" },
		{ "[exempt]\ncomm = abcdefghijklmnop\n", "2: comm: \"abcdefghijklmnop\" is longer than 15 characters" },
		{ "[exempt]\ncomm = \"Web Content\n", "2: comm: unterminated quote" },
		{ "[exempt]\nexe = bin/foo\n", "2: exe: \"bin/foo\" is not an absolute path glob" },
		{ "[exempt]\ncgroup = system.slice\n", "2: cgroup: \"system.slice\" is not a cgroup path" },
		{ "[tracking]\nreconcile_interval_ms = 99\n", "2: reconcile_interval_ms: 99 is out of range 100..3600000 ms" },
		{ "[tracking]\npoll_interval_ms = 60001\n", "2: poll_interval_ms: 60001 is out of range 10..60000 ms" },
		{ "[tracking]\nforce_poll = maybe\n", "2: force_poll: \"maybe\" is not a boolean" },
		{ "[tracking]\nsensor = ebpf\n", "2: sensor: \"ebpf\" is not one of auto|bpf|connector|poll" },
		{ "[idleprio]\nstop_max_ms = 0\n", "2: stop_max_ms: 0 is out of range 1..60000 ms" },
		{ "[control]\nsocket = run/x\n", "2: socket: \"run/x\" is not an absolute path" },
		{ "[control]\nsocket = /" "0123456789012345678901234567890123456789" "0123456789012345678901234567890123456789" "0123456789012345678901234567890123456789\n",
		  "2: socket: path is 121 bytes, the limit for a socket is 107" },
		{ "[control]\nmode = 0999\n", "2: mode: \"0999\" is not an octal mode in range 0000..0777" },
		{ "[control]\nmode = 01777\n", "2: mode: \"01777\" is not an octal mode in range 0000..0777" },
		{ "[control]\ngroup = 1abc\n", "2: group: \"1abc\" is not a valid group name or gid" },
		{ "[control]\nadmin_group = a b\n", "2: admin_group: \"a b\" is not a valid group name or gid" },
		{ "[daemon]\nstate_dir = \n", "2: state_dir: \"\" is not an absolute path" },
		{ "[daemon]\nlog_level = verbose\n", "2: log_level: \"verbose\" is not one of error|warning|notice|info|debug" },
		{ "[scheduler]\nrr_intervall = 6\n", "2: rr_intervall: unknown key in [scheduler]" },
		{ "[sched]\nrr_interval = 6\n", "2: unknown section [sched]" },
		{ "rr_interval = 6\n", "1: rr_interval: key outside any [section]" },
		{ "[scheduler]\nrr_interval\n", "2: syntax error" },
		{ "[scope]\nmode = pid\n", "muqssd.conf: [scope] mode = pid needs pid = PID" },
		{ "[scope]\nmode = cgroup\n", "muqssd.conf: [scope] mode = cgroup needs cgroup = PATH" },
	};
	char *dir = tmpdir_new();

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *text, *expect;
		struct config c;
		const char *log;

		/* A good line that must not survive the failure. */
		if (asprintf(&text, "%s[daemon]\nlog_level = debug\n", cases[i].text) < 0)
			abort();
		if (cases[i].message[0] >= '0' && cases[i].message[0] <= '9') {
			if (asprintf(&expect, "%s/muqssd.conf:%s", dir, cases[i].message) < 0)
				abort();
		} else if (asprintf(&expect, "%s", cases[i].message) < 0) {
			abort();
		}
		config_init_defaults(&c);
		CHECK(load_text(dir, text, &c, &log) == -EINVAL);
		CHECK(captured(log, expect));
		CHECK(c.log_level == LOG_LEVEL_INFO);
		config_free(&c);
		free(text);
		free(expect);
	}
	tmpdir_remove(dir);
}

/* Every bad line is reported in one run, each with its own number. */
static void test_every_error_reported(void)
{
	char *dir = tmpdir_new(), *expect;
	struct config c;
	const char *log;

	config_init_defaults(&c);
	CHECK(load_text(dir, "# comment\n[scheduler]\nrr_interval = 0\n\niso_cpu = 200\nnope = 1\n",
			&c, &log) == -EINVAL);
	if (asprintf(&expect, "%s/muqssd.conf:3: rr_interval: 0 is out of range", dir) < 0)
		abort();
	CHECK(captured(log, expect));
	free(expect);
	if (asprintf(&expect, "%s/muqssd.conf:5: iso_cpu: 200 is out of range 0..100%%", dir) < 0)
		abort();
	CHECK(captured(log, expect));
	free(expect);
	if (asprintf(&expect, "%s/muqssd.conf:6: nope: unknown key", dir) < 0)
		abort();
	CHECK(captured(log, expect));
	free(expect);
	config_free(&c);
	tmpdir_remove(dir);
}

/* A line too long for inih's buffer is refused whole; later numbers hold. */
static void test_long_line(void)
{
	char *dir = tmpdir_new(), *text, *expect;
	char pad[400];
	struct config c;
	const char *log;

	memset(pad, 'x', sizeof(pad) - 1);
	pad[sizeof(pad) - 1] = '\0';
	if (asprintf(&text, "[exempt]\ncomm = %s\n[scheduler]\nrr_interval = 0\n", pad) < 0)
		abort();
	config_init_defaults(&c);
	CHECK(load_text(dir, text, &c, &log) == -EINVAL);
	if (asprintf(&expect, "%s/muqssd.conf:2: line longer than", dir) < 0)
		abort();
	CHECK(captured(log, expect));
	free(expect);
	if (asprintf(&expect, "%s/muqssd.conf:4: rr_interval: 0 is out of range", dir) < 0)
		abort();
	CHECK(captured(log, expect));
	free(expect);
	free(text);
	config_free(&c);
	tmpdir_remove(dir);
}

static void test_dropins(void)
{
	char *dir = tmpdir_new(), *path, *d, *expect;
	struct config c;
	const char *log;

	path = write_file(dir, "muqssd.conf",
			  "[scheduler]\nrr_interval = 5\niso_cpu = 40\n[exempt]\ncomm = a b\n");
	if (asprintf(&d, "%s.d", path) < 0)
		abort();
	REQUIRE(mkdir(d, 0755) == 0);
	/* Name order, bytewise: 10-x before 20-y before 9-z. */
	free(write_file(d, "20-y.conf", "[scheduler]\nrr_interval = 20\n[exempt]\ncomm = c\n"));
	free(write_file(d, "10-x.conf", "[scheduler]\nrr_interval = 10\niso_cpu = 10\n"));
	free(write_file(d, "9-z.conf", "[scheduler]\nrr_interval = 9\n"));
	free(write_file(d, "30-ignored.conf.disabled", "[scheduler]\nrr_interval = 1\n"));
	free(write_file(d, ".hidden.conf", "[scheduler]\nrr_interval = 2\n"));
	config_init_defaults(&c);
	REQUIRE(config_load(&c, path, false) == 1);
	CHECK(c.tunables.rr_interval_ms == 9);
	CHECK(c.tunables.iso_cpu == 10);
	CHECK(strcmp(c.exempt.comms[0], "a") == 0);
	CHECK(strcmp(c.exempt.comms[1], "b") == 0);
	CHECK(strcmp(c.exempt.comms[2], "c") == 0);
	config_free(&c);

	/* An empty assignment clears a list. */
	free(write_file(d, "40-clear.conf", "[exempt]\ncomm =\ncomm = z\n"));
	config_init_defaults(&c);
	REQUIRE(config_load(&c, path, false) == 1);
	CHECK(strcmp(c.exempt.comms[0], "z") == 0 && c.exempt.comms[1] == NULL);
	config_free(&c);

	/* An error in a drop-in names the drop-in, and nothing is applied. */
	free(write_file(d, "50-bad.conf", "[scheduler]\n\nyield_type = 7\n"));
	config_init_defaults(&c);
	capture_begin();
	CHECK(config_load(&c, path, false) == -EINVAL);
	log = capture_end();
	if (asprintf(&expect, "%s/50-bad.conf:3: yield_type: 7 is out of range 0..2", d) < 0)
		abort();
	CHECK(captured(log, expect));
	CHECK(c.tunables.rr_interval_ms == 6);
	CHECK(c.exempt.comms == NULL);
	free(expect);
	config_free(&c);

	/* Without the main file, the drop-ins still apply. */
	CHECK(unlink(path) == 0);
	free(expect = NULL);
	if (asprintf(&expect, "%s/50-bad.conf", d) < 0)
		abort();
	CHECK(unlink(expect) == 0);
	free(expect);
	config_init_defaults(&c);
	CHECK(config_load(&c, path, true) == 0);
	CHECK(c.tunables.rr_interval_ms == 9);
	config_free(&c);

	free(d);
	free(path);
	tmpdir_remove(dir);
}

int main(void)
{
	log_init("test");
	test_missing();
	test_untrusted();
	test_every_key();
	test_bad_values();
	test_every_error_reported();
	test_long_line();
	test_dropins();
	return CHECK_EXIT();
}
