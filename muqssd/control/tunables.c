/* Tunables by name: validation with messages that name the range. */
#include "control-internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct tunable {
	const char *name;
	unsigned min, max;
	const char *unit; /* appended to the range in messages */
	size_t offset;
};

static const struct tunable numeric[] = {
	{ "rr_interval", 1, 1000, " ms", offsetof(struct config_tunables, rr_interval_ms) },
	{ "interactive", 0, 1, "", offsetof(struct config_tunables, interactive) },
	{ "iso_cpu", 0, 100, " %", offsetof(struct config_tunables, iso_cpu) },
	{ "yield_type", 0, 2, "", offsetof(struct config_tunables, yield_type) },
};

#define KNOWN "rr_interval, interactive, iso_cpu, yield_type, iso_reading"

static const struct tunable *find(const char *name)
{
	for (size_t i = 0; i < sizeof(numeric) / sizeof(numeric[0]); i++)
		if (strcmp(name, numeric[i].name) == 0)
			return &numeric[i];
	return NULL;
}

static unsigned *field(struct config_tunables *t, const struct tunable *tu)
{
	return (unsigned *)((char *)t + tu->offset);
}

int tunables_set(struct config_tunables *t, const char *name, const char *value, char *err,
		 size_t errlen)
{
	const struct tunable *tu;
	unsigned long v;
	char *end;

	if (strcmp(name, "iso_reading") == 0) {
		if (strcmp(value, "machine") == 0)
			t->iso_reading = ISO_READING_MACHINE;
		else if (strcmp(value, "per-cpu") == 0)
			t->iso_reading = ISO_READING_PER_CPU;
		else {
			snprintf(err, errlen, "iso_reading must be machine or per-cpu");
			return -EINVAL;
		}
		return 0;
	}
	tu = find(name);
	if (!tu) {
		snprintf(err, errlen, "unknown tunable: %s (known: " KNOWN ")", name);
		return -ENOENT;
	}
	errno = 0;
	v = strtoul(value, &end, 10);
	if (errno || end == value || *end || value[0] == '-' || v < tu->min || v > tu->max) {
		snprintf(err, errlen, "%s must be %u..%u%s", tu->name, tu->min, tu->max, tu->unit);
		return -ERANGE;
	}
	*field(t, tu) = (unsigned)v;
	return 0;
}

int tunables_get(const struct config_tunables *t, const char *name, cJSON *obj, char *err,
		 size_t errlen)
{
	bool all = !name || !*name, found = all;

	for (size_t i = 0; i < sizeof(numeric) / sizeof(numeric[0]); i++) {
		if (!all && strcmp(name, numeric[i].name) != 0)
			continue;
		found = true;
		if (!cJSON_AddNumberToObject(obj, numeric[i].name,
					     *field((struct config_tunables *)t, &numeric[i])))
			return -ENOMEM;
	}
	if (all || strcmp(name, "iso_reading") == 0) {
		found = true;
		if (!cJSON_AddStringToObject(obj, "iso_reading",
					     t->iso_reading == ISO_READING_PER_CPU ? "per-cpu"
										   : "machine"))
			return -ENOMEM;
	}
	if (!found) {
		snprintf(err, errlen, "unknown tunable: %s (known: " KNOWN ")", name);
		return -ENOENT;
	}
	return 0;
}
