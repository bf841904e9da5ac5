/* Rules for games: ancestor keys (a launcher's tree), their precedence and
 * opt-out, Wine's Windows program names, and the shipped 60-games.rules. */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "fixtures.h"
#include "log.h"
#include "rules.h"

static struct rules *load_text(char **dir, const char *text)
{
	struct rules *r = NULL;

	*dir = tmpdir_new();
	free(write_file(*dir, "10.rules", text));
	capture_begin();
	CHECK(rules_load(&r, *dir) == 0);
	(void)capture_end();
	REQUIRE(r);
	return r;
}

static int class_or_none(const struct rules *r, const struct rule_subject *s)
{
	const struct rule *m = rules_match(r, s);

	return m ? (int)m->class : -1;
}

#define REAPER(id) "/home/u/.steam/steam/ubuntu12_32/reaper SteamLaunch AppId=" id \
	" -- /home/u/.steam/steam/steamapps/common/Proton 9.0/proton waitforexitandrun game.exe"

static void test_ancestors(void)
{
	char *dir;
	struct rules *r = load_text(&dir,
		"ancestor_cmdline=\"reaper SteamLaunch AppId=[0-9]+( |$)\" class=iso\n"
		"ancestor_cmdline=\"reaper SteamLaunch AppId=570( |$)\" class=normal\n"
		"ancestor_comm=lutris-wrapper ancestor_cmdline=\" Quake( |$)\" class=batch\n"
		"comm=cc1 class=batch\n");
	struct rule_ancestor tree[] = {
		{ 300, "wine64-preloade", NULL },
		{ 200, "pv-adverb", "pv-adverb --subreaper -- wine game.exe" },
		{ 100, "reaper", REAPER("440") },
		{ 50, "steam", "/home/u/.steam/steam/ubuntu12_32/steam" },
	};
	struct rule_subject s = { .comm = "game.exe", .uid = 1000, .ancestors = tree, .n_ancestors = 4 };

	CHECK(class_or_none(r, &s) == SCHED_CLASS_ISO);
	/* Whatever the process is: a child started later, a thread pool. */
	s.comm = "sh";
	CHECK(class_or_none(r, &s) == SCHED_CLASS_ISO);
	/* A rule on the process itself beats one on its ancestors. */
	s.comm = "cc1";
	CHECK(class_or_none(r, &s) == SCHED_CLASS_BATCH);
	/* Opt-out: same keys, read later, so it wins. */
	tree[2].cmdline = REAPER("570");
	s.comm = "game.exe";
	CHECK(class_or_none(r, &s) == SCHED_CLASS_NORMAL);
	/* AppId=5700 is not AppId=570. */
	tree[2].cmdline = REAPER("5700");
	CHECK(class_or_none(r, &s) == SCHED_CLASS_ISO);
	/* The launcher itself is not below itself; nor is Steam. */
	s.ancestors = &tree[3];
	s.n_ancestors = 1;
	s.comm = "reaper";
	CHECK(class_or_none(r, &s) == -1);
	/* An unknown command line (none was read) matches no pattern. */
	tree[2].cmdline = NULL;
	s.ancestors = tree;
	s.n_ancestors = 4;
	CHECK(class_or_none(r, &s) == -1);

	/* Both ancestor keys must hold for the same ancestor. */
	struct rule_ancestor lutris[] = {
		{ 20, "wine", "wine Quake" },
		{ 10, "lutris-wrapper", "python3 /usr/share/lutris/bin/lutris-wrapper Doom" },
	};
	s.ancestors = lutris;
	s.n_ancestors = 2;
	CHECK(class_or_none(r, &s) == -1);
	lutris[1].cmdline = "python3 /usr/share/lutris/bin/lutris-wrapper Quake 0 0 wine";
	CHECK(class_or_none(r, &s) == SCHED_CLASS_BATCH);
	CHECK(rules_is_ancestor(r, "reaper", REAPER("1")));
	CHECK(!rules_is_ancestor(r, "steam", "steam -silent"));
	CHECK(rules_need_cmdline(r));
	rules_free(r);
	tmpdir_remove(dir);
}

