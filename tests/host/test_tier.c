// SPDX-License-Identifier: GPL-2.0
/*
 * The fleet tier's pure parts (daemon/tierblk.c): block names against
 * golden vectors (computed apart, with Python's hashlib: the format is
 * forever), the validation matrix (each field wrong on its own, length,
 * checksum, status, HMAC), block arithmetic, the breaker on a fake clock,
 * lease names (golden) and the lease state machine on a fake clock, and
 * the tier_* configuration keys.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "lib/config.h"
#include "lib/util.h"
#include "tap.h"
#include "tierblk.h"

#define MIB	(1ULL << 20)

static const char src_hex[] =
	"9d2ffd24418a5a9dcc8ac622cf4aa2fda8af60dcf51eafd4d772aece3811b353";
static const char obj_hex[] =
	"fb662218309e3da663e7a398bfc563b7d4c32db7e8a968a450ea970fde6d33be";
/* The same object at 20 MiB + 1 (three stripes of 1 MiB blocks). */
static const char obj2_hex[] =
	"44c9e1e60e9b122a35d28747a16844ba80c095b7e3d2aea261f166c4bce6f823";
static const char etag[] = "9b2cf535f27731c974343645a3985328";
static const char secret[] = "0123456789abcdef-fleet";

static void golden(struct s3d_tier_obj *o)
{
	char key[S3D_TIER_KEY_MAX];
	struct s3d_tier_obj q;

	is_int(s3d_tier_obj_init(o, "https://s3.eu-west-1.amazonaws.com",
				 "training-data", "shards/00001.tar",
				 "\"9b2cf535f27731c974343645a3985328\"",
				 3 * MIB + 5, 1 << 20), 0, "key: object named");
	is_str(o->source, src_hex, "key: source hash (golden)");
	is_str(o->object, obj_hex, "key: object hash (golden)");
	is_str(o->etag, etag, "key: ETag normalised (quotes dropped)");
	is_int(s3d_tier_block_key(o, 3, key, sizeof(key)), 0, "key: block 3 named");
	is_str(key, "s3cachefs/v1/9d2ffd24418a5a9d/fb662218309e3da663e7a398bfc563b7d4c32db7e8a968a450ea970fde6d33be/1024k/3",
	       "key: block 3 (golden, version in the name)");
	s3d_tier_obj_init(&q, "https://s3.eu-west-1.amazonaws.com",
			  "training-data", "shards/00001.tar",
			  "W/\"9b2cf535f27731c974343645a3985328\"", 3 * MIB + 5,
			  1 << 20);
	is_str(q.object, obj_hex, "key: a weak or quoted ETag names the same version");
	s3d_tier_obj_init(&q, "https://s3.eu-west-1.amazonaws.com",
			  "training-data", "shards/00001.tar", etag, 3 * MIB + 6,
			  1 << 20);
	ok(strcmp(q.object, obj_hex), "key: another size is another object");
	s3d_tier_obj_init(&q, "https://s3.eu-west-1.amazonaws.com",
			  "training-data", "shards/00001.tar", "\"other\"",
			  3 * MIB + 5, 1 << 20);
	ok(strcmp(q.object, obj_hex), "key: another ETag is another object");
	s3d_tier_obj_init(&q, "https://minio.lan:9000", "training-data",
			  "shards/00001.tar", etag, 3 * MIB + 5, 1 << 20);
	ok(strcmp(q.source, src_hex) && strcmp(q.object, obj_hex),
	   "key: another origin endpoint is another source and object");
	s3d_tier_obj_init(&q, "https://s3.eu-west-1.amazonaws.com",
			  "training-data", "shards/00001.tar", etag, 3 * MIB + 5,
			  1 << 18);
	s3d_tier_block_key(&q, 3, key, sizeof(key));
	ok(strstr(key, "/256k/3") != NULL, "key: the block size is in the name");
	is_int(s3d_tier_obj_init(&q, "e", "b", "k", etag, 1, 3 << 10), -EINVAL,
	       "key: a block size not a power of two refused");
	is_int(s3d_tier_obj_init(&q, "e", "b", "k", "\"\"", 1, 1 << 20), -EINVAL,
	       "key: an empty ETag refused");
	is_int(s3d_tier_block_key(o, 4, key, sizeof(key)), -EINVAL,
	       "key: no block past the object");
}

static void arithmetic(void)
{
	struct s3d_tier_obj o;
	uint64_t off, len, first, last;

	s3d_tier_obj_init(&o, "e", "b", "k", etag, 3 * MIB + 5, 1 << 20);
	is_int((long long)s3d_tier_nblocks(&o), 4, "blocks: 3 MiB + 5 is four blocks");
	s3d_tier_block_span(&o, 3, &off, &len);
	ok(off == 3 * MIB && len == 5, "blocks: the last one is partial (5 bytes at 3 MiB)");
	s3d_tier_block_span(&o, 4, &off, &len);
	is_int((long long)len, 0, "blocks: none past the end");
	/* Block equal to the chunk: chunk 1 is block 1. */
	ok(s3d_tier_blocks_of(&o, MIB, 2 * MIB, &first, &last) &&
	   first == 1 && last == 1, "blocks: block = chunk: one block per chunk");
	ok(s3d_tier_blocks_of(&o, 2 * MIB, 4 * MIB, &first, &last) &&
	   first == 2 && last == 3, "blocks: a range to EOF ends with the partial block");
	/* Block smaller than the chunk: four 256 KiB blocks per chunk. */
	s3d_tier_obj_init(&o, "e", "b", "k", etag, 3 * MIB + 5, 1 << 18);
	ok(s3d_tier_blocks_of(&o, MIB, 2 * MIB, &first, &last) &&
	   first == 4 && last == 7, "blocks: block < chunk: blocks 4..7 cover chunk 1");
	is_int((long long)s3d_tier_nblocks(&o), 13, "blocks: 256 KiB blocks: 13 with the partial one");
	/* Block larger than the chunk: one block covers four chunks. */
	s3d_tier_obj_init(&o, "e", "b", "k", etag, 3 * MIB + 5, 4 << 20);
	ok(s3d_tier_blocks_of(&o, MIB, 2 * MIB, &first, &last) &&
	   first == 0 && last == 0, "blocks: block > chunk: chunk 1 is in block 0");
	s3d_tier_block_span(&o, 0, &off, &len);
	ok(off == 0 && len == 3 * MIB + 5, "blocks: block > object: one block, the object's size");
	ok(!s3d_tier_blocks_of(&o, 4 * MIB, 5 * MIB, &first, &last),
	   "blocks: a range past the end has none");
	s3d_tier_obj_init(&o, "e", "b", "k", etag, 0, 1 << 20);
	is_int((long long)s3d_tier_nblocks(&o), 0, "blocks: an empty object has none");
	s3d_tier_obj_init(&o, "e", "b", "k", etag, 2 * MIB, 1 << 20);
	is_int((long long)s3d_tier_nblocks(&o), 2, "blocks: an exact multiple has no partial block");
}

