// SPDX-License-Identifier: GPL-2.0
/*
 * The fleet tier: a second S3 bucket (tier_bucket, with its own [bucket]
 * section: endpoint, region, credentials, CA), shared by the nodes of a
 * fleet, read before the origin. Only FETCH uses it (op_fetch.c); the
 * module, the protocol, presence and the one-version rule do not change.
 *
 * Read-through: a FETCH asks the tier for the blocks covering its range,
 * in order, one GET each; each block is buffered, verified (tierblk.c:
 * status, length, every metadata field, the body's SHA-256, the HMAC with
 * tier_secret) and only then written into the cache file (written means
 * present). The first block the tier lacks, or has wrong, or cannot send
 * ends the tier's part: origin gets one GET for the rest of the range.
 *
 * Write-behind: while origin's bytes pass, whole blocks are hashed; when
 * the FETCH has succeeded their descriptors (not their bytes) join a
 * bounded queue. A put reads its block back from the cache file and puts
 * it only if it still hashes to what origin sent (evicted, renewed or
 * being rewritten: dropped), with If-None-Match: * (a 412 means another
 * node was first), or unconditionally for a block the tier had wrong (it
 * heals it). Puts go S3D_TIER_PUTS_MAX at a time, in the lowest class.
 *
 * A full tier (507, or QuotaExceeded as RGW and MinIO say it, which RGW
 * sends as a 403) pauses the puts for a minute; reads go on.
 *
 * Trouble costs one short timeout (tier_connect_timeout_ms, and
 * tier_stall_timeout for a stall before or within the body); requests are
 * never retried (a miss is cheap). tier_breaker_failures failures in a
 * row open the breaker: everything goes to origin, and one probe is let
 * through after a back-off that doubles while the probes fail. 401/403
 * switch the tier off, with one log line, until the configuration is
 * reloaded.
 *
 * Leases (single flight across nodes, tier_lease): a FETCH that misses a
 * block creates its stripe's lease (tierblk.h) with If-None-Match: *.
 * Won: origin sends the rest of the range, the leases of its later
 * stripes are claimed too, and the blocks of stripes this node holds are
 * put as soon as they are written, before other puts and in the FETCH's
 * class, for the nodes waiting on them. Lost: a HEAD says whose lease it
 * is, how old by the tier's clock (Date against Last-Modified) and which
 * blocks its holder fetches; the FETCH polls the tier for those blocks,
 * backing off, using each as any tier block once verified, until it has
 * waited tier_lease_wait_ms in all; then origin sends the rest. A lease
 * older than tier_lease_ttl is taken over with If-Match its ETag. A lease
 * is never deleted: it goes stale, and expires with the blocks by the
 * tier's lifecycle rule. Lease requests are tier requests: one attempt,
 * the short timeouts, counted in the breaker; any failure means origin at
 * once. No lease without puts (tier_put = false, puts paused for a full
 * tier) or while the breaker is not closed: nobody would get the blocks.
 * The tier's conditional PUTs are probed once (caps.c) before the first
 * lease; a FETCH waits for that answer tier_connect_timeout_ms at most. A
 * tier that ignores If-None-Match gets no leases, and one log line.
 *
 * Memory: a tier read holds one block while its GET is in flight (cap the
 * tier's requests with max_concurrency in its [bucket] section); puts hold
 * S3D_TIER_PUTS_MAX blocks; the queue tier_put_queue descriptors of about
 * 500 bytes; the leases this node holds or waited out, S3D_TIER_RECS_MAX
 * records of about 200 bytes.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/rand.h>

#include "caps.h"
#include "ctx.h"
#include "lib/base.h"
#include "lib/config.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "lib/prio.h"
#include "lib/s3.h"
#include "lib/util.h"
#include "lib/xfer.h"
#include "lib/xml.h"
#include "mount.h"
#include "store.h"
#include "tier.h"
#include "tierblk.h"

/* Alignment of the cache file's O_DIRECT writes (op_fetch.c). */
#define TIER_ALIGN		4096U
/* Puts in flight at most: each holds one block in memory. */
#define S3D_TIER_PUTS_MAX	4U
/* A full tier (quota, no space): no puts for this long. */
#define S3D_TIER_FULL_PAUSE_MS	60000U
/* Leases this node remembers at most (held, or waited out). */
#define S3D_TIER_RECS_MAX	1024U
/* A probe of conditional PUTs that got no answer: again after this. */
#define S3D_TIER_PROBE_AGAIN_MS	60000U
/* Stripes after the first a FETCH claims at most. */
#define S3D_TIER_CLAIMS_MAX	4U
/* Claims in flight at most, all FETCHes together (about 2 KiB each). */
#define S3D_TIER_CLAIMS_FLIGHT	64U

/* What a FETCH's timer does when it fires. */
enum {
	TW_POLL,	/* GET the block waited for again */
	TW_PARK,	/* the probe's verdict is late: no lease */
	TW_MISS,	/* the verdict came: decide on the lease */
};

/* What the probe said of the tier's conditional PUTs. */
enum {
	LEASE_UNKNOWN,
	LEASE_PROBING,
	LEASE_YES,
	LEASE_NO,
};

/* A block waiting to be put: a descriptor, its bytes stay in the cache. */
struct tier_put {
	struct s3d_list node;
	struct s3d_tier_obj obj;
	uint64_t index;
	char sha[S3D_TIER_HEX + 1];
	bool heal;
	int prio;
	uint32_t mount_id;
	char *path;
	char *etag;
};

/*
 * A lease this node holds, or (@waited) another node's that a FETCH
 * waited out or a claim lost (this node's later FETCHes of the stripe
 * then go to origin at once, and claim it no more), until @until_ms by
 * this node's clock (the TTL).
 */
struct tier_lease_rec {
	struct s3d_list node;
	uint64_t until_ms;
	bool waited;
	char key[S3D_TIER_KEY_MAX];
};

/*
 * A claim of a later stripe's lease, apart from its FETCH (@t, while that
 * runs: its blocks of the stripe wait for the answer to be put).
 */
struct tier_claim {
	struct s3d_list node;
	struct s3d_tier_fetch *t;
	struct s3d_ctx *ctx;
	char bucket[S3D_TIER_BUCKET_MAX];
	char key[S3D_TIER_KEY_MAX];
	char blocks[48];
	char body[S3D_TIER_LEASE_BODY];
	struct s3d_kv h[3];
	struct s3d_xfer x;
};

/* A put in flight. */
struct tier_put_op {
	struct tier_put *d;
	struct s3d_ctx *ctx;
	char *buf;
	struct s3d_tier_meta meta;
	struct s3d_kv h[S3D_TF_NR + 1];
	size_t nh;
	char bucket[S3D_TIER_BUCKET_MAX];	/* a reload may change the tier's */
	char key[S3D_TIER_KEY_MAX];
	struct s3d_xfer x;
};

/*
 * The tier as the current configuration says (tier_sync()). @off: switched
 * off by an authorisation error until the next reload.
 */
static struct {
	unsigned int gen;
	bool synced;
	bool on;
	bool off;
	char *bucket;
	struct s3d_ctx *ctx;
	uint32_t block;
	bool put;
	char *secret;
	size_t secret_len;
	unsigned int connect_ms;
	unsigned int stall_s;
	unsigned int queue_max;
	struct s3d_tier_breaker breaker;
	struct s3d_list queue;
	struct s3d_list urgent;
	unsigned int queued;
	unsigned int puts;
	uint64_t paused_until_ms;
	bool same_told;
	bool lease;
	unsigned int lease_wait_ms;
	unsigned int lease_ttl_s;
	int support;
	uint64_t probe_after_ms;
	bool bare_if_match;
	struct s3d_list parked;
	struct s3d_list recs;
	unsigned int nrecs;
	struct s3d_list claims;
	unsigned int nclaims;
	char holder[96];
} tier = {
	.queue = { &tier.queue, &tier.queue },
	.urgent = { &tier.urgent, &tier.urgent },
	.parked = { &tier.parked, &tier.parked },
	.recs = { &tier.recs, &tier.recs },
	.claims = { &tier.claims, &tier.claims },
};

