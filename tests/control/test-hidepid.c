/* /proc's hidepid= and gid= read from mountinfo fixtures, and what they
 * hide from whom. */
#include <errno.h>
#include <string.h>

#include "check.h"
#include "hidepid.h"

/* A host's, as a 6.x kernel shows it (trimmed). */
static const char host[] =
	"21 27 0:20 / /sys rw,nosuid,nodev,noexec,relatime shared:7 - sysfs sysfs rw\n"
	"22 27 0:21 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw\n"
	"27 1 259:2 / / rw,relatime shared:1 - ext4 /dev/nvme0n1p2 rw,errors=remount-ro\n"
	"45 22 0:39 / /proc/sys/fs/binfmt_misc rw,relatime shared:27 - binfmt_misc binfmt_misc rw\n";

static int parse(const char *text, uint64_t mnt_id, struct hidepid *h)
{
	*h = (struct hidepid){ (enum hidepid_mode)99, 99 };
	return hidepid_parse(text, strlen(text), mnt_id, h);
}

static void test_modes(void)
{
	struct hidepid h;

	CHECK(parse(host, 0, &h) == 0);
	CHECK(h.mode == HIDEPID_MODE_OFF && h.gid == 0);
	CHECK(parse(host, 22, &h) == 0);
	CHECK(h.mode == HIDEPID_MODE_OFF && h.gid == 0);

	/* Since 5.8: the name; gid= before hidepid=. */
	CHECK(parse("22 27 0:21 / /proc rw,relatime - proc proc rw,gid=1001,hidepid=invisible\n",
		    0, &h) == 0);
	CHECK(h.mode == HIDEPID_MODE_INVISIBLE && h.gid == 1001);
	CHECK(parse("22 27 0:21 / /proc rw - proc proc rw,hidepid=noaccess\n", 0, &h) == 0);
	CHECK(h.mode == HIDEPID_MODE_NOACCESS && h.gid == 0);
	CHECK(parse("22 27 0:21 / /proc rw - proc proc rw,hidepid=ptraceable,subset=pid\n", 0,
		    &h) == 0);
	CHECK(h.mode == HIDEPID_MODE_PTRACEABLE);
	CHECK(parse("22 27 0:21 / /proc rw - proc proc rw,hidepid=off\n", 0, &h) == 0);
	CHECK(h.mode == HIDEPID_MODE_OFF);
	/* Before 5.8: the number; and no newline at the end. */
	CHECK(parse("22 27 0:21 / /proc rw shared:12 master:3 - proc proc rw,hidepid=2,gid=27",
		    0, &h) == 0);
	CHECK(h.mode == HIDEPID_MODE_INVISIBLE && h.gid == 27);
	CHECK(parse("22 27 0:21 / /proc rw - proc proc rw,hidepid=4", 0, &h) == 0);
	CHECK(h.mode == HIDEPID_MODE_PTRACEABLE);
}

/* A second proc mounted over /proc (a container's, a unit's ProtectProc=). */
static void test_which_mount(void)
{
	static const char two[] =
		"22 27 0:21 / /proc rw,relatime - proc proc rw\n"
		"27 1 259:2 / / rw,relatime - ext4 /dev/nvme0n1p2 rw\n"
		"310 22 0:80 / /proc rw,relatime - proc proc rw,hidepid=invisible\n"
		"311 310 0:81 / /proc/sys ro,relatime - proc proc rw\n"
		"312 27 0:82 / /procfoo rw - proc proc rw,hidepid=noaccess\n"
		"313 27 0:83 / /proc\\040x rw - proc proc rw,hidepid=noaccess\n";
	struct hidepid h;

	CHECK(parse(two, 0, &h) == 0); /* the last at /proc */
	CHECK(h.mode == HIDEPID_MODE_INVISIBLE);
	CHECK(parse(two, 310, &h) == 0);
	CHECK(h.mode == HIDEPID_MODE_INVISIBLE);
	CHECK(parse(two, 22, &h) == 0); /* the one statx names, wherever listed */
	CHECK(h.mode == HIDEPID_MODE_OFF);
	CHECK(parse(two, 312, &h) == 0); /* by number, whatever its path */
	CHECK(h.mode == HIDEPID_MODE_NOACCESS);
	CHECK(parse(two, 27, &h) == -ENOENT); /* not a proc */
	CHECK(parse(two, 999, &h) == -ENOENT);
	CHECK(parse(host + 0, 45, &h) == -ENOENT);
	/* Nothing at /proc, or nothing at all. */
	CHECK(parse("27 1 259:2 / / rw - ext4 /dev/sda rw\n", 0, &h) == -ENOENT);
	CHECK(parse("12 1 0:5 / /proc rw - tmpfs tmpfs rw,hidepid=2\n", 0, &h) == -ENOENT);
	CHECK(parse("", 0, &h) == -ENOENT);
	CHECK(parse("\n\n", 0, &h) == -ENOENT);
	CHECK(h.mode == (enum hidepid_mode)99 && h.gid == 99); /* untouched on failure */
}

