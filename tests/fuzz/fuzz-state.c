/* The crash-restore records and their CPU lists: --restore reads them as
 * root, from a directory that may have outlived the daemon that wrote it.
 * Besides surviving any text, what decodes must encode to text that
 * decodes to the same record, or a restore after a restore would differ. */
#include <string.h>

#include "check.h"
#include "fuzz.h"
#include "state_record.h"

static bool same_record(const struct state_record *a, const struct state_record *b)
{
	return a->tid == b->tid && a->tgid == b->tgid && a->start_time == b->start_time &&
	       a->policy == b->policy && a->priority == b->priority && a->nice == b->nice &&
	       a->reset_on_fork == b->reset_on_fork && a->slice_ns == b->slice_ns &&
	       CPU_EQUAL(&a->affinity, &b->affinity) && a->created_ns == b->created_ns &&
	       !strcmp(a->boot_id, b->boot_id) && a->changed == b->changed &&
	       a->stopped == b->stopped && a->boosted == b->boosted;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_quiet_log();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char buf[STATE_RECORD_MAX];
	struct state_record a, b;
	cpu_set_t s, t;
	char *text;

	text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';

	if (state_record_decode(text, &a) == 0) {
		/* What decodes is what muqssd itself would write. */
		REQUIRE(a.tid > 1 && a.tgid > 1);
		REQUIRE(a.policy == SCHED_OTHER || a.policy == SCHED_BATCH ||
			a.policy == SCHED_IDLE);
		REQUIRE(a.priority == 0 && a.nice >= -20 && a.nice <= 19);
		REQUIRE(state_record_encode(&a, buf, sizeof(buf)) > 0);
		REQUIRE(state_record_decode(buf, &b) == 0);
		REQUIRE(same_record(&a, &b));
	}
	if (cpulist_parse(text, &s) == 0) {
		REQUIRE(CPU_COUNT(&s) > 0);
		REQUIRE(cpulist_format(&s, buf, sizeof(buf)) > 0);
		REQUIRE(cpulist_parse(buf, &t) == 0 && CPU_EQUAL(&s, &t));
	}
	free(text);
	return 0;
}
