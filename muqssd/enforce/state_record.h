/* One task's crash-restore record: who it is, what it had, what we changed.
 * Pure text encode/decode, so it can be tested without tasks. */
#pragma once

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Which levers were ever pulled: restore puts those back (idempotent). */
enum {
	STATE_CHANGED_POLICY = 1u << 0, /* policy, priority, nice, slice */
	STATE_CHANGED_AFFINITY = 1u << 1,
};

#define STATE_BOOT_ID_LEN 36

struct state_record {
	pid_t tid;
	pid_t tgid;
	uint64_t start_time;

	int policy;
	int priority;
	int nice;
	bool reset_on_fork;
	uint64_t slice_ns;
	cpu_set_t affinity;

	/* CLOCK_BOOTTIME ns of the record's first write, before our first
	 * change: nothing that started earlier inherited one. 0 in records
	 * of an older muqssd. */
	uint64_t created_ns;

	/* CLOCK_BOOTTIME ns of our last unpin (0: none), and the pin it
	 * ended: a child forked just before copied that pin, and a muqssd
	 * that died before it read the fork left the child pinned. */
	uint64_t unpinned_ns;
	cpu_set_t unpinned_from;
	/* Every CPU we pinned it to since created_ns (each pin is one CPU).
	 * A child forked under a pin we moved since, or the deadman undid,
	 * carries one of them with no record of its own. */
	cpu_set_t pinned_cpus;

	/* /proc/sys/kernel/random/boot_id when written: a pid and start time
	 * name a task only within one boot. "" in records of an older muqssd. */
	char boot_id[STATE_BOOT_ID_LEN + 1];

	unsigned changed; /* STATE_CHANGED_* */
	bool stopped;	  /* SIGSTOPped by us at least once: SIGCONT on restore */
	bool boosted;	  /* boosted at least once (sticky: a boost costs no write) */
};

#define STATE_RECORD_MAX 8192

/* Writes at most size bytes; returns the length or -ENOBUFS. */
int state_record_encode(const struct state_record *r, char *buf, size_t size);
/* -EBADMSG on anything malformed or missing, and on what muqssd never
 * records: PID 1, or an original policy other than SCHED_OTHER, SCHED_BATCH
 * or SCHED_IDLE (it leaves realtime tasks alone), with a priority. */
int state_record_decode(const char *buf, struct state_record *ret);

/* "0-3,6" <-> cpu_set_t; an empty mask is -EINVAL. */
int cpulist_format(const cpu_set_t *set, char *buf, size_t size);
int cpulist_parse(const char *s, cpu_set_t *ret);