/* The blocks a FETCH brings whole: what its lease may promise. */
static void whole_blocks(void)
{
	struct s3d_tier_obj o;
	uint64_t first = 99, last = 99;

	s3d_tier_obj_init(&o, "e", "b", "k", etag, 3 * MIB + 5, 1 << 20);
	ok(s3d_tier_whole_blocks_of(&o, 0, MIB, &first, &last) && first == 0 && last == 0,
	   "whole blocks: block = chunk: the chunk's block");
	ok(!s3d_tier_whole_blocks_of(&o, 0, MIB / 2, &first, &last),
	   "whole blocks: half a block: none");
	ok(s3d_tier_whole_blocks_of(&o, MIB / 2, 3 * MIB, &first, &last) && first == 1 &&
	   last == 2, "whole blocks: a range starting mid-block: from the next block");
	ok(s3d_tier_whole_blocks_of(&o, 0, 2 * MIB + MIB / 2, &first, &last) && first == 0 &&
	   last == 1, "whole blocks: a range ending mid-block: up to the block before");
	ok(s3d_tier_whole_blocks_of(&o, 2 * MIB, 3 * MIB + 5, &first, &last) && first == 2 &&
	   last == 3, "whole blocks: a range to the object's end: its short last block too");
	ok(s3d_tier_whole_blocks_of(&o, 2 * MIB, 8 * MIB, &first, &last) && first == 2 &&
	   last == 3, "whole blocks: ... asked past the end");
	s3d_tier_obj_init(&o, "e", "b", "k", etag, 16 * MIB, 4 << 20);
	ok(!s3d_tier_whole_blocks_of(&o, 0, MIB, &first, &last),
	   "whole blocks: 4 MiB blocks, a 1 MiB range: none (no lease can promise one)");
	ok(!s3d_tier_whole_blocks_of(&o, MIB, 7 * MIB, &first, &last),
	   "whole blocks: 4 MiB blocks, 6 MiB across two of them: none");
	ok(s3d_tier_whole_blocks_of(&o, 0, 8 * MIB, &first, &last) && first == 0 && last == 1,
	   "whole blocks: 4 MiB blocks, 8 MiB from 0: blocks 0-1");
}

/* A header list as the engine collects it: "name\0value\0" ... */
static size_t hdrs_of(const struct s3d_tier_meta *m, char *buf, size_t cap,
		      const char *extra)
{
	struct s3d_kv kv[S3D_TF_NR];
	size_t i, n = s3d_tier_meta_kv(m, kv), len = 0;

	len += (size_t)snprintf(buf + len, cap - len, "Content-Type") + 1;
	len += (size_t)snprintf(buf + len, cap - len, "binary/octet-stream") + 1;
	for (i = 0; i < n; i++) {
		char name[64];
		size_t j;

		/* S3 sends them lower case; every other one upper: case-blind. */
		for (j = 0; kv[i].name[j] && j < sizeof(name) - 1; j++)
			name[j] = i % 2 && kv[i].name[j] >= 'a' &&
				  kv[i].name[j] <= 'z' ?
				  (char)(kv[i].name[j] - 32) : kv[i].name[j];
		name[j] = '\0';
		len += (size_t)snprintf(buf + len, cap - len, "%s", name) + 1;
		len += (size_t)snprintf(buf + len, cap - len, "%s", kv[i].value) + 1;
	}
	if (extra) {
		memcpy(buf + len, extra, strlen(extra) + 1);
		len += strlen(extra) + 1;
		len += (size_t)snprintf(buf + len, cap - len, "tampered") + 1;
	}
	return len;
}

