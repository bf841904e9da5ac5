/* A bound on what a cmdline= pattern may cost before regcomp(3) sees it.
 *
 * glibc compiles "x+" as "xx*" and "x{n,m}" as m copies of x, so stacked
 * or nested repetitions multiply: "t" followed by thirty '+' is 2^30
 * nodes, and regcomp() runs for minutes on one rules line (found by
 * tests/fuzz/fuzz-rules). Worse, the cost of the copies grows with their
 * cube when they can match empty: "((x?)+){400}" takes a second, nine
 * nested "()+" as long, and stacked operators ("x+?+?+?") make every copy
 * match empty. POSIX leaves adjacent duplication symbols undefined: they
 * are refused, and 512 nodes keep any other pattern under 0.1 s to
 * compile. Back-references, a glibc extension in ERE, make matching
 * exponential on the command line of every new process. */
#include "rules_private.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

/* Far above any useful pattern: "--type=(renderer|gpu-process)( |$)" is 30,
 * ".{0,500}" 501. */
#define REGEX_MAX_NODES 512
#define REGEX_MAX_DEPTH 32

struct group {
	uint64_t total; /* nodes in the group so far, all branches */
	uint64_t last;	/* nodes of its last element, for a following repetition */
};

/* Past a bracket expression starting at p ('['); NULL when unterminated. */
static const char *skip_bracket(const char *p)
{
	p++;
	if (*p == '^')
		p++;
	if (*p == ']')
		p++;
	for (; *p && *p != ']'; p++)
		if (*p == '[' && (p[1] == ':' || p[1] == '.' || p[1] == '=')) {
			char end = p[1];

			for (p += 2; *p && !(p[0] == end && p[1] == ']'); p++)
				;
			if (!*p)
				return NULL;
			p++;
		}
	return *p ? p + 1 : NULL;
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Parses "{n}", "{n,}", "{n,m}" or glibc's "{,m}" at p; how many copies
 * of the repeated element glibc makes, at most REGEX_MAX_NODES + 1. */
static const char *parse_interval(const char *p, uint64_t *copies)
{
	unsigned long n = 0, m;
	char *end = (char *)p + 1;

	if (is_digit(*end))
		n = strtoul(end, &end, 10);
	else if (*end != ',')
		return NULL;
	m = n;
	if (*end == ',') {
		end++;
		m = is_digit(*end) ? strtoul(end, &end, 10) : n + 1;
	}
	if (*end != '}')
		return NULL;
	if (m < n)
		m = n;
	/* Past RE_DUP_MAX regcomp() refuses it; only overflow matters here. */
	*copies = m >= REGEX_MAX_NODES ? REGEX_MAX_NODES + 1 : m + 1;
	return end + 1;
}

static uint64_t sat_mul(uint64_t a, uint64_t b)
{
	return b && a > UINT64_MAX / b ? UINT64_MAX : a * b;
}

int rules_regex_check(const char *pattern, const char **reason)
{
	struct group stack[REGEX_MAX_DEPTH + 1] = { 0 };
	unsigned depth = 0;
	bool repeated = false; /* the last element was a repetition */
	const char *p = pattern;

	while (*p) {
		struct group *g = &stack[depth];
		uint64_t copies = 0, grown;
		const char *next;

		switch (*p) {
		case '\\':
			if (p[1] >= '1' && p[1] <= '9') {
				*reason = "back-references are not supported";
				return -EINVAL;
			}
			g->last = 1;
			p += p[1] ? 2 : 1;
			break;
		case '[':
			next = skip_bracket(p);
			if (!next)
				return 0; /* regcomp() says what is wrong */
			g->last = 1;
			p = next;
			break;
		case '(':
			if (depth == REGEX_MAX_DEPTH) {
				*reason = "groups nested too deep";
				return -EINVAL;
			}
			stack[++depth] = (struct group){ 0 };
			repeated = false;
			p++;
			continue;
		case ')':
			if (depth == 0) {
				/* glibc takes an unmatched ')' literally. */
				g->last = 1;
				p++;
				break;
			}
			depth--;
			g = &stack[depth];
			g->last = stack[depth + 1].total + 1;
			p++;
			break;
		case '|':
			g->last = 0;
			repeated = false;
			p++;
			continue;
		case '*':
		case '?':
			copies = 1;
			p++;
			break;
		case '+':
			copies = 2;
			p++;
			break;
		case '{':
			next = parse_interval(p, &copies);
			if (!next) {
				/* Not an interval: a literal brace. */
				g->last = 1;
				p++;
				break;
			}
			p = next;
			break;
		default:
			g->last = 1;
			p++;
			break;
		}
		if (copies && (g->last == 0 || repeated)) {
			*reason = g->last == 0 ? "a repetition operator with nothing to repeat"
					       : "adjacent repetition operators";
			return -EINVAL;
		}
		repeated = copies > 0;
		if (copies) {
			/* The last element is repeated: replace it by its copies. */
			grown = sat_mul(g->last, copies);
			g->total = g->total - g->last + grown;
			if (grown > REGEX_MAX_NODES)
				g->total = UINT64_MAX;
			g->last = grown;
		} else {
			g->total += g->last;
		}
		if (g->total > REGEX_MAX_NODES) {
			*reason = "too complex (repetitions expand past 512 nodes)";
			return -EINVAL;
		}
	}
	return 0;
}