static void lease_unpark_all(bool late);
static void recs_clear(void);

static void tier_clear(void)
{
	s3d_ctx_put(tier.ctx);
	tier.ctx = NULL;
	free(tier.bucket);
	tier.bucket = NULL;
	if (tier.secret)
		explicit_bzero(tier.secret, tier.secret_len);
	free(tier.secret);
	tier.secret = NULL;
	tier.on = false;
	tier.off = false;
	tier.same_told = false;
	tier.support = LEASE_UNKNOWN;
	tier.probe_after_ms = 0;
	tier.bare_if_match = false;
	lease_unpark_all(true);
	recs_clear();
	s3d_tier_stats.lease_support = 0;
}

/* Follow the configuration (a reload changes its generation). */
static void tier_sync(void)
{
	const struct s3d_conf *c;
	const struct s3d_conf_tier *tc;
	char host[64];
	unsigned int gen;
	int err;

	c = s3d_ctx_conf(&gen);
	if (tier.synced && gen == tier.gen)
		return;
	tier.synced = true;
	tier.gen = gen;
	tier_clear();
	if (!c || !c->tier.bucket)
		goto out;
	tc = &c->tier;
	tier.bucket = strdup(tc->bucket);
	if (tc->secret) {
		tier.secret = malloc(tc->secret_len);
		if (tier.secret)
			memcpy(tier.secret, tc->secret, tc->secret_len);
		tier.secret_len = tc->secret_len;
	}
	tier.ctx = s3d_ctx_get(tc->bucket, &err);
	if (!tier.bucket || !tier.ctx || (tc->secret && !tier.secret)) {
		s3d_err("tier s3://%s: cannot set it up (%s); reads go to origin",
			tc->bucket, strerror(tier.ctx ? ENOMEM : -err));
		tier_clear();
		goto out;
	}
	tier.block = (tc->block_kb ?: S3D_TIER_BLOCK_KB_DEFAULT) << 10;
	tier.put = tc->put != 0;
	tier.connect_ms = tc->connect_ms ?: S3D_TIER_CONNECT_MS_DEFAULT;
	tier.stall_s = tc->stall_s ?: S3D_TIER_STALL_DEFAULT;
	tier.queue_max = tc->queue ?: S3D_TIER_QUEUE_DEFAULT;
	s3d_tier_breaker_init(&tier.breaker, tc->breaker ?:
			      S3D_TIER_BREAKER_DEFAULT);
	tier.lease = tc->lease != 0;
	tier.lease_wait_ms = tc->lease_wait_ms ?: S3D_TIER_LEASE_WAIT_MS_DEFAULT;
	tier.lease_ttl_s = tc->lease_ttl_s ?: S3D_TIER_LEASE_TTL_DEFAULT;
	if (gethostname(host, sizeof(host)))
		strcpy(host, "?");
	host[sizeof(host) - 1] = '\0';
	snprintf(tier.holder, sizeof(tier.holder), "%s %d", host, (int)getpid());
	tier.on = true;
	s3d_info("tier s3://%s: blocks of %u KiB, %s, %s, connect timeout %u ms, stall timeout %u s, breaker after %u failures, %s",
		 tier.bucket, tier.block >> 10,
		 tier.put ? "puts what origin sends" : "read only (tier_put = false)",
		 tier.secret ? "blocks signed (tier_secret)" :
		 "blocks unsigned (no tier_secret: any writer of the bucket can poison them)",
		 tier.connect_ms, tier.stall_s, tier.breaker.threshold,
		 !tier.lease ? "no leases (tier_lease = false)" :
		 !tier.put ? "no leases (this node puts nothing)" :
		 "leases once the tier's conditional PUTs are probed");
out:
	s3d_tier_stats.on = tier.on;
	s3d_tier_stats.breaker = S3D_TIER_CLOSED;
}

/* 401/403: the tier refuses us; nothing will change that but a reload. */
static void tier_switch_off(const struct s3d_xfer *x)
{
	if (tier.off)
		return;
	tier.off = true;
	s3d_tier_stats.on = 0;
	s3d_err("tier s3://%s: %s %s answered HTTP %ld (not authorised): the tier is off until the configuration is reloaded; every read goes to origin",
		tier.bucket, x->what, x->key, x->status);
}

static bool tier_usable(void)
{
	return tier.on && !tier.off;
}

static void breaker_state(void)
{
	s3d_tier_stats.breaker = tier.breaker.state;
}

/* A tier request failed for @why: count it, and tell the breaker. */
static void tier_failed(const struct s3d_xfer *x, enum s3d_tier_err why)
{
	s3d_tier_stats.errors[why]++;
	if (why == S3D_TIER_ERR_AUTH) {
		tier_switch_off(x);
		return;
	}
	if (s3d_tier_breaker_fail(&tier.breaker, s3d_now_ms())) {
		s3d_tier_stats.breaker_opens++;
		s3d_warn("tier s3://%s: %s %s failed (%s); breaker open: reads go to origin, the tier is probed again in %llu ms",
			 tier.bucket, x->what, x->key,
			 x->cres != CURLE_OK ? x->errbuf : "an HTTP error",
			 (unsigned long long)tier.breaker.backoff_ms);
	}
	breaker_state();
}

static void put_pump(void);

static void tier_answered(void)
{
	breaker_state();
	if (!s3d_tier_breaker_ok(&tier.breaker))
		return;
	s3d_info("tier s3://%s: answering again; breaker closed",
		 tier.bucket);
	breaker_state();
	put_pump();	/* the puts that waited for it */
}

/* What went wrong with a request that got no usable answer; -1: none. */
static int tier_error_of(const struct s3d_xfer *x)
{
	switch (x->cres) {
	case CURLE_OK:
		break;
	case CURLE_COULDNT_CONNECT:
	case CURLE_COULDNT_RESOLVE_HOST:
		return S3D_TIER_ERR_CONNECT;
	case CURLE_OPERATION_TIMEDOUT:
		return S3D_TIER_ERR_TIMEOUT;
	case CURLE_WRITE_ERROR:
		return -1;	/* our own sink stopped it */
	default:
		return S3D_TIER_ERR_OTHER;
	}
	if (x->status == 401 || x->status == 403)
		return S3D_TIER_ERR_AUTH;
	if (x->status >= 500 || x->status == 429)
		return S3D_TIER_ERR_SERVER;
	return -1;
}

static void xfer_setup(struct s3d_xfer *x, int prio)
{
	x->prio = prio;
	x->once = true;
	x->connect_ms = tier.connect_ms;
	x->stall_s = tier.stall_s;
	x->stats = &s3d_tier_stats.req;
}

/* ---- write-behind ---- */

static void put_free(struct tier_put *d)
{
	free(d->path);
	free(d->etag);
	free(d);
}

static void put_op_free(struct tier_put_op *op)
{
	s3d_ctx_release(&op->x);
	s3d_ctx_put(op->ctx);
	free(op->buf);
	put_free(op->d);
	free(op);
	tier.puts--;
}

