// SPDX-License-Identifier: GPL-2.0
/*
 * The fleet tier's pure parts (daemon/tierblk.c): block names against
 * golden vectors (computed apart, with Python's hashlib: the format is
 * forever), the validation matrix (each field wrong on its own, length,
 * checksum, status, HMAC), block arithmetic, the breaker on a fake clock,
 * and the tier_* configuration keys.
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
		    "[bucket fleet]\nendpoint = https://tier.lan:9000\naddressing = path\n",
		    &c, &e), 0, "config: every tier key");
	ok(c && !strcmp(c->tier.bucket, "fleet") && c->tier.block_kb == 4096 &&
	   c->tier.put == 0 && c->tier.secret_len == 16 && c->tier.connect_ms == 300 &&
	   c->tier.stall_s == 2 && c->tier.breaker == 5 && c->tier.queue == 64,
	   "config: ... read as written");
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
	config();
	return tap_done();
}