/* Looked at up to RULES_ANCESTOR_MAX levels, however many are passed. */
static void test_ancestor_depth(void)
{
	char *dir;
	struct rules *r = load_text(&dir, "ancestor_comm=launcher class=idleprio\n");
	struct rule_ancestor chain[RULES_ANCESTOR_MAX + 8];
	struct rule_subject s = { .comm = "x", .ancestors = chain, .n_ancestors = RULES_ANCESTOR_MAX + 8 };

	for (size_t i = 0; i < RULES_ANCESTOR_MAX + 8; i++)
		chain[i] = (struct rule_ancestor){ (pid_t)(1000 - i), "sh", NULL };
	chain[RULES_ANCESTOR_MAX].comm = "launcher";
	CHECK(class_or_none(r, &s) == -1);
	chain[RULES_ANCESTOR_MAX - 1].comm = "launcher";
	CHECK(class_or_none(r, &s) == SCHED_CLASS_IDLEPRIO);
	CHECK(!rules_need_cmdline(r));
	CHECK(!rules_need_exe(r));
	rules_free(r);
	tmpdir_remove(dir);
}

static const char *wine(const char *comm, const char *exe, const char *argv, size_t len)
{
	static char buf[256];

	return rules_wine_path(comm, exe, argv, len, buf, sizeof(buf));
}

#define ARGV(s) s, sizeof(s) - 1

static void test_wine_path(void)
{
	const char *p;

	/* As wine starts its preloader: the loader, then the program. */
	p = wine("wine64-preloade", "/usr/lib/wine/wine64-preloader",
		 ARGV("wine64-preloader\0/usr/lib/wine/wine64\0C:\\Games\\My Game\\Game.exe\0-fullscreen\0"));
	CHECK(p && strcmp(p, "C:/Games/My Game/Game.exe") == 0);
	/* Known by its comm alone (the exe of a symlinked helper). */
	p = wine("wine64-preloade", "/opt/helper", ARGV("wine64-preloader\0Z:\\games\\Game.exe\0"));
	CHECK(p && strcmp(p, "Z:/games/Game.exe") == 0);
	p = wine("wine", "/usr/bin/wine", ARGV("wine\0notepad\0"));
	CHECK(p && strcmp(p, "notepad") == 0);
	/* Once Wine runs, the program is argv[0] and comm its cut name. */
	p = wine("AVeryLongGameNa", "/proton/files/bin/wine64-preloader",
		 ARGV("C:\\x\\AVeryLongGameName.exe\0"));
	CHECK(p && strcmp(p, "C:/x/AVeryLongGameName.exe") == 0);
	/* Not Wine, an option, nothing after the loaders, no final NUL, too long. */
	CHECK(!wine("bash", "/usr/bin/bash", ARGV("bash\0C:\\Game.exe\0")));
	CHECK(!wine("wine", "/usr/bin/wine", ARGV("wine\0--version\0")));
	CHECK(!wine("wine", "/usr/bin/wine", ARGV("wine\0/usr/bin/wine64\0")));
	p = wine("wine", NULL, "wine\0Game.exe", 13);
	CHECK(p && strcmp(p, "Game.exe") == 0);
	char big[300] = "wine";
	memset(big + 5, 'a', 280);
	CHECK(!wine("wine", NULL, big, sizeof(big)));
}