static int put_prepare(struct s3d_xfer *x)
{
	struct tier_put_op *op = s3d_container_of(x, struct tier_put_op, x);

	x->src.mem = op->buf;
	x->src.len = op->x.src.len;
	x->src.pos = 0;
	return s3d_s3_build(s3d_ctx_s3(op->ctx), "PUT", op->bucket, op->key,
			    NULL, 0, op->h, op->nh, time(NULL), &x->req);
}

/* The tier is full (a quota, no space): not an authorisation error. */
static bool put_full(struct s3d_xfer *x)
{
	static const char *const codes[] = {
		"QuotaExceeded", "XMinioStorageFull",
		"XMinioAdminBucketQuotaExceeded", "EntityTooLarge",
	};
	struct s3d_s3error e;
	size_t i;

	memset(&e, 0, sizeof(e));
	if (x->cres != CURLE_OK)
		return false;
	if (x->status == 507)
		return true;
	if (x->status < 400 || x->status >= 500 ||
	    s3d_xml_parse_error(s3d_buf_str(&x->resp), x->resp.len, &e))
		return false;
	for (i = 0; i < S3D_ARRAY_SIZE(codes); i++)
		if (!strcmp(e.code, codes[i]))
			return true;
	return false;
}

static void put_pause(const struct s3d_xfer *x)
{
	uint64_t now = s3d_now_ms();

	if (now >= tier.paused_until_ms)
		s3d_warn("tier s3://%s: PUT %s answered HTTP %ld: the tier is full; puts paused for %u s (reads go on)",
			 tier.bucket, x->key, x->status,
			 S3D_TIER_FULL_PAUSE_MS / 1000);
	tier.paused_until_ms = now + S3D_TIER_FULL_PAUSE_MS;
	s3d_tier_stats.puts_paused = 1;
}

static bool puts_paused(void)
{
	if (!tier.paused_until_ms)
		return false;
	if (s3d_now_ms() < tier.paused_until_ms)
		return true;
	tier.paused_until_ms = 0;
	s3d_tier_stats.puts_paused = 0;
	return false;
}

static int put_done(struct s3d_xfer *x)
{
	struct tier_put_op *op = s3d_container_of(x, struct tier_put_op, x);
	int why = tier_error_of(x);

	/*
	 * A put answered does not close the breaker nor reset its count:
	 * reads are what it protects, and a tier that takes PUTs but stalls
	 * GETs must still open it.
	 */
	if (s3d_xfer_ok(x)) {
		s3d_tier_stats.puts[op->d->heal ? S3D_TIER_PUT_HEALED :
				    S3D_TIER_PUT_STORED]++;
	} else if (x->cres == CURLE_OK && x->status == 412) {
		s3d_tier_stats.puts[S3D_TIER_PUT_EXISTS]++;
	} else if (put_full(x)) {
		s3d_tier_stats.puts[S3D_TIER_PUT_FAILED]++;
		put_pause(x);
	} else {
		s3d_tier_stats.puts[S3D_TIER_PUT_FAILED]++;
		s3d_dbg("tier PUT %s: %s, HTTP %ld", op->key,
			x->cres != CURLE_OK ? x->errbuf : "answered", x->status);
		if (why >= 0)
			tier_failed(x, why);
	}
	put_op_free(op);
	put_pump();
	return 0;
}

static const struct s3d_xfer_ops put_ops = {
	.prepare = put_prepare,
	.done = put_done,
};

/*
 * The block of @d, read back from its cache file: still the version and
 * the bytes origin sent? Return: the bytes (malloc'd), or NULL (drop it).
 */
static char *put_read_back(const struct tier_put *d, uint64_t off,
			   uint64_t len)
{
	char etag[S3D_ETAG_MAX + 2], sha[S3D_TIER_HEX + 1];
	struct s3d_mount *m = s3d_mount_get(d->mount_id);
	char *buf = NULL;
	off_t hole;
	ssize_t n;
	int fd = -1;

	if (!m)
		return NULL;
	if (s3d_store_open_file(m->rootfd, d->path, O_RDONLY, &fd) ||
	    s3d_store_get_etag(fd, etag, sizeof(etag)) ||
	    !s3d_etag_eq(etag, d->etag))
		goto out;
	/* A hole (evicted, never written) would read as zeros. */
	hole = lseek(fd, (off_t)off, SEEK_HOLE);
	if (hole < 0 || (uint64_t)hole < off + len)
		goto out;
	buf = malloc(len ?: 1);
	if (!buf)
		goto out;
	n = pread(fd, buf, len, (off_t)off);
	if (n < 0 || (uint64_t)n != len)
		goto drop;
	s3d_tier_sha256_hex(buf, len, sha);
	if (!strcmp(sha, d->sha))
		goto out;
drop:
	free(buf);
	buf = NULL;
out:
	if (fd >= 0)
		close(fd);
	s3d_mount_put(m);
	return buf;
}

static void put_start(struct tier_put *d)
{
	struct tier_put_op *op = calloc(1, sizeof(*op));
	uint64_t off, len;

	s3d_tier_block_span(&d->obj, d->index, &off, &len);
	if (!op || s3d_tier_block_key(&d->obj, d->index, op->key,
				      sizeof(op->key)))
		goto drop;
	op->buf = put_read_back(d, off, len);
	if (!op->buf ||
	    s3d_tier_meta_build(&d->obj, d->index, d->sha, tier.secret,
				tier.secret_len, &op->meta))
		goto drop;
	op->nh = s3d_tier_meta_kv(&op->meta, op->h);
	/* A block the tier had wrong is replaced; any other only created. */
	if (!d->heal)
		op->h[op->nh++] = (struct s3d_kv){ "If-None-Match", "*" };
	op->d = d;
	snprintf(op->bucket, sizeof(op->bucket), "%s", tier.bucket);
	op->ctx = tier.ctx;
	s3d_ctx_hold(op->ctx);
	s3d_xfer_init(&op->x, &put_ops, "PUT", op->key);
	xfer_setup(&op->x, d->prio);
	/* Another node first: a 412 before the body, not after it. */
	op->x.expect = !d->heal;
	op->x.src.len = len;
	tier.puts++;
	s3d_ctx_submit(op->ctx, &op->x);
	return;
drop:
	s3d_tier_stats.puts[S3D_TIER_PUT_DROPPED]++;
	if (op)
		free(op->buf);
	free(op);
	put_free(d);
}

/*
 * Start puts while there is room, the breaker is shut and the tier not
 * full (else they wait; the queue's bound drops what comes meanwhile). A tier
 * switched off or gone with a reload drops them all.
 */
static void put_pump(void)
{
	while (tier.queued &&
	       (!tier_usable() || (tier.puts < S3D_TIER_PUTS_MAX &&
				   tier.breaker.state == S3D_TIER_CLOSED &&
				   !puts_paused()))) {
		struct s3d_list *q = s3d_list_empty(&tier.urgent) ?
				     &tier.queue : &tier.urgent;
		struct tier_put *d;

		d = s3d_container_of(q->next, struct tier_put, node);
		s3d_list_del(&d->node);
		tier.queued--;
		s3d_tier_stats.queued = tier.queued;
		if (!tier_usable()) {
			s3d_tier_stats.puts[S3D_TIER_PUT_DROPPED]++;
			put_free(d);
			continue;
		}
		put_start(d);
	}
}

/*
 * Queue the put of @s. @urgent: a block of a stripe this node holds the
 * lease of: other nodes wait for it, so it goes first, in the FETCH's
 * class; any other in the lowest.
 */
