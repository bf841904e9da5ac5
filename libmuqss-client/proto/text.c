#include "text.h"

#include <stdio.h>

size_t text_utf8_seq(const unsigned char *p, size_t left)
{
	size_t n = p[0] < 0x80 ? 1 : p[0] >= 0xc2 && p[0] < 0xe0 ? 2 :
		   p[0] >= 0xe0 && p[0] < 0xf0 ? 3 : p[0] >= 0xf0 && p[0] < 0xf5 ? 4 : 0;

	if (n > left)
		return 0;
	for (size_t i = 1; i < n; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	/* Overlong forms, UTF-16 surrogates, past U+10FFFF. */
	if ((n == 3 && p[0] == 0xe0 && p[1] < 0xa0) || (n == 3 && p[0] == 0xed && p[1] >= 0xa0) ||
	    (n == 4 && p[0] == 0xf0 && p[1] < 0x90) || (n == 4 && p[0] == 0xf4 && p[1] >= 0x90))
		return 0;
	return n;
}

size_t text_fix_utf8(char *s, size_t len)
{
	unsigned char *p = (unsigned char *)s;
	size_t i = 0, fixed = 0;

	while (i < len) {
		size_t n = p[i] < 0x80 ? 1 : text_utf8_seq(p + i, len - i);

		if (n == 0) {
			p[i++] = '?';
			fixed++;
			continue;
		}
		i += n;
	}
	return fixed;
}

/* U+0080..U+009F: C1 controls, which some terminals obey (0x9b is CSI). */
static int is_c1(const unsigned char *p, size_t n)
{
	return n == 2 && p[0] == 0xc2 && p[1] < 0xa0;
}

char *text_escape(const char *s, char *buf, size_t size)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	size_t o = 0, left = 0;

	for (const unsigned char *q = p; *q; q++)
		left++;
	while (*p) {
		size_t n = text_utf8_seq(p, left);
		char esc[5 * 4 + 1];
		size_t k = 0;

		if (n == 1 && *p == '\\') {
			esc[k++] = '\\';
			esc[k++] = '\\';
		} else if (n == 0 || (n == 1 && (*p < 0x20 || *p == 0x7f)) || is_c1(p, n)) {
			for (size_t i = 0; i < (n ? n : 1); i++)
				k += (size_t)snprintf(esc + k, sizeof(esc) - k, "\\x%02x", p[i]);
		} else {
			for (size_t i = 0; i < n; i++)
				esc[k++] = (char)p[i];
		}
		if (n == 0)
			n = 1;
		if (o + k >= size)
			break;
		for (size_t i = 0; i < k; i++)
			buf[o++] = esc[i];
		p += n;
		left -= n;
	}
	buf[o] = '\0';
	return buf;
}