static void matrix(const struct s3d_tier_obj *o)
{
	static const struct {
		enum s3d_tier_field f;
		enum s3d_tier_bad want;
		const char *what;
	} fields[] = {
		{ S3D_TF_FORMAT, S3D_TIER_BAD_FORMAT, "format version" },
		{ S3D_TF_SOURCE, S3D_TIER_BAD_SOURCE, "source" },
		{ S3D_TF_OBJECT, S3D_TIER_BAD_OBJECT, "object hash" },
		{ S3D_TF_ETAG, S3D_TIER_BAD_ETAG, "ETag" },
		{ S3D_TF_SIZE, S3D_TIER_BAD_SIZE, "size" },
		{ S3D_TF_OFFSET, S3D_TIER_BAD_OFFSET, "offset" },
		{ S3D_TF_LENGTH, S3D_TIER_BAD_META_LENGTH, "length" },
		{ S3D_TF_SHA256, S3D_TIER_BAD_CHECKSUM, "checksum" },
	};
	char body[] = "abcde", sha[S3D_TIER_HEX + 1], buf[8192];
	struct s3d_tier_meta m, got, bad;
	size_t i, n;

	s3d_tier_sha256_hex("abc", 3, sha);
	is_str(sha, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
	       "checksum: SHA-256 of \"abc\"");
	s3d_tier_sha256_hex(body, 5, sha);
	is_int(s3d_tier_meta_build(o, 3, sha, NULL, 0, &m), 0, "meta: built for block 3");
	is_str(m.v[S3D_TF_OFFSET], "3145728", "meta: offset of block 3");
	is_str(m.v[S3D_TF_LENGTH], "5", "meta: length of block 3");
	is_str(m.v[S3D_TF_HMAC], "", "meta: no HMAC without a secret");
	n = hdrs_of(&m, buf, sizeof(buf), NULL);
	s3d_tier_meta_parse(buf, n, &got);
	ok(!memcmp(&got, &m, sizeof(m)), "meta: parsed back from headers (names case-blind)");
	is_int(s3d_tier_check(o, 3, 200, 5, &got, body, 5, NULL, 0), S3D_TIER_OK,
	       "valid: the right block is used");
	is_int(s3d_tier_check(o, 3, 200, -1, &got, body, 5, NULL, 0), S3D_TIER_OK,
	       "valid: without Content-Length too");
	for (i = 0; i < S3D_ARRAY_SIZE(fields); i++) {
		bad = got;
		snprintf(bad.v[fields[i].f], S3D_TIER_META_VAL, "%s",
			 fields[i].f == S3D_TF_FORMAT ? "2" :
			 fields[i].f == S3D_TF_OFFSET ? "0" :
			 fields[i].f == S3D_TF_LENGTH ? "4" :
			 fields[i].f == S3D_TF_SIZE ? "3145734" :
			 "0000000000000000000000000000000000000000000000000000000000000000");
		is_int(s3d_tier_check(o, 3, 200, 5, &bad, body, 5, NULL, 0),
		       fields[i].want, "invalid: %s wrong on its own", fields[i].what);
		bad.v[fields[i].f][0] = '\0';
		is_int(s3d_tier_check(o, 3, 200, 5, &bad, body, 5, NULL, 0),
		       fields[i].want, "invalid: %s missing", fields[i].what);
	}
	is_int(s3d_tier_check(o, 2, 200, 5, &got, body, 5, NULL, 0), S3D_TIER_BAD_LENGTH,
	       "invalid: a block asked for as another (mislabelled) is refused");
	is_int(s3d_tier_check(o, 3, 206, 5, &got, body, 5, NULL, 0), S3D_TIER_BAD_STATUS,
	       "invalid: 206 instead of 200");
	is_int(s3d_tier_check(o, 3, 200, 5, &got, body, 4, NULL, 0), S3D_TIER_BAD_LENGTH,
	       "invalid: a body one byte short (truncated)");
	is_int(s3d_tier_check(o, 3, 200, 4, &got, body, 5, NULL, 0), S3D_TIER_BAD_LENGTH,
	       "invalid: a wrong Content-Length");
	body[2] ^= 1;
	is_int(s3d_tier_check(o, 3, 200, 5, &got, body, 5, NULL, 0), S3D_TIER_BAD_CHECKSUM,
	       "invalid: one bit flipped in the body");
	body[2] ^= 1;
	n = hdrs_of(&m, buf, sizeof(buf), "x-amz-meta-s3cfs-etag");
	s3d_tier_meta_parse(buf, n, &bad);
	is_int(s3d_tier_check(o, 3, 200, 5, &bad, body, 5, NULL, 0), S3D_TIER_BAD_ETAG,
	       "invalid: a field sent twice is never picked from");

	/* tier_secret: the HMAC over the fields. */
	is_int(s3d_tier_meta_build(o, 3, sha, secret, strlen(secret), &m), 0,
	       "hmac: built");
	s3d_tier_sha256_hex("abc", 3, sha);
	{
		struct s3d_tier_meta g;

		s3d_tier_meta_build(o, 3, sha, secret, strlen(secret), &g);
		is_str(g.v[S3D_TF_HMAC], "f497da8aaa4a1ef03c366b6a1bc00d2ce8270fa2696b04e8b6e7de7943084e26",
		       "hmac: golden vector");
	}
	is_int(s3d_tier_check(o, 3, 200, 5, &m, body, 5, secret, strlen(secret)),
	       S3D_TIER_OK, "hmac: a signed block is used");
	is_int(s3d_tier_check(o, 3, 200, 5, &got, body, 5, secret, strlen(secret)),
	       S3D_TIER_BAD_HMAC, "hmac: an unsigned block is refused when a secret is set");
	is_int(s3d_tier_check(o, 3, 200, 5, &m, body, 5, "another-secret-16b", 18),
	       S3D_TIER_BAD_HMAC, "hmac: a block signed with another secret is refused");
	bad = m;
	bad.v[S3D_TF_HMAC][0] ^= 1;
	is_int(s3d_tier_check(o, 3, 200, 5, &bad, body, 5, secret, strlen(secret)),
	       S3D_TIER_BAD_HMAC, "hmac: a wrong HMAC is refused");
	/* A writer without the secret forges a block: new body, new checksum. */
	bad = got;
	memcpy(body, "XXXXX", 5);
	s3d_tier_sha256_hex(body, 5, bad.v[S3D_TF_SHA256]);
	is_int(s3d_tier_check(o, 3, 200, 5, &bad, body, 5, NULL, 0), S3D_TIER_OK,
	       "hmac: without a secret a consistent forgery passes (why tier_secret exists)");
	is_int(s3d_tier_check(o, 3, 200, 5, &bad, body, 5, secret, strlen(secret)),
	       S3D_TIER_BAD_HMAC, "hmac: with the secret the forgery is refused");
}

