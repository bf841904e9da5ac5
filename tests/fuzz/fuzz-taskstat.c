/* The enforcer's own stat parser (muqssd/enforce/task_stat.c): the last
 * check before a lever is pulled reads a line whose comm its task chose. */
#include <string.h>

#include "fuzz.h"
#include "task_stat.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_quiet_log();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct task_stat st;
	char *text;

	text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	/* A line that parses has its comm closed: fields come after a ')'. */
	if (task_stat_parse(text, &st) == 0 && !strchr(text, ')'))
		abort();
	free(text);
	return 0;
}
