#include "state_record.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STATE_RECORD_VERSION 1

int cpulist_format(const cpu_set_t *set, char *buf, size_t size)
{
	size_t len = 0;
	int cpu = 0;

	if (CPU_COUNT(set) == 0)
		return -EINVAL;
	buf[0] = '\0';
	while (cpu < CPU_SETSIZE) {
		int last;
		int n;

		if (!CPU_ISSET(cpu, set)) {
			cpu++;
			continue;
		}
		for (last = cpu; last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, set); last++)
			;
		if (last == cpu)
			n = snprintf(buf + len, size - len, "%s%d", len ? "," : "", cpu);
		else
			n = snprintf(buf + len, size - len, "%s%d-%d", len ? "," : "", cpu, last);
		if (n < 0 || (size_t)n >= size - len)
			return -ENOBUFS;
		len += (size_t)n;
		cpu = last + 1;
	}
	return (int)len;
}

static int parse_cpu(const char *s, char **end)
{
	long v;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtol(s, end, 10);
	if (errno || v < 0 || v >= CPU_SETSIZE)
		return -EINVAL;
	return (int)v;
}

int cpulist_parse(const char *s, cpu_set_t *ret)
{
	CPU_ZERO(ret);
	for (;;) {
		char *end;
		int a, b;

		a = parse_cpu(s, &end);
		if (a < 0)
			return a;
		b = a;
		if (*end == '-') {
			b = parse_cpu(end + 1, &end);
			if (b < a)
				return -EINVAL;
		}
		for (int c = a; c <= b; c++)
			CPU_SET(c, ret);
		if (*end != ',')
			return *end ? -EINVAL : 0;
		s = end + 1;
	}
}

/* Appends "key=cpulist\n" at buf + len; returns the new length, or -errno. */
static int append_cpus(char *buf, size_t size, size_t len, const char *key, const cpu_set_t *set)
{
	char cpus[STATE_RECORD_MAX / 2];
	int n = cpulist_format(set, cpus, sizeof(cpus));

	if (n < 0)
		return n;
	n = snprintf(buf + len, size - len, "%s=%s\n", key, cpus);
	if (n < 0 || (size_t)n >= size - len)
		return -ENOBUFS;
	return (int)(len + (size_t)n);
}

int state_record_encode(const struct state_record *r, char *buf, size_t size)
{
	char cpus[STATE_RECORD_MAX / 2];
	int n;

	n = cpulist_format(&r->affinity, cpus, sizeof(cpus));
	if (n < 0)
		return n;
	n = snprintf(buf, size,
		     "version=%d\n"
		     "tid=%d\n"
		     "tgid=%d\n"
		     "start=%llu\n"
		     "policy=%d\n"
		     "priority=%d\n"
		     "nice=%d\n"
		     "reset_on_fork=%d\n"
		     "slice_ns=%llu\n"
		     "affinity=%s\n"
		     "changed=%u\n"
		     "stopped=%d\n"
		     "boosted=%d\n"
		     "created_ns=%llu\n"
		     "boot_id=%s\n",
		     STATE_RECORD_VERSION, (int)r->tid, (int)r->tgid,
		     (unsigned long long)r->start_time, r->policy, r->priority, r->nice,
		     r->reset_on_fork, (unsigned long long)r->slice_ns, cpus, r->changed,
		     r->stopped, r->boosted, (unsigned long long)r->created_ns, r->boot_id);
	if (n < 0 || (size_t)n >= size)
		return -ENOBUFS;
	if (r->unpinned_ns) {
		size_t len = (size_t)n;

		n = snprintf(buf + len, size - len, "unpinned_ns=%llu\n",
			     (unsigned long long)r->unpinned_ns);
		if (n < 0 || (size_t)n >= size - len)
			return -ENOBUFS;
		n = append_cpus(buf, size, len + (size_t)n, "unpinned_from", &r->unpinned_from);
		if (n < 0)
			return n;
	}
	if (CPU_COUNT(&r->pinned_cpus))
		n = append_cpus(buf, size, (size_t)n, "pinned_cpus", &r->pinned_cpus);
	return n;
}

static int parse_ull(const char *v, unsigned long long max, unsigned long long *ret)
{
	char *end;

	if (*v < '0' || *v > '9')
		return -EBADMSG;
	errno = 0;
	*ret = strtoull(v, &end, 10);
	if (errno || *end || *ret > max)
		return -EBADMSG;
	return 0;
}

static int parse_int(const char *v, int min, int max, int *ret)
{
	char *end;
	long l;

	errno = 0;
	l = strtol(v, &end, 10);
	if (errno || end == v || *end || l < min || l > max)
		return -EBADMSG;
	*ret = (int)l;
	return 0;
}