static void breaker(void)
{
	struct s3d_tier_breaker b;
	uint64_t t = 1000000;
	int i;

	s3d_tier_breaker_init(&b, 3);
	ok(s3d_tier_breaker_allow(&b, t), "breaker: closed lets requests through");
	ok(!s3d_tier_breaker_fail(&b, t) && !s3d_tier_breaker_fail(&b, t),
	   "breaker: two failures keep it closed");
	s3d_tier_breaker_ok(&b);
	ok(!s3d_tier_breaker_fail(&b, t) && !s3d_tier_breaker_fail(&b, t),
	   "breaker: a success resets the count of failures in a row");
	ok(s3d_tier_breaker_fail(&b, t), "breaker: the third failure in a row opens it");
	is_int(b.state, S3D_TIER_OPEN, "breaker: open");
	ok(!s3d_tier_breaker_allow(&b, t + 999), "breaker: open: nothing before the back-off (1 s)");
	ok(!s3d_tier_breaker_fail(&b, t + 10), "breaker: a late failure does not reopen it");
	ok(s3d_tier_breaker_allow(&b, t + 1000), "breaker: after the back-off one probe goes");
	is_int(b.state, S3D_TIER_HALF_OPEN, "breaker: half open while probing");
	ok(!s3d_tier_breaker_allow(&b, t + 1000), "breaker: only one probe at a time");
	ok(s3d_tier_breaker_fail(&b, t + 1500), "breaker: a failed probe opens it again");
	ok(!s3d_tier_breaker_allow(&b, t + 3499) && s3d_tier_breaker_allow(&b, t + 3500),
	   "breaker: ... for twice as long (2 s)");
	ok(s3d_tier_breaker_ok(&b), "breaker: a probe answered closes it");
	ok(s3d_tier_breaker_allow(&b, t + 3500) && s3d_tier_breaker_allow(&b, t + 3500),
	   "breaker: closed again: all through");
	is_int((long long)b.backoff_ms, S3D_TIER_BACKOFF_MIN_MS, "breaker: back-off back to 1 s");
	for (i = 0; i < 3; i++)
		s3d_tier_breaker_fail(&b, t);
	for (i = 0; i < 20; i++) {
		t += b.backoff_ms;
		s3d_tier_breaker_allow(&b, t);
		s3d_tier_breaker_fail(&b, t);
	}
	is_int((long long)b.backoff_ms, S3D_TIER_BACKOFF_MAX_MS, "breaker: back-off capped at 60 s");
}

static void lease_names(const struct s3d_tier_obj *o)
{
	char key[S3D_TIER_KEY_MAX];
	struct s3d_tier_obj q;
	uint64_t first = 0, last = 0;

	is_int(s3d_tier_lease_key(o, 0, key, sizeof(key)), 0, "lease name: stripe 0 named");
	is_str(key, "s3cachefs/v1/9d2ffd24418a5a9d/fb662218309e3da663e7a398bfc563b7d4c32db7e8a968a450ea970fde6d33be/1024k/lease/0",
	       "lease name: stripe 0, beside its blocks (golden)");
	is_int(s3d_tier_lease_key(o, 1, key, sizeof(key)), -EINVAL,
	       "lease name: no stripe past the object (3 MiB + 5: one stripe)");
	s3d_tier_obj_init(&q, "https://s3.eu-west-1.amazonaws.com",
			  "training-data", "shards/00001.tar", etag, 20 * MIB + 1,
			  1 << 20);
	is_str(q.object, obj2_hex, "lease name: object of 20 MiB + 1 (golden)");
	is_int(s3d_tier_lease_key(&q, 2, key, sizeof(key)), 0, "lease name: its stripe 2 named");
	is_str(key, "s3cachefs/v1/9d2ffd24418a5a9d/44c9e1e60e9b122a35d28747a16844ba80c095b7e3d2aea261f166c4bce6f823/1024k/lease/2",
	       "lease name: stripe 2 (golden)");
	ok(s3d_tier_stripe_of(&q, 7) == 0 && s3d_tier_stripe_of(&q, 8) == 1 &&
	   s3d_tier_stripe_of(&q, 20) == 2, "lease name: 8 MiB stripes: blocks 0-7, 8-15, 16-");
	ok(s3d_tier_stripe_blocks(&q, 2, &first, &last) && first == 16 && last == 20,
	   "lease name: the last stripe is short (blocks 16-20)");
	ok(!s3d_tier_stripe_blocks(&q, 3, &first, &last), "lease name: no stripe 3");
	s3d_tier_obj_init(&q, "e", "b", "k", etag, 20 * MIB + 1, 1 << 18);
	ok(s3d_tier_stripe_of(&q, 31) == 0 && s3d_tier_stripe_of(&q, 32) == 1,
	   "lease name: 256 KiB blocks: 32 to a stripe");
	s3d_tier_obj_init(&q, "e", "b", "k", etag, 40 * MIB, 16 << 20);
	ok(s3d_tier_stripe_of(&q, 1) == 1 && !s3d_tier_lease_key(&q, 2, key, sizeof(key)) &&
	   strstr(key, "/16384k/lease/2") != NULL,
	   "lease name: blocks above the stripe: a stripe is one block");
	ok(!s3d_tier_lease_range("3-7", &first, &last) && first == 3 && last == 7,
	   "lease name: the holder's blocks read back (3-7)");
	ok(s3d_tier_lease_range("7-3", &first, &last) && s3d_tier_lease_range("3-", &first, &last) &&
	   s3d_tier_lease_range("3-7x", &first, &last) && s3d_tier_lease_range("-1-3", &first, &last) &&
	   s3d_tier_lease_range("", &first, &last),
	   "lease name: a holder's blocks not FIRST-LAST are refused");
	{
		static const char *const bad[] = {
			"3--7", "3- 7", "+3-7", "3-+7", " 3-7", "3-7 ", "3 -7", "-", "3",
			"0x3-7", "3-7-9", "18446744073709551616-18446744073709551617",
			"0-18446744073709551616", "99999999999999999999999-1",
		};
		size_t i;
		int refused = 0;

		for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			first = last = 42;
			if (s3d_tier_lease_range(bad[i], &first, &last) == -EINVAL &&
			    first == 42 && last == 42)
				refused++;
			else
				printf("# lease range '%s' taken\n", bad[i]);
		}
		is_int(refused, (long long)(sizeof(bad) / sizeof(bad[0])),
		       "lease name: signs, spaces, a second '-', overflow: refused, nothing written");
	}
	ok(!s3d_tier_lease_range("0-18446744073709551615", &first, &last) && first == 0 &&
	   last == UINT64_MAX, "lease name: the largest index still reads");
	s3d_tier_obj_init(&q, "e", "b", "k", etag, 20 * MIB + 1, 1 << 20);
	s3d_tier_lease_blocks(&q, 1, "10-12", &first, &last);
	ok(first == 10 && last == 12, "lease blocks: inside its stripe (1: 8-15): as said");
	s3d_tier_lease_blocks(&q, 1, NULL, &first, &last);
	ok(first == 8 && last == 15, "lease blocks: not said: the stripe's");
	s3d_tier_lease_blocks(&q, 1, "3-7", &first, &last);
	ok(first == 8 && last == 15, "lease blocks: another stripe's: the stripe's");
	s3d_tier_lease_blocks(&q, 1, "9-16", &first, &last);
	ok(first == 8 && last == 15, "lease blocks: reaching past the stripe: the stripe's");
	s3d_tier_lease_blocks(&q, 1, "8--9", &first, &last);
	ok(first == 8 && last == 15, "lease blocks: \"8--9\": the stripe's, no wrap-around");
	s3d_tier_lease_blocks(&q, 2, "16-20", &first, &last);
	ok(first == 16 && last == 20, "lease blocks: the short last stripe, whole");
	s3d_tier_lease_blocks(&q, 2, "16-21", &first, &last);
	ok(first == 16 && last == 20, "lease blocks: past the object: the stripe's");
	is_str(s3d_tier_lease_name[S3D_TIER_LEASE_CLAIM_LOST], "claim_lost",
	       "lease name: a lost claim has its own outcome (claim_lost)");
}

