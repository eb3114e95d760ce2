// SPDX-License-Identifier: GPL-2.0
/*
 * POSIX attributes in s3fs-fuse's convention (lib/posix.c): the headers a
 * struct s3cfs_posix becomes, the strict parsing of what a response says
 * (a bad value is that field absent, the others kept), and the 24-byte
 * S3CFS_XATTR_POSIX value, byte for byte as the uapi header lays it out.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "lib/base.h"
#include "lib/posix.h"
#include "tap.h"

/* The value of header @name among @h, or NULL. */
static const char *hval(const struct s3d_kv *h, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(h[i].name, name))
			return h[i].value;
	return NULL;
}

static void test_headers(void)
{
	struct s3cfs_posix p = {
		.flags = S3CFS_POSIX_ALL, .mode = 0100644, .uid = 1000,
		.gid = 4294967294U, .mtime = 1700000000, .mtime_nsec = 0,
	};
	struct s3d_posix_hdrs t;
	struct s3d_kv h[S3D_POSIX_NF];
	size_t n;

	n = s3d_posix_headers(&p, &t, h);
	is_int((long long)n, 4, "headers: all four fields, four headers");
	is_str(hval(h, n, "x-amz-meta-mode"), "33188",
	       "headers: mode decimal, type bits included");
	is_str(hval(h, n, "x-amz-meta-uid"), "1000", "headers: uid");
	is_str(hval(h, n, "x-amz-meta-gid"), "4294967294", "headers: gid (u32)");
	is_str(hval(h, n, "x-amz-meta-mtime"), "1700000000",
	       "headers: mtime without nanoseconds is \"SEC\"");
	p.mtime_nsec = 5;
	n = s3d_posix_headers(&p, &t, h);
	is_str(hval(h, n, "x-amz-meta-mtime"), "1700000000.000000005",
	       "headers: mtime with nanoseconds is \"SEC.%%09u\"");
	p.mtime = -7;
	p.mtime_nsec = 0;
	n = s3d_posix_headers(&p, &t, h);
	is_str(hval(h, n, "x-amz-meta-mtime"), "-7",
	       "headers: a time before 1970");
	p.mtime_nsec = 500000000;
	n = s3d_posix_headers(&p, &t, h);
	is_str(hval(h, n, "x-amz-meta-mtime"), "-7",
	       "headers: a time before 1970 with nanoseconds: whole seconds");
	p.flags = S3CFS_POSIX_MODE | S3CFS_POSIX_GID;
	n = s3d_posix_headers(&p, &t, h);
	ok(n == 2 && hval(h, n, "x-amz-meta-mode") &&
	   hval(h, n, "x-amz-meta-gid") && !hval(h, n, "x-amz-meta-uid") &&
	   !hval(h, n, "x-amz-meta-mtime"),
	   "headers: only the fields whose flag is set");
	p.flags = 0;
	is_int((long long)s3d_posix_headers(&p, &t, h), 0,
	       "headers: no flags, no headers");
}

static void test_field_of(void)
{
	is_int(s3d_posix_field_of("X-Amz-Meta-Mode", 15), S3D_POSIX_MODE,
	       "field_of: any case");
	is_int(s3d_posix_field_of("x-amz-meta-mtime: 1", 16), S3D_POSIX_MTIME,
	       "field_of: by length, not NUL");
	is_int(s3d_posix_field_of("x-amz-meta-modes", 16), -1,
	       "field_of: a longer name is another header");
	is_int(s3d_posix_field_of("x-amz-meta-mod", 14), -1,
	       "field_of: a prefix is another header");
	is_int(s3d_posix_field_of("ETag", 4), -1, "field_of: other headers");
}

