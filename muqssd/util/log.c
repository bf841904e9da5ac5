#include "log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <systemd/sd-journal.h>

#include "ratelimit.h"
#include "text.h"
#include "time_util.h"

static enum log_level max_level = LOG_LEVEL_INFO;
static const char *log_ident = "muqssd";
static int use_journal = -1;

/* Per-task warnings: at most this many per window, then one "suppressed". */
#define TASK_BURST 10
#define TASK_WINDOW_NS (5ULL * 1000000000ULL)

void log_init(const char *ident)
{
	if (ident)
		log_ident = ident;
	/* JOURNAL_STREAM means stderr already goes to the journal; talk to
	 * it natively so fields survive. A plain terminal keeps stderr. */
	use_journal = getenv("JOURNAL_STREAM") != NULL &&
		      access("/run/systemd/journal/socket", W_OK) == 0;
}

void log_set_level(enum log_level level)
{
	max_level = level;
}

enum log_level log_get_level(void)
{
	return max_level;
}

int log_level_from_string(const char *s)
{
	static const struct {
		const char *name;
		enum log_level level;
	} names[] = {
		{ "error", LOG_LEVEL_ERROR }, { "warning", LOG_LEVEL_WARNING },
		{ "notice", LOG_LEVEL_NOTICE }, { "info", LOG_LEVEL_INFO },
		{ "debug", LOG_LEVEL_DEBUG },
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(s, names[i].name) == 0)
			return names[i].level;
	return -EINVAL;
}

static const char *level_prefix(enum log_level level)
{
	switch (level) {
	case LOG_LEVEL_ERROR: return "error: ";
	case LOG_LEVEL_WARNING: return "warning: ";
	default: return "";
	}
}

/* Every line goes out escaped: a task's name (and so a message that quotes
 * it) is bytes its owner chose, and a raw newline or ESC would fake a line
 * or paint the terminal of whoever reads the log. */
static void emit(enum log_level level, const char *raw, pid_t tid,
		 const char *raw_comm, const char *class_name, const char *action)
{
	char msg[4096], comm[4 * 16 + 1];

	text_escape(raw, msg, sizeof(msg));
	text_escape(raw_comm, comm, sizeof(comm));
	if (use_journal < 0)
		log_init(NULL);
	if (use_journal) {
		if (tid > 0)
			sd_journal_send("MESSAGE=%s", msg, "PRIORITY=%d", (int)level,
					"SYSLOG_IDENTIFIER=%s", log_ident,
					"TID=%d", (int)tid, "COMM=%s", comm,
					"CLASS=%s", class_name ? class_name : "",
					"ACTION=%s", action ? action : "", NULL);
		else
			sd_journal_send("MESSAGE=%s", msg, "PRIORITY=%d", (int)level,
					"SYSLOG_IDENTIFIER=%s", log_ident, NULL);
		return;
	}
	fprintf(stderr, "%s: %s%s\n", log_ident, level_prefix(level), msg);
}

int log_full_errno(enum log_level level, int error, const char *fmt, ...)
{
	int saved = errno;

	error = abs(error);
	if (level <= max_level) {
		char buf[1024];
		va_list ap;

		errno = error;
		va_start(ap, fmt);
		vsnprintf(buf, sizeof(buf), fmt, ap);
		va_end(ap);
		emit(level, buf, 0, NULL, NULL, NULL);
	}
	errno = saved;
	return -error;
}

static int task_rate_ok(void)
{
	static struct ratelimit rl = RATELIMIT_INIT(TASK_WINDOW_NS, TASK_BURST);
	unsigned dropped;
	bool ok = ratelimit_below(&rl, now_nsec(CLOCK_MONOTONIC), &dropped);

	if (dropped)
		log_warning("%u per-task messages suppressed", dropped);
	return ok;
}

void log_task(enum log_level level, pid_t tid, const char *comm,
	      const char *class_name, const char *action, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	int n;

	if (level > max_level)
		return;
	if (level <= LOG_LEVEL_WARNING && !task_rate_ok())
		return;
	n = snprintf(buf, sizeof(buf), "%d (%s): ", (int)tid, comm ? comm : "?");
	if (n < 0 || (size_t)n >= sizeof(buf))
		n = 0;
	va_start(ap, fmt);
	vsnprintf(buf + n, sizeof(buf) - (size_t)n, fmt, ap);
	va_end(ap);
	emit(level, buf, tid, comm, class_name, action);
}
