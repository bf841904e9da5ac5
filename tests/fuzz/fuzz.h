/* Shared by the fuzz targets: libFuzzer's entry points and a quiet log. */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* Parsers log every bad line; at libFuzzer's rate that is all the run would
 * do. MUQSS_FUZZ_LOG=1 keeps the messages, to read what an input did. */
static inline void fuzz_quiet_log(void)
{
	if (!getenv("MUQSS_FUZZ_LOG"))
		log_set_level((enum log_level)0);
	else
		log_set_level(LOG_LEVEL_DEBUG);
}