/* A HEAD of a lease written at @modified, answered at @date (tier clock). */
static struct s3d_tier_lease_seen seen_at(int64_t modified, int64_t date,
					  uint64_t first, uint64_t last)
{
	return (struct s3d_tier_lease_seen){ 200, date, modified, first, last };
}

static void lease_machine(void)
{
	const int64_t w = 1700000000;	/* the tier's clock when written */
	uint64_t c[S3D_TIER_LEASE_NR] = { 0 }, t = 5000000;
	struct s3d_tier_lease_seen s;
	struct s3d_tier_lease l;
	uint32_t d = 0, sum;
	int act, i;

	/* take */
	s3d_tier_lease_init(&l, 3000, 30, c);
	is_int(s3d_tier_lease_miss(&l, 0, 0, S3D_TIER_LM_ON, t, &d), S3D_TIER_LA_CREATE,
	       "lease: a miss creates the stripe's lease (If-None-Match)");
	is_int(s3d_tier_lease_created(&l, 200, t), S3D_TIER_LA_ORIGIN, "lease: created: origin sends the rest");
	ok(l.state == S3D_TIER_LS_HELD && c[S3D_TIER_LEASE_WON] == 1, "lease: ... held, counted won");

	/* lose, wait, served from the tier */
	s3d_tier_lease_init(&l, 3000, 30, c);
	s3d_tier_lease_miss(&l, 0, 0, S3D_TIER_LM_ON, t, &d);
	is_int(s3d_tier_lease_created(&l, 412, t), S3D_TIER_LA_LOOK, "lease: lost (412): look at it");
	s = seen_at(w, w + 1, 0, 7);
	is_int(s3d_tier_lease_looked(&l, &s, 0, t, &d), S3D_TIER_LA_POLL,
	       "lease: fresh, its holder fetches the block: poll for it");
	is_int(d, S3D_TIER_POLL_MIN_MS, "lease: ... after 25 ms");
	t += d;
	is_int(s3d_tier_lease_miss(&l, 0, 0, S3D_TIER_LM_ON, t, &d), S3D_TIER_LA_POLL,
	       "lease: still missing: poll again");
	is_int(d, 2 * S3D_TIER_POLL_MIN_MS, "lease: ... backing off (50 ms)");
	t += d;
	s3d_tier_lease_served(&l, t);
	is_int(s3d_tier_lease_miss(&l, 0, 1, S3D_TIER_LM_ON, t, &d), S3D_TIER_LA_POLL,
	       "lease: block 0 came, block 1 not yet: poll");
	is_int(d, S3D_TIER_POLL_MIN_MS, "lease: ... the back-off restarts once a block came");
	t += d;
	s3d_tier_lease_served(&l, t);
	is_int((long long)l.waited_ms, 100, "lease: waited 100 ms in all (25 + 50 + 25)");
	is_int(s3d_tier_lease_miss(&l, 1, 8, S3D_TIER_LM_ON, t, &d), S3D_TIER_LA_CREATE,
	       "lease: the next stripe missing: its own lease");
	is_int((long long)c[S3D_TIER_LEASE_LOST_TIER], 1,
	       "lease: ... the stripe waited for counted lost_tier (its blocks came from the tier)");
	is_int(s3d_tier_lease_created(&l, 200, t), S3D_TIER_LA_ORIGIN, "lease: ... won");
	s3d_tier_lease_init(&l, 3000, 30, c);
	s3d_tier_lease_miss(&l, 0, 6, S3D_TIER_LM_ON, t, &d);
	s3d_tier_lease_created(&l, 409, t);
	s3d_tier_lease_looked(&l, &s, 6, t, &d);
	s3d_tier_lease_served(&l, t + 10);
	s3d_tier_lease_end(&l, true, t + 10);
	is_int((long long)c[S3D_TIER_LEASE_LOST_TIER], 2,
	       "lease: 409 is lost too; a range ending in the stripe waited for: lost_tier");

	/* wait expires: origin */
	memset(c, 0, sizeof(c));
	s3d_tier_lease_init(&l, 300, 30, c);
	s3d_tier_lease_miss(&l, 0, 0, S3D_TIER_LM_ON, t, &d);
	s3d_tier_lease_created(&l, 412, t);
	act = s3d_tier_lease_looked(&l, &s, 0, t, &d);
	for (i = 0, sum = 0; act == S3D_TIER_LA_POLL && i < 100; i++) {
		sum += d;
		t += d;
		act = s3d_tier_lease_miss(&l, 0, 0, S3D_TIER_LM_ON, t, &d);
	}
	is_int(act, S3D_TIER_LA_ORIGIN, "lease: the blocks never come: origin");
	is_int(sum, 300, "lease: ... after waiting exactly tier_lease_wait_ms (300 ms), polls capped by it");
	ok(c[S3D_TIER_LEASE_LOST_ORIGIN] == 1 && l.gave_up, "lease: ... counted lost_origin, the lease remembered");
	s3d_tier_lease_init(&l, 300, 30, c);
	is_int(s3d_tier_lease_miss(&l, 0, 3, S3D_TIER_LM_WAITED, t, &d), S3D_TIER_LA_ORIGIN,
	       "lease: a later FETCH of a lease waited out goes to origin at once");
	is_int((long long)c[S3D_TIER_LEASE_LOST_ORIGIN], 2, "lease: ... lost_origin, no request");

	/* one budget for the whole FETCH */
	s3d_tier_lease_init(&l, 100, 30, c);
	s3d_tier_lease_miss(&l, 0, 0, S3D_TIER_LM_ON, t, &d);
	s3d_tier_lease_created(&l, 412, t);
	s3d_tier_lease_looked(&l, &s, 0, t, &d);
	t += 25;
	s3d_tier_lease_miss(&l, 0, 0, S3D_TIER_LM_ON, t, &d);
	t += 50;
	s3d_tier_lease_served(&l, t);
	s3d_tier_lease_miss(&l, 1, 8, S3D_TIER_LM_ON, t, &d);
	s3d_tier_lease_created(&l, 412, t);
	s = seen_at(w, w + 1, 8, 15);
	is_int(s3d_tier_lease_looked(&l, &s, 8, t, &d), S3D_TIER_LA_POLL, "lease: a second stripe lost: poll");
	is_int(d, 25, "lease: ... within what is left of the FETCH's wait (100 - 75 ms)");
	t += d;
	is_int(s3d_tier_lease_miss(&l, 1, 8, S3D_TIER_LM_ON, t, &d), S3D_TIER_LA_ORIGIN,
	       "lease: the wait, all stripes together, never exceeds tier_lease_wait_ms");

	/* the lease's own requests count against the wait */
	memset(c, 0, sizeof(c));
	s3d_tier_lease_init(&l, 100, 30, c);
	s3d_tier_lease_miss(&l, 0, 0, S3D_TIER_LM_ON, t, &d);
	is_int(s3d_tier_lease_created(&l, 412, t + 60), S3D_TIER_LA_LOOK,
	       "lease: a create answered 412 after 60 ms: look");
	s = seen_at(w, w + 1, 0, 7);
	is_int(s3d_tier_lease_looked(&l, &s, 0, t + 90, &d), S3D_TIER_LA_POLL,
	       "lease: ... its HEAD answered after 30 ms more: poll");
	is_int(d, 10, "lease: ... within what those requests left of the wait (100 - 90 ms)");
	is_int(s3d_tier_lease_miss(&l, 0, 0, S3D_TIER_LM_ON, t + 100, &d), S3D_TIER_LA_ORIGIN,
	       "lease: ... then origin, 100 ms after the first request");
	ok(c[S3D_TIER_LEASE_LOST_ORIGIN] == 1 && l.waited_ms == 100,
	   "lease: ... lost_origin, 100 ms counted");
	s3d_tier_lease_init(&l, 100, 30, c);
	s3d_tier_lease_miss(&l, 0, 0, S3D_TIER_LM_ON, t, &d);
	is_int(s3d_tier_lease_created(&l, 412, t + 120), S3D_TIER_LA_ORIGIN,
	       "lease: a create that took the whole wait: origin, no HEAD");
	ok(c[S3D_TIER_LEASE_LOST_ORIGIN] == 2 && l.gave_up,
	   "lease: ... lost_origin, the lease remembered as waited out");
	s3d_tier_lease_init(&l, 100, 30, c);
	s3d_tier_lease_miss(&l, 0, 0, S3D_TIER_LM_ON, t, &d);
	s3d_tier_lease_created(&l, 412, t + 10);
	s = seen_at(w, w + 40, 0, 7);
	is_int(s3d_tier_lease_looked(&l, &s, 0, t + 100, &d), S3D_TIER_LA_ORIGIN,
	       "lease: stale, but its HEAD took the rest of the wait: origin, no takeover");
	s3d_tier_lease_init(&l, 100, 30, c);
	s3d_tier_lease_miss(&l, 0, 0, S3D_TIER_LM_ON, t, &d);
	is_int(s3d_tier_lease_created(&l, 200, t + 500), S3D_TIER_LA_ORIGIN,
	       "lease: a create won however long it took: held");
	ok(l.state == S3D_TIER_LS_HELD && !l.waiting, "lease: ... its clock stopped");

	/* the holder does not fetch the block needed */
	memset(c, 0, sizeof(c));
	s3d_tier_lease_init(&l, 3000, 30, c);
	s3d_tier_lease_miss(&l, 0, 5, S3D_TIER_LM_ON, t, &d);
	s3d_tier_lease_created(&l, 412, t);
	s = seen_at(w, w + 1, 0, 3);
	is_int(s3d_tier_lease_looked(&l, &s, 5, t, &d), S3D_TIER_LA_ORIGIN,
	       "lease: its holder fetches blocks 0-3, not 5: origin at once");
	ok(c[S3D_TIER_LEASE_LOST_ORIGIN] == 1 && !l.gave_up, "lease: ... lost_origin, nothing waited");
	s3d_tier_lease_init(&l, 3000, 30, c);
	s3d_tier_lease_miss(&l, 0, 2, S3D_TIER_LM_ON, t, &d);
	s3d_tier_lease_created(&l, 412, t);
	s3d_tier_lease_looked(&l, &s, 2, t, &d);
	s3d_tier_lease_served(&l, t + 5);
	s3d_tier_lease_served(&l, t + 5);
	is_int(s3d_tier_lease_miss(&l, 0, 4, S3D_TIER_LM_ON, t + 5, &d), S3D_TIER_LA_ORIGIN,
	       "lease: blocks 2-3 came, 4 is past the holder's: origin");

	/* a stale lease, by the tier's clock */
	memset(c, 0, sizeof(c));
	s3d_tier_lease_init(&l, 3000, 30, c);
	s3d_tier_lease_miss(&l, 0, 0, S3D_TIER_LM_ON, t + 3600000, &d);
	s3d_tier_lease_created(&l, 412, t + 3600000);
	s = seen_at(w, w + 29, 0, 7);
	is_int(s3d_tier_lease_looked(&l, &s, 0, t + 3600000, &d), S3D_TIER_LA_POLL,
	       "lease: 29 s old by the tier's clock is fresh, whatever this node's clock says");
	s3d_tier_lease_init(&l, 3000, 30, c);
	s3d_tier_lease_miss(&l, 0, 0, S3D_TIER_LM_ON, t, &d);
	s3d_tier_lease_created(&l, 412, t);
	s = seen_at(w, w + 30, 0, 7);
	is_int(s3d_tier_lease_looked(&l, &s, 0, t, &d), S3D_TIER_LA_TAKE,
	       "lease: 30 s old by the tier's clock (TTL 30 s): take it over (If-Match)");
	is_int(s3d_tier_lease_taken(&l, 200, t), S3D_TIER_LA_ORIGIN, "lease: taken over: origin sends the rest");
	ok(l.state == S3D_TIER_LS_HELD && c[S3D_TIER_LEASE_TAKEN_OVER] == 1, "lease: ... held, counted taken_over");
	s = seen_at(w, 0, 0, 7);
	ok(!s3d_tier_lease_stale(&s, 30), "lease: no Date from the tier: never stale");
	s = seen_at(0, w + 100, 0, 7);
	ok(!s3d_tier_lease_stale(&s, 30), "lease: no Last-Modified: never stale");
	s3d_tier_lease_init(&l, 3000, 30, c);
	s3d_tier_lease_miss(&l, 0, 0, S3D_TIER_LM_ON, t, &d);
	s3d_tier_lease_created(&l, 412, t);
	s = seen_at(w, w + 40, 0, 7);
	s3d_tier_lease_looked(&l, &s, 0, t, &d);
	is_int(s3d_tier_lease_taken(&l, 412, t), S3D_TIER_LA_LOOK,
	       "lease: another node took it over first (412): look again");
	s = seen_at(w + 40, w + 40, 0, 7);
	is_int(s3d_tier_lease_looked(&l, &s, 0, t, &d), S3D_TIER_LA_POLL, "lease: ... its lease is fresh: wait");

	/* no leases */
	memset(c, 0, sizeof(c));
	s3d_tier_lease_init(&l, 3000, 30, c);
	is_int(s3d_tier_lease_miss(&l, 0, 0, S3D_TIER_LM_UNSUPPORTED, t, &d), S3D_TIER_LA_ORIGIN,
	       "lease: the tier ignores conditional PUTs: no lease, origin");
	ok(l.state == S3D_TIER_LS_DONE && c[S3D_TIER_LEASE_UNSUPPORTED] == 1, "lease: ... counted unsupported");
	s3d_tier_lease_init(&l, 3000, 30, c);
	is_int(s3d_tier_lease_miss(&l, 0, 0, S3D_TIER_LM_OFF, t, &d), S3D_TIER_LA_ORIGIN,
	       "lease: leases off (or not now): origin");
	s3d_tier_lease_init(&l, 3000, 30, c);
	is_int(s3d_tier_lease_miss(&l, 0, 0, S3D_TIER_LM_OWN, t, &d), S3D_TIER_LA_ORIGIN,
	       "lease: this node's own lease: origin");
	ok(l.state == S3D_TIER_LS_HELD && c[S3D_TIER_LEASE_OWN] == 1, "lease: ... as its holder (own)");

	/* failures: origin at once, a bounded number of requests */
	memset(c, 0, sizeof(c));
	s3d_tier_lease_init(&l, 3000, 30, c);
	s3d_tier_lease_miss(&l, 0, 0, S3D_TIER_LM_ON, t, &d);
	is_int(s3d_tier_lease_created(&l, 0, t), S3D_TIER_LA_ORIGIN, "lease: the create failed: origin at once");
	ok(c[S3D_TIER_LEASE_FAILED] == 1, "lease: ... counted failed");
	s3d_tier_lease_init(&l, 3000, 30, c);
	s3d_tier_lease_miss(&l, 0, 0, S3D_TIER_LM_ON, t, &d);
	s3d_tier_lease_created(&l, 412, t);
	s = (struct s3d_tier_lease_seen){ .status = 404 };
	is_int(s3d_tier_lease_looked(&l, &s, 0, t, &d), S3D_TIER_LA_CREATE,
	       "lease: gone between the create and the HEAD: create again");
	for (i = 0, act = S3D_TIER_LA_CREATE; act != S3D_TIER_LA_ORIGIN && i < 20; i++)
		act = act == S3D_TIER_LA_CREATE ? s3d_tier_lease_created(&l, 412, t) :
		      s3d_tier_lease_looked(&l, &s, 0, t, &d);
	ok(act == S3D_TIER_LA_ORIGIN && i <= 2 * (int)S3D_TIER_LEASE_LOOKS,
	   "lease: a lease that keeps changing hands: origin after a few requests");
	s3d_tier_lease_init(&l, 3000, 30, c);
	s3d_tier_lease_miss(&l, 0, 0, S3D_TIER_LM_ON, t, &d);
	s3d_tier_lease_created(&l, 412, t);
	s = seen_at(w, w + 1, 0, 7);
	s3d_tier_lease_looked(&l, &s, 0, t, &d);
	s3d_tier_lease_end(&l, false, t + 10);
	ok(c[S3D_TIER_LEASE_LOST_ORIGIN] == 1 && l.state == S3D_TIER_LS_DONE,
	   "lease: the tier's part ending mid-wait (an error, a bad block): lost_origin");
}

