/* ananicy rules and types: one JSON object per line, as in
 *   {"name": "pipewire", "type": "LowLatency_RT", "nice": -10, "sched": "rr"}
 *   {"type": "BG_CPUIO", "nice": 16, "ioclass": "idle", "sched": "idle"}
 * Mapped onto muqssd: sched rr, fifo, iso -> iso; idle -> idleprio;
 * batch -> batch; other, normal -> normal; nice is kept. Everything else
 * (ioclass, ionice, oom_score_adj, cgroup, latency_nice, rtprio, ...) has
 * no muqssd meaning and is ignored. */
#include "rules_private.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

/* What a rule or type sets, before a rule resolves its type. */
struct settings {
	bool class_set;
	enum sched_class class;
	bool nice_set;
	int nice;
};

static int sched_to_class(const char *sched)
{
	static const struct {
		const char *sched;
		enum sched_class class;
	} map[] = {
		{ "rr", SCHED_CLASS_ISO },	  { "fifo", SCHED_CLASS_ISO },
		{ "iso", SCHED_CLASS_ISO },	  { "idle", SCHED_CLASS_IDLEPRIO },
		{ "batch", SCHED_CLASS_BATCH },	  { "other", SCHED_CLASS_NORMAL },
		{ "normal", SCHED_CLASS_NORMAL },
	};

	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (strcmp(sched, map[i].sched) == 0)
			return (int)map[i].class;
	return -EINVAL;
}

/* Reads sched and nice; reports a bad value and returns -EINVAL. */
static int read_settings(struct rules *r, const struct rule_pos *pos, const cJSON *obj,
			 struct settings *out)
{
	const cJSON *sched = cJSON_GetObjectItemCaseSensitive(obj, "sched");
	const cJSON *nice = cJSON_GetObjectItemCaseSensitive(obj, "nice");

	*out = (struct settings){ 0 };
	if (sched) {
		int c = cJSON_IsString(sched) ? sched_to_class(sched->valuestring) : -EINVAL;

		if (c < 0)
			return rules_bad(r, pos, "sched: not one of rr|fifo|iso|idle|batch|other|normal"),
			       -EINVAL;
		out->class_set = true;
		out->class = (enum sched_class)c;
	}
	if (nice) {
		double v = cJSON_IsNumber(nice) ? nice->valuedouble : NAN;

		if (!(v >= -20 && v <= 19) || v != floor(v))
			return rules_bad(r, pos, "nice: not an integer in range -20..19"), -EINVAL;
		out->nice_set = true;
		out->nice = (int)v;
	}
	return 0;
}

static const char *get_string(const cJSON *obj, const char *key)
{
	const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);

	return cJSON_IsString(item) && item->valuestring[0] ? item->valuestring : NULL;
}

static cJSON *parse_object(struct rules *r, const struct rule_pos *pos, const char *line)
{
	cJSON *obj = cJSON_Parse(line);

	if (!obj) {
		/* cJSON_Parse fails the same way on malloc failure; treat
		 * it as a bad line, the next allocation will tell. */
		rules_bad(r, pos, "not valid JSON");
		return NULL;
	}
	if (!cJSON_IsObject(obj)) {
		rules_bad(r, pos, "not a JSON object");
		cJSON_Delete(obj);
		return NULL;
	}
	return obj;
}

int rules_parse_ananicy_type(struct rules *r, const struct rule_pos *pos, const char *line)
{
	struct settings set;
	struct rule_type *t;
	const char *name;
	cJSON *obj;
	int k = 0;

	obj = parse_object(r, pos, line);
	if (!obj)
		return 0;
	name = get_string(obj, "type");
	if (!name) {
		rules_bad(r, pos, "a type needs \"type\": \"NAME\"");
		goto out;
	}
	if (read_settings(r, pos, obj, &set) < 0)
		goto out;
	if (r->n_types == r->cap_types) {
		size_t cap = r->cap_types ? 2 * r->cap_types : 32;
		struct rule_type *n = realloc(r->types, cap * sizeof(*n));

		if (!n) {
			k = -ENOMEM;
			goto out;
		}
		r->types = n;
		r->cap_types = cap;
	}
	t = &r->types[r->n_types];
	t->name = strdup(name);
	if (!t->name) {
		k = -ENOMEM;
		goto out;
	}
	t->class_set = set.class_set;
	t->class = set.class;
	t->nice_set = set.nice_set;
	t->nice = set.nice;
	r->n_types++;
out:
	cJSON_Delete(obj);
	return k;
}

int rules_parse_ananicy_rule(struct rules *r, const struct rule_pos *pos, const char *line)
{
	struct rule rule = { .format = RULE_FORMAT_ANANICY };
	const struct rule_type *t = NULL;
	const char *name, *type;
	struct settings set;
	cJSON *obj;
	int k = 0;

	obj = parse_object(r, pos, line);
	if (!obj)
		return 0;
	name = get_string(obj, "name");
	type = get_string(obj, "type");
	if (!name) {
		rules_bad(r, pos, "a rule needs \"name\": \"COMM\"");
		goto out;
	}
	if (type) {
		t = rules_find_type(r, type);
		if (!t) {
			rules_bad(r, pos, "unknown type \"%s\"", type);
			goto out;
		}
	}
	if (read_settings(r, pos, obj, &set) < 0)
		goto out;
	/* The rule's own fields win over its type's. */
	if (!set.class_set && t && t->class_set) {
		set.class_set = true;
		set.class = t->class;
	}
	if (!set.nice_set && t && t->nice_set) {
		set.nice_set = true;
		set.nice = t->nice;
	}
	if (!set.class_set && !set.nice_set) {
		log_debug("%s:%u: %s sets nothing muqssd applies (only I/O, OOM or cgroup "
			  "settings), ignoring", pos->file, pos->line, name);
		goto out;
	}
	rule.match = RULE_MATCH_COMM;
	rule.comm = strdup(name);
	rule.type = type ? strdup(type) : NULL;
	rule.class = set.class_set ? set.class : SCHED_CLASS_NORMAL;
	rule.nice_set = set.nice_set;
	rule.nice = set.nice;
	if (!rule.comm || (type && !rule.type))
		k = -ENOMEM;
	else
		k = rules_add(r, &rule, pos);
out:
	rule_clear(&rule);
	cJSON_Delete(obj);
	return k;
}