static void test_malformed(void)
{
	static const char cut[] = "22 27 0:21 / /proc rw - proc proc rw,hidepid=invisible\n";
	struct hidepid h;

	CHECK(parse("22 27 0:21 / /proc rw - proc proc rw,hidepid=3\n", 0, &h) == -EINVAL);
	CHECK(parse("22 27 0:21 / /proc rw - proc proc rw,hidepid=\n", 0, &h) == -EINVAL);
	CHECK(parse("22 27 0:21 / /proc rw - proc proc rw,hidepid=invisiblex\n", 0, &h) == -EINVAL);
	CHECK(parse("22 27 0:21 / /proc rw - proc proc rw,gid=12x\n", 0, &h) == -EINVAL);
	CHECK(parse("22 27 0:21 / /proc rw - proc proc rw,gid=-1\n", 0, &h) == -EINVAL);
	CHECK(parse("22 27 0:21 / /proc rw - proc proc rw,gid=4294967295\n", 0, &h) == -EINVAL);
	CHECK(parse("22 27 0:21 / /proc rw - proc proc rw,gid=99999999999999999999999\n", 0,
		    &h) == -EINVAL);
	CHECK(parse("22 27 0:21 / /proc rw - proc proc rw,gid=4294967294\n", 0, &h) == 0);
	CHECK(h.gid == 4294967294U);
	/* Lines cut short are not the mount sought. */
	CHECK(parse("22 27 0:21 / /proc rw proc proc rw,hidepid=2\n", 0, &h) == -ENOENT);
	CHECK(parse("22 27 0:21 / /proc rw -\n", 0, &h) == -ENOENT);
	CHECK(parse("22 27 0:21 / /proc rw - proc\n", 0, &h) == -ENOENT);
	CHECK(parse("22 27 0:21 / /proc\n", 0, &h) == -ENOENT);
	CHECK(parse("x 27 0:21 / /proc rw - proc proc rw\n", 22, &h) == -ENOENT);
	/* Only len bytes are read: no NUL needed, none past it looked at. */
	CHECK(hidepid_parse(cut, sizeof(cut) - 1, 0, &h) == 0 && h.mode == HIDEPID_MODE_INVISIBLE);
	CHECK(hidepid_parse(cut, strlen(cut) - 7, 0, &h) == -EINVAL); /* "hidepid=inv" */
	CHECK(hidepid_parse(cut, 20, 0, &h) == -ENOENT);
	CHECK(hidepid_parse(cut, 0, 0, &h) == -ENOENT);
}

static void test_who_sees(void)
{
	struct hidepid off = { HIDEPID_MODE_OFF, 0 }, inv = { HIDEPID_MODE_INVISIBLE, 50 };
	struct hidepid noacc = { HIDEPID_MODE_NOACCESS, 50 }, ptr = { HIDEPID_MODE_PTRACEABLE, 50 };

	CHECK(!hidepid_hides(&off, false));
	CHECK(!hidepid_hides(&off, true));
	CHECK(hidepid_hides(&inv, false));
	CHECK(!hidepid_hides(&inv, true));
	CHECK(hidepid_hides(&noacc, false));
	CHECK(!hidepid_hides(&noacc, true));
	/* The kernel asks ptrace access alone under ptraceable. */
	CHECK(hidepid_hides(&ptr, false));
	CHECK(hidepid_hides(&ptr, true));

	CHECK(hidepid_owner_sees(1000, 1000, 1000));
	CHECK(!hidepid_owner_sees(1000, 0, 0));
	CHECK(!hidepid_owner_sees(1000, 1000, 0)); /* a setuid program it ran */
	CHECK(!hidepid_owner_sees(1000, 0, 1000));
}

int main(void)
{
	test_modes();
	test_which_mount();
	test_malformed();
	test_who_sees();
	return CHECK_EXIT();
}