/* Load a configuration from @text; its error messages in @errs. */
static int load(const char *text, struct s3d_conf **c, struct s3d_buf *errs)
{
	char path[] = "/tmp/test_tier.XXXXXX";
	int fd = mkstemp(path), err;

	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		return -EIO;
	close(fd);
	s3d_buf_init(errs, 0);
	err = s3d_conf_load(path, true, c, errs);
	unlink(path);
	return err;
}

static void config(void)
{
	char secret_file[] = "/tmp/test_tier_secret.XXXXXX", text[512];
	struct s3d_conf *c;
	struct s3d_buf e;
	int fd;

	is_int(load("[global]\ntier_bucket = fleet\ntier_block_kb = 4096\ntier_put = false\n"
		    "tier_secret = 0123456789abcdef\ntier_connect_timeout_ms = 300\n"
		    "tier_stall_timeout = 2\ntier_breaker_failures = 5\ntier_put_queue = 64\n"
		    "tier_lease = false\ntier_lease_wait_ms = 1500\ntier_lease_ttl = 20\n"
		    "[bucket fleet]\nendpoint = https://tier.lan:9000\naddressing = path\n",
		    &c, &e), 0, "config: every tier key");
	ok(c && !strcmp(c->tier.bucket, "fleet") && c->tier.block_kb == 4096 &&
	   c->tier.put == 0 && c->tier.secret_len == 16 && c->tier.connect_ms == 300 &&
	   c->tier.stall_s == 2 && c->tier.breaker == 5 && c->tier.queue == 64 &&
	   c->tier.lease == 0 && c->tier.lease_wait_ms == 1500 && c->tier.lease_ttl_s == 20,
	   "config: ... read as written");
	s3d_conf_free(c);
	s3d_buf_free(&e);
	is_int(load("[global]\n", &c, &e), 0, "config: no tier keys");
	ok(c && c->tier.lease == -1 && !c->tier.lease_wait_ms && !c->tier.lease_ttl_s,
	   "config: ... leases not set (on, 3000 ms, 30 s by default)");
	s3d_conf_free(c);
	s3d_buf_free(&e);
	is_int(load("[global]\ntier_bucket = fleet\n", &c, &e), -EINVAL,
	       "config: tier_bucket without its [bucket] section refused");
	ok(strstr(s3d_buf_str(&e), "no [bucket fleet] section") != NULL, "config: ... saying why");
	s3d_buf_free(&e);
	is_int(load("[global]\ntier_block_kb = 1000\n", &c, &e), -EINVAL,
	       "config: tier_block_kb not a power of two refused");
	s3d_buf_free(&e);
	is_int(load("[global]\ntier_block_kb = 128\n", &c, &e), -EINVAL,
	       "config: tier_block_kb below 256 refused");
	s3d_buf_free(&e);
	is_int(load("[global]\ntier_block_kb = 32768\n", &c, &e), -EINVAL,
	       "config: tier_block_kb above 16384 refused");
	s3d_buf_free(&e);
	is_int(load("[global]\ntier_secret = short\n", &c, &e), -EINVAL,
	       "config: a tier_secret under 16 bytes refused");
	s3d_buf_free(&e);
	is_int(load("[global]\ntier_lease = maybe\n", &c, &e), -EINVAL,
	       "config: tier_lease not a boolean refused");
	ok(strstr(s3d_buf_str(&e), "tier_lease 'maybe': want true or false") != NULL,
	   "config: ... saying why");
	s3d_buf_free(&e);
	is_int(load("[global]\ntier_lease_wait_ms = 5\n", &c, &e), -EINVAL,
	       "config: tier_lease_wait_ms below 10 refused");
	s3d_buf_free(&e);
	is_int(load("[global]\ntier_lease_wait_ms = 30001\n", &c, &e), -EINVAL,
	       "config: tier_lease_wait_ms above 30000 refused (below the kernel's fetch_timeout)");
	ok(strstr(s3d_buf_str(&e), "want milliseconds, 10..30000") != NULL, "config: ... saying why");
	s3d_buf_free(&e);
	is_int(load("[global]\ntier_lease_ttl = 1\n", &c, &e), -EINVAL,
	       "config: tier_lease_ttl below 2 s refused (the tier's clock counts seconds)");
	s3d_buf_free(&e);
	is_int(load("[global]\ntier_lease_ttl = 3601\n", &c, &e), -EINVAL,
	       "config: tier_lease_ttl above 3600 s refused");
	s3d_buf_free(&e);
	is_int(load("[bucket x]\ntier_put = true\n", &c, &e), -EINVAL,
	       "config: tier keys belong in [global]");
	s3d_buf_free(&e);
	fd = mkstemp(secret_file);
	ok(fd >= 0 && write(fd, "a-fleet-secret-of-32-bytes-long!\n", 33) == 33,
	   "config: a secret file written");
	close(fd);
	chmod(secret_file, 0644);
	snprintf(text, sizeof(text), "[global]\ntier_secret = %s\n", secret_file);
	is_int(load(text, &c, &e), -EINVAL, "config: a secret file others may read refused");
	s3d_buf_free(&e);
	chmod(secret_file, 0600);
	is_int(load(text, &c, &e), 0, "config: a secret file of its owner's");
	ok(c && c->tier.secret_len == 32 &&
	   !memcmp(c->tier.secret, "a-fleet-secret-of-32-bytes-long!", 32),
	   "config: ... its first line is the key");
	s3d_conf_free(c);
	s3d_buf_free(&e);
	unlink(secret_file);
}

int main(void)
{
	struct s3d_tier_obj o;

	golden(&o);
	arithmetic();
	matrix(&o);
	breaker();
	whole_blocks();
	lease_names(&o);
	lease_machine();
	config();
	return tap_done();
}