static void put_queue(const struct s3d_tier_fetch *t,
		      const struct s3d_tier_seen *s, bool urgent)
{
	struct tier_put *d;

	if (tier.queued >= tier.queue_max) {
		s3d_tier_stats.puts[S3D_TIER_PUT_DROPPED]++;
		return;
	}
	d = calloc(1, sizeof(*d));
	if (d) {
		d->path = strdup(t->path);
		d->etag = strdup(t->etag);
	}
	if (!d || !d->path || !d->etag) {
		if (d)
			put_free(d);
		s3d_tier_stats.puts[S3D_TIER_PUT_DROPPED]++;
		return;
	}
	d->obj = t->obj;
	d->index = s->index;
	memcpy(d->sha, s->sha, sizeof(d->sha));
	d->heal = s->index == t->heal;
	d->prio = urgent ? t->prio : S3D_PRIO_ASYNC;
	d->mount_id = t->mount_id;
	s3d_list_add_tail(&d->node, urgent ? &tier.urgent : &tier.queue);
	tier.queued++;
	s3d_tier_stats.queued = tier.queued;
}

/* ---- leases ---- */

static void read_next(struct s3d_tier_fetch *t);
static void read_end(struct s3d_tier_fetch *t);

/* Forget the leases remembered past their time (oldest first). */
static void recs_prune(uint64_t now)
{
	while (!s3d_list_empty(&tier.recs)) {
		struct tier_lease_rec *r = s3d_container_of(tier.recs.next,
							    struct tier_lease_rec,
							    node);

		if (r->until_ms > now)
			break;
		s3d_list_del(&r->node);
		tier.nrecs--;
		free(r);
	}
}

static void recs_clear(void)
{
	recs_prune(UINT64_MAX);
}

static struct tier_lease_rec *rec_find(const char *key)
{
	struct s3d_list *pos;

	recs_prune(s3d_now_ms());
	for (pos = tier.recs.next; pos != &tier.recs; pos = pos->next) {
		struct tier_lease_rec *r = s3d_container_of(pos,
							    struct tier_lease_rec,
							    node);

		if (!strcmp(r->key, key))
			return r;
	}
	return NULL;
}

/* Remember the lease @key as this node's, or (@waited) as waited out. */
static void rec_add(const char *key, bool waited)
{
	struct tier_lease_rec *r = rec_find(key);

	if (r) {
		s3d_list_del(&r->node);
	} else {
		if (tier.nrecs >= S3D_TIER_RECS_MAX) {
			r = s3d_container_of(tier.recs.next,
					     struct tier_lease_rec, node);
			s3d_list_del(&r->node);
			tier.nrecs--;
			free(r);
		}
		r = calloc(1, sizeof(*r));
		if (!r)
			return;
		tier.nrecs++;
	}
	snprintf(r->key, sizeof(r->key), "%s", key);
	r->waited = waited;
	r->until_ms = s3d_now_ms() + tier.lease_ttl_s * 1000ULL;
	s3d_list_add_tail(&r->node, &tier.recs);
}

/* Leases are for nodes that put what they fetch, into a usable tier. */
static bool leases_wanted(void)
{
	return tier.lease && tier.put && tier_usable();
}

static void probe_setup(struct s3d_xfer *x)
{
	xfer_setup(x, x->prio);
}

/*
 * The parked FETCHes go on: the probe answered, or (@late) the tier
 * changed under them, and they go without a lease.
 */
static void lease_unpark_all(bool late)
{
	while (!s3d_list_empty(&tier.parked)) {
		struct s3d_tier_fetch *t = s3d_container_of(tier.parked.next,
							    struct s3d_tier_fetch,
							    parked);

		s3d_list_del(&t->parked);
		t->is_parked = false;
		t->probe_late = late;
		t->twhat = TW_MISS;
		s3d_timer_arm(&t->timer, 0);
	}
}

static void probe_verdict(void *arg, int verdict, const struct s3d_caps *caps,
			  const char *why)
{
	if ((unsigned int)(uintptr_t)arg != tier.gen ||
	    tier.support != LEASE_PROBING)
		return;		/* a probe of a tier since reconfigured */
	if (verdict > 0) {
		tier.support = LEASE_YES;
		tier.bare_if_match = caps->bare_if_match;
		s3d_info("tier s3://%s: conditional PUTs honoured: leases on (a node waits %u ms at most for another's blocks; a lease is stale after %u s)",
			 tier.bucket, tier.lease_wait_ms, tier.lease_ttl_s);
	} else if (!verdict) {
		tier.support = LEASE_NO;
		s3d_warn("tier s3://%s: %s: no leases until the configuration is reloaded (nodes that miss the same blocks at once each fetch them from origin)",
			 tier.bucket, why);
	} else {
		tier.support = LEASE_UNKNOWN;
		tier.probe_after_ms = s3d_now_ms() + S3D_TIER_PROBE_AGAIN_MS;
		s3d_warn("tier s3://%s: its conditional PUTs could not be probed: no leases for %u s",
			 tier.bucket, S3D_TIER_PROBE_AGAIN_MS / 1000);
	}
	s3d_tier_stats.lease_support = tier.support == LEASE_YES ? 1 :
				       tier.support == LEASE_NO ? 2 : 0;
	lease_unpark_all(false);
}

/* Probe the tier's conditional PUTs (caps.c), once, before any lease. */
static void lease_probe_maybe(void)
{
	if (!leases_wanted() || tier.support != LEASE_UNKNOWN ||
	    s3d_now_ms() < tier.probe_after_ms)
		return;
	tier.support = LEASE_PROBING;
	if (s3d_caps_probe_create(tier.ctx, tier.bucket, S3D_TIER_PREFIX,
				  probe_setup, probe_verdict,
				  (void *)(uintptr_t)tier.gen)) {
		tier.support = LEASE_UNKNOWN;
		tier.probe_after_ms = s3d_now_ms() + S3D_TIER_PROBE_AGAIN_MS;
	}
}

/*
 * The FETCH waits on leases (@on: a lease request, a poll, the probe's
 * verdict) or no more: its progress reports go on meanwhile, as for a
 * FETCH waiting for a slot, so that the kernel waits too (the wait is
 * bounded by tier_lease_wait_ms, below its fetch_timeout).
 */
static void lease_busy(struct s3d_tier_fetch *t, bool on)
{
	if (t->busy == on)
		return;
	t->busy = on;
	if (t->ops->waiting)
		t->ops->waiting(t->arg, on);
}

/* Wait for the probe's verdict, tier_connect_timeout_ms at most. */
static bool lease_park(struct s3d_tier_fetch *t)
{
	lease_probe_maybe();
	if (tier.support != LEASE_PROBING)
		return false;
	s3d_list_add_tail(&t->parked, &tier.parked);
	t->is_parked = true;
	lease_busy(t, true);
	t->twhat = TW_PARK;
	s3d_timer_arm(&t->timer, tier.connect_ms);
	return true;
}

/* What this node knows of the lease t->lkey before asking the tier. */
static enum s3d_tier_lease_mode lease_mode(const struct s3d_tier_fetch *t)
{
	const struct tier_lease_rec *r;

	if (!leases_wanted() || t->probe_late ||
	    strcmp(t->bucket, tier.bucket) ||
	    tier.breaker.state != S3D_TIER_CLOSED || puts_paused())
		return S3D_TIER_LM_OFF;
	if (tier.support == LEASE_NO)
		return S3D_TIER_LM_UNSUPPORTED;
	if (tier.support != LEASE_YES)
		return S3D_TIER_LM_OFF;
	r = rec_find(t->lkey);
	if (!r)
		return S3D_TIER_LM_ON;
	return r->waited ? S3D_TIER_LM_WAITED : S3D_TIER_LM_OWN;
}

