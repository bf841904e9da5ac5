/* The tunables, once: name, range, default, unit and help. Read by the
 * daemon's config file and control socket, the scheduler core's range
 * checks and muqssctl --help. Header only, so the core needs no library.
 * The names are wire names (PROTOCOL.md): rename none. Help fits one
 * line of muqssctl --help. */
#pragma once

/* X(ID, name, kind, config_tunables field, min, max, default, unit, help)
 * kind: UINT, or BOOL (a config file also takes yes/no/on/off). */
#define MUQSS_TUNABLES(X)                                                                    \
	X(RR_INTERVAL, "rr_interval", UINT, rr_interval_ms, 1, 1000, 6, " ms",              \
	  "slice before the deadline expires")                       \
	X(INTERACTIVE, "interactive", BOOL, interactive, 0, 1, 1, "",                        \
	  "a waking task preempts a later deadline")                              \
	X(ISO_CPU, "iso_cpu", UINT, iso_cpu, 0, 100, 70, "%",                                 \
	  "ISO's CPU share before it is demoted")                        \
	X(YIELD_TYPE, "yield_type", UINT, yield_type, 0, 2, 1, "",                           \
	  "sched_yield: 0 none, 1 resched, 2 expire")

/* TUNABLE_RR_INTERVAL_MIN, _MAX, _DEFAULT and so on. */
enum {
#define MUQSS_TUNABLE_LIMITS(id, name, kind, field, min, max, def, unit, help) \
	TUNABLE_##id##_MIN = (min), TUNABLE_##id##_MAX = (max), TUNABLE_##id##_DEFAULT = (def),
	MUQSS_TUNABLES(MUQSS_TUNABLE_LIMITS)
#undef MUQSS_TUNABLE_LIMITS
};

/* The one tunable that takes a word: how iso_cpu is read. */
#define TUNABLE_ISO_READING "iso_reading"
#define TUNABLE_ISO_READING_MACHINE "machine" /* BFS: all CPUs together; the default */
#define TUNABLE_ISO_READING_PER_CPU "per-cpu" /* MuQSS: each CPU */
#define TUNABLE_ISO_READING_VALUES TUNABLE_ISO_READING_MACHINE "|" TUNABLE_ISO_READING_PER_CPU
#define TUNABLE_ISO_READING_HELP "iso_cpu of all CPUs, or of each"

/* "rr_interval, interactive, iso_cpu, yield_type, iso_reading" */
#define MUQSS_TUNABLE_NAME_COMMA(id, name, kind, field, min, max, def, unit, help) name ", "
#define MUQSS_TUNABLE_NAMES MUQSS_TUNABLES(MUQSS_TUNABLE_NAME_COMMA) TUNABLE_ISO_READING
