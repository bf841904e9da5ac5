/*
 * reproduce.c - does reading /proc/<pid>/task/<tid>/stat (and friends) of a
 * task that is in the middle of execve() block when that task cannot run
 * because an RT task occupies its CPU?
 *
 * Layout (2 CPUs needed):
 *   CPU 1: E  - "exec looper": SCHED_OTHER, touches -m MB of anon memory and
 *               execve()s itself again, forever (same pid each time).
 *          S  - "spinner": sleeps; at random moments the controller switches
 *               it to SCHED_FIFO 1 and wakes it; it spins -b ms (<=100) and
 *               switches itself back to SCHED_OTHER.  (Mimics the daemon
 *               boosting a shell hog that shares the CPU with E.)
 *   CPU 0: R  - "reader" thread, SCHED_FIFO 20 (like muqssd), every 1 ms:
 *               pread(cached fd of /proc/E/task/E/stat, 0)
 *               pread(cached fd of /proc/E/task/E/schedstat, 0)
 *               open+read+close /proc/E/stat, /proc/E/status
 *               plus (-c, positive controls) /proc/E/io, /proc/E/cmdline,
 *               /proc/E/syscall, /proc/E/wchan
 *               and times each one.
 *          W  - watchdog thread: when a read has lasted > 5 ms, captures the
 *               reader's /proc/self/task/<tid>/stack and E's wchan/state, and
 *               asks thread K to read /proc/E/stack (which itself may block).
 *          C  - controller thread (makes the bursts).
 *   Optional (-t): an ftrace instance records sched_switch of R and E with
 *   kernel stack traces (trace written to ./trace-<pid>.txt).
 *
 * Safety: every RT task carries RLIMIT_RTTIME (hard 300 ms of RT CPU without
 * sleeping -> SIGKILL); the spinner is FIFO for <= 100 ms per burst; the whole
 * run is bounded by -d seconds (<= 60); children die with the parent.
 *
 * Build: gcc -O2 -Wall -pthread -o reproduce reproduce.c
 * Run:   timeout 90 ./reproduce [-d secs] [-b burst_ms] [-m MB] [-c] [-t] [-n]
 *        -n : do NOT make the reader SCHED_FIFO (plain SCHED_OTHER reader)
 *        -N nice : nice value of E (default -10, so it execs often on a busy box)
 *        -f list : files to read, comma separated (see all_files[]), default
 *                  statc,schedc,stat,status ; -c = a longer list
 *        -P : daemon-like: E lives on CPU0; at each burst it is pinned to
 *             CPU1 and boosted to FIFO 1 behind the spinner, then restored
 *        -t : record an ftrace instance, write ./trace-<pid>.txt (see analyze.py)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef SCHED_RESET_ON_FORK
#define SCHED_RESET_ON_FORK 0x40000000
#endif

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void pin(pid_t tid, int cpu)
{
	cpu_set_t s;
	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	if (sched_setaffinity(tid, sizeof(s), &s))
		perror("sched_setaffinity");
}

static int set_fifo(pid_t tid, int prio)
{
	struct sched_param sp = { .sched_priority = prio };
	return sched_setscheduler(tid, prio ? SCHED_FIFO : SCHED_OTHER, &sp);
}

static void rt_limit(void)
{
	/* soft 250 ms -> SIGXCPU, hard 300 ms -> SIGKILL, of RT CPU time
	 * consumed without a blocking system call */
	struct rlimit rl = { .rlim_cur = 250000, .rlim_max = 300000 };
	setrlimit(RLIMIT_RTTIME, &rl);
}

/* ------------------------------------------------------------------ E */
static int child_exec_loop(int argc, char **argv)
{
	/* argv: self --child MB notify_fd */
	size_t mb = argc > 2 ? strtoul(argv[2], 0, 0) : 64;
	int nfd = argc > 3 ? atoi(argv[3]) : -1;
	if (mb) {
		size_t len = mb << 20;
		char *p = mmap(0, len, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p != MAP_FAILED)
			for (size_t i = 0; i < len; i += 4096)
				p[i] = 1;
	}
	if (nfd >= 0) {
		char c = 'x';
		if (write(nfd, &c, 1) < 0 && errno == EPIPE)
			_exit(0);
	}
	execv("/proc/self/exe", argv);
	_exit(127);
}