/*
 * A lease's body, new for each PUT: its holder and 16 random bytes, so
 * that its ETag names this write alone (If-Match on a takeover then
 * replaces only the lease seen, not one another node has just taken).
 */
static void lease_body(char out[S3D_TIER_LEASE_BODY])
{
	unsigned char rnd[16];
	char hex[2 * sizeof(rnd) + 1];
	unsigned int i;

	if (RAND_bytes(rnd, sizeof(rnd)) != 1)
		for (i = 0; i < sizeof(rnd); i++)
			rnd[i] = (unsigned char)random();
	s3d_hex(rnd, sizeof(rnd), hex);
	snprintf(out, S3D_TIER_LEASE_BODY, "%s %s\n", tier.holder, hex);
}

/* A lease PUT's headers: created (@match NULL) or taken over. */
static size_t lease_headers(struct s3d_kv *h, const char *blocks,
			    const char *match)
{
	h[0] = match ? (struct s3d_kv){ "If-Match", match } :
		       (struct s3d_kv){ "If-None-Match", "*" };
	h[1] = (struct s3d_kv){ S3D_TIER_LEASE_BLOCKS, blocks };
	h[2] = (struct s3d_kv){ S3D_TIER_LEASE_HOLDER, tier.holder };
	return 3;
}

/*
 * A lease request's answer: its HTTP status, or 0 when it got none that
 * counts (refused, timed out, 5xx, 401/403: told the breaker, or the tier
 * switched off; a full tier: puts pause).
 */
static long lease_status(struct s3d_xfer *x)
{
	int why = tier_error_of(x);

	if (!strcmp(x->what, "PUT") && put_full(x)) {
		s3d_tier_stats.errors[S3D_TIER_ERR_OTHER]++;
		put_pause(x);
		return 0;
	}
	if (why >= 0) {
		tier_failed(x, (enum s3d_tier_err)why);
		return 0;
	}
	if (x->cres != CURLE_OK) {
		s3d_tier_stats.errors[S3D_TIER_ERR_OTHER]++;
		return 0;
	}
	return x->status;
}

/* Header @name of @b ("name\0value\0" ...), or NULL. */
static const char *hdr_of(const struct s3d_buf *b, const char *name)
{
	const char *p = b->p, *end = b->p + b->len, *n;

	while (p && p < end) {
		n = p;
		p += strnlen(p, (size_t)(end - p)) + 1;
		if (p >= end)
			break;
		if (!strcasecmp(n, name) && memchr(p, '\0', (size_t)(end - p)))
			return p;
		p += strnlen(p, (size_t)(end - p)) + 1;
	}
	return NULL;
}

/* What the HEAD @x of t->lkey said (@x NULL: nothing). */
static void lease_seen(struct s3d_tier_fetch *t, const struct s3d_xfer *x,
		       long status, struct s3d_tier_lease_seen *s)
{
	const char *v;
	time_t d;

	memset(s, 0, sizeof(*s));
	s->status = status;
	s3d_tier_lease_blocks(&t->obj, t->lease.stripe, NULL, &s->first,
			      &s->last);
	if (!x || status < 200 || status >= 300)
		return;
	v = hdr_of(&t->hdrs, "Date");
	d = v ? curl_getdate(v, NULL) : (time_t)-1;
	s->date = d == (time_t)-1 ? 0 : (int64_t)d;
	/* Without an ETag it could not be taken over: never stale. */
	s->modified = x->has_etag && x->etag[0] ? (int64_t)x->last_modified : 0;
	s3d_tier_lease_blocks(&t->obj, t->lease.stripe,
			      hdr_of(&t->hdrs, S3D_TIER_LEASE_BLOCKS),
			      &s->first, &s->last);
	snprintf(t->letag, sizeof(t->letag), "%s", x->etag);
	if (tier.bare_if_match)
		s3d_etag_bare(t->letag, t->lmatch, sizeof(t->lmatch));
	else
		snprintf(t->lmatch, sizeof(t->lmatch), "%s", t->letag);
}

static int lease_prepare(struct s3d_xfer *x)
{
	struct s3d_tier_fetch *t = s3d_container_of(x, struct s3d_tier_fetch, x);
	size_t n;

	if (t->lease.state == S3D_TIER_LS_LOOK) {
		s3d_buf_free(&t->hdrs);
		s3d_buf_init(&t->hdrs, 64 << 10);
		x->hdrs = &t->hdrs;
		return s3d_s3_build(s3d_ctx_s3(t->ctx), "HEAD", t->bucket,
				    t->lkey, NULL, 0, NULL, 0, time(NULL),
				    &x->req);
	}
	n = lease_headers(t->lh, t->lblocks, t->lease.state ==
			  S3D_TIER_LS_TAKE ? t->lmatch : NULL);
	lease_body(t->lbody);
	x->src.mem = t->lbody;
	x->src.len = strlen(t->lbody);
	x->src.pos = 0;
	return s3d_s3_build(s3d_ctx_s3(t->ctx), "PUT", t->bucket, t->lkey,
			    NULL, 0, t->lh, n, time(NULL), &x->req);
}

static void lease_answered(struct s3d_tier_fetch *t, long status,
			   const struct s3d_xfer *x);

static int lease_done(struct s3d_xfer *x)
{
	struct s3d_tier_fetch *t = s3d_container_of(x, struct s3d_tier_fetch, x);
	long status = lease_status(x);

	s3d_ctx_release(x);
	lease_answered(t, status, x);
	return 0;
}

static const struct s3d_xfer_ops lease_ops = {
	.prepare = lease_prepare,
	.done = lease_done,
};

/* Send the request the lease's state asks for. */
static void lease_submit(struct s3d_tier_fetch *t)
{
	/* Not to be asked now (switched off, breaker open): no lease. */
	if (!tier_usable() || tier.breaker.state != S3D_TIER_CLOSED) {
		lease_answered(t, 0, NULL);
		return;
	}
	s3d_xfer_init(&t->x, &lease_ops, t->lease.state == S3D_TIER_LS_LOOK ?
		      "HEAD" : "PUT", t->lkey);
	xfer_setup(&t->x, t->prio);
	s3d_ctx_submit(t->ctx, &t->x);
}

static int claim_prepare(struct s3d_xfer *x)
{
	struct tier_claim *c = s3d_container_of(x, struct tier_claim, x);
	size_t n = lease_headers(c->h, c->blocks, NULL);

	lease_body(c->body);
	x->src.mem = c->body;
	x->src.len = strlen(c->body);
	x->src.pos = 0;
	return s3d_s3_build(s3d_ctx_s3(c->ctx), "PUT", c->bucket, c->key,
			    NULL, 0, c->h, n, time(NULL), &x->req);
}

static int claim_done(struct s3d_xfer *x)
{
	struct tier_claim *c = s3d_container_of(x, struct tier_claim, x);
	bool same = tier.on && !strcmp(c->bucket, tier.bucket);
	long status = lease_status(x);

	s3d_ctx_release(x);
	s3d_list_del(&c->node);
	tier.nclaims--;
	if (status >= 200 && status < 300) {
		if (same)
			rec_add(c->key, false);
		s3d_tier_stats.leases[S3D_TIER_LEASE_WON]++;
	} else if (status == 412 || status == 409) {
		/*
		 * Another node fetches it too: so be it, no wait; nor another
		 * claim of it (another 412) until the TTL.
		 */
		if (same)
			rec_add(c->key, true);
		s3d_tier_stats.leases[S3D_TIER_LEASE_CLAIM_LOST]++;
	} else {
		s3d_tier_stats.leases[S3D_TIER_LEASE_FAILED]++;
	}
	/* Its FETCH's blocks of the stripe waited for this answer. */
	if (c->t)
		s3d_tier_fetch_written(c->t, c->t->written);
	s3d_ctx_put(c->ctx);
	free(c);
	return 0;
}