enum {
	SEEN_VERSION = 1 << 0, SEEN_TID = 1 << 1, SEEN_TGID = 1 << 2,
	SEEN_START = 1 << 3, SEEN_POLICY = 1 << 4, SEEN_NICE = 1 << 5,
	SEEN_AFFINITY = 1 << 6, SEEN_CHANGED = 1 << 7,
	SEEN_REQUIRED = (1 << 8) - 1,
};

static int decode_line(char *key, const char *v, struct state_record *r, unsigned *seen)
{
	unsigned long long u;
	int i, k;

	if (!strcmp(key, "version")) {
		*seen |= SEEN_VERSION;
		return parse_int(v, STATE_RECORD_VERSION, STATE_RECORD_VERSION, &i);
	}
	if (!strcmp(key, "tid") || !strcmp(key, "tgid")) {
		/* Never PID 1: the enforcer refuses it, so no record names it. */
		k = parse_int(v, 2, 0x3fffffff, &i);
		if (key[1] == 'i') {
			r->tid = i;
			*seen |= SEEN_TID;
		} else {
			r->tgid = i;
			*seen |= SEEN_TGID;
		}
		return k;
	}
	if (!strcmp(key, "start")) {
		*seen |= SEEN_START;
		k = parse_ull(v, UINT64_MAX, &u);
		r->start_time = u;
		return k;
	}
	if (!strcmp(key, "policy")) {
		*seen |= SEEN_POLICY;
		k = parse_int(v, 0, 7, &r->policy);
		/* The originals of tasks muqssd manages; putting back anything
		 * else (SCHED_FIFO 99) would be granting it. */
		if (r->policy != SCHED_OTHER && r->policy != SCHED_BATCH && r->policy != SCHED_IDLE)
			return -EBADMSG;
		return k;
	}
	if (!strcmp(key, "priority"))
		return parse_int(v, 0, 0, &r->priority);
	if (!strcmp(key, "boot_id")) {
		size_t n = strspn(v, "0123456789abcdef-");

		/* Empty: written without one; restore drops it. */
		if ((n != STATE_BOOT_ID_LEN && n != 0) || v[n])
			return -EBADMSG;
		memcpy(r->boot_id, v, n + 1);
		return 0;
	}
	if (!strcmp(key, "nice")) {
		*seen |= SEEN_NICE;
		return parse_int(v, -20, 19, &r->nice);
	}
	if (!strcmp(key, "reset_on_fork")) {
		k = parse_int(v, 0, 1, &i);
		r->reset_on_fork = i;
		return k;
	}
	if (!strcmp(key, "created_ns")) {
		k = parse_ull(v, UINT64_MAX, &u);
		r->created_ns = u;
		return k;
	}
	if (!strcmp(key, "unpinned_ns")) {
		k = parse_ull(v, UINT64_MAX, &u);
		r->unpinned_ns = u;
		return k;
	}
	if (!strcmp(key, "unpinned_from"))
		return cpulist_parse(v, &r->unpinned_from) < 0 ? -EBADMSG : 0;
	if (!strcmp(key, "pinned_cpus"))
		return cpulist_parse(v, &r->pinned_cpus) < 0 ? -EBADMSG : 0;
	if (!strcmp(key, "slice_ns")) {
		k = parse_ull(v, UINT64_MAX, &u);
		r->slice_ns = u;
		return k;
	}
	if (!strcmp(key, "affinity")) {
		*seen |= SEEN_AFFINITY;
		return cpulist_parse(v, &r->affinity) < 0 ? -EBADMSG : 0;
	}
	if (!strcmp(key, "changed")) {
		*seen |= SEEN_CHANGED;
		k = parse_int(v, 0, STATE_CHANGED_POLICY | STATE_CHANGED_AFFINITY, &i);
		r->changed = (unsigned)i;
		return k;
	}
	if (!strcmp(key, "stopped") || !strcmp(key, "boosted")) {
		k = parse_int(v, 0, 1, &i);
		if (key[0] == 's')
			r->stopped = i;
		else
			r->boosted = i;
		return k;
	}
	/* A newer writer may add keys; the version line guards the meaning. */
	return 0;
}

int state_record_decode(const char *buf, struct state_record *ret)
{
	char copy[STATE_RECORD_MAX];
	unsigned seen = 0;
	char *line, *save = NULL;
	size_t len = strlen(buf);

	if (len >= sizeof(copy))
		return -EBADMSG;
	memcpy(copy, buf, len + 1);
	memset(ret, 0, sizeof(*ret));
	for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *eq = strchr(line, '=');

		if (!eq)
			return -EBADMSG;
		*eq = '\0';
		if (decode_line(line, eq + 1, ret, &seen) < 0)
			return -EBADMSG;
	}
	if ((seen & SEEN_REQUIRED) != SEEN_REQUIRED)
		return -EBADMSG;
	/* An unpin names the pin it ended. */
	if (ret->unpinned_ns && CPU_COUNT(&ret->unpinned_from) == 0)
		return -EBADMSG;
	return 0;
}
