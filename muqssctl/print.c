/* Human tables from the daemon's JSON. Unknown fields are skipped, so a
 * newer daemon's additions do not break an older muqssctl. Every string
 * goes through text_escape(): a process name is bytes its owner chose, and
 * the terminal showing it may be root's. */
#include "muqssctl.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "text.h"

/* Text fields of one row: each gets its own slot. */
#define TEXT_SLOT 256

static double num(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItem(o, key);

	return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

const char *print_text(char *buf, size_t size, const char *s)
{
	return text_escape(s ? s : "-", buf, size);
}

static const char *str(char *buf, const cJSON *o, const char *key)
{
	return print_text(buf, TEXT_SLOT, cJSON_GetStringValue(cJSON_GetObjectItem(o, key)));
}

const char *format_ns(char *buf, size_t len, double ns)
{
	double a = ns < 0 ? -ns : ns;

	if (a >= 1e9)
		snprintf(buf, len, "%.2fs", ns / 1e9);
	else if (a >= 1e6)
		snprintf(buf, len, "%.2fms", ns / 1e6);
	else if (a >= 1e3)
		snprintf(buf, len, "%.1fus", ns / 1e3);
	else
		snprintf(buf, len, "%.0fns", ns);
	return buf;
}

static void print_pairs(const char *title, const cJSON *obj)
{
	char t[2][TEXT_SLOT];
	const cJSON *v;
	bool first = true;

	if (!cJSON_IsObject(obj))
		return;
	printf("%-10s ", print_text(t[0], TEXT_SLOT, title));
	cJSON_ArrayForEach(v, obj) {
		printf("%s%s ", first ? "" : ", ", print_text(t[0], TEXT_SLOT, v->string));
		if (cJSON_IsNumber(v))
			printf("%.0f", v->valuedouble);
		else if (cJSON_IsString(v))
			printf("%s", print_text(t[1], TEXT_SLOT, v->valuestring));
		else if (cJSON_IsBool(v))
			printf("%s", cJSON_IsTrue(v) ? "yes" : "no");
		else
			printf("...");
		first = false;
	}
	putchar('\n');
}

void print_status(const cJSON *s)
{
	double up_s = num(s, "uptime_s");
	unsigned long up = up_s > 0 && up_s < 1e15 ? (unsigned long)up_s : 0;
	char t[2][TEXT_SLOT];
	const cJSON *v;

	printf("muqssd %s, protocol %.0f, up %luh%02lum%02lus, daemon CPU %.2f s\n",
	       str(t[0], s, "version"), num(s, "protocol"), up / 3600, up / 60 % 60, up % 60,
	       num(s, "cpu_s"));
	print_pairs("scope", cJSON_GetObjectItem(s, "scope"));
	print_pairs("tunables", cJSON_GetObjectItem(s, "tunables"));
	print_pairs("counters", cJSON_GetObjectItem(s, "counters"));
	/* Whatever else the daemon reports (tasks tracked, managed...). */
	cJSON_ArrayForEach(v, s) {
		static const char *const shown[] = { "version", "protocol", "uptime_s", "cpu_s",
						     "scope", "tunables", "counters" };
		bool skip = !v->string;
		for (size_t i = 0; i < sizeof(shown) / sizeof(shown[0]); i++)
			skip |= v->string && strcmp(v->string, shown[i]) == 0;
		if (skip)
			continue;
		print_text(t[0], TEXT_SLOT, v->string);
		if (cJSON_IsObject(v))
			print_pairs(v->string, v);
		else if (cJSON_IsNumber(v))
			printf("%-10s %.0f\n", t[0], v->valuedouble);
		else if (cJSON_IsString(v))
			printf("%-10s %s\n", t[0], print_text(t[1], TEXT_SLOT, v->valuestring));
		else if (cJSON_IsBool(v))
			printf("%-10s %s\n", t[0], cJSON_IsTrue(v) ? "yes" : "no");
	}
}

void print_queues(const cJSON *doc)
{
	const cJSON *cpu, *e;
	char dl[32], slice[32], t[2][TEXT_SLOT];

	cJSON_ArrayForEach(cpu, cJSON_GetObjectItem(doc, "cpus")) {
		const cJSON *q = cJSON_GetObjectItem(cpu, "queue");
		printf("CPU %.0f: %d queued\n", num(cpu, "cpu"), cJSON_GetArraySize(q));
		if (cJSON_GetArraySize(q) == 0)
			continue;
		printf("  %7s %-16s %-8s %4s %20s %10s %10s\n", "TID", "COMM", "CLASS", "NICE",
		       "KEY", "DEADLINE", "SLICE");
		cJSON_ArrayForEach(e, q)
			printf("  %7.0f %-16s %-8s %4.0f %20.0f %10s %10s\n", num(e, "tid"),
			       str(t[0], e, "comm"), str(t[1], e, "class"), num(e, "nice"), num(e, "key"),
			       format_ns(dl, sizeof(dl), num(e, "deadline_rel_ns")),
			       format_ns(slice, sizeof(slice), num(e, "slice_left_ns")));
	}
}

void print_tasks(const cJSON *doc)
{
	const cJSON *t, *tasks = cJSON_GetObjectItem(doc, "tasks");
	char s[2][TEXT_SLOT];

	printf("%7s %7s %6s %4s %5s %-5s %-16s\n", "TID", "PID", "UID", "NICE", "STATE",
	       "CPU", "COMM");
	cJSON_ArrayForEach(t, tasks)
		printf("%7.0f %7.0f %6.0f %4.0f %5s %5.0f %-16s\n", num(t, "tid"), num(t, "tgid"),
		       num(t, "uid"), num(t, "nice"), str(s[0], t, "state"), num(t, "last_cpu"),
		       str(s[1], t, "comm"));
	printf("%d tasks\n", cJSON_GetArraySize(tasks));
}

/* What the daemon said: its errors, its documents. */
int ctl_fail(struct ctl *ctl, int r, const char *what)
{
	const char *msg = ctl->client ? muqss_error_message(ctl->client) : "";
	char text[1024];

	if (msg && msg[0])
		fprintf(stderr, "muqssctl: %s\n", print_text(text, sizeof(text), msg));
	else
		fprintf(stderr, "muqssctl: %s: %s\n", what, strerror(-r));
	switch (-r) {
	case EPERM:
	case EACCES:
		return EXIT_DENIED;
	case ESRCH:
		return EXIT_NO_PROCESS;
	case EINVAL:
	case ERANGE:
	case ENOENT:
		return EXIT_BAD_VALUE;
	default:
		return EXIT_FAIL;
	}
}

cJSON *ctl_parse(const char *text)
{
	cJSON *o = cJSON_Parse(text);

	if (!o)
		fprintf(stderr, "muqssctl: muqssd sent malformed JSON\n");
	return o;
}

void ctl_print_json(const char *text)
{
	cJSON *o = ctl_parse(text);
	char *pretty = o ? cJSON_Print(o) : NULL;

	/* Printed by cJSON, never as received: strings come out escaped. */
	if (pretty)
		puts(pretty);
	cJSON_free(pretty);
	cJSON_Delete(o);
}