/* The claim in flight of the lease @key, or NULL. */
static struct tier_claim *claim_find(const char *key)
{
	struct s3d_list *pos;

	for (pos = tier.claims.next; pos != &tier.claims; pos = pos->next) {
		struct tier_claim *c = s3d_container_of(pos, struct tier_claim,
							node);

		if (!strcmp(c->key, key))
			return c;
	}
	return NULL;
}

static const struct s3d_xfer_ops claim_ops = {
	.prepare = claim_prepare,
	.done = claim_done,
};

/*
 * Claim the lease of @stripe, whose blocks this FETCH brings whole up to
 * block @last (the stripe's first is after the range's start).
 */
static void lease_claim(struct s3d_tier_fetch *t, uint64_t stripe,
			uint64_t last)
{
	uint64_t first, slast;
	struct tier_claim *c;

	if (tier.nclaims >= S3D_TIER_CLAIMS_FLIGHT ||
	    !s3d_tier_stripe_blocks(&t->obj, stripe, &first, &slast) ||
	    first > last)
		return;
	c = calloc(1, sizeof(*c));
	if (!c || s3d_tier_lease_key(&t->obj, stripe, c->key, sizeof(c->key)) ||
	    rec_find(c->key) || claim_find(c->key)) {
		free(c);
		return;
	}
	snprintf(c->blocks, sizeof(c->blocks), "%" PRIu64 "-%" PRIu64, first,
		 S3D_MIN(slast, last));
	snprintf(c->bucket, sizeof(c->bucket), "%s", t->bucket);
	c->t = t;
	c->ctx = t->ctx;
	s3d_ctx_hold(c->ctx);
	s3d_list_add_tail(&c->node, &tier.claims);
	tier.nclaims++;
	s3d_xfer_init(&c->x, &claim_ops, "PUT", c->key);
	xfer_setup(&c->x, t->prio);
	s3d_ctx_submit(c->ctx, &c->x);
}

/*
 * This node holds the lease of the stripe t->next is in: origin sends the
 * rest of the range, so the later stripes' leases are claimed too (no
 * wait for their answers: a claim lost means two nodes fetch a stripe),
 * S3D_TIER_CLAIMS_MAX at most, for the blocks the FETCH brings whole.
 */
static void lease_hold(struct s3d_tier_fetch *t)
{
	uint64_t first, last, s, top;

	if (!rec_find(t->lkey))
		rec_add(t->lkey, false);
	t->held = t->lease.stripe + 1;
	if (!tier_usable() || tier.breaker.state != S3D_TIER_CLOSED ||
	    !s3d_tier_whole_blocks_of(&t->obj, t->start, t->end, &first,
				      &last))
		return;
	top = S3D_MIN(s3d_tier_stripe_of(&t->obj, last),
		      t->lease.stripe + S3D_TIER_CLAIMS_MAX);
	for (s = t->lease.stripe + 1; s <= top; s++)
		lease_claim(t, s, last);
}

/* Do what the lease's state machine says. */
static void lease_act(struct s3d_tier_fetch *t, enum s3d_tier_lease_act act,
		      uint32_t delay_ms)
{
	if (t->lease.gave_up) {
		/* This node's later FETCHes of the stripe do not wait again. */
		rec_add(t->lkey, true);
		t->lease.gave_up = false;
	}
	switch (act) {
	case S3D_TIER_LA_CREATE:
	case S3D_TIER_LA_LOOK:
	case S3D_TIER_LA_TAKE:
		lease_busy(t, true);
		lease_submit(t);
		return;
	case S3D_TIER_LA_POLL:
		lease_busy(t, true);
		t->twhat = TW_POLL;
		s3d_timer_arm(&t->timer, delay_ms);
		return;
	default:
		if (t->lease.state == S3D_TIER_LS_HELD)
			lease_hold(t);
		read_end(t);
		return;
	}
}

/* A lease request answered @status (0: none; @x NULL: none sent). */
static void lease_answered(struct s3d_tier_fetch *t, long status,
			   const struct s3d_xfer *x)
{
	struct s3d_tier_lease_seen seen;
	enum s3d_tier_lease_act act;
	uint32_t delay = 0;

	switch (t->lease.state) {
	case S3D_TIER_LS_CREATE:
		act = s3d_tier_lease_created(&t->lease, status, s3d_now_ms());
		break;
	case S3D_TIER_LS_TAKE:
		act = s3d_tier_lease_taken(&t->lease, status, s3d_now_ms());
		break;
	default:
		lease_seen(t, x, status, &seen);
		act = s3d_tier_lease_looked(&t->lease, &seen, t->next,
					    s3d_now_ms(), &delay);
		break;
	}
	lease_act(t, act, delay);
}

/* The tier lacks block t->next: its stripe's lease decides what next. */
static void lease_miss(struct s3d_tier_fetch *t)
{
	uint64_t stripe = s3d_tier_stripe_of(&t->obj, t->next);
	enum s3d_tier_lease_mode mode = S3D_TIER_LM_OFF;
	uint64_t first, last, sfirst, slast;
	enum s3d_tier_lease_act act;
	uint32_t delay = 0;

	/*
	 * A stripe not waited for. A lease promises blocks its holder puts:
	 * those its FETCH brings whole; for a block reaching out of the
	 * range, none is taken.
	 */
	if ((t->lease.state != S3D_TIER_LS_WAIT ||
	     t->lease.stripe != stripe) &&
	    s3d_tier_whole_blocks_of(&t->obj, t->start, t->end, &first,
				     &last) &&
	    t->next >= first && t->next <= last &&
	    !s3d_tier_lease_key(&t->obj, stripe, t->lkey, sizeof(t->lkey)) &&
	    s3d_tier_stripe_blocks(&t->obj, stripe, &sfirst, &slast)) {
		/* The probe's verdict first. */
		if (leases_wanted() && !t->probe_late &&
		    (tier.support == LEASE_UNKNOWN ||
		     tier.support == LEASE_PROBING) && lease_park(t))
			return;
		snprintf(t->lblocks, sizeof(t->lblocks), "%" PRIu64 "-%" PRIu64,
			 t->next, S3D_MIN(slast, last));
		mode = lease_mode(t);
	}
	act = s3d_tier_lease_miss(&t->lease, stripe, t->next, mode,
				  s3d_now_ms(), &delay);
	lease_act(t, act, delay);
}

static void lease_timer(struct s3d_timer *tm)
{
	struct s3d_tier_fetch *t = s3d_container_of(tm, struct s3d_tier_fetch,
						    timer);

	switch (t->twhat) {
	case TW_PARK:
		/* No verdict in time: this FETCH goes without a lease. */
		s3d_list_del(&t->parked);
		t->is_parked = false;
		t->probe_late = true;
		lease_miss(t);
		return;
	case TW_MISS:
		lease_miss(t);
		return;
	default:
		read_next(t);
		return;
	}
}

/* Whose is the lease of the stripe of a block, as this node knows? */
enum {
	HELD_NO,	/* another node's, or nobody's */
	HELD_YES,	/* this node's */
	HELD_ASKED,	/* claimed, not answered yet */
};

