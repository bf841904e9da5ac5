/* How /proc is mounted for the daemon, read from /proc/self/mountinfo:
 * with hidepid=, /proc shows a user only their own processes, and so must
 * TASKS and QUEUES. */
#include "hidepid.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"

#define MOUNTINFO_MAX (16U * 1024 * 1024)

struct span {
	const char *p;
	size_t n;
};

static bool span_is(struct span s, const char *word)
{
	return s.n == strlen(word) && memcmp(s.p, word, s.n) == 0;
}

/* The next field of s, cut at sep; false when s is used up. */
static bool span_next(struct span *s, char sep, struct span *field)
{
	const char *end;

	if (!s->p || s->n == 0)
		return false;
	end = memchr(s->p, sep, s->n);
	field->p = s->p;
	field->n = end ? (size_t)(end - s->p) : s->n;
	s->p = end ? end + 1 : NULL;
	s->n = end ? s->n - field->n - 1 : 0;
	return true;
}

/* Decimal digits only, at most max. */
static bool span_number(struct span s, uint64_t max, uint64_t *ret)
{
	uint64_t v = 0;

	if (s.n == 0 || s.n > 20)
		return false;
	for (size_t i = 0; i < s.n; i++) {
		if (s.p[i] < '0' || s.p[i] > '9' || v > (max - (uint64_t)(s.p[i] - '0')) / 10)
			return false;
		v = v * 10 + (uint64_t)(s.p[i] - '0');
	}
	*ret = v;
	return true;
}

/* Since 5.8 the kernel shows the name; before, the number. */
static int mode_parse(struct span v, enum hidepid_mode *ret)
{
	static const struct {
		const char *name, *number;
		enum hidepid_mode mode;
	} modes[] = {
		{ "off", "0", HIDEPID_MODE_OFF },
		{ "noaccess", "1", HIDEPID_MODE_NOACCESS },
		{ "invisible", "2", HIDEPID_MODE_INVISIBLE },
		{ "ptraceable", "4", HIDEPID_MODE_PTRACEABLE },
	};

	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		if (span_is(v, modes[i].name) || span_is(v, modes[i].number)) {
			*ret = modes[i].mode;
			return 0;
		}
	return -EINVAL;
}

/* proc's super options: "rw,gid=N,hidepid=M" (gid and hidepid shown only
 * when not the defaults, 0 and off). */
static int options_parse(struct span opts, struct hidepid *ret)
{
	struct hidepid h = { HIDEPID_MODE_OFF, 0 };
	struct span o;
	uint64_t gid;

	while (span_next(&opts, ',', &o)) {
		if (o.n >= 8 && memcmp(o.p, "hidepid=", 8) == 0) {
			if (mode_parse((struct span){ o.p + 8, o.n - 8 }, &h.mode) < 0)
				return -EINVAL;
		} else if (o.n >= 4 && memcmp(o.p, "gid=", 4) == 0) {
			if (!span_number((struct span){ o.p + 4, o.n - 4 }, (gid_t)-2, &gid))
				return -EINVAL;
			h.gid = (gid_t)gid;
		}
	}
	*ret = h;
	return 0;
}

/* One mountinfo line: "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [TAGS...] -
 * FSTYPE SOURCE SUPEROPTS". 1 when it is the mount sought, with its super
 * options in *opts; 0 when not, or not a line of that shape. */
static int line_match(struct span line, uint64_t mnt_id, struct span *opts)
{
	struct span f[5], t;
	uint64_t id;

	for (size_t i = 0; i < 5; i++)
		if (!span_next(&line, ' ', &f[i]))
			return 0;
	if (mnt_id ? !span_number(f[0], UINT64_MAX, &id) || id != mnt_id : !span_is(f[4], "/proc"))
		return 0;
	do
		if (!span_next(&line, ' ', &t))
			return 0;
	while (!span_is(t, "-"));
	if (!span_next(&line, ' ', &t) || !span_is(t, "proc") || !span_next(&line, ' ', &t))
		return 0;
	*opts = line;
	return 1;
}

int hidepid_parse(const char *text, size_t len, uint64_t mnt_id, struct hidepid *ret)
{
	struct span rest = { text, len }, line, opts, found = { NULL, 0 };
	bool any = false;

	while (span_next(&rest, '\n', &line)) {
		if (!line_match(line, mnt_id, &opts))
			continue;
		found = opts;
		any = true;
		if (mnt_id)
			break;
	}
	if (!any)
		return -ENOENT;
	return options_parse(found, ret);
}

bool hidepid_hides(const struct hidepid *h, bool in_gid)
{
	if (h->mode == HIDEPID_MODE_OFF)
		return false;
	return h->mode == HIDEPID_MODE_PTRACEABLE || !in_gid;
}

static int read_all(const char *path, char **ret, size_t *len)
{
	size_t cap = 16384, n = 0;
	char *buf = NULL, *grown;
	ssize_t k;
	int fd = open(path, O_RDONLY | O_CLOEXEC), r = 0;

	if (fd < 0)
		return -errno;
	for (;;) {
		if (!buf || n == cap) {
			if (buf)
				cap *= 2;
			grown = cap <= MOUNTINFO_MAX ? realloc(buf, cap) : NULL;
			if (!grown) {
				r = cap <= MOUNTINFO_MAX ? -ENOMEM : -EFBIG;
				break;
			}
			buf = grown;
		}
		k = read(fd, buf + n, cap - n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			r = k < 0 ? -errno : 0;
			break;
		}
		n += (size_t)k;
	}
	close(fd);
	if (r < 0) {
		free(buf);
		return r;
	}
	*ret = buf;
	*len = n;
	return 0;
}

int hidepid_read(struct hidepid *ret)
{
	struct statx stx;
	uint64_t mnt_id = 0;
	char *text = NULL;
	size_t len = 0;
	int r;

	/* The mount on top at /proc, not merely the last one listed there. */
	if (statx(AT_FDCWD, "/proc", 0, STATX_MNT_ID, &stx) == 0 && (stx.stx_mask & STATX_MNT_ID))
		mnt_id = stx.stx_mnt_id;
	r = read_all("/proc/self/mountinfo", &text, &len);
	if (r >= 0)
		r = hidepid_parse(text, len, mnt_id, ret);
	free(text);
	if (r == -ENOMEM)
		return r;
	if (r < 0) {
		*ret = (struct hidepid){ HIDEPID_MODE_INVISIBLE, 0 };
		log_warning_errno(r, "cannot tell how /proc is mounted: %m; tasks and queues show "
				  "a caller who is not root or admin only their own tasks");
	}
	return 0;
}
