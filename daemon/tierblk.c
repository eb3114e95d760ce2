// SPDX-License-Identifier: GPL-2.0
/*
 * The fleet tier's pure parts (no I/O; tier.c does the requests).
 *
 * A block is named by what it holds, never by where it came from in time:
 *
 *   s3cachefs/v1/<source:16>/<object:64>/<block KiB>k/<index>
 *
 * source = SHA-256("s3cachefs-tier-source" 0 FORMAT 0 endpoint 0 bucket),
 * object = SHA-256("s3cachefs-tier-object" 0 FORMAT 0 source 0 key 0
 * normalised ETag 0 size in decimal). A new version of an object is a new
 * object hash, so a block never needs invalidating; the first 16 digits of
 * the source keep one origin's blocks under one prefix (lifecycle rules,
 * usage per origin). The version is in the name and in the hashes.
 *
 * The block's own metadata repeats all of it with the SHA-256 of its body
 * (RGW ignores x-amz-checksum-*, so the checksum travels as x-amz-meta),
 * and, with tier_secret, an HMAC-SHA-256 over those fields: a reader uses
 * a block only when every field is what it expects.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "lib/base.h"
#include "tierblk.h"

struct s3d_tier_stats s3d_tier_stats;

const char *const s3d_tier_field_hdr[S3D_TF_NR] = {
	[S3D_TF_FORMAT] = "x-amz-meta-s3cfs-format",
	[S3D_TF_SOURCE] = "x-amz-meta-s3cfs-source",
	[S3D_TF_OBJECT] = "x-amz-meta-s3cfs-object",
	[S3D_TF_ETAG] = "x-amz-meta-s3cfs-etag",
	[S3D_TF_SIZE] = "x-amz-meta-s3cfs-size",
	[S3D_TF_OFFSET] = "x-amz-meta-s3cfs-offset",
	[S3D_TF_LENGTH] = "x-amz-meta-s3cfs-length",
	[S3D_TF_SHA256] = "x-amz-meta-s3cfs-sha256",
	[S3D_TF_HMAC] = "x-amz-meta-s3cfs-hmac",
};

const char *const s3d_tier_err_name[S3D_TIER_ERR_NR] = {
	[S3D_TIER_ERR_CONNECT] = "connect",
	[S3D_TIER_ERR_TIMEOUT] = "timeout",
	[S3D_TIER_ERR_SERVER] = "server",
	[S3D_TIER_ERR_AUTH] = "auth",
	[S3D_TIER_ERR_OTHER] = "other",
};

const char *const s3d_tier_put_name[S3D_TIER_PUT_NR] = {
	[S3D_TIER_PUT_STORED] = "stored",
	[S3D_TIER_PUT_EXISTS] = "exists",
	[S3D_TIER_PUT_HEALED] = "healed",
	[S3D_TIER_PUT_DROPPED] = "dropped",
	[S3D_TIER_PUT_FAILED] = "failed",
};

static const char *const bad_names[S3D_TIER_BAD_NR] = {
	[S3D_TIER_OK] = "ok",
	[S3D_TIER_BAD_STATUS] = "status",
	[S3D_TIER_BAD_LENGTH] = "length",
	[S3D_TIER_BAD_FORMAT] = "format",
	[S3D_TIER_BAD_SOURCE] = "source",
	[S3D_TIER_BAD_OBJECT] = "object",
	[S3D_TIER_BAD_ETAG] = "etag",
	[S3D_TIER_BAD_SIZE] = "size",
	[S3D_TIER_BAD_OFFSET] = "offset",
	[S3D_TIER_BAD_META_LENGTH] = "meta_length",
	[S3D_TIER_BAD_HMAC] = "hmac",
	[S3D_TIER_BAD_CHECKSUM] = "checksum",
};

const char *s3d_tier_bad_name(enum s3d_tier_bad b)
{
	return b < S3D_TIER_BAD_NR ? bad_names[b] : "?";
}

static void to_hex(const unsigned char *d, size_t n, char *hex)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		hex[2 * i] = digits[d[i] >> 4];
		hex[2 * i + 1] = digits[d[i] & 15];
	}
	hex[2 * n] = '\0';
}

void s3d_tier_sha256_hex(const void *p, size_t n, char hex[S3D_TIER_HEX + 1])
{
	unsigned char d[32];
	unsigned int dn = 0;

	EVP_Digest(p, n, d, &dn, EVP_sha256(), NULL);
	to_hex(d, 32, hex);
}

/* SHA-256 of the strings @s, each followed by a NUL byte, in hex. */
static int hash_fields(const char *const *s, size_t n,
		       char hex[S3D_TIER_HEX + 1])
{
	EVP_MD_CTX *c = EVP_MD_CTX_new();
	unsigned char d[32];
	unsigned int dn = 0;
	size_t i;
	int ok;

	if (!c)
		return -ENOMEM;
	ok = EVP_DigestInit_ex(c, EVP_sha256(), NULL);
	for (i = 0; ok && i < n; i++)
		ok = EVP_DigestUpdate(c, s[i], strlen(s[i]) + 1);
	ok = ok && EVP_DigestFinal_ex(c, d, &dn);
	EVP_MD_CTX_free(c);
	if (!ok)
		return -EIO;
	to_hex(d, 32, hex);
	return 0;
}

