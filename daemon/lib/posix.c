// SPDX-License-Identifier: GPL-2.0
/*
 * POSIX attributes in S3, as s3fs-fuse keeps them, so that a bucket written
 * by either reads the same through the other:
 *
 *   x-amz-meta-mode   decimal st_mode, type bits included (33188: a file
 *                     of mode 0644)
 *   x-amz-meta-uid    decimal
 *   x-amz-meta-gid    decimal
 *   x-amz-meta-mtime  seconds since the epoch, "SEC" or "SEC.NSEC" (nine
 *                     digits; fewer are read as a fraction)
 *
 * Parsing is strict: digits only, no sign but a leading '-' on mtime, no
 * spaces, in range. A value that is not what we write is one another tool
 * made up: the field counts as absent (the mount's defaults apply) rather
 * than be guessed at.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "base.h"
#include "posix.h"
#include "util.h"

#define MODE_MAX	0177777U	/* S_IFMT | 07777 */
#define NSEC_PER_SEC	1000000000U

const char *const s3d_posix_names[S3D_POSIX_NF] = {
	[S3D_POSIX_MODE] = "x-amz-meta-mode",
	[S3D_POSIX_UID] = "x-amz-meta-uid",
	[S3D_POSIX_GID] = "x-amz-meta-gid",
	[S3D_POSIX_MTIME] = "x-amz-meta-mtime",
};

/**
 * s3d_posix_field_of() - which of the four headers @name is
 * @name: a header name (not NUL terminated), any case
 * @len: its length
 *
 * Return: enum s3d_posix_field, or -1 for any other header.
 */
int s3d_posix_field_of(const char *name, size_t len)
{
	int i;

	for (i = 0; i < S3D_POSIX_NF; i++)
		if (strlen(s3d_posix_names[i]) == len &&
		    !strncasecmp(name, s3d_posix_names[i], len))
			return i;
	return -1;
}

/**
 * s3d_posix_valid() - can @p be sent as headers?
 * @p: attributes (from the kernel)
 *
 * Return: true if it names only known fields, each in range.
 */
bool s3d_posix_valid(const struct s3cfs_posix *p)
{
	if (p->flags & ~S3CFS_POSIX_ALL)
		return false;
	if ((p->flags & S3CFS_POSIX_MODE) && p->mode > MODE_MAX)
		return false;
	if ((p->flags & S3CFS_POSIX_MTIME) && p->mtime_nsec >= NSEC_PER_SEC)
		return false;
	return true;
}

/**
 * s3d_posix_headers() - the request headers for @p
 * @p: attributes (s3d_posix_valid())
 * @t: where the values are kept (alive as long as @h is used)
 * @h: room for S3D_POSIX_NF headers
 *
 * Only the fields whose flag is set get a header.
 *
 * Return: the number of headers written to @h.
 */
size_t s3d_posix_headers(const struct s3cfs_posix *p,
			 struct s3d_posix_hdrs *t, struct s3d_kv *h)
{
	size_t n = 0;
	int i;

	memset(t, 0, sizeof(*t));
	if (p->flags & S3CFS_POSIX_MODE)
		snprintf(t->v[S3D_POSIX_MODE], S3D_POSIX_VAL_MAX, "%u",
			 p->mode);
	if (p->flags & S3CFS_POSIX_UID)
		snprintf(t->v[S3D_POSIX_UID], S3D_POSIX_VAL_MAX, "%u", p->uid);
	if (p->flags & S3CFS_POSIX_GID)
		snprintf(t->v[S3D_POSIX_GID], S3D_POSIX_VAL_MAX, "%u", p->gid);
	/* Before 1970 whole seconds: "-2.5" would read as -2 - 0.5. */
	if ((p->flags & S3CFS_POSIX_MTIME) && (!p->mtime_nsec || p->mtime < 0))
		snprintf(t->v[S3D_POSIX_MTIME], S3D_POSIX_VAL_MAX, "%" PRId64,
			 (int64_t)p->mtime);
	else if (p->flags & S3CFS_POSIX_MTIME)
		snprintf(t->v[S3D_POSIX_MTIME], S3D_POSIX_VAL_MAX,
			 "%" PRId64 ".%09u", (int64_t)p->mtime, p->mtime_nsec);
	for (i = 0; i < S3D_POSIX_NF; i++)
		if (p->flags & (1U << i))
			h[n++] = (struct s3d_kv){ s3d_posix_names[i], t->v[i] };
	return n;
}

