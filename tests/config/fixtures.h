/* Small helpers shared by the config and rules tests. */
#pragma once

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

/* A fresh directory under TMPDIR, removed (with its files) by tmpdir_remove. */
char *tmpdir_new(void);
void tmpdir_remove(char *dir);
/* Writes text to dir/name (creating subdirectories is the caller's job);
 * returns the malloc'd path. */
char *write_file(const char *dir, const char *name, const char *text);

/* Captures what the code under test logs to stderr. */
void capture_begin(void);
/* Ends the capture and returns what was logged (static buffer). */
const char *capture_end(void);
/* True when the captured text contains needle; prints both otherwise. */
bool captured(const char *log, const char *needle);