/* Parse mode/uid/gid/mtime texts; returns the bad flags. */
static uint32_t parse4(const char *mode, const char *uid, const char *gid,
		       const char *mtime, struct s3cfs_posix *p)
{
	struct s3d_posix_hdrs t = { 0 };

	strcpy(t.v[S3D_POSIX_MODE], mode);
	strcpy(t.v[S3D_POSIX_UID], uid);
	strcpy(t.v[S3D_POSIX_GID], gid);
	strcpy(t.v[S3D_POSIX_MTIME], mtime);
	return s3d_posix_parse(&t, p);
}

static void test_parse(void)
{
	static const struct {
		const char *v;
		int field;
		const char *why;
	} bad[] = {
		{ "abc", S3D_POSIX_MODE, "letters" },
		{ "65536", S3D_POSIX_MODE, "mode above 0177777" },
		{ "+420", S3D_POSIX_MODE, "a sign" },
		{ " 420", S3D_POSIX_MODE, "a space" },
		{ "0x1a4", S3D_POSIX_MODE, "hex" },
		{ "-1", S3D_POSIX_UID, "a negative uid" },
		{ "4294967295", S3D_POSIX_UID, "uid (uid_t)-1" },
		{ "4294967296", S3D_POSIX_GID, "gid above u32" },
		{ "99999999999999999999", S3D_POSIX_GID, "gid overflowing u64" },
		{ "1.", S3D_POSIX_MTIME, "mtime with an empty fraction" },
		{ ".5", S3D_POSIX_MTIME, "mtime without seconds" },
		{ "1.1234567890", S3D_POSIX_MTIME, "mtime with ten fraction digits" },
		{ "-1.5", S3D_POSIX_MTIME, "a negative mtime with a fraction" },
		{ "1.2.3", S3D_POSIX_MTIME, "mtime with two dots" },
		{ "1e9", S3D_POSIX_MTIME, "mtime in e notation" },
		{ "9223372036854775808", S3D_POSIX_MTIME, "mtime above s64" },
		{ "-", S3D_POSIX_MTIME, "a lone minus" },
		{ "!", S3D_POSIX_MTIME, "the too-long marker" },
	};
	struct s3cfs_posix p;
	struct s3d_posix_hdrs t;
	struct s3d_kv h[S3D_POSIX_NF];
	size_t i;

	is_int(parse4("33188", "1000", "100", "1700000000.5", &p), 0,
	       "parse: good values");
	ok(p.flags == S3CFS_POSIX_ALL && p.mode == 0100644 && p.uid == 1000 &&
	   p.gid == 100 && p.mtime == 1700000000 && p.mtime_nsec == 500000000,
	   "parse: ... fields and flags (a short fraction is a fraction)");
	is_int(parse4("", "", "", "", &p), 0, "parse: no headers");
	ok(p.flags == 0 && !p.mode && !p.uid && !p.gid && !p.mtime,
	   "parse: ... no flags, all zero");
	is_int(parse4("", "0", "", "-86400", &p), 0, "parse: some headers");
	ok(p.flags == (S3CFS_POSIX_UID | S3CFS_POSIX_MTIME) && p.uid == 0 &&
	   p.mtime == -86400 && !p.mtime_nsec,
	   "parse: ... uid 0 is a uid; a time before 1970");
	is_int(parse4("511", "", "", "1700000000.000000001", &p), 0,
	       "parse: mode without type bits, nine fraction digits");
	ok(p.mode == 0777 && p.mtime_nsec == 1, "parse: ... as given");
	for (i = 0; i < S3D_ARRAY_SIZE(bad); i++) {
		const char *v[S3D_POSIX_NF] = { "16877", "5", "6", "7" };
		uint32_t got;

		v[bad[i].field] = bad[i].v;
		got = parse4(v[0], v[1], v[2], v[3], &p);
		ok(got == (1U << bad[i].field) &&
		   p.flags == (S3CFS_POSIX_ALL & ~(1U << bad[i].field)),
		   "parse: %s ('%s') is bad, the others kept", bad[i].why,
		   bad[i].v);
	}
	p = (struct s3cfs_posix){ .flags = S3CFS_POSIX_ALL, .mode = 0120777,
				  .uid = 1, .gid = 2, .mtime = 3,
				  .mtime_nsec = 999999999 };
	s3d_posix_headers(&p, &t, h);
	{
		struct s3cfs_posix q;

		is_int(s3d_posix_parse(&t, &q), 0, "parse: what we write");
		ok(!memcmp(&p, &q, sizeof(p)), "parse: ... reads back the same");
	}
}