static int parse_u32(const char *s, uint32_t max, uint32_t *out)
{
	uint64_t v;

	if (s3d_parse_u64(s, &v) || v > max)
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

/* "SEC", "-SEC" or "SEC.F" with 1 to 9 digits of fraction. */
static int parse_mtime(const char *s, int64_t *sec, uint32_t *nsec)
{
	char whole[24];
	const char *dot = strchr(s, '.');
	bool neg = *s == '-';
	size_t wl, fl, i;
	uint64_t v;
	uint32_t f = 0;

	if (neg)
		s++;
	wl = dot ? (size_t)(dot - s) : strlen(s);
	if (!wl || wl >= sizeof(whole))
		return -EINVAL;
	memcpy(whole, s, wl);
	whole[wl] = '\0';
	if (s3d_parse_u64(whole, &v) || v > INT64_MAX)
		return -EINVAL;
	if (dot) {
		fl = strlen(dot + 1);
		/* A negative time with a fraction: nobody writes that. */
		if (neg || !fl || fl > 9)
			return -EINVAL;
		for (i = 0; i < 9; i++) {
			char c = i < fl ? dot[1 + i] : '0';

			if (c < '0' || c > '9')
				return -EINVAL;
			f = f * 10 + (uint32_t)(c - '0');
		}
	}
	*sec = neg ? -(int64_t)v : (int64_t)v;
	*nsec = f;
	return 0;
}

/**
 * s3d_posix_parse() - the attributes a response's headers give
 * @t: the four values as the response had them ("" absent)
 * @p: set: the fields present and valid, and their flags
 *
 * Return: the S3CFS_POSIX_* flags of fields present but invalid (the
 * caller warns once); they are left out of @p.
 */
uint32_t s3d_posix_parse(const struct s3d_posix_hdrs *t,
			 struct s3cfs_posix *p)
{
	uint32_t bad = 0;
	int64_t sec;
	int i, err;

	memset(p, 0, sizeof(*p));
	for (i = 0; i < S3D_POSIX_NF; i++) {
		const char *v = t->v[i];

		if (!*v)
			continue;
		switch (i) {
		case S3D_POSIX_MODE:
			err = parse_u32(v, MODE_MAX, &p->mode);
			break;
		case S3D_POSIX_UID:
			/* (uid_t)-1 is "no owner" to chown(2), never one. */
			err = parse_u32(v, UINT32_MAX - 1, &p->uid);
			break;
		case S3D_POSIX_GID:
			err = parse_u32(v, UINT32_MAX - 1, &p->gid);
			break;
		default:
			err = parse_mtime(v, &sec, &p->mtime_nsec);
			p->mtime = err ? 0 : sec;
			break;
		}
		/* The parsers set nothing when they fail. */
		if (err)
			bad |= 1U << i;
		else
			p->flags |= 1U << i;
	}
	return bad;
}

static void put_le32(uint8_t *b, uint32_t v)
{
	int i;

	for (i = 0; i < 4; i++)
		b[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get_le32(const uint8_t *b)
{
	return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
	       (uint32_t)b[3] << 24;
}

/**
 * s3d_posix_encode() - the S3CFS_XATTR_POSIX value of @p
 * @p: attributes; fields without their flag are stored as 0
 * @v: the value (layout in the uapi header)
 */
void s3d_posix_encode(const struct s3cfs_posix *p,
		      uint8_t v[S3CFS_POSIX_XATTR_LEN])
{
	uint32_t fl = p->flags & S3CFS_POSIX_ALL;
	uint64_t mt = (fl & S3CFS_POSIX_MTIME) ? (uint64_t)p->mtime : 0;

	memset(v, 0, S3CFS_POSIX_XATTR_LEN);
	v[0] = S3CFS_POSIX_VERSION;
	v[1] = (uint8_t)fl;
	put_le32(v + 4, (fl & S3CFS_POSIX_MODE) ? p->mode : 0);
	put_le32(v + 8, (fl & S3CFS_POSIX_UID) ? p->uid : 0);
	put_le32(v + 12, (fl & S3CFS_POSIX_GID) ? p->gid : 0);
	put_le32(v + 16, (uint32_t)mt);
	put_le32(v + 20, (uint32_t)(mt >> 32));
}

/**
 * s3d_posix_decode() - read an S3CFS_XATTR_POSIX value
 * @v: the value
 * @n: its length
 * @p: set on success (no nanoseconds: the value has none)
 *
 * Return: 0, or -EINVAL for another length, version or unknown flags.
 */
int s3d_posix_decode(const uint8_t *v, size_t n, struct s3cfs_posix *p)
{
	if (n != S3CFS_POSIX_XATTR_LEN || v[0] != S3CFS_POSIX_VERSION ||
	    (v[1] & ~S3CFS_POSIX_ALL))
		return -EINVAL;
	memset(p, 0, sizeof(*p));
	p->flags = v[1];
	p->mode = get_le32(v + 4);
	p->uid = get_le32(v + 8);
	p->gid = get_le32(v + 12);
	p->mtime = (int64_t)((uint64_t)get_le32(v + 16) |
			     (uint64_t)get_le32(v + 20) << 32);
	return 0;
}
