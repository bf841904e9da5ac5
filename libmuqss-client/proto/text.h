/* Text that came from someone else: a process name or path is any bytes
 * the process chose, and a reply is whatever the other end sent. Shared by
 * the daemon (wire, log) and the clients (tables). */
#pragma once

#include <stddef.h>

/* Length of the valid UTF-8 sequence at p, of which left bytes may be read
 * (shortest form, no surrogates, at most U+10FFFF), or 0. */
size_t text_utf8_seq(const unsigned char *p, size_t left);

/* Makes len bytes at s valid UTF-8 in place: each byte that starts no valid
 * sequence becomes '?'. The length does not change, so a frame's size
 * does not either. Returns how many bytes were replaced. */
size_t text_fix_utf8(char *s, size_t len);

/* Copies s into buf (size > 0) for a terminal or a log line: a control
 * character (C0, DEL, C1) or an invalid byte becomes \xNN, a backslash
 * \\; valid UTF-8 stays as it is. Cut short on a whole sequence when buf
 * is too small. Returns buf. */
char *text_escape(const char *s, char *buf, size_t size);