/* An ETag without W/ and quotes: one version, however a server quotes it. */
static int etag_norm(const char *etag, char *out, size_t len)
{
	size_t n;

	if (!strncmp(etag, "W/", 2))
		etag += 2;
	n = strlen(etag);
	if (n >= 2 && etag[0] == '"' && etag[n - 1] == '"') {
		etag++;
		n -= 2;
	}
	if (!n || n >= len)
		return -EINVAL;
	memcpy(out, etag, n);
	out[n] = '\0';
	return 0;
}

/**
 * s3d_tier_obj_init() - what the blocks of one object version are named by
 * @o: filled
 * @endpoint: the origin's endpoint, "scheme://authority"
 * @bucket: the origin bucket
 * @key: the object's key
 * @etag: its ETag, as the origin gave it
 * @size: its size
 * @block: the block size (a power of two)
 *
 * Return: 0, -EINVAL (an empty ETag, a block size not a power of two).
 */
int s3d_tier_obj_init(struct s3d_tier_obj *o, const char *endpoint,
		      const char *bucket, const char *key, const char *etag,
		      uint64_t size, uint32_t block)
{
	char fmt[8], sz[24];
	const char *src[] = { "s3cachefs-tier-source", fmt, endpoint, bucket };
	const char *obj[] = { "s3cachefs-tier-object", fmt, o->source, key,
			      o->etag, sz };
	int err;

	memset(o, 0, sizeof(*o));
	if (!block || (block & (block - 1)))
		return -EINVAL;
	err = etag_norm(etag, o->etag, sizeof(o->etag));
	if (err)
		return err;
	snprintf(fmt, sizeof(fmt), "%d", S3D_TIER_FORMAT);
	snprintf(sz, sizeof(sz), "%" PRIu64, size);
	o->size = size;
	o->block = block;
	err = hash_fields(src, S3D_ARRAY_SIZE(src), o->source);
	return err ?: hash_fields(obj, S3D_ARRAY_SIZE(obj), o->object);
}