static void test_valid(void)
{
	struct s3cfs_posix p = { .flags = S3CFS_POSIX_ALL, .mode = 0177777,
				 .mtime_nsec = 999999999 };

	ok(s3d_posix_valid(&p), "valid: the largest mode and nanoseconds");
	p.flags = 0x10;
	ok(!s3d_posix_valid(&p), "valid: an unknown flag is not");
	p.flags = S3CFS_POSIX_MODE;
	p.mode = 0200000;
	ok(!s3d_posix_valid(&p), "valid: a mode above 0177777 is not");
	p.flags = S3CFS_POSIX_MTIME;
	p.mtime_nsec = 1000000000;
	ok(!s3d_posix_valid(&p), "valid: a billion nanoseconds is not");
	p.flags = S3CFS_POSIX_UID;
	ok(s3d_posix_valid(&p), "valid: fields without their flag do not count");
}

static void test_xattr(void)
{
	static const uint8_t want[S3CFS_POSIX_XATTR_LEN] = {
		1, 0x0f, 0, 0,
		0xa4, 0x81, 0, 0,		/* 0100644 */
		0xe8, 0x03, 0, 0,		/* 1000 */
		0xfe, 0xff, 0xff, 0xff,		/* 4294967294 */
		0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,	/* -2 */
	};
	struct s3cfs_posix p = {
		.flags = S3CFS_POSIX_ALL, .mode = 0100644, .uid = 1000,
		.gid = 4294967294U, .mtime = -2, .mtime_nsec = 7,
	}, q;
	uint8_t v[S3CFS_POSIX_XATTR_LEN + 1];

	s3d_posix_encode(&p, v);
	ok(!memcmp(v, want, sizeof(want)),
	   "xattr: version, flags, 0, mode, uid, gid, mtime; little endian");
	is_int(s3d_posix_decode(v, S3CFS_POSIX_XATTR_LEN, &q), 0, "xattr: decode");
	ok(q.flags == p.flags && q.mode == p.mode && q.uid == p.uid &&
	   q.gid == p.gid && q.mtime == p.mtime && q.mtime_nsec == 0,
	   "xattr: ... the same but the nanoseconds (not kept)");
	p.flags = S3CFS_POSIX_UID;
	s3d_posix_encode(&p, v);
	ok(v[1] == S3CFS_POSIX_UID && v[8] == 0xe8 && !v[4] && !v[12] &&
	   !v[16] && !v[23], "xattr: fields without their flag are 0");
	p.flags = 0;
	s3d_posix_encode(&p, v);
	ok(v[0] == S3CFS_POSIX_VERSION && v[1] == 0,
	   "xattr: no headers: flags 0 (the object was asked about)");
	is_int(s3d_posix_decode(v, S3CFS_POSIX_XATTR_LEN - 1, &q), -EINVAL,
	       "xattr: a short value is refused");
	is_int(s3d_posix_decode(v, S3CFS_POSIX_XATTR_LEN + 1, &q), -EINVAL,
	       "xattr: a long value is refused");
	v[0] = 2;
	is_int(s3d_posix_decode(v, S3CFS_POSIX_XATTR_LEN, &q), -EINVAL,
	       "xattr: another version is refused");
	v[0] = 1;
	v[1] = 0x10;
	is_int(s3d_posix_decode(v, S3CFS_POSIX_XATTR_LEN, &q), -EINVAL,
	       "xattr: unknown flags are refused");
}

int main(void)
{
	test_headers();
	test_field_of();
	test_parse();
	test_valid();
	test_xattr();
	return tap_done();
}
