/* The daemon's configuration: tunables, scope, exemptions, paths. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "config_paths.h"

#define CONFIG_DEFAULT_PATH MUQSS_SYSCONFDIR "/muqssd.conf"
#define CONFIG_DEFAULT_SOCKET "/run/muqssd/control"
#define CONFIG_DEFAULT_STATE_DIR "/run/muqssd"
#define CONFIG_DEFAULT_RULES_DIR MUQSS_SYSCONFDIR "/muqssd.rules.d"

/* How ISO's iso_cpu cap is read (MUQSS.md §4). */
enum iso_reading {
	ISO_READING_MACHINE = 0, /* BFS: share of all CPUs, window 5 s x nr_cpus */
	ISO_READING_PER_CPU = 1, /* MuQSS: share of each CPU */
};

/* kernel.sched_autogroup_enabled while muqssd runs. */
enum autogroup_mode {
	AUTOGROUP_KEEP = 0, /* as the system has it */
	AUTOGROUP_OFF = 1,  /* 0, so nice acts across sessions; put back at exit */
};

/* Ranges, defaults and help: the table in tunables.h (libmuqss-client/proto). */
struct config_tunables {
	unsigned rr_interval_ms;
	unsigned interactive;
	unsigned iso_cpu;
	unsigned yield_type;
	enum iso_reading iso_reading;
};

/* How tasks' forks, execs and exits are learnt (muqssd/track/sensor.h). */
enum sensor_kind {
	SENSOR_AUTO = 0,   /* bpf where it loads, else connector */
	SENSOR_BPF,	   /* programs in the kernel, a ring buffer */
	SENSOR_CONNECTOR,  /* the proc connector */
	SENSOR_POLL,	   /* /proc, every poll_interval_ms */
};
const char *sensor_kind_name(enum sensor_kind kind);
/* The kind a name means, or -EINVAL. */
int sensor_kind_from_string(const char *s);

enum scope_kind {
	SCOPE_ALL = 0, /* every user-space task */
	SCOPE_PID,     /* a process and its descendants */
	SCOPE_CGROUP,  /* a cgroup subtree */
};

struct config_exempt {
	char **comms;	/* NULL-terminated; exact comm names */
	char **exes;	/* NULL-terminated; exe path globs */
	char **cgroups; /* NULL-terminated; cgroup path prefixes */
};

struct config {
	struct config_tunables tunables;

	enum scope_kind scope;
	pid_t scope_pid;
	char *scope_cgroup;

	struct config_exempt exempt;

	unsigned reconcile_interval_ms; /* default 10000 */
	unsigned poll_interval_ms;	/* /proc polling fallback, default 250 */
	bool force_poll;		/* = sensor poll, kept for old configs */
	enum sensor_kind sensor;	/* default auto */
	unsigned idleprio_stop_max_ms;	/* default 1000 */
	enum autogroup_mode autogroup;	/* read at start; default keep */

	char *socket_path;
	unsigned socket_mode; /* default 0666 */
	char *socket_group;   /* NULL: root's group */
	char *admin_group;    /* NULL: root only */

	bool rtkit;	      /* serve org.freedesktop.RealtimeKit1; default off */

	char *state_dir; /* crash-restore state, default /run/muqssd */
	char *rules_dir; /* default /etc/muqssd/muqssd.rules.d */

	int log_level; /* enum log_level */
};

/* Fills in the built-in defaults. */
void config_init_defaults(struct config *c);
void config_free(struct config *c);
/* Deep copy into *dst (not freed first); -ENOMEM leaves *dst untouched. */
int config_copy(struct config *dst, const struct config *src);