static void test_wine_rules(void)
{
	char *dir;
	struct rules *r = load_text(&dir,
		"comm=Game.exe class=iso\n"
		"exe=*/games/Other.exe class=batch\n"
		"comm=notepad class=idleprio\n");
	struct rule_subject s = { .comm = "wine64-preloade", .exe = "/usr/bin/wine64-preloader" };
	char buf[1024];

	/* Before its arguments are read, the loader needs them. */
	CHECK(rules_lazy_fields(r, &s) == RULE_MATCH_CMDLINE);
	CHECK(rules_need_cmdline(r));
	CHECK(rules_need_exe(r));
	s.wine_path = "Z:/home/u/games/game.EXE";
	CHECK(rules_lazy_fields(r, &s) == 0);
	CHECK(class_or_none(r, &s) == SCHED_CLASS_ISO);
	CHECK(rules_explain(r, &s, buf, sizeof(buf)) == 1);
	printf("explain: %s\n", buf);
	CHECK(captured(buf, "\"Game.exe\" is the Windows program Z:/home/u/games/game.EXE that Wine runs"));
	s.wine_path = "Z:/home/u/games/Other.exe";
	CHECK(class_or_none(r, &s) == SCHED_CLASS_BATCH);
	CHECK(rules_explain(r, &s, buf, sizeof(buf)) == 1);
	CHECK(captured(buf, "exe Z:/home/u/games/Other.exe (the Windows program Wine runs) matches"));
	/* Only names of .exe: comm=notepad is about a Linux notepad. */
	s.wine_path = "notepad";
	CHECK(class_or_none(r, &s) == -1);
	/* A process that is not Wine never has its arguments read for it. */
	s = (struct rule_subject){ .comm = "bash", .exe = "/usr/bin/bash" };
	CHECK(rules_lazy_fields(r, &s) == 0);
	rules_free(r);
	tmpdir_remove(dir);
}

static void test_explain_ancestor(void)
{
	char *dir;
	struct rules *r = load_text(&dir,
		"ancestor_comm=reaper ancestor_cmdline=\"SteamLaunch AppId=[0-9]+\" class=iso\n");
	struct rule_ancestor tree[] = {
		{ 4321, "sh", "sh -c game" },
		{ 1234, "reaper", REAPER("440") },
	};
	struct rule_subject s = { .comm = "game", .ancestors = tree, .n_ancestors = 2 };
	char buf[1024];

	CHECK(rules_explain(r, &s, buf, sizeof(buf)) == 1);
	printf("explain: %s\n", buf);
	CHECK(captured(buf, "matched because its ancestor 1234 (reaper, 2 levels up) has comm "
		       "\"reaper\" and its command line matches /SteamLaunch AppId=[0-9]+/; it sets class iso"));
	rules_free(r);
	tmpdir_remove(dir);
}

static void test_shipped(void)
{
	const char *src = getenv("MUQSS_SOURCE_ROOT");
	char *dir;
	struct rules *r = NULL;
	struct rule_ancestor steam[] = { { 100, "reaper", REAPER("440") } };
	struct rule_ancestor lutris[] = { { 10, "lutris-wrapper", "python3 lutris-wrapper Doom 0 0" } };
	struct rule_ancestor heroic[] = {
		{ 10, "legendary", "/opt/Heroic/resources/app.asar.unpacked/build/bin/linux/legendary "
				    "launch Fortnite --wine /usr/bin/wine" },
	};
	struct rule_ancestor shell[] = { { 10, "bash", "bash" } };
	struct rule_subject s = { .comm = "game", .ancestors = steam, .n_ancestors = 1 };

	REQUIRE(src);
	if (asprintf(&dir, "%s/conf/muqssd.rules.d", src) < 0)
		abort();
	capture_begin();
	CHECK(rules_load(&r, dir) == 0);
	(void)capture_end();
	REQUIRE(r);
	CHECK(rules_bad_lines(r) == 0);
	CHECK(class_or_none(r, &s) == SCHED_CLASS_ISO);
	s.ancestors = lutris;
	CHECK(class_or_none(r, &s) == SCHED_CLASS_ISO);
	s.ancestors = heroic;
	CHECK(class_or_none(r, &s) == SCHED_CLASS_ISO);
	s.ancestors = shell;
	CHECK(class_or_none(r, &s) == -1);
	/* A compiler under a game is still a compiler. */
	s.comm = "cc1";
	s.ancestors = steam;
	CHECK(class_or_none(r, &s) == SCHED_CLASS_BATCH);
	rules_free(r);
	free(dir);
}

int main(void)
{
	log_init("test");
	test_ancestors();
	test_ancestor_depth();
	test_wine_path();
	test_wine_rules();
	test_explain_ancestor();
	test_shipped();
	return CHECK_EXIT();
}