/* Return: 0, -EINVAL (no such block), -ENAMETOOLONG. */
int s3d_tier_block_key(const struct s3d_tier_obj *o, uint64_t index,
		       char *out, size_t len)
{
	int n;

	if (index >= s3d_tier_nblocks(o))
		return -EINVAL;
	n = snprintf(out, len, S3D_TIER_PREFIX "%.16s/%s/%uk/%" PRIu64,
		     o->source, o->object, o->block >> 10, index);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* Blocks of the object: the last one may be short; an empty object has none. */
uint64_t s3d_tier_nblocks(const struct s3d_tier_obj *o)
{
	return o->size / o->block + (o->size % o->block ? 1 : 0);
}

/* Block @index covers [*off, *off + *len) of the object. */
void s3d_tier_block_span(const struct s3d_tier_obj *o, uint64_t index,
			 uint64_t *off, uint64_t *len)
{
	*off = index * o->block;
	*len = *off >= o->size ? 0 : S3D_MIN((uint64_t)o->block,
					     o->size - *off);
}

/*
 * The blocks [*first, *last] covering [start, end) of the object (end
 * clamped to its size). A block may reach before @start or past @end
 * when it is larger than the range. Return: false for an empty range.
 */
bool s3d_tier_blocks_of(const struct s3d_tier_obj *o, uint64_t start,
			uint64_t end, uint64_t *first, uint64_t *last)
{
	end = S3D_MIN(end, o->size);
	if (start >= end)
		return false;
	*first = start / o->block;
	*last = (end - 1) / o->block;
	return true;
}

/* HMAC-SHA-256 of the fields before it, each followed by a NUL, in hex. */
static int meta_hmac(const struct s3d_tier_meta *m, const void *secret,
		     size_t secret_len, char hex[S3D_TIER_HEX + 1])
{
	unsigned char d[32];
	unsigned int dn = 0;
	HMAC_CTX *c;
	int i, ok;

	/* HMAC_CTX is deprecated in OpenSSL 3 but the same in 1.1 and 3. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
	c = HMAC_CTX_new();
	if (!c)
		return -ENOMEM;
	ok = HMAC_Init_ex(c, secret, (int)secret_len, EVP_sha256(), NULL);
	for (i = 0; ok && i < S3D_TF_HMAC; i++)
		ok = HMAC_Update(c, (const unsigned char *)m->v[i],
				 strlen(m->v[i]) + 1);
	ok = ok && HMAC_Final(c, d, &dn);
	HMAC_CTX_free(c);
#pragma GCC diagnostic pop
	if (!ok)
		return -EIO;
	to_hex(d, 32, hex);
	return 0;
}

/**
 * s3d_tier_meta_build() - the metadata block @index is put with
 * @o: its object version
 * @index: the block
 * @sha: hex SHA-256 of its body
 * @secret: tier_secret, or NULL (no HMAC)
 * @secret_len: its length
 * @m: filled
 *
 * Return: 0, -EINVAL, -ENOMEM, -EIO.
 */
int s3d_tier_meta_build(const struct s3d_tier_obj *o, uint64_t index,
			const char sha[S3D_TIER_HEX + 1], const void *secret,
			size_t secret_len, struct s3d_tier_meta *m)
{
	uint64_t off, len;

	s3d_tier_block_span(o, index, &off, &len);
	if (!len)
		return -EINVAL;
	memset(m, 0, sizeof(*m));
	snprintf(m->v[S3D_TF_FORMAT], S3D_TIER_META_VAL, "%d", S3D_TIER_FORMAT);
	snprintf(m->v[S3D_TF_SOURCE], S3D_TIER_META_VAL, "%s", o->source);
	snprintf(m->v[S3D_TF_OBJECT], S3D_TIER_META_VAL, "%s", o->object);
	snprintf(m->v[S3D_TF_ETAG], S3D_TIER_META_VAL, "%s", o->etag);
	snprintf(m->v[S3D_TF_SIZE], S3D_TIER_META_VAL, "%" PRIu64, o->size);
	snprintf(m->v[S3D_TF_OFFSET], S3D_TIER_META_VAL, "%" PRIu64, off);
	snprintf(m->v[S3D_TF_LENGTH], S3D_TIER_META_VAL, "%" PRIu64, len);
	snprintf(m->v[S3D_TF_SHA256], S3D_TIER_META_VAL, "%s", sha);
	if (!secret)
		return 0;
	return meta_hmac(m, secret, secret_len, m->v[S3D_TF_HMAC]);
}

/* Headers for a PUT: @kv gets S3D_TF_NR at most. Return: how many. */
size_t s3d_tier_meta_kv(const struct s3d_tier_meta *m, struct s3d_kv *kv)
{
	size_t i, n = 0;

	for (i = 0; i < S3D_TF_NR; i++)
		if (m->v[i][0])
			kv[n++] = (struct s3d_kv){ s3d_tier_field_hdr[i], m->v[i] };
	return n;
}

/*
 * The fields from a response's headers ("name\0value\0" ..., as the
 * engine collects them). A field sent twice is made unusable: a reader
 * must never pick one of two answers.
 */
void s3d_tier_meta_parse(const char *hdrs, size_t len,
			 struct s3d_tier_meta *m)
{
	const char *p = hdrs, *end = hdrs + len, *name, *val;
	bool seen[S3D_TF_NR] = { false };
	size_t i, n;

	memset(m, 0, sizeof(*m));
	while (p < end) {
		name = p;
		p += strnlen(p, (size_t)(end - p)) + 1;
		if (p >= end)
			break;
		val = p;
		p += strnlen(p, (size_t)(end - p)) + 1;
		for (i = 0; i < S3D_TF_NR; i++) {
			if (strcasecmp(name, s3d_tier_field_hdr[i]))
				continue;
			n = strnlen(val, (size_t)(end - val));
			if (seen[i] || n >= S3D_TIER_META_VAL) {
				strcpy(m->v[i], "\x01");	/* matches nothing */
			} else {
				memcpy(m->v[i], val, n);
				m->v[i][n] = '\0';
			}
			seen[i] = true;
		}
	}
}

/**
 * s3d_tier_check() - may a block the tier sent be used?
 * @o: the object version this node reads
 * @index: the block asked for
 * @status: the response's HTTP status
 * @content_length: its Content-Length, or -1
 * @got: its metadata (s3d_tier_meta_parse())
 * @body: its body
 * @n: the body's length
 * @secret: tier_secret, or NULL
 * @secret_len: its length
 *
 * Every field must be what this node would have put, the body must be
 * the block's length and hash to the stored checksum, and with a secret
 * the HMAC must match. The checks are in a fixed order, so a block wrong
 * in one field alone is refused for that field.
 *
 * Return: S3D_TIER_OK, or why not.
 */
enum s3d_tier_bad s3d_tier_check(const struct s3d_tier_obj *o,
				 uint64_t index, long status,
				 int64_t content_length,
				 const struct s3d_tier_meta *got,
				 const void *body, size_t n,
				 const void *secret, size_t secret_len)
{
	static const enum s3d_tier_bad why[S3D_TF_SHA256] = {
		[S3D_TF_FORMAT] = S3D_TIER_BAD_FORMAT,
		[S3D_TF_SOURCE] = S3D_TIER_BAD_SOURCE,
		[S3D_TF_OBJECT] = S3D_TIER_BAD_OBJECT,
		[S3D_TF_ETAG] = S3D_TIER_BAD_ETAG,
		[S3D_TF_SIZE] = S3D_TIER_BAD_SIZE,
		[S3D_TF_OFFSET] = S3D_TIER_BAD_OFFSET,
		[S3D_TF_LENGTH] = S3D_TIER_BAD_META_LENGTH,
	};
	struct s3d_tier_meta want;
	char sha[S3D_TIER_HEX + 1];
	uint64_t off, len;
	int i;

	if (status != 200)
		return S3D_TIER_BAD_STATUS;
	s3d_tier_block_span(o, index, &off, &len);
	if (!len || n != len ||
	    (content_length >= 0 && (uint64_t)content_length != len))
		return S3D_TIER_BAD_LENGTH;
	/* What this node would have put, but the body's own checksum. */
	if (s3d_tier_meta_build(o, index, got->v[S3D_TF_SHA256], NULL, 0,
				&want))
		return S3D_TIER_BAD_FORMAT;
	for (i = 0; i < S3D_TF_SHA256; i++)
		if (strcmp(want.v[i], got->v[i]))
			return why[i];
	if (secret) {
		char mac[S3D_TIER_HEX + 1];

		if (meta_hmac(got, secret, secret_len, mac) ||
		    strlen(got->v[S3D_TF_HMAC]) != S3D_TIER_HEX ||
		    CRYPTO_memcmp(mac, got->v[S3D_TF_HMAC], S3D_TIER_HEX))
			return S3D_TIER_BAD_HMAC;
	}
	s3d_tier_sha256_hex(body, n, sha);
	if (strcmp(sha, got->v[S3D_TF_SHA256]))
		return S3D_TIER_BAD_CHECKSUM;
	return S3D_TIER_OK;
}

void s3d_tier_breaker_init(struct s3d_tier_breaker *b, unsigned int threshold)
{
	memset(b, 0, sizeof(*b));
	b->threshold = threshold ?: 1;
	b->backoff_ms = S3D_TIER_BACKOFF_MIN_MS;
}

/*
 * May a request go to the tier at @now_ms? Open: not until the back-off
 * is over; then exactly one (the probe) until its answer comes.
 */
bool s3d_tier_breaker_allow(struct s3d_tier_breaker *b, uint64_t now_ms)
{
	switch (b->state) {
	case S3D_TIER_CLOSED:
		return true;
	case S3D_TIER_OPEN:
		if (now_ms < b->until_ms)
			return false;
		b->state = S3D_TIER_HALF_OPEN;
		return true;
	default:
		return false;	/* the probe is out */
	}
}

/* The tier answered. Return: true if that closed the breaker. */
bool s3d_tier_breaker_ok(struct s3d_tier_breaker *b)
{
	bool was = b->state != S3D_TIER_CLOSED;

	b->fails = 0;
	b->state = S3D_TIER_CLOSED;
	b->backoff_ms = S3D_TIER_BACKOFF_MIN_MS;
	return was;
}

/* The tier failed a request. Return: true if that opened the breaker. */
bool s3d_tier_breaker_fail(struct s3d_tier_breaker *b, uint64_t now_ms)
{
	if (b->state == S3D_TIER_HALF_OPEN) {
		b->backoff_ms = S3D_MIN(b->backoff_ms * 2,
					(uint64_t)S3D_TIER_BACKOFF_MAX_MS);
	} else if (b->state == S3D_TIER_OPEN || ++b->fails < b->threshold) {
		return false;
	}
	b->state = S3D_TIER_OPEN;
	b->until_ms = now_ms + b->backoff_ms;
	return true;
}