/* Does this node hold the lease of the stripe block @index is in? */
static int lease_held(struct s3d_tier_fetch *t, uint64_t index)
{
	uint64_t stripe = s3d_tier_stripe_of(&t->obj, index);
	const struct tier_lease_rec *r;
	char key[S3D_TIER_KEY_MAX];

	if (t->held == stripe + 1)
		return HELD_YES;
	if (!tier.lease ||
	    s3d_tier_lease_key(&t->obj, stripe, key, sizeof(key)))
		return HELD_NO;
	r = rec_find(key);
	if (!r)
		return claim_find(key) ? HELD_ASKED : HELD_NO;
	if (r->waited)
		return HELD_NO;
	t->held = stripe + 1;
	return HELD_YES;
}

/* ---- read-through ---- */

static void read_end(struct s3d_tier_fetch *t)
{
	s3d_timer_cancel(&t->timer);
	lease_busy(t, false);
	s3d_tier_lease_end(&t->lease, t->upto >= t->end, s3d_now_ms());
	free(t->buf);
	t->buf = NULL;
	s3d_buf_free(&t->hdrs);
	s3d_ctx_put(t->ctx);
	t->ctx = NULL;
	t->reading = false;
	t->ops->done(t->arg, t->upto);
}

static int get_prepare(struct s3d_xfer *x)
{
	struct s3d_tier_fetch *t = s3d_container_of(x, struct s3d_tier_fetch, x);
	uint64_t off, len;

	s3d_tier_block_span(&t->obj, t->next, &off, &len);
	free(t->buf);
	/* Room for the O_DIRECT write of a short last block, zero-filled. */
	if (posix_memalign((void **)&t->buf, TIER_ALIGN,
			   (len + TIER_ALIGN - 1) / TIER_ALIGN * TIER_ALIGN)) {
		t->buf = NULL;
		return -ENOMEM;
	}
	t->fill = 0;
	t->too_long = false;
	s3d_buf_free(&t->hdrs);
	s3d_buf_init(&t->hdrs, 64 << 10);
	x->hdrs = &t->hdrs;
	return s3d_s3_build(s3d_ctx_s3(t->ctx), "GET", t->bucket, t->key,
			    NULL, 0, NULL, 0, time(NULL), &x->req);
}

static size_t get_body(struct s3d_xfer *x, const char *p, size_t n)
{
	struct s3d_tier_fetch *t = s3d_container_of(x, struct s3d_tier_fetch, x);
	uint64_t off, len;

	s3d_tier_block_span(&t->obj, t->next, &off, &len);
	if (n > len - t->fill) {
		t->too_long = true;
		return 0;
	}
	memcpy(t->buf + t->fill, p, n);
	t->fill += n;
	return n;
}

/* The block came: use it if it is what this node would have put. */
static bool get_use(struct s3d_tier_fetch *t, struct s3d_xfer *x)
{
	struct s3d_tier_meta got;
	enum s3d_tier_bad bad;
	uint64_t off, len;
	int err;

	s3d_tier_block_span(&t->obj, t->next, &off, &len);
	s3d_tier_meta_parse(t->hdrs.p, t->hdrs.len, &got);
	bad = t->too_long ? S3D_TIER_BAD_LENGTH :
	      s3d_tier_check(&t->obj, t->next, x->status, x->content_length,
			     &got, t->buf, t->fill, tier.secret,
			     tier.secret_len);
	if (bad != S3D_TIER_OK) {
		s3d_tier_stats.invalid[bad]++;
		t->heal = t->next;
		s3d_warn("tier s3://%s/%s: block refused (%s); origin sends it and it is put back",
			 tier.bucket, t->key, s3d_tier_bad_name(bad));
		return false;
	}
	memset(t->buf + len, 0,
	       (len + TIER_ALIGN - 1) / TIER_ALIGN * TIER_ALIGN - len);
	err = t->ops->deliver(t->arg, off, t->buf, len);
	if (err)
		return false;	/* origin's GET meets the same and says so */
	s3d_tier_stats.hits++;
	s3d_tier_stats.hit_bytes += len;
	s3d_tier_lease_served(&t->lease, s3d_now_ms());
	t->upto = S3D_MIN(off + len, t->end);
	t->next++;
	return true;
}

static int get_done(struct s3d_xfer *x)
{
	struct s3d_tier_fetch *t = s3d_container_of(x, struct s3d_tier_fetch, x);
	int why = tier_error_of(x);
	bool more = false;
	/* For a block another node's lease promised: a poll, no new miss. */
	bool poll = t->lease.state == S3D_TIER_LS_WAIT &&
		    s3d_tier_stripe_of(&t->obj, t->next) == t->lease.stripe;

	s3d_ctx_release(x);
	if (poll)
		s3d_tier_stats.lease_polls++;
	if (why >= 0) {
		s3d_dbg("tier GET %s: %s, HTTP %ld", t->key,
			x->cres != CURLE_OK ? x->errbuf : "answered", x->status);
		tier_failed(x, (enum s3d_tier_err)why);
	} else if (x->cres == CURLE_OK && x->status == 404) {
		if (!poll)
			s3d_tier_stats.misses++;
		tier_answered();
		free(t->buf);
		t->buf = NULL;
		lease_miss(t);
		return 0;
	} else if ((x->cres == CURLE_OK || t->too_long) &&
		   x->status >= 200 && x->status < 300) {
		tier_answered();
		more = get_use(t, x);
		/* Not held while the next block waits for a slot. */
		free(t->buf);
		t->buf = NULL;
	} else {
		/* Another answer (400, 412, ...): not a block, not an outage. */
		s3d_tier_stats.errors[S3D_TIER_ERR_OTHER]++;
		tier_answered();
	}
	if (more)
		read_next(t);
	else
		read_end(t);
	return 0;
}

static const struct s3d_xfer_ops get_ops = {
	.prepare = get_prepare,
	.body = get_body,
	.done = get_done,
};

/* Ask for the next block of the range, or end the tier's part. */
static void read_next(struct s3d_tier_fetch *t)
{
	uint64_t first, last;

	if (!s3d_tier_blocks_of(&t->obj, t->start, t->end, &first, &last) ||
	    t->next > last || t->upto >= t->end || !tier_usable() ||
	    s3d_tier_block_key(&t->obj, t->next, t->key, sizeof(t->key))) {
		read_end(t);
		return;
	}
	if (!s3d_tier_breaker_allow(&tier.breaker, s3d_now_ms())) {
		s3d_tier_stats.skipped++;
		read_end(t);
		return;
	}
	breaker_state();
	s3d_xfer_init(&t->x, &get_ops, "GET", t->key);
	xfer_setup(&t->x, t->prio);
	s3d_ctx_submit(t->ctx, &t->x);
}

/* The tier's credentials are resolved (or failed): go on. */
static void read_ready(void *arg, struct s3d_ctx *c, int err)
{
	struct s3d_tier_fetch *t = arg;

	(void)c;
	if (err) {
		read_end(t);
		return;
	}
	lease_probe_maybe();
	read_next(t);
}

/**
 * s3d_tier_fetch_start() - a FETCH starts: the tier's part first
 * @t: the FETCH's tier state, zeroed
 * @w: what it fills
 * @ops: how it takes the tier's blocks
 * @arg: their argument
 *
 * Names the object's blocks (for the write-behind too), then, if the tier
 * is usable and the breaker lets it, reads the blocks covering the range.
 *
 * Return: true: @ops->done will say how far the tier got (later, from the
 * loop); false: no tier read, origin sends the whole range.
 */