/* ------------------------------------------------------------------ S */
static int spin_cmd[2];		/* controller -> spinner: burst length */

static void spinner(void)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	prctl(PR_SET_NAME, "rc-spinner");
	pin(0, 1);
	rt_limit();
	for (;;) {
		uint32_t ms;
		if (read(spin_cmd[0], &ms, sizeof(ms)) != sizeof(ms))
			_exit(0);
		if (ms > 100)
			ms = 100;
		uint64_t end = now_ns() + ms * 1000000ull;
		while (now_ns() < end)
			;
		set_fifo(0, 0);	/* back to SCHED_OTHER before sleeping */
	}
}

/* ------------------------------------------------------------------ R */
struct fdesc { const char *name, *label, *rel; int cached; };
static const struct fdesc all_files[] = {
	{ "statc",   "task/E/stat      (cached fd, pread)", "task/%d/stat", 1 },
	{ "schedc",  "task/E/schedstat (cached fd, pread)", "task/%d/schedstat", 1 },
	{ "statusc", "task/E/status    (cached fd, pread)", "task/%d/status", 1 },
	{ "stat",    "E/stat      (fresh open)", "stat", 0 },
	{ "schedstat","E/schedstat (fresh open)", "schedstat", 0 },
	{ "status",  "E/status    (fresh open)", "status", 0 },
	{ "statm",   "E/statm     (fresh open)", "statm", 0 },
	{ "io",      "E/io        (fresh open)", "io", 0 },
	{ "cmdline", "E/cmdline   (fresh open)", "cmdline", 0 },
	{ "syscall", "E/syscall   (fresh open)", "syscall", 0 },
	{ "wchan",   "E/wchan     (fresh open)", "wchan", 0 },
	{ "comm",    "E/comm      (fresh open)", "comm", 0 },
};
#define NALL (int)(sizeof(all_files) / sizeof(all_files[0]))
#define NF NALL
static int sel[NALL], nsel;
#define fname_of(i) all_files[sel[i]].label

struct fstats {
	uint64_t n, err, max_ns, over1, over5, over50, max_at;
};
static struct fstats st[NF];

static pid_t E_pid, S_pid, R_tid;
static volatile int stop;
static _Atomic uint64_t cur_start;	/* 0 = not in a read */
static _Atomic int cur_file;
static _Atomic uint64_t cur_seq;

#define MAXCAP 12
struct capture {
	int file;
	uint64_t at, dur;
	char rstack[2048];
	char estate[256];
	char ewchan[64];
	char estack[2048];
	uint64_t estack_ns;
	int burst_active;
	char rstate;
	uint64_t t_cap, t_cap_end, wchan_ns;
};
static struct capture caps[MAXCAP];
static _Atomic int ncaps;
static _Atomic int burst_active;
static uint64_t bursts, burst_ms_total;
static _Atomic uint64_t execs;
#define MAXSLOW 4096
struct slowrec { int file; uint64_t t0, dur; };
static struct slowrec slow[MAXSLOW];
static int nslow;
static int pinboost;
static int e_nice = -10;

static ssize_t slurp(const char *path, char *buf, size_t sz)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(buf, sz, "<open %s: %s>", path, strerror(errno));
		return -1;
	}
	ssize_t n = read(fd, buf, sz - 1);
	close(fd);
	if (n < 0) {
		snprintf(buf, sz, "<read: %s>", strerror(errno));
		return -1;
	}
	buf[n] = 0;
	return n;
}

