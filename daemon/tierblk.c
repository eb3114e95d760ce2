// SPDX-License-Identifier: GPL-2.0
/*
 * The fleet tier's pure parts (no I/O; tier.c and tierlease.c do the
 * requests).
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
 *
 * Leases (tierblk.h) are named beside the blocks of their object version;
 * their state machine decides, from what the tier answered and the time,
 * whether a FETCH fetches, waits for another node's blocks, or goes to
 * origin. The time is given, so that tests run it on a fake clock.
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

/*
 * The blocks [*first, *last] lying wholly inside [@start, @end) (a range
 * reaching the object's end holds its short last block whole): those a
 * FETCH of the range brings whole, and so puts. Return: false for none.
 */
bool s3d_tier_whole_blocks_of(const struct s3d_tier_obj *o, uint64_t start,
			      uint64_t end, uint64_t *first, uint64_t *last)
{
	uint64_t a, b;

	end = S3D_MIN(end, o->size);
	if (start >= end)
		return false;
	a = (start + o->block - 1) / o->block;
	b = end == o->size ? s3d_tier_nblocks(o) : end / o->block;
	if (a >= b)
		return false;
	*first = a;
	*last = b - 1;
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

/* ---- leases ---- */

const char *const s3d_tier_lease_name[S3D_TIER_LEASE_NR] = {
	[S3D_TIER_LEASE_WON] = "won",
	[S3D_TIER_LEASE_TAKEN_OVER] = "taken_over",
	[S3D_TIER_LEASE_OWN] = "own",
	[S3D_TIER_LEASE_LOST_TIER] = "lost_tier",
	[S3D_TIER_LEASE_LOST_ORIGIN] = "lost_origin",
	[S3D_TIER_LEASE_FAILED] = "failed",
	[S3D_TIER_LEASE_UNSUPPORTED] = "unsupported",
	[S3D_TIER_LEASE_CLAIM_LOST] = "claim_lost",
};

/* Blocks per stripe: both are powers of two, a stripe never smaller. */
static uint64_t stripe_blocks(const struct s3d_tier_obj *o)
{
	return S3D_MAX((uint64_t)S3D_TIER_STRIPE, (uint64_t)o->block) /
	       o->block;
}

/* The stripe block @index is in. */
uint64_t s3d_tier_stripe_of(const struct s3d_tier_obj *o, uint64_t index)
{
	return index / stripe_blocks(o);
}

/* The blocks [*first, *last] of @stripe. Return: false past the object. */
bool s3d_tier_stripe_blocks(const struct s3d_tier_obj *o, uint64_t stripe,
			    uint64_t *first, uint64_t *last)
{
	uint64_t per = stripe_blocks(o), n = s3d_tier_nblocks(o);

	if (stripe >= (n + per - 1) / per)
		return false;
	*first = stripe * per;
	*last = S3D_MIN(*first + per - 1, n - 1);
	return true;
}

/*
 * The lease of @stripe. "lease" is no block index, so no lease can be
 * taken for a block, and a node that knows no leases never reads one:
 * leases add to v1, they change nothing it names.
 * Return: 0, -EINVAL (no such stripe), -ENAMETOOLONG.
 */
int s3d_tier_lease_key(const struct s3d_tier_obj *o, uint64_t stripe,
		       char *out, size_t len)
{
	uint64_t first, last;
	int n;

	if (!s3d_tier_stripe_blocks(o, stripe, &first, &last))
		return -EINVAL;
	n = snprintf(out, len, S3D_TIER_PREFIX "%.16s/%s/%uk/lease/%" PRIu64,
		     o->source, o->object, o->block >> 10, stripe);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* A block index in decimal digits at *@p, no sign, no space; moves *@p. */
static bool lease_index(const char **p, uint64_t *v)
{
	uint64_t n = 0;

	if (**p < '0' || **p > '9')
		return false;
	for (; **p >= '0' && **p <= '9'; (*p)++) {
		if (n > (UINT64_MAX - (uint64_t)(**p - '0')) / 10)
			return false;	/* overflows */
		n = n * 10 + (uint64_t)(**p - '0');
	}
	*v = n;
	return true;
}

/* A lease's "FIRST-LAST" (S3D_TIER_LEASE_BLOCKS). Return: 0, -EINVAL. */
int s3d_tier_lease_range(const char *v, uint64_t *first, uint64_t *last)
{
	uint64_t a, b;

	if (!lease_index(&v, &a) || *v++ != '-' || !lease_index(&v, &b) ||
	    *v || a > b)
		return -EINVAL;
	*first = a;
	*last = b;
	return 0;
}

/*
 * The blocks [*first, *last] the lease of @stripe promises, from its
 * S3D_TIER_LEASE_BLOCKS value @v (NULL: not said): a range not inside the
 * stripe, or not one, is the stripe's blocks (the holder says nothing
 * this node can use to skip the wait).
 */
void s3d_tier_lease_blocks(const struct s3d_tier_obj *o, uint64_t stripe,
			   const char *v, uint64_t *first, uint64_t *last)
{
	uint64_t sfirst = 0, slast = 0, a, b;

	s3d_tier_stripe_blocks(o, stripe, &sfirst, &slast);
	*first = sfirst;
	*last = slast;
	if (v && !s3d_tier_lease_range(v, &a, &b) && a >= sfirst &&
	    b <= slast) {
		*first = a;
		*last = b;
	}
}

/**
 * s3d_tier_lease_init() - a FETCH's leases start
 * @l: its lease state
 * @wait_ms: how long it may wait for other nodes' blocks, in all
 * @ttl_s: a lease this old by the tier's clock is stale
 * @count: outcomes are counted there, [S3D_TIER_LEASE_NR]
 */
void s3d_tier_lease_init(struct s3d_tier_lease *l, uint32_t wait_ms,
			 unsigned int ttl_s, uint64_t *count)
{
	memset(l, 0, sizeof(*l));
	l->wait_ms = wait_ms;
	l->ttl_s = ttl_s;
	l->count = count;
	l->poll_ms = S3D_TIER_POLL_MIN_MS;
}

/*
 * Is the lease @s older than @ttl_s? By the tier's own clock only (its
 * Date against its Last-Modified): the nodes' clocks may be minutes
 * apart. A lease whose age cannot be told is not stale.
 */
bool s3d_tier_lease_stale(const struct s3d_tier_lease_seen *s,
			  unsigned int ttl_s)
{
	return s->date > 0 && s->modified > 0 &&
	       s->date - s->modified >= (int64_t)ttl_s;
}

/* The FETCH's lease clock runs (a lease request or a wait is out). */
static void clock_start(struct s3d_tier_lease *l, uint64_t now_ms)
{
	if (l->waiting)
		return;
	l->waiting = true;
	l->since_ms = now_ms;
}

static void clock_stop(struct s3d_tier_lease *l, uint64_t now_ms)
{
	if (l->waiting)
		l->waited_ms += now_ms - l->since_ms;
	l->waiting = false;
}

/* Time the FETCH spent on leases so far, a wait under way included. */
static uint64_t clock_spent(const struct s3d_tier_lease *l, uint64_t now_ms)
{
	return l->waited_ms + (l->waiting ? now_ms - l->since_ms : 0);
}

static enum s3d_tier_lease_act lease_out(struct s3d_tier_lease *l,
					 enum s3d_tier_lease_out out,
					 enum s3d_tier_lease_state state,
					 uint64_t now_ms)
{
	clock_stop(l, now_ms);
	l->count[out]++;
	l->state = state;
	return S3D_TIER_LA_ORIGIN;
}

/*
 * Another node's lease, and the FETCH's time on leases is spent: origin,
 * and the lease is remembered as waited out.
 */
static enum s3d_tier_lease_act lease_spent(struct s3d_tier_lease *l,
					   uint64_t now_ms)
{
	l->gave_up = true;
	return lease_out(l, S3D_TIER_LEASE_LOST_ORIGIN, S3D_TIER_LS_DONE,
			 now_ms);
}

/* The next request for the lease, @state, if the FETCH has time left. */
static enum s3d_tier_lease_act lease_ask(struct s3d_tier_lease *l,
					 enum s3d_tier_lease_state state,
					 uint64_t now_ms)
{
	enum s3d_tier_lease_act act = state == S3D_TIER_LS_CREATE ?
		S3D_TIER_LA_CREATE : state == S3D_TIER_LS_LOOK ?
		S3D_TIER_LA_LOOK : S3D_TIER_LA_TAKE;

	if (clock_spent(l, now_ms) >= l->wait_ms)
		return lease_spent(l, now_ms);
	if (state == S3D_TIER_LS_LOOK)
		l->looks++;
	l->state = state;
	return act;
}

/*
 * Wait (on) for a block another node's lease promised: poll after a
 * while, backing off, or give up once the FETCH has waited its fill.
 */
static enum s3d_tier_lease_act lease_wait(struct s3d_tier_lease *l,
					  uint64_t now_ms, uint32_t *delay_ms)
{
	uint64_t spent;

	clock_start(l, now_ms);
	spent = clock_spent(l, now_ms);
	if (spent >= l->wait_ms)
		return lease_spent(l, now_ms);
	*delay_ms = (uint32_t)S3D_MIN((uint64_t)l->poll_ms,
				      l->wait_ms - spent);
	l->poll_ms = S3D_MIN(l->poll_ms * 2, S3D_TIER_POLL_MAX_MS);
	return S3D_TIER_LA_POLL;
}

static bool status_lost(long status)
{
	/* 409: S3's ConditionalRequestConflict, another create under way. */
	return status == 412 || status == 409;
}

/**
 * s3d_tier_lease_miss() - the tier lacks block @index of @stripe
 * @l: the FETCH's lease state
 * @stripe: the block's stripe
 * @index: the block
 * @mode: what this node knows of the stripe's lease (ignored while it
 *	waits for that stripe's blocks)
 * @now_ms: the time
 * @delay_ms: for S3D_TIER_LA_POLL, when
 *
 * From here to the lease's outcome the FETCH's lease clock runs: the
 * lease's requests count against tier_lease_wait_ms as its polls do.
 *
 * Return: what to do.
 */
enum s3d_tier_lease_act s3d_tier_lease_miss(struct s3d_tier_lease *l,
					    uint64_t stripe, uint64_t index,
					    enum s3d_tier_lease_mode mode,
					    uint64_t now_ms,
					    uint32_t *delay_ms)
{
	*delay_ms = 0;
	if (l->state == S3D_TIER_LS_WAIT && stripe == l->stripe) {
		if (index >= l->first && index <= l->last)
			return lease_wait(l, now_ms, delay_ms);
		/* Past what the holder fetches: nothing to wait for. */
		return lease_out(l, S3D_TIER_LEASE_LOST_ORIGIN,
				 S3D_TIER_LS_DONE, now_ms);
	}
	/* A stripe waited for came whole from the tier: on to the next. */
	if (l->state == S3D_TIER_LS_WAIT)
		l->count[S3D_TIER_LEASE_LOST_TIER]++;
	l->stripe = stripe;
	l->looks = 0;
	l->gave_up = false;
	l->poll_ms = S3D_TIER_POLL_MIN_MS;
	switch (mode) {
	case S3D_TIER_LM_ON:
		/* No time left for another node's lease: none asked for. */
		if (clock_spent(l, now_ms) >= l->wait_ms) {
			l->state = S3D_TIER_LS_DONE;
			return S3D_TIER_LA_ORIGIN;
		}
		clock_start(l, now_ms);
		return lease_ask(l, S3D_TIER_LS_CREATE, now_ms);
	case S3D_TIER_LM_OWN:
		return lease_out(l, S3D_TIER_LEASE_OWN, S3D_TIER_LS_HELD,
				 now_ms);
	case S3D_TIER_LM_WAITED:
		return lease_out(l, S3D_TIER_LEASE_LOST_ORIGIN,
				 S3D_TIER_LS_DONE, now_ms);
	case S3D_TIER_LM_UNSUPPORTED:
		return lease_out(l, S3D_TIER_LEASE_UNSUPPORTED,
				 S3D_TIER_LS_DONE, now_ms);
	default:
		l->state = S3D_TIER_LS_DONE;
		return S3D_TIER_LA_ORIGIN;
	}
}

/* The create answered @status (0: no answer). Return: what to do. */
enum s3d_tier_lease_act s3d_tier_lease_created(struct s3d_tier_lease *l,
					       long status, uint64_t now_ms)
{
	if (status >= 200 && status < 300)
		return lease_out(l, S3D_TIER_LEASE_WON, S3D_TIER_LS_HELD,
				 now_ms);
	if (status_lost(status))
		return lease_ask(l, S3D_TIER_LS_LOOK, now_ms);
	return lease_out(l, S3D_TIER_LEASE_FAILED, S3D_TIER_LS_DONE, now_ms);
}

/**
 * s3d_tier_lease_looked() - the HEAD of another node's lease answered
 * @l: the FETCH's lease state
 * @s: what it said
 * @index: the block the FETCH needs next
 * @now_ms: the time
 * @delay_ms: for S3D_TIER_LA_POLL, when
 *
 * Stale: take it over. Fresh, and its holder fetches @index: wait for
 * the blocks. Fresh, not fetching @index: origin at once.
 *
 * Return: what to do.
 */
enum s3d_tier_lease_act s3d_tier_lease_looked(struct s3d_tier_lease *l,
					      const struct s3d_tier_lease_seen *s,
					      uint64_t index, uint64_t now_ms,
					      uint32_t *delay_ms)
{
	*delay_ms = 0;
	/* Gone meanwhile (expired, or a conflicting create lost). */
	if (s->status == 404 && l->looks < S3D_TIER_LEASE_LOOKS)
		return lease_ask(l, S3D_TIER_LS_CREATE, now_ms);
	if (s->status < 200 || s->status >= 300)
		return lease_out(l, S3D_TIER_LEASE_FAILED, S3D_TIER_LS_DONE,
				 now_ms);
	if (s3d_tier_lease_stale(s, l->ttl_s))
		return lease_ask(l, S3D_TIER_LS_TAKE, now_ms);
	if (index < s->first || index > s->last)
		return lease_out(l, S3D_TIER_LEASE_LOST_ORIGIN,
				 S3D_TIER_LS_DONE, now_ms);
	l->state = S3D_TIER_LS_WAIT;
	l->first = s->first;
	l->last = s->last;
	return lease_wait(l, now_ms, delay_ms);
}

/* The takeover answered @status (0: no answer). Return: what to do. */
enum s3d_tier_lease_act s3d_tier_lease_taken(struct s3d_tier_lease *l,
					     long status, uint64_t now_ms)
{
	if (status >= 200 && status < 300)
		return lease_out(l, S3D_TIER_LEASE_TAKEN_OVER,
				 S3D_TIER_LS_HELD, now_ms);
	if (l->looks < S3D_TIER_LEASE_LOOKS && status == 404)
		return lease_ask(l, S3D_TIER_LS_CREATE, now_ms);
	/* Another node took it over first: whose is it now? */
	if (l->looks < S3D_TIER_LEASE_LOOKS && status_lost(status))
		return lease_ask(l, S3D_TIER_LS_LOOK, now_ms);
	return lease_out(l, S3D_TIER_LEASE_FAILED, S3D_TIER_LS_DONE, now_ms);
}

/* A block waited for came: the wait so far counts, the back-off restarts. */
void s3d_tier_lease_served(struct s3d_tier_lease *l, uint64_t now_ms)
{
	if (l->state != S3D_TIER_LS_WAIT)
		return;
	clock_stop(l, now_ms);
	l->poll_ms = S3D_TIER_POLL_MIN_MS;
}

/*
 * The tier's part of the FETCH ends (@whole: it gave the whole range).
 * A wait under way ends with it: served by the tier, or by origin.
 */
void s3d_tier_lease_end(struct s3d_tier_lease *l, bool whole,
			uint64_t now_ms)
{
	if (l->state != S3D_TIER_LS_WAIT) {
		clock_stop(l, now_ms);
		return;
	}
	lease_out(l, whole ? S3D_TIER_LEASE_LOST_TIER :
		  S3D_TIER_LEASE_LOST_ORIGIN, S3D_TIER_LS_DONE, now_ms);
}