bool s3d_tier_fetch_start(struct s3d_tier_fetch *t,
			  const struct s3d_tier_want *w,
			  const struct s3d_tier_fetch_ops *ops, void *arg)
{
	struct s3d_s3 *o = s3d_ctx_s3(w->origin);
	char endpoint[512];
	uint64_t last;
	int err;

	tier_sync();
	t->heal = UINT64_MAX;
	s3d_list_init(&t->timer.node);
	t->timer.fn = lease_timer;
	s3d_list_init(&t->parked);
	s3d_tier_lease_init(&t->lease, tier.lease_wait_ms, tier.lease_ttl_s,
			    s3d_tier_stats.leases);
	if (!tier_usable() || w->start >= w->end)
		return false;
	/* Blocks in the origin bucket itself would show in its listings. */
	if (w->origin == tier.ctx && !strcmp(w->bucket, tier.bucket)) {
		if (!tier.same_told)
			s3d_err("tier s3://%s: tier_bucket is this mount's own bucket; its reads do not use the tier",
				tier.bucket);
		tier.same_told = true;
		return false;
	}
	snprintf(t->bucket, sizeof(t->bucket), "%s", tier.bucket);
	snprintf(endpoint, sizeof(endpoint), "%s://%s", o->scheme,
		 o->authority);
	if (s3d_tier_obj_init(&t->obj, endpoint, w->bucket, w->key, w->etag,
			      w->size, tier.block))
		return false;
	t->etag = strdup(w->etag);
	t->path = strdup(w->path);
	if (!t->etag || !t->path)
		return false;
	t->active = true;
	t->mount_id = w->mount_id;
	t->start = w->start;
	t->end = w->end;
	t->upto = w->start;
	s3d_tier_blocks_of(&t->obj, w->start, w->end, &t->next, &last);
	t->ops = ops;
	t->arg = arg;
	t->prio = w->prio;
	t->ctx = tier.ctx;
	s3d_ctx_hold(t->ctx);
	t->reading = true;
	err = s3d_ctx_ready(t->ctx, read_ready, t);
	if (err == 1)
		return true;
	if (err) {
		t->reading = false;
		s3d_ctx_put(t->ctx);
		t->ctx = NULL;
		s3d_tier_stats.errors[S3D_TIER_ERR_AUTH]++;
		return false;
	}
	lease_probe_maybe();
	read_next(t);
	return true;
}

/* Record block @index, hashed whole to @sha, for the write-behind. */
static void seen_add(struct s3d_tier_fetch *t, uint64_t index,
		     const char *sha)
{
	struct s3d_tier_seen *n;

	if (t->nseen == t->capseen) {
		size_t cap = t->capseen ? t->capseen * 2 : 8;

		/* More than the queue takes would be dropped anyway. */
		if (t->nseen >= tier.queue_max)
			return;
		n = realloc(t->seen, cap * sizeof(*n));
		if (!n)
			return;
		t->seen = n;
		t->capseen = cap;
	}
	t->seen[t->nseen].index = index;
	memcpy(t->seen[t->nseen].sha, sha, S3D_TIER_HEX + 1);
	t->seen[t->nseen].queued = false;
	t->nseen++;
}

/**
 * s3d_tier_fetch_feed() - origin bytes of the object pass, to be written
 * @t: the FETCH's tier state
 * @pos: the object offset of @p
 * @p: the bytes
 * @n: how many
 *
 * Blocks seen whole, from their first byte to their last in one run, are
 * hashed (a retry resuming inside a block skips to the next one).
 */
void s3d_tier_fetch_feed(struct s3d_tier_fetch *t, uint64_t pos,
			 const char *p, size_t n)
{
	uint64_t off, len, c;
	unsigned char d[32];
	char sha[S3D_TIER_HEX + 1];
	unsigned int dn;

	if (!t->active || !tier.put)
		return;
	while (n) {
		if (!t->hashing || pos != t->hpos) {
			t->hashing = false;
			if (pos % t->obj.block) {
				c = S3D_MIN((uint64_t)n, t->obj.block -
					    pos % t->obj.block);
				pos += c;
				p += c;
				n -= c;
				continue;
			}
			if (!t->md)
				t->md = EVP_MD_CTX_new();
			if (!t->md || !EVP_DigestInit_ex(t->md, EVP_sha256(),
							 NULL))
				return;
			t->hashing = true;
		}
		s3d_tier_block_span(&t->obj, pos / t->obj.block, &off, &len);
		if (!len)
			return;		/* past the object: cannot be */
		c = S3D_MIN((uint64_t)n, off + len - pos);
		EVP_DigestUpdate(t->md, p, c);
		pos += c;
		p += c;
		n -= c;
		t->hpos = pos;
		if (pos == off + len) {
			t->hashing = false;
			if (EVP_DigestFinal_ex(t->md, d, &dn)) {
				for (dn = 0; dn < 32; dn++)
					sprintf(sha + 2 * dn, "%02x", d[dn]);
				seen_add(t, off / t->obj.block, sha);
			}
		}
	}
}

/**
 * s3d_tier_fetch_written() - origin's bytes are in the cache file
 * @t: the FETCH's tier state
 * @upto: every byte the FETCH's GET sent below it is written
 *
 * The blocks seen whole of stripes this node holds the lease of are put
 * now, before any other put: other nodes wait for them. Those of a stripe
 * whose claim is not answered yet wait for the answer (it calls this
 * again).
 */
void s3d_tier_fetch_written(struct s3d_tier_fetch *t, uint64_t upto)
{
	uint64_t off, len;
	bool any = false;
	int held;

	t->written = S3D_MAX(t->written, upto);
	if (!t->active || !tier.put || !tier_usable())
		return;
	for (; t->scan < t->nseen; t->scan++) {
		struct s3d_tier_seen *s = &t->seen[t->scan];

		s3d_tier_block_span(&t->obj, s->index, &off, &len);
		if (off + len > t->written)
			break;
		held = lease_held(t, s->index);
		if (held == HELD_ASKED)
			break;
		if (held == HELD_NO)
			continue;
		put_queue(t, s, true);
		s->queued = true;
		any = true;
	}
	if (any)
		put_pump();
}

/**
 * s3d_tier_fetch_end() - the FETCH is over
 * @t: its tier state (the tier's part is over, if it had one)
 * @ok: it succeeded: the blocks origin sent whole are queued to be put
 */
void s3d_tier_fetch_end(struct s3d_tier_fetch *t, bool ok)
{
	struct s3d_list *pos;
	size_t i;

	s3d_timer_cancel(&t->timer);
	if (t->is_parked) {
		s3d_list_del(&t->parked);
		t->is_parked = false;
	}
	/* Its claims' answers come to nobody. */
	for (pos = tier.claims.next; pos != &tier.claims; pos = pos->next) {
		struct tier_claim *c = s3d_container_of(pos, struct tier_claim,
							node);

		if (c->t == t)
			c->t = NULL;
	}
	if (ok && t->active && tier.put && tier_usable()) {
		for (i = 0; i < t->nseen; i++)
			if (!t->seen[i].queued)
				put_queue(t, &t->seen[i],
					  lease_held(t, t->seen[i].index) ==
					  HELD_YES);
		put_pump();
	}
	EVP_MD_CTX_free(t->md);
	t->md = NULL;
	free(t->seen);
	t->seen = NULL;
	t->nseen = t->capseen = t->scan = 0;
	t->written = 0;
	free(t->etag);
	t->etag = NULL;
	free(t->path);
	t->path = NULL;
	t->active = false;
}
