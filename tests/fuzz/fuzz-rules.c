/* The rules parsers, native and ananicy, then matching and explaining.
 *
 * The input is a rules file, one rule per line. A line starting with '!'
 * is an ananicy type (what a .types file holds); one starting with '{' an
 * ananicy rule; anything else a native rule. Types go first, as
 * rules_load() reads every .types before any .rules. */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "rules_private.h"

static const struct rule_ancestor launchers[] = {
	{ 20, "pv-adverb", NULL },
	{ 10, "reaper", "/s/ubuntu12_32/reaper SteamLaunch AppId=440 -- game" },
	{ 5, "", "" },
};

static const struct rule_subject subjects[] = {
	{ .comm = "wine64-preloade", .exe = "/usr/bin/wine64-preloader",
	  .cmdline = "wine64-preloader Z:\\games\\Game.exe", .wine_path = "Z:/games/Game.exe",
	  .uid = 1000, .ancestors = launchers, .n_ancestors = 3 },
	{ .comm = "pipewire", .exe = "/usr/bin/pipewire", .cmdline = "pipewire --verbose",
	  .uid = 1000, .cgroup = "/user.slice/user-1000.slice/pipewire.service" },
	{ .comm = "make", .uid = 0 },
	{ .comm = "WebKitWebProces", .exe = "/usr/lib/webkit/WebKitWebProcess",
	  .cmdline = "WebKitWebProcess 7 --type=renderer", .uid = 1000, .cgroup = "/" },
	{ .comm = "", .exe = "", .cmdline = "", .uid = (uid_t)-1, .cgroup = "" },
};

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_quiet_log();
	return 0;
}

static int parse_lines(struct rules *r, char *text, bool types)
{
	struct rule_pos pos = { .file = "fuzz.rules" };
	char *line = text, *next;
	int k = 0;

	for (; k >= 0 && line; line = next) {
		char *s;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		pos.line++;
		if ((line[0] == '!') != types)
			continue;
		s = line + (types ? 1 : 0);
		s += strspn(s, " \t");
		if (*s == '\0' || *s == '#')
			continue;
		if (types)
			k = rules_parse_ananicy_type(r, &pos, s);
		else if (*s == '{')
			k = rules_parse_ananicy_rule(r, &pos, s);
		else
			k = rules_parse_native(r, &pos, s);
	}
	return k;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rules *r;
	char *text, *copy, buf[256];

	text = malloc(size + 1);
	copy = malloc(size + 1);
	r = calloc(1, sizeof(*r));
	if (!text || !copy || !r)
		goto out;
	memcpy(text, data, size);
	text[size] = '\0';
	/* The parsers cut lines in place: each pass gets a fresh copy. */
	memcpy(copy, text, size + 1);

	if (parse_lines(r, copy, true) < 0 || parse_lines(r, text, false) < 0)
		goto out;

	for (size_t i = 0; i < sizeof(subjects) / sizeof(subjects[0]); i++) {
		const struct rule *m = rules_match(r, &subjects[i]);

		if (m)
			(void)sched_class_name(m->class);
		(void)rules_explain(r, &subjects[i], buf, sizeof(buf));
	}
	(void)rules_count(r);
	(void)rules_bad_lines(r);
out:
	rules_free(r);
	free(copy);
	free(text);
	return 0;
}
