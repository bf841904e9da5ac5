/* muqssctl top: a live view of the run queues and of how CPU time splits
 * between the classes. The terminal is put back on every way out. */
#include "muqssctl.h"

#include <errno.h>
#include <limits.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

enum { CLS_NORMAL, CLS_ISO, CLS_IDLEPRIO, CLS_BATCH, CLS_RT, CLS_MAX };
static const char *const class_names[CLS_MAX] = { "normal", "iso", "idleprio", "batch", "rt" };

struct sample {
	int tid;
	int class;
	double cpu_ns;
};

struct top {
	struct sample *prev, *cur;
	size_t n_prev, n_cur;
	double prev_time, share[CLS_MAX];
	bool have_share;
};

static struct termios saved_tio;
static bool tty_raw;
static volatile sig_atomic_t quit_signal;

static void term_restore(void)
{
	if (!tty_raw)
		return;
	/* Cursor back, main screen back, settings back. */
	fputs("\033[?25h\033[?1049l", stdout);
	fflush(stdout);
	tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved_tio);
	tty_raw = false;
}

static void on_quit_signal(int sig)
{
	quit_signal = sig;
}

static int term_raw(void)
{
	struct termios tio;

	if (tcgetattr(STDIN_FILENO, &saved_tio) < 0)
		return -errno;
	tio = saved_tio;
	/* ISIG off: ^C arrives as a key and quits like q. */
	tio.c_lflag &= ~(ICANON | ECHO | ISIG);
	tio.c_cc[VMIN] = 0;
	tio.c_cc[VTIME] = 0;
	if (tcsetattr(STDIN_FILENO, TCSAFLUSH, &tio) < 0)
		return -errno;
	tty_raw = true;
	atexit(term_restore);
	fputs("\033[?1049h\033[?25l", stdout);
	return 0;
}

/* A number from the daemon as an int; 0 for what is not one or does not
 * fit (a cast of 1e300 or NaN is undefined). */
static int int_of(const cJSON *o, const char *key)
{
	double v = cJSON_GetNumberValue(cJSON_GetObjectItem(o, key));

	return v >= INT_MIN && v <= INT_MAX ? (int)v : 0;
}

static int class_from(const char *name)
{
	for (int i = 0; name && i < CLS_MAX; i++)
		if (strcmp(name, class_names[i]) == 0)
			return i;
	return CLS_NORMAL;
}

static int cmp_sample(const void *a, const void *b)
{
	const struct sample *x = a, *y = b;

	return (x->tid > y->tid) - (x->tid < y->tid);
}

static struct sample *find(struct sample *v, size_t n, int tid)
{
	struct sample key = { .tid = tid };

	return v ? bsearch(&key, v, n, sizeof(*v), cmp_sample) : NULL;
}

/* The queues tell a task's class; the task list its CPU time. A task not
 * queued keeps the class it was last seen with. */
static void top_account(struct top *t, const cJSON *queues, const cJSON *tasks, double now)
{
	const cJSON *cpu, *e, *tl = cJSON_GetObjectItem(tasks, "tasks");
	double used[CLS_MAX] = { 0 };
	size_t n = 0, cap = (size_t)cJSON_GetArraySize(tl);
	struct sample *cur = calloc(cap ? cap : 1, sizeof(*cur));
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	if (!cur)
		return;
	cJSON_ArrayForEach(e, tl) {
		struct sample *p;
		cur[n].tid = int_of(e, "tid");
		cur[n].cpu_ns = cJSON_GetNumberValue(cJSON_GetObjectItem(e, "cpu_ns"));
		p = find(t->prev, t->n_prev, cur[n].tid);
		cur[n].class = p ? p->class : CLS_NORMAL;
		n++;
	}
	qsort(cur, n, sizeof(*cur), cmp_sample);
	cJSON_ArrayForEach(cpu, cJSON_GetObjectItem(queues, "cpus"))
		cJSON_ArrayForEach(e, cJSON_GetObjectItem(cpu, "queue")) {
			struct sample *s = find(cur, n, int_of(e, "tid"));
			if (s)
				s->class = class_from(
					cJSON_GetStringValue(cJSON_GetObjectItem(e, "class")));
		}
	for (size_t i = 0; i < n; i++) {
		struct sample *p = find(t->prev, t->n_prev, cur[i].tid);
		if (p && cur[i].cpu_ns >= p->cpu_ns)
			used[cur[i].class] += cur[i].cpu_ns - p->cpu_ns;
	}
	t->have_share = t->prev && now > t->prev_time;
	for (int c = 0; t->have_share && c < CLS_MAX; c++)
		t->share[c] = used[c] / ((now - t->prev_time) * 1e9 * (ncpu > 0 ? ncpu : 1)) * 100;
	free(t->prev);
	t->prev = cur;
	t->n_prev = n;
	t->prev_time = now;
}

