/* Logging: to the journal when journald is there, to stderr otherwise. */
#pragma once

#include <errno.h>
#include <stdarg.h>
#include <sys/types.h>

enum log_level {
	LOG_LEVEL_ERROR = 3,
	LOG_LEVEL_WARNING = 4,
	LOG_LEVEL_NOTICE = 5,
	LOG_LEVEL_INFO = 6,
	LOG_LEVEL_DEBUG = 7,
};

void log_init(const char *ident);
void log_set_level(enum log_level level);
enum log_level log_get_level(void);
/* Parses "error", "warning", "notice", "info", "debug"; -EINVAL otherwise. */
int log_level_from_string(const char *s);

__attribute__((format(printf, 3, 4)))
int log_full_errno(enum log_level level, int error, const char *fmt, ...);

/* One line about one task, with TID, COMM, CLASS and ACTION journal fields.
 * Per-task warnings go through a rate limit so a storm cannot flood the log. */
__attribute__((format(printf, 6, 7)))
void log_task(enum log_level level, pid_t tid, const char *comm,
	      const char *class_name, const char *action, const char *fmt, ...);

/* log_*_errno() return -abs(error), so "return log_error_errno(r, ...)" works.
 * "%m" in fmt prints strerror(error). */
#define log_error_errno(e, ...) log_full_errno(LOG_LEVEL_ERROR, (e), __VA_ARGS__)
#define log_warning_errno(e, ...) log_full_errno(LOG_LEVEL_WARNING, (e), __VA_ARGS__)
#define log_info_errno(e, ...) log_full_errno(LOG_LEVEL_INFO, (e), __VA_ARGS__)
#define log_debug_errno(e, ...) log_full_errno(LOG_LEVEL_DEBUG, (e), __VA_ARGS__)
#define log_error(...) ((void)log_full_errno(LOG_LEVEL_ERROR, 0, __VA_ARGS__))
#define log_warning(...) ((void)log_full_errno(LOG_LEVEL_WARNING, 0, __VA_ARGS__))
#define log_notice(...) ((void)log_full_errno(LOG_LEVEL_NOTICE, 0, __VA_ARGS__))
#define log_info(...) ((void)log_full_errno(LOG_LEVEL_INFO, 0, __VA_ARGS__))
#define log_debug(...) ((void)log_full_errno(LOG_LEVEL_DEBUG, 0, __VA_ARGS__))
