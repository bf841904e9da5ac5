/* muqssctl: shared between its verbs. */
#pragma once

#include <stdbool.h>
#include <cjson/cJSON.h>

#include "muqss-client.h"

/* Exit codes, documented in muqssctl(1). */
enum {
	EXIT_OK = 0,
	EXIT_FAIL = 1,	      /* the daemon could not do it */
	EXIT_USAGE = 2,	      /* bad command line */
	EXIT_NO_DAEMON = 3,   /* cannot connect */
	EXIT_DENIED = 4,      /* permission denied */
	EXIT_NO_PROCESS = 5,  /* no such process */
	EXIT_BAD_VALUE = 6,   /* value out of range, unknown tunable */
	EXIT_RUN_FAILED = 125, /* run: muqssctl failed before the program started */
};

struct ctl {
	const char *socket; /* NULL: the library's default */
	bool json;
	struct muqss_client *client; /* connected on first use */
};

/* Connects if not yet; prints the error and returns an exit code > 0 on
 * failure, 0 on success. */
int ctl_connect(struct ctl *ctl);
/* Prints "muqssctl: what: reason" for r and returns the exit code for it. */
int ctl_fail(struct ctl *ctl, int r, const char *what);
/* Parses a document the daemon sent; NULL (with a message) if malformed. */
cJSON *ctl_parse(const char *text);
void ctl_print_json(const char *text);

int verb_status(struct ctl *ctl, int argc, char **argv);
int verb_get(struct ctl *ctl, int argc, char **argv);
int verb_set(struct ctl *ctl, int argc, char **argv);
int verb_class(struct ctl *ctl, int argc, char **argv); /* iso, idleprio, normal, batch */
int verb_run(struct ctl *ctl, int argc, char **argv);
int verb_queues(struct ctl *ctl, int argc, char **argv);
int verb_tasks(struct ctl *ctl, int argc, char **argv);
int verb_reload(struct ctl *ctl, int argc, char **argv);
int verb_top(struct ctl *ctl, int argc, char **argv);
int verb_rules(struct ctl *ctl, int argc, char **argv); /* rules.c */

/* print.c: human tables */
void print_status(const cJSON *status);
void print_queues(const cJSON *doc);
void print_tasks(const cJSON *doc);
const char *format_ns(char *buf, size_t len, double ns);
/* s (NULL: "-") with control characters and invalid bytes escaped. */
const char *print_text(char *buf, size_t size, const char *s);