static const char *us_text(char *buf, size_t len, const cJSON *w, const char *key)
{
	return format_ns(buf, len, cJSON_GetNumberValue(cJSON_GetObjectItem(w, key)) * 1e3);
}

/* The kernel's wake-to-run wait of each class over the last 5 s (bpf
 * sensor only): p50/p99/max, each the upper bound of a log2 bucket. */
static void draw_wake_latency(const cJSON *wl)
{
	char f[3][32];

	printf("Wake latency 5s (p50/p99/max):");
	for (int c = 0; c < CLS_MAX; c++) {
		const cJSON *w = cJSON_GetObjectItem(wl, class_names[c]);

		if (cJSON_IsObject(w))
			printf("  %s %s/%s/%s", class_names[c], us_text(f[0], sizeof(f[0]), w, "p50_us"),
			       us_text(f[1], sizeof(f[1]), w, "p99_us"),
			       us_text(f[2], sizeof(f[2]), w, "max_us"));
	}
	putchar('\n');
}

static void top_draw(struct top *t, const cJSON *status, const cJSON *queues, bool tty)
{
	struct winsize ws = { .ws_row = 24, .ws_col = 80 };
	const cJSON *cpu, *e, *tun = cJSON_GetObjectItem(status, "tunables");
	const cJSON *wl = cJSON_GetObjectItem(status, "wake_latency");
	char dl[32], slice[32], t0[256], t1[256];
	int rows;

	if (tty) {
		ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws);
		fputs("\033[H\033[2J", stdout);
	}
	rows = ws.ws_row > 6 ? ws.ws_row - 5 : 1;
	if (cJSON_IsObject(wl) && rows > 1)
		rows--;
	printf("muqssd %s  rr_interval %.0f ms  iso_cpu %.0f%%  interactive %.0f   (q quits)\n",
	       print_text(t0, sizeof(t0), cJSON_GetStringValue(cJSON_GetObjectItem(status, "version"))),
	       cJSON_GetNumberValue(cJSON_GetObjectItem(tun, "rr_interval")),
	       cJSON_GetNumberValue(cJSON_GetObjectItem(tun, "iso_cpu")),
	       cJSON_GetNumberValue(cJSON_GetObjectItem(tun, "interactive")));
	printf("CPU share:");
	for (int c = 0; c < CLS_MAX; c++)
		if (t->have_share)
			printf("  %s %5.1f%%", class_names[c], t->share[c]);
		else
			printf("  %s   -  ", class_names[c]);
	putchar('\n');
	if (cJSON_IsObject(wl))
		draw_wake_latency(wl);
	printf("\n%4s %7s %-16s %-8s %4s %10s %10s\n", "CPU", "TID", "COMM", "CLASS", "NICE",
	       "DEADLINE", "SLICE");
	cJSON_ArrayForEach(cpu, cJSON_GetObjectItem(queues, "cpus")) {
		int c = int_of(cpu, "cpu");
		if (cJSON_GetArraySize(cJSON_GetObjectItem(cpu, "queue")) == 0 && rows-- > 0)
			printf("%4d %7s\n", c, "-");
		cJSON_ArrayForEach(e, cJSON_GetObjectItem(cpu, "queue")) {
			if (rows-- <= 0)
				break;
			printf("%4d %7.0f %-16s %-8s %4.0f %10s %10s\n", c,
			       cJSON_GetNumberValue(cJSON_GetObjectItem(e, "tid")),
			       print_text(t0, sizeof(t0), cJSON_GetStringValue(cJSON_GetObjectItem(e, "comm"))),
			       print_text(t1, sizeof(t1), cJSON_GetStringValue(cJSON_GetObjectItem(e, "class"))),
			       cJSON_GetNumberValue(cJSON_GetObjectItem(e, "nice")),
			       format_ns(dl, sizeof(dl),
					 cJSON_GetNumberValue(cJSON_GetObjectItem(e, "deadline_rel_ns"))),
			       format_ns(slice, sizeof(slice),
					 cJSON_GetNumberValue(cJSON_GetObjectItem(e, "slice_left_ns"))));
		}
	}
	fflush(stdout);
}

