/* Tunables by name over the control socket: validation with messages that
 * name the range. The table of names, ranges and defaults is
 * libmuqss-client/proto/tunables.h. */
#include "control-internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tunables.h"

struct tunable {
	const char *name;
	unsigned min, max;
	const char *unit; /* appended to the range in messages */
	size_t offset;
};

static const struct tunable numeric[] = {
#define TUNABLE_ROW(id, name, kind, field, min, max, def, unit, help) \
	{ name, min, max, unit, offsetof(struct config_tunables, field) },
	MUQSS_TUNABLES(TUNABLE_ROW)
#undef TUNABLE_ROW
};

#define KNOWN MUQSS_TUNABLE_NAMES

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

	if (strcmp(name, TUNABLE_ISO_READING) == 0) {
		if (strcmp(value, TUNABLE_ISO_READING_MACHINE) == 0)
			t->iso_reading = ISO_READING_MACHINE;
		else if (strcmp(value, TUNABLE_ISO_READING_PER_CPU) == 0)
			t->iso_reading = ISO_READING_PER_CPU;
		else {
			snprintf(err, errlen, TUNABLE_ISO_READING " must be " TUNABLE_ISO_READING_MACHINE
				 " or " TUNABLE_ISO_READING_PER_CPU);
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
		/* The socket spaces every unit: "0..100 %", where a config
		 * file's message says "0..100%". */
		snprintf(err, errlen, "%s must be %u..%u%s%s", tu->name, tu->min, tu->max,
			 tu->unit[0] && tu->unit[0] != ' ' ? " " : "", tu->unit);
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
	if (all || strcmp(name, TUNABLE_ISO_READING) == 0) {
		found = true;
		if (!cJSON_AddStringToObject(obj, TUNABLE_ISO_READING,
					     t->iso_reading == ISO_READING_PER_CPU
						     ? TUNABLE_ISO_READING_PER_CPU
						     : TUNABLE_ISO_READING_MACHINE))
			return -ENOMEM;
	}
	if (!found) {
		snprintf(err, errlen, "unknown tunable: %s (known: " KNOWN ")", name);
		return -ENOENT;
	}
	return 0;
}
