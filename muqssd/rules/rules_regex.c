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
 * compile. Repeating something that can match empty is exponential when
 * it holds an anchor ("(^)*" twenty times takes seconds, found by the
 * fuzzer too): refused, but for '?'. And anchors multiply the cost of
 * everything optional ("^" 32 times then "y?" 300 times, 0.12 s): 8
 * anchors keep the worst pattern near 50 ms.
 * Back-references, a glibc extension in ERE, make matching exponential
 * on the command line of every new process. */
#include "rules_private.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

/* Far above any useful pattern: "--type=(renderer|gpu-process)( |$)" is 30,
 * ".{0,500}" 501. */
#define REGEX_MAX_NODES 512
#define REGEX_MAX_DEPTH 32
#define REGEX_MAX_ANCHORS 8

struct group {
	uint64_t total;	  /* nodes in the group so far, all branches */
	uint64_t last;	  /* nodes of its last element, for a following repetition */
	uint64_t anchors; /* anchors in the group so far, as total */
	uint64_t last_anchors;
	bool prefix_empty; /* this branch, but for its last element, can match empty */
	bool last_empty;   /* its last element can */
	bool some_empty;   /* an earlier branch can */
};

static const struct group group_start = { .prefix_empty = true, .last_empty = true };

/* glibc's zero-width escapes: word boundaries and buffer ends. */
static bool is_anchor_escape(char c)
{
	return c == 'b' || c == 'B' || c == '<' || c == '>' || c == '`' || c == '\'';
}

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
static const char *parse_interval(const char *p, uint64_t *copies, bool *optional)
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
	*optional = n == 0;
	return end + 1;
}

static uint64_t sat_mul(uint64_t a, uint64_t b)
{
	return b && a > UINT64_MAX / b ? UINT64_MAX : a * b;
}

/* A new last element of n nodes: the one before joins the branch. */
static void new_element(struct group *g, uint64_t nodes, bool anchor)
{
	g->prefix_empty = g->prefix_empty && g->last_empty;
	g->last_empty = anchor;
	g->total += nodes;
	g->last = nodes;
	g->anchors += anchor;
	g->last_anchors = anchor;
}

/* A closed group becomes the last element of its parent. */
static void new_group_element(struct group *g, const struct group *inner)
{
	new_element(g, inner->total + 1, false);
	g->anchors += inner->anchors;
	g->last_anchors = inner->anchors;
	g->last_empty = inner->some_empty || (inner->prefix_empty && inner->last_empty);
}

/* An alternative starts: the group so far may match empty only if some
 * branch does. */
static void new_branch(struct group *g)
{
	g->some_empty |= g->prefix_empty && g->last_empty;
	g->prefix_empty = g->last_empty = true;
	g->last = 0;
	g->last_anchors = 0;
}

/* The last element is repeated: replace it by its copies. question: the
 * operator was '?', which may follow what can match empty. */
static int repeat_last(struct group *g, uint64_t copies, bool optional, bool repeated,
		       bool question, const char **reason)
{
	uint64_t grown;

	if (g->last == 0 || repeated) {
		*reason = g->last == 0 ? "a repetition operator with nothing to repeat"
				       : "adjacent repetition operators";
		return -EINVAL;
	}
	if (g->last_empty && !question) {
		*reason = "a repetition of something that can match empty";
		return -EINVAL;
	}
	grown = sat_mul(g->last, copies);
	g->total = g->total - g->last + grown;
	if (grown > REGEX_MAX_NODES)
		g->total = UINT64_MAX;
	g->last = grown;
	grown = sat_mul(g->last_anchors, copies);
	g->anchors = g->anchors - g->last_anchors + grown;
	if (grown > REGEX_MAX_ANCHORS)
		g->anchors = UINT64_MAX;
	g->last_anchors = grown;
	g->last_empty |= optional;
	return 0;
}

static bool over_limits(const struct group *g, const char **reason)
{
	if (g->total > REGEX_MAX_NODES) {
		*reason = "too complex (repetitions expand past 512 nodes)";
		return true;
	}
	if (g->anchors > REGEX_MAX_ANCHORS) {
		*reason = "too complex (more than 8 anchors)";
		return true;
	}
	return false;
}

int rules_regex_check(const char *pattern, const char **reason)
{
	struct group stack[REGEX_MAX_DEPTH + 1] = { group_start };
	unsigned depth = 0;
	bool repeated = false; /* the last element was a repetition */
	const char *p = pattern;

	while (*p) {
		struct group *g = &stack[depth];
		uint64_t copies = 0;
		bool optional = false; /* the repetition allows zero copies */
		const char *next;

		switch (*p) {
		case '\\':
			if (p[1] >= '1' && p[1] <= '9') {
				*reason = "back-references are not supported";
				return -EINVAL;
			}
			new_element(g, 1, is_anchor_escape(p[1]));
			p += p[1] ? 2 : 1;
			break;
		case '[':
			next = skip_bracket(p);
			if (!next)
				return 0; /* regcomp() says what is wrong */
			new_element(g, 1, false);
			p = next;
			break;
		case '(':
			if (depth == REGEX_MAX_DEPTH) {
				*reason = "groups nested too deep";
				return -EINVAL;
			}
			stack[++depth] = group_start;
			repeated = false;
			p++;
			continue;
		case ')':
			if (depth == 0) {
				/* glibc takes an unmatched ')' literally. */
				new_element(g, 1, false);
				p++;
				break;
			}
			depth--;
			g = &stack[depth];
			new_group_element(g, &stack[depth + 1]);
			p++;
			break;
		case '|':
			new_branch(g);
			repeated = false;
			p++;
			continue;
		case '^':
		case '$':
			new_element(g, 1, true);
			p++;
			break;
		case '*':
		case '?':
			copies = 1;
			optional = true;
			p++;
			break;
		case '+':
			copies = 2;
			p++;
			break;
		case '{':
			next = parse_interval(p, &copies, &optional);
			if (!next) {
				/* Not an interval: a literal brace. */
				new_element(g, 1, false);
				p++;
				break;
			}
			p = next;
			break;
		default:
			new_element(g, 1, false);
			p++;
			break;
		}
		if (copies && repeat_last(g, copies, optional, repeated, p[-1] == '?', reason) < 0)
			return -EINVAL;
		repeated = copies > 0;
		if (over_limits(g, reason))
			return -EINVAL;
	}
	return 0;
}