static int top_sample(struct ctl *ctl, struct top *t, bool tty)
{
	char *s = NULL, *q = NULL, *k = NULL;
	cJSON *status = NULL, *queues = NULL, *tasks = NULL;
	struct timespec ts;
	int r;

	if ((r = muqss_status_json(ctl->client, &s)) < 0 ||
	    (r = muqss_queues_json(ctl->client, -1, &q)) < 0 ||
	    (r = muqss_tasks_json(ctl->client, &k)) < 0)
		goto out;
	status = cJSON_Parse(s);
	queues = cJSON_Parse(q);
	tasks = cJSON_Parse(k);
	if (!status || !queues || !tasks) {
		r = -EBADMSG;
		goto out;
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	top_account(t, queues, tasks, (double)ts.tv_sec + (double)ts.tv_nsec / 1e9);
	top_draw(t, status, queues, tty);
out:
	cJSON_Delete(status);
	cJSON_Delete(queues);
	cJSON_Delete(tasks);
	free(s);
	free(q);
	free(k);
	return r;
}

int verb_top(struct ctl *ctl, int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_quit_signal };
	struct top t = { 0 };
	long iterations = -1, delay_ms = 1000;
	bool tty;
	int c, r, ret = EXIT_OK;

	while ((c = getopt(argc, argv, "+n:d:")) >= 0) {
		char *end;
		if (c == 'n')
			iterations = strtol(optarg, &end, 10);
		else if (c == 'd')
			delay_ms = (long)(strtod(optarg, &end) * 1000);
		else
			return EXIT_USAGE;
		if (*end || end == optarg || (c == 'n' && iterations < 1) || (c == 'd' && delay_ms < 100)) {
			fprintf(stderr, "muqssctl top: -n takes a count >= 1, -d seconds >= 0.1\n");
			return EXIT_USAGE;
		}
	}
	if ((r = ctl_connect(ctl)) > 0)
		return r;
	tty = isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	if (tty && term_raw() < 0)
		tty = false;
	while (!quit_signal && iterations != 0) {
		struct pollfd p = { .fd = STDIN_FILENO, .events = POLLIN };
		char key;

		r = top_sample(ctl, &t, tty);
		if (r < 0) {
			term_restore();
			ret = ctl_fail(ctl, r, "top");
			break;
		}
		if (iterations > 0 && --iterations == 0)
			break;
		if (!tty) {
			putchar('\n');
			poll(NULL, 0, (int)delay_ms);
			continue;
		}
		if (poll(&p, 1, (int)delay_ms) > 0 && read(STDIN_FILENO, &key, 1) == 1 &&
		    (key == 'q' || key == 'Q' || key == 3))
			break;
	}
	term_restore();
	free(t.prev);
	return ret;
}