static void *reader(void *arg)
{
	int fifo = *(int *)arg;
	char path[128], buf[4096];

	R_tid = syscall(SYS_gettid);
	pin(0, 0);
	if (fifo) {
		rt_limit();
		struct sched_param sp = { .sched_priority = 20 };
		if (pthread_setschedparam(pthread_self(),
					  SCHED_FIFO | SCHED_RESET_ON_FORK, &sp))
			fprintf(stderr, "reader: cannot set SCHED_FIFO 20\n");
	}
	int cfd[NALL];
	for (int i = 0; i < nsel; i++) {
		cfd[i] = -1;
		if (!all_files[sel[i]].cached)
			continue;
		char rel[64];
		snprintf(rel, sizeof(rel), all_files[sel[i]].rel, E_pid);
		snprintf(path, sizeof(path), "/proc/%d/%s", E_pid, rel);
		cfd[i] = open(path, O_RDONLY | O_CLOEXEC);
		if (cfd[i] < 0) {
			perror(path);
			exit(1);
		}
	}
	unsigned tick = 0;
	struct timespec next;
	clock_gettime(CLOCK_MONOTONIC, &next);
	while (!stop) {
		tick++;
		for (int ff = 0; ff < nsel; ff++) {
			/* rotate the order every tick so that each file gets to
			 * be the first one to hit a held lock */
			int f = (ff + tick) % nsel;
			ssize_t n;
			atomic_store(&cur_file, f);
			atomic_fetch_add(&cur_seq, 1);
			uint64_t t0 = now_ns();
			atomic_store(&cur_start, t0);
			if (cfd[f] >= 0) {
				n = pread(cfd[f], buf, sizeof(buf), 0);
			} else {
				snprintf(path, sizeof(path), "/proc/%d/%s",
					 E_pid, all_files[sel[f]].rel);
				int fd = open(path, O_RDONLY | O_CLOEXEC);
				n = fd < 0 ? -1 : read(fd, buf, sizeof(buf));
				if (fd >= 0)
					close(fd);
			}
			uint64_t t1 = now_ns();
			atomic_store(&cur_start, 0);
			uint64_t d = t1 - t0;
			st[f].n++;
			if (n < 0)
				st[f].err++;
			if (d > st[f].max_ns) {
				st[f].max_ns = d;
				st[f].max_at = t0;
			}
			if (d > 1000000)
				st[f].over1++;
			if (d > 5000000)
				st[f].over5++;
			if (d > 50000000)
				st[f].over50++;
			if (d > 5000000 && nslow < MAXSLOW) {
				slow[nslow].file = f;
				slow[nslow].t0 = t0;
				slow[nslow].dur = d;
				nslow++;
			}
		}
		next.tv_nsec += 1000000;
		if (next.tv_nsec >= 1000000000) {
			next.tv_nsec -= 1000000000;
			next.tv_sec++;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
		struct timespec tnow;
		clock_gettime(CLOCK_MONOTONIC, &tnow);
		if (tnow.tv_sec > next.tv_sec + 1)
			next = tnow;
	}
	for (int i = 0; i < nsel; i++)
		if (cfd[i] >= 0)
			close(cfd[i]);
	return NULL;
}

/* K: reads /proc/E/stack on request (this can itself block) */
static _Atomic int estack_req = -1;
static void *estack_thread(void *a)
{
	(void)a;
	pin(0, 0);
	while (!stop) {
		int k = atomic_exchange(&estack_req, -1);
		if (k < 0) {
			usleep(200);
			continue;
		}
		char path[64];
		snprintf(path, sizeof(path), "/proc/%d/stack", E_pid);
		uint64_t t0 = now_ns();
		slurp(path, caps[k].estack, sizeof(caps[k].estack));
		caps[k].estack_ns = now_ns() - t0;
	}
	return NULL;
}

/* W: watchdog */
static void *watchdog(void *a)
{
	(void)a;
	pin(0, 0);
	uint64_t done_seq = 0;
	char path[96];
	while (!stop) {
		usleep(500);
		uint64_t t0 = atomic_load(&cur_start);
		uint64_t seq = atomic_load(&cur_seq);
		if (!t0 || seq == done_seq || now_ns() - t0 < 5000000)
			continue;
		done_seq = seq;
		int k = atomic_load(&ncaps);
		if (k >= MAXCAP)
			continue;
		struct capture *c = &caps[k];
		c->file = atomic_load(&cur_file);
		c->at = t0;
		c->burst_active = atomic_load(&burst_active);
		c->t_cap = now_ns();
		snprintf(path, sizeof(path), "/proc/self/task/%d/stat", R_tid);
		{
			char t2[1024];
			slurp(path, t2, sizeof(t2));
			char *q = strrchr(t2, ')');
			c->rstate = q && q[1] ? q[2] : '?';
		}
		snprintf(path, sizeof(path), "/proc/self/task/%d/stack", R_tid);
		slurp(path, c->rstack, sizeof(c->rstack));
		snprintf(path, sizeof(path), "/proc/%d/wchan", E_pid);
		c->wchan_ns = now_ns();
		slurp(path, c->ewchan, sizeof(c->ewchan));	/* may block too! */
		c->wchan_ns = now_ns() - c->wchan_ns;
		/* E's state from schedstat-free source: /proc/E/stat via a
		 * separate fd would maybe block too; use it anyway, timed */
		snprintf(path, sizeof(path), "/proc/%d/stat", E_pid);
		uint64_t s0 = now_ns();
		char tmp[1024];
		slurp(path, tmp, sizeof(tmp));
		char *cp = strrchr(tmp, ')');
		snprintf(c->estate, sizeof(c->estate), "state '%c' (stat read took %.3f ms)",
			 cp && cp[1] ? cp[2] : '?', (now_ns() - s0) / 1e6);
		c->t_cap_end = now_ns();
		atomic_store(&ncaps, k + 1);
		atomic_store(&estack_req, k);
	}
	return NULL;
}

/* C: controller making FIFO bursts on CPU 1 at random moments */
static int burst_ms = 80;
static void *controller(void *a)
{
	(void)a;
	pin(0, 0);
	{	/* sleeps almost all the time; RT so bursts happen on time on a
		 * busy box (RLIMIT_RTTIME of the process covers it) */
		struct sched_param sp = { .sched_priority = 30 };
		pthread_setschedparam(pthread_self(), SCHED_FIFO | SCHED_RESET_ON_FORK, &sp);
	}
	unsigned seed = (unsigned)now_ns();
	while (!stop) {
		usleep(20000 + rand_r(&seed) % 180000);	/* 20..200 ms */
		if (stop)
			break;
		if (set_fifo(S_pid, 1)) {	/* while S sleeps */
			perror("boost spinner");
			continue;
		}
		uint32_t ms = burst_ms;
		atomic_store(&burst_active, 1);
		if (write(spin_cmd[1], &ms, sizeof(ms)) != sizeof(ms))
			break;
		if (pinboost) {
			/* like the daemon: pin E onto the hog's CPU and boost it
			 * to SCHED_FIFO 1 at an arbitrary moment (maybe mid-exec) */
			uint32_t d = rand_r(&seed) % (ms / 2 + 1);
			usleep(d * 1000);
			pin(E_pid, 1);
			struct sched_param sp = { .sched_priority = 1 };
			sched_setscheduler(E_pid, SCHED_FIFO | SCHED_RESET_ON_FORK, &sp);
			usleep((ms - d) * 1000 + 2000);
			set_fifo(E_pid, 0);
			pin(E_pid, 0);
		} else {
			usleep(ms * 1000 + 2000);
		}
		atomic_store(&burst_active, 0);
		bursts++;
		burst_ms_total += ms;
	}
	return NULL;
}

/* ------------------------------------------------------------------ ftrace */
static char tdir[128];
static int tw(const char *rel, const char *val)
{
	char p[256];
	snprintf(p, sizeof(p), "%s/%s", tdir, rel);
	int fd = open(p, O_WRONLY | O_TRUNC);
	if (fd < 0) {
		fprintf(stderr, "ftrace: open %s: %s\n", p, strerror(errno));
		return -1;
	}
	int r = write(fd, val, strlen(val));
	if (r < 0)
		fprintf(stderr, "ftrace: write %s <- '%s': %s\n", p, val, strerror(errno));
	close(fd);
	return r < 0 ? -1 : 0;
}

static int trace_setup(void)
{
	char buf[256];
	snprintf(tdir, sizeof(tdir), "/sys/kernel/tracing/instances/rootcause-%d", getpid());
	if (mkdir(tdir, 0700)) {
		perror("mkdir trace instance");
		tdir[0] = 0;
		return -1;
	}
	tw("buffer_size_kb", "8192");
	tw("trace_clock", "mono");
	/* R blocking (prev_state != 0) or E being switched out: with stacks */
	snprintf(buf, sizeof(buf), "prev_pid == %d || prev_pid == %d || next_pid == %d",
		 R_tid, E_pid, E_pid);
	tw("events/sched/sched_switch/filter", buf);
	snprintf(buf, sizeof(buf), "stacktrace if prev_pid == %d || prev_pid == %d",
		 R_tid, E_pid);
	tw("events/sched/sched_switch/trigger", buf);
	tw("events/sched/sched_switch/enable", "1");
	snprintf(buf, sizeof(buf), "common_pid == %d || common_pid == %d", R_tid, E_pid);
	tw("events/lock/contention_begin/filter", buf);
	tw("events/lock/contention_begin/enable", "1");
	tw("events/lock/contention_end/filter", buf);
	tw("events/lock/contention_end/enable", "1");
	tw("events/sched/sched_prepare_exec/enable", "1");
	tw("events/sched/sched_process_exec/enable", "1");
	tw("tracing_on", "1");
	return 0;
}

static void trace_teardown(void)
{
	char p[256], buf[65536];
	if (!tdir[0])
		return;
	tw("tracing_on", "0");
	snprintf(p, sizeof(p), "%s/trace", tdir);
	int in = open(p, O_RDONLY);
	snprintf(p, sizeof(p), "trace-%d.txt", getpid());
	int out = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ssize_t n;
	while (in >= 0 && out >= 0 && (n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, n) != n)
			break;
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	fprintf(stderr, "ftrace written to %s\n", p);
	tw("events/sched/sched_switch/enable", "0");
	char trig[128];
	snprintf(trig, sizeof(trig), "!stacktrace");
	tw("events/sched/sched_switch/trigger", trig);
	tw("events/lock/contention_begin/enable", "0");
	tw("events/lock/contention_end/enable", "0");
	tw("events/sched/sched_prepare_exec/enable", "0");
	tw("events/sched/sched_process_exec/enable", "0");
	if (rmdir(tdir))
		perror("rmdir trace instance");
}

/* ------------------------------------------------------------------ main */
int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--child"))
		return child_exec_loop(argc, argv);

	int dur = 20, mb = 64, fifo_reader = 1, trace = 0, opt;
	const char *flist = "statc,schedc,stat,status";
	while ((opt = getopt(argc, argv, "d:b:m:f:ctnPN:")) != -1) {
		switch (opt) {
		case 'd': dur = atoi(optarg); break;
		case 'b': burst_ms = atoi(optarg); break;
		case 'm': mb = atoi(optarg); break;
		case 'c': flist = "statc,schedc,stat,status,statm,io,cmdline,syscall,wchan"; break;
		case 'f': flist = optarg; break;
		case 'P': pinboost = 1; break;
		case 'N': e_nice = atoi(optarg); break;
		case 't': trace = 1; break;
		case 'n': fifo_reader = 0; break;
		default:
			fprintf(stderr, "usage: %s [-d secs<=60] [-b burst_ms<=100] [-m MB] [-c] [-t] [-n]\n", argv[0]);
			return 2;
		}
	}
	{
		char *dup = strdup(flist), *tok, *sp = NULL;
		for (tok = strtok_r(dup, ",", &sp); tok; tok = strtok_r(NULL, ",", &sp)) {
			int found = 0;
			for (int i = 0; i < NALL; i++)
				if (!strcmp(tok, all_files[i].name)) {
					sel[nsel++] = i;
					found = 1;
				}
			if (!found) {
				fprintf(stderr, "unknown file '%s'; known:", tok);
				for (int i = 0; i < NALL; i++)
					fprintf(stderr, " %s", all_files[i].name);
				fprintf(stderr, "\n");
				return 2;
			}
		}
	}
	if (dur > 60) dur = 60;
	if (dur < 1) dur = 1;
	if (burst_ms > 100) burst_ms = 100;
	if (burst_ms < 1) burst_ms = 1;
	signal(SIGPIPE, SIG_IGN);

	/* E */
	int np[2];
	if (pipe2(np, O_NONBLOCK))
		return 1;
	fcntl(np[0], F_SETFD, FD_CLOEXEC);
	E_pid = fork();
	if (E_pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);	/* survives exec (no setuid) */
		rt_limit();	/* inherited over exec: covers -P boosts */
		setpriority(PRIO_PROCESS, 0, e_nice);	/* heavier CFS weight */
		pin(0, pinboost ? 0 : 1);
		char mbs[16], fds[16];
		snprintf(mbs, sizeof(mbs), "%d", mb);
		snprintf(fds, sizeof(fds), "%d", np[1]);
		char *av[] = { "rc-execloop", "--child", mbs, fds, NULL };
		execv("/proc/self/exe", av);
		_exit(127);
	}
	close(np[1]);

	/* S */
	if (pipe2(spin_cmd, O_CLOEXEC))
		return 1;
	S_pid = fork();
	if (S_pid == 0) {
		close(np[0]);
		spinner();
		_exit(0);
	}
	usleep(100000);

	pthread_t tr, tw_, tk, tc;
	pthread_create(&tr, NULL, reader, &fifo_reader);
	while (!R_tid)
		usleep(1000);
	if (trace)
		trace_setup();
	pthread_create(&tw_, NULL, watchdog, NULL);
	pthread_create(&tk, NULL, estack_thread, NULL);
	pthread_create(&tc, NULL, controller, NULL);

	fprintf(stderr, "%s", pinboost ? "mode -P: E lives on CPU0 as SCHED_OTHER; at each burst it is pinned to CPU1 + boosted to FIFO 1 (daemon-like)\n" : "");
	fprintf(stderr, "E(exec loop, CPU%d)=%d S(spinner, CPU1)=%d R(reader tid, CPU0, %s)=%d  "
		"burst=%d ms, old mm=%d MB, %d s\n", pinboost ? 0 : 1, E_pid, S_pid,
		fifo_reader ? "FIFO 20" : "OTHER", R_tid, burst_ms, mb, dur);
	uint64_t tend = now_ns() + (uint64_t)dur * 1000000000ull;
	char b[4096];
	while (now_ns() < tend) {
		usleep(10000);
		ssize_t n;
		while ((n = read(np[0], b, sizeof(b))) > 0)
			execs += n;
	}
	stop = 1;
	pthread_join(tc, NULL);
	/* reader may be blocked; give it time */
	pthread_join(tr, NULL);
	pthread_join(tw_, NULL);
	pthread_join(tk, NULL);
	if (trace)
		trace_teardown();
	set_fifo(S_pid, 0);
	kill(E_pid, SIGKILL);
	kill(S_pid, SIGKILL);
	waitpid(E_pid, NULL, 0);
	waitpid(S_pid, NULL, 0);

	printf("execs by E: %llu (%.1f/s); FIFO bursts on CPU1: %llu x %d ms\n",
	       (unsigned long long)execs, execs / (double)dur,
	       (unsigned long long)bursts, burst_ms);
	printf("%-38s %8s %6s %10s %7s %7s %7s\n", "file", "reads", "errs",
	       "max(ms)", ">1ms", ">5ms", ">50ms");
	for (int f = 0; f < nsel; f++)
		printf("%-38s %8llu %6llu %10.3f %7llu %7llu %7llu\n", fname_of(f),
		       (unsigned long long)st[f].n, (unsigned long long)st[f].err,
		       st[f].max_ns / 1e6, (unsigned long long)st[f].over1,
		       (unsigned long long)st[f].over5,
		       (unsigned long long)st[f].over50);
	printf("slow reads (>5 ms), in ms:");
	for (int i = 0; i < nslow && i < 200; i++)
		printf("%s %s=%.1f", i % 8 ? "" : "\n ", all_files[sel[slow[i].file]].name,
		       slow[i].dur / 1e6);
	printf("\n");
	int k = atomic_load(&ncaps);
	for (int i = 0; i < k; i++) {
		struct capture *c = &caps[i];
		for (int j = 0; j < nslow; j++)
			if (slow[j].t0 == c->at)
				c->dur = slow[j].dur;
		printf("\n=== slow read #%d: %s took %.3f ms (burst active at capture: %d) ===\n",
		       i, fname_of(c->file), c->dur / 1e6, c->burst_active);
		printf("    read started %.6f, capture ran %.6f..%.6f (CLOCK_MONOTONIC s; still blocked then: %s)\n",
		       c->at / 1e9, c->t_cap / 1e9, c->t_cap_end / 1e9,
		       c->t_cap_end < c->at + c->dur ? "yes" : "no");
		printf("--- reader state '%c', stack (/proc/self/task/%d/stack) at +5 ms:\n%s", c->rstate, R_tid, c->rstack);
		printf("--- E: wchan '%s' (this /proc/E/wchan read took %.3f ms: it takes the same lock);\n"
		       "       then %s\n", c->ewchan, c->wchan_ns / 1e6, c->estate);
		printf("--- E /proc/%d/stack afterwards (read took %.3f ms; E's stack *during* the wait is only\n"
		       "    observable with -t, since /proc/E/{stack,wchan,stat} all wait for the same lock):\n%s\n", E_pid,
		       c->estack_ns / 1e6, c->estack);
	}
	return 0;
}
