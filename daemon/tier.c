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
 * Leases (single flight across nodes, tier_lease) are tierlease.c's: a
 * block the tier lacks goes to s3d_tierlease_miss(), which creates, looks
 * at or takes over its stripe's lease, polls for another node's blocks
 * (read_next()) or ends the tier's part (read_end()); written blocks of
 * stripes this node holds (s3d_tierlease_held()) are put at once. It
 * reaches this file only through lease_hooks: the breaker, the puts'
 * pause, the request setup and the read's next step.
 *
 * Memory: a tier read holds one block while its GET is in flight (cap the
 * tier's requests with max_concurrency in its [bucket] section); puts hold
 * S3D_TIER_PUTS_MAX blocks; the queue tier_put_queue descriptors of about
 * 500 bytes (the leases' memory: tierlease.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>

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
#include "tierlease.h"

/* Alignment of the cache file's O_DIRECT writes (op_fetch.c). */
#define TIER_ALIGN		4096U
/* Puts in flight at most: each holds one block in memory. */
#define S3D_TIER_PUTS_MAX	4U
/* A full tier (quota, no space): no puts for this long. */
#define S3D_TIER_FULL_PAUSE_MS	60000U

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
} tier = {
	.queue = { &tier.queue, &tier.queue },
	.urgent = { &tier.urgent, &tier.urgent },
};

static const struct s3d_tierlease_hooks lease_hooks;

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
	s3d_tierlease_clear();
}

/* Follow the configuration (a reload changes its generation). */
static void tier_sync(void)
{
	const struct s3d_conf *c;
	const struct s3d_conf_tier *tc;
	struct s3d_tierlease_conf lc;
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
	lc = (struct s3d_tierlease_conf){
		.hooks = &lease_hooks,
		.gen = gen,
		.bucket = tier.bucket,
		.ctx = tier.ctx,
		.put = tier.put,
		.connect_ms = tier.connect_ms,
		.tier = tc,
	};
	s3d_tierlease_set(&lc);
	tier.on = true;
	s3d_info("tier s3://%s: blocks of %u KiB, %s, %s, connect timeout %u ms, stall timeout %u s, breaker after %u failures, %s",
		 tier.bucket, tier.block >> 10,
		 tier.put ? "puts what origin sends" : "read only (tier_put = false)",
		 tier.secret ? "blocks signed (tier_secret)" :
		 "blocks unsigned (no tier_secret: any writer of the bucket can poison them)",
		 tier.connect_ms, tier.stall_s, tier.breaker.threshold,
		 !tc->lease ? "no leases (tier_lease = false)" :
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

/* ---- leases (tierlease.c) ---- */

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

static bool breaker_closed(void)
{
	return tier.breaker.state == S3D_TIER_CLOSED;
}

/* A claim was answered: the FETCH's blocks of its stripe may be put. */
static void lease_written(struct s3d_tier_fetch *t)
{
	s3d_tier_fetch_written(t, t->written);
}

static void read_next(struct s3d_tier_fetch *t);
static void read_end(struct s3d_tier_fetch *t);

/* What tierlease.c may do of the rest of the tier. */
static const struct s3d_tierlease_hooks lease_hooks = {
	.usable = tier_usable,
	.closed = breaker_closed,
	.puts_paused = puts_paused,
	.setup = xfer_setup,
	.status = lease_status,
	.read_next = read_next,
	.read_end = read_end,
	.written = lease_written,
};

/* ---- read-through ---- */

static void read_end(struct s3d_tier_fetch *t)
{
	s3d_tierlease_read_end(t);
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
	bool poll = s3d_tierlease_polled(t);

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
		s3d_tierlease_miss(t);
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
	s3d_tierlease_probe();
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
	s3d_tierlease_fetch_init(t);
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
	s3d_tierlease_probe();
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
	enum s3d_tierlease_held held;
	bool any = false;

	t->written = S3D_MAX(t->written, upto);
	if (!t->active || !tier.put || !tier_usable())
		return;
	for (; t->scan < t->nseen; t->scan++) {
		struct s3d_tier_seen *s = &t->seen[t->scan];

		s3d_tier_block_span(&t->obj, s->index, &off, &len);
		if (off + len > t->written)
			break;
		held = s3d_tierlease_held(t, s->index);
		if (held == S3D_TIERLEASE_HELD_ASKED)
			break;
		if (held == S3D_TIERLEASE_HELD_NO)
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
	struct s3d_tier_seen *s;
	size_t i;

	s3d_tierlease_fetch_end(t);
	if (ok && t->active && tier.put && tier_usable()) {
		for (i = 0; i < t->nseen; i++) {
			s = &t->seen[i];
			if (!s->queued)
				put_queue(t, s, s3d_tierlease_held(t, s->index) ==
					  S3D_TIERLEASE_HELD_YES);
		}
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
