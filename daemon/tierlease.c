// SPDX-License-Identifier: GPL-2.0
/*
 * The fleet tier's leases: single flight across nodes (tier_lease). A
 * FETCH that misses a block creates its stripe's lease (tierblk.h) with
 * If-None-Match: *. Won: origin sends the rest of the range, the leases
 * of its later stripes are claimed too, and the blocks of stripes this
 * node holds are put as soon as they are written, before other puts and
 * in the FETCH's class, for the nodes waiting on them. Lost: a HEAD says
 * whose lease it is, how old by the tier's clock (Date against
 * Last-Modified) and which blocks its holder fetches; the FETCH polls the
 * tier for those blocks, backing off, using each as any tier block once
 * verified, until it has waited tier_lease_wait_ms in all; then origin
 * sends the rest. A lease older than tier_lease_ttl is taken over with
 * If-Match its ETag. A lease is never deleted: it goes stale, and expires
 * with the blocks by the tier's lifecycle rule. Lease requests are tier
 * requests: one attempt, the short timeouts, counted in the breaker; any
 * failure means origin at once. No lease without puts (tier_put = false,
 * puts paused for a full tier) or while the breaker is not closed: nobody
 * would get the blocks. The tier's conditional PUTs are probed once
 * (caps.c) before the first lease; a FETCH waits for that answer
 * tier_connect_timeout_ms at most. A tier that ignores If-None-Match gets
 * no leases, and one log line.
 *
 * tier.c is the one caller (tierlease.h); this file reaches the rest of
 * the tier (its requests, the breaker, the puts, the FETCH's read) only
 * through the hooks tier.c gives it. The pure state machine of a FETCH's
 * lease is tierblk.c's; this file sends what it asks for.
 *
 * Memory: the leases this node holds or waited out, S3D_TIER_RECS_MAX
 * records of about 200 bytes; claims in flight, S3D_TIER_CLAIMS_FLIGHT of
 * about 2 KiB.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <openssl/rand.h>

#include "caps.h"
#include "ctx.h"
#include "lib/base.h"
#include "lib/config.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "lib/s3.h"
#include "lib/util.h"
#include "lib/xfer.h"
#include "tierblk.h"
#include "tierfetch.h"
#include "tierlease.h"

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

/*
 * The leases as the current configuration says (s3d_tierlease_set()),
 * and what this node knows of them. @h: the hooks into tier.c (NULL
 * before the first tier); @bucket and @ctx: tier.c's, NULL while no tier
 * is set up; @on: tier_lease; @support: the probe's verdict (LEASE_*);
 * @parked: the FETCHes waiting for it; @recs: leases held or waited out,
 * oldest first; @claims: claims in flight; @holder: host and pid, in
 * every lease this node writes.
 */
static struct {
	const struct s3d_tierlease_hooks *h;
	unsigned int gen;
	const char *bucket;
	struct s3d_ctx *ctx;
	bool put;
	unsigned int connect_ms;
	bool on;
	unsigned int wait_ms;
	unsigned int ttl_s;
	int support;
	uint64_t probe_after_ms;
	bool bare_if_match;
	struct s3d_list parked;
	struct s3d_list recs;
	unsigned int nrecs;
	struct s3d_list claims;
	unsigned int nclaims;
	char holder[96];
} leases = {
	.parked = { &leases.parked, &leases.parked },
	.recs = { &leases.recs, &leases.recs },
	.claims = { &leases.claims, &leases.claims },
};


/* Forget the leases remembered past their time (oldest first). */
static void recs_prune(uint64_t now)
{
	while (!s3d_list_empty(&leases.recs)) {
		struct tier_lease_rec *r = s3d_container_of(leases.recs.next,
							    struct tier_lease_rec,
							    node);

		if (r->until_ms > now)
			break;
		s3d_list_del(&r->node);
		leases.nrecs--;
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
	for (pos = leases.recs.next; pos != &leases.recs; pos = pos->next) {
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
		if (leases.nrecs >= S3D_TIER_RECS_MAX) {
			r = s3d_container_of(leases.recs.next,
					     struct tier_lease_rec, node);
			s3d_list_del(&r->node);
			leases.nrecs--;
			free(r);
		}
		r = calloc(1, sizeof(*r));
		if (!r)
			return;
		leases.nrecs++;
	}
	snprintf(r->key, sizeof(r->key), "%s", key);
	r->waited = waited;
	r->until_ms = s3d_now_ms() + leases.ttl_s * 1000ULL;
	s3d_list_add_tail(&r->node, &leases.recs);
}

/* Leases are for nodes that put what they fetch, into a usable tier. */
static bool leases_wanted(void)
{
	return leases.on && leases.put && leases.h->usable();
}

static void probe_setup(struct s3d_xfer *x)
{
	leases.h->setup(x, x->prio);
}

/*
 * The parked FETCHes go on: the probe answered, or (@late) the tier
 * changed under them, and they go without a lease.
 */
static void lease_unpark_all(bool late)
{
	while (!s3d_list_empty(&leases.parked)) {
		struct s3d_tier_fetch *t = s3d_container_of(leases.parked.next,
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
	if ((unsigned int)(uintptr_t)arg != leases.gen ||
	    leases.support != LEASE_PROBING)
		return;		/* a probe of a tier since reconfigured */
	if (verdict > 0) {
		leases.support = LEASE_YES;
		leases.bare_if_match = caps->bare_if_match;
		s3d_info("tier s3://%s: conditional PUTs honoured: leases on (a node waits %u ms at most for another's blocks; a lease is stale after %u s)",
			 leases.bucket, leases.wait_ms, leases.ttl_s);
	} else if (!verdict) {
		leases.support = LEASE_NO;
		s3d_warn("tier s3://%s: %s: no leases until the configuration is reloaded (nodes that miss the same blocks at once each fetch them from origin)",
			 leases.bucket, why);
	} else {
		leases.support = LEASE_UNKNOWN;
		leases.probe_after_ms = s3d_now_ms() + S3D_TIER_PROBE_AGAIN_MS;
		s3d_warn("tier s3://%s: its conditional PUTs could not be probed: no leases for %u s",
			 leases.bucket, S3D_TIER_PROBE_AGAIN_MS / 1000);
	}
	s3d_tier_stats.lease_support = leases.support == LEASE_YES ? 1 :
				       leases.support == LEASE_NO ? 2 : 0;
	lease_unpark_all(false);
}

/**
 * s3d_tierlease_probe() - probe the tier's conditional PUTs (caps.c), once,
 *	before any lease
 *
 * Nothing while leases are not wanted, the verdict is known or awaited,
 * or a probe without an answer is less than a minute old.
 */
void s3d_tierlease_probe(void)
{
	if (!leases_wanted() || leases.support != LEASE_UNKNOWN ||
	    s3d_now_ms() < leases.probe_after_ms)
		return;
	leases.support = LEASE_PROBING;
	if (s3d_caps_probe_create(leases.ctx, leases.bucket, S3D_TIER_PREFIX,
				  probe_setup, probe_verdict,
				  (void *)(uintptr_t)leases.gen)) {
		leases.support = LEASE_UNKNOWN;
		leases.probe_after_ms = s3d_now_ms() + S3D_TIER_PROBE_AGAIN_MS;
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
	s3d_tierlease_probe();
	if (leases.support != LEASE_PROBING)
		return false;
	s3d_list_add_tail(&t->parked, &leases.parked);
	t->is_parked = true;
	lease_busy(t, true);
	t->twhat = TW_PARK;
	s3d_timer_arm(&t->timer, leases.connect_ms);
	return true;
}

/* What this node knows of the lease t->lkey before asking the tier. */
static enum s3d_tier_lease_mode lease_mode(const struct s3d_tier_fetch *t)
{
	const struct tier_lease_rec *r;

	if (!leases_wanted() || t->probe_late ||
	    strcmp(t->bucket, leases.bucket) ||
	    !leases.h->closed() || leases.h->puts_paused())
		return S3D_TIER_LM_OFF;
	if (leases.support == LEASE_NO)
		return S3D_TIER_LM_UNSUPPORTED;
	if (leases.support != LEASE_YES)
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
	snprintf(out, S3D_TIER_LEASE_BODY, "%s %s\n", leases.holder, hex);
}

/* A lease PUT's headers: created (@match NULL) or taken over. */
static size_t lease_headers(struct s3d_kv *h, const char *blocks,
			    const char *match)
{
	h[0] = match ? (struct s3d_kv){ "If-Match", match } :
		       (struct s3d_kv){ "If-None-Match", "*" };
	h[1] = (struct s3d_kv){ S3D_TIER_LEASE_BLOCKS, blocks };
	h[2] = (struct s3d_kv){ S3D_TIER_LEASE_HOLDER, leases.holder };
	return 3;
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
	if (leases.bare_if_match)
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
	long status = leases.h->status(x);

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
	if (!leases.h->usable() || !leases.h->closed()) {
		lease_answered(t, 0, NULL);
		return;
	}
	s3d_xfer_init(&t->x, &lease_ops, t->lease.state == S3D_TIER_LS_LOOK ?
		      "HEAD" : "PUT", t->lkey);
	leases.h->setup(&t->x, t->prio);
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
	bool same = leases.bucket && !strcmp(c->bucket, leases.bucket);
	long status = leases.h->status(x);

	s3d_ctx_release(x);
	s3d_list_del(&c->node);
	leases.nclaims--;
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
		leases.h->written(c->t);
	s3d_ctx_put(c->ctx);
	free(c);
	return 0;
}

/* The claim in flight of the lease @key, or NULL. */
static struct tier_claim *claim_find(const char *key)
{
	struct s3d_list *pos;

	for (pos = leases.claims.next; pos != &leases.claims; pos = pos->next) {
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

	if (leases.nclaims >= S3D_TIER_CLAIMS_FLIGHT ||
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
	s3d_list_add_tail(&c->node, &leases.claims);
	leases.nclaims++;
	s3d_xfer_init(&c->x, &claim_ops, "PUT", c->key);
	leases.h->setup(&c->x, t->prio);
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
	if (!leases.h->usable() || !leases.h->closed() ||
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
		leases.h->read_end(t);
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

/**
 * s3d_tierlease_miss() - the tier lacks block t->next (a 404)
 * @t: the FETCH's tier state
 *
 * Its stripe's lease decides what next: a lease request, a poll, the
 * probe's verdict awaited, or the end of the tier's part (the
 * read_end hook).
 */
void s3d_tierlease_miss(struct s3d_tier_fetch *t)
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
		    (leases.support == LEASE_UNKNOWN ||
		     leases.support == LEASE_PROBING) && lease_park(t))
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
		s3d_tierlease_miss(t);
		return;
	case TW_MISS:
		s3d_tierlease_miss(t);
		return;
	default:
		leases.h->read_next(t);
		return;
	}
}

/**
 * s3d_tierlease_held() - does this node hold the lease of the stripe block
 *	@index is in?
 * @t: the FETCH's tier state
 * @index: the block
 *
 * Return: whose the lease is as this node knows (a claim in flight: asked).
 */
enum s3d_tierlease_held s3d_tierlease_held(struct s3d_tier_fetch *t,
					   uint64_t index)
{
	uint64_t stripe = s3d_tier_stripe_of(&t->obj, index);
	const struct tier_lease_rec *r;
	char key[S3D_TIER_KEY_MAX];

	if (t->held == stripe + 1)
		return S3D_TIERLEASE_HELD_YES;
	if (!leases.on ||
	    s3d_tier_lease_key(&t->obj, stripe, key, sizeof(key)))
		return S3D_TIERLEASE_HELD_NO;
	r = rec_find(key);
	if (!r)
		return claim_find(key) ? S3D_TIERLEASE_HELD_ASKED :
					 S3D_TIERLEASE_HELD_NO;
	if (r->waited)
		return S3D_TIERLEASE_HELD_NO;
	t->held = stripe + 1;
	return S3D_TIERLEASE_HELD_YES;
}

/**
 * s3d_tierlease_clear() - the tier changed (tier_sync()): forget its leases
 *
 * The FETCHes parked for the probe's verdict go on without a lease; what
 * this node remembered of leases is forgotten; the probe's verdict is
 * unknown again. Claims in flight stay: their answers are remembered
 * only if the tier is still theirs.
 */
void s3d_tierlease_clear(void)
{
	leases.bucket = NULL;
	leases.ctx = NULL;
	leases.support = LEASE_UNKNOWN;
	leases.probe_after_ms = 0;
	leases.bare_if_match = false;
	lease_unpark_all(true);
	recs_clear();
	s3d_tier_stats.lease_support = 0;
}

/**
 * s3d_tierlease_set() - a tier is set up: its leases follow its
 *	configuration
 * @c: the tier (its bucket and context stay tier.c's until the next
 *	s3d_tierlease_clear())
 */
void s3d_tierlease_set(const struct s3d_tierlease_conf *c)
{
	char host[64];

	leases.h = c->hooks;
	leases.gen = c->gen;
	leases.bucket = c->bucket;
	leases.ctx = c->ctx;
	leases.put = c->put;
	leases.connect_ms = c->connect_ms;
	leases.on = c->tier->lease != 0;
	leases.wait_ms = c->tier->lease_wait_ms ?:
			 S3D_TIER_LEASE_WAIT_MS_DEFAULT;
	leases.ttl_s = c->tier->lease_ttl_s ?: S3D_TIER_LEASE_TTL_DEFAULT;
	if (gethostname(host, sizeof(host)))
		strcpy(host, "?");
	host[sizeof(host) - 1] = '\0';
	snprintf(leases.holder, sizeof(leases.holder), "%s %d", host,
		 (int)getpid());
}

/**
 * s3d_tierlease_fetch_init() - a FETCH starts: no lease yet
 * @t: its tier state, zeroed
 */
void s3d_tierlease_fetch_init(struct s3d_tier_fetch *t)
{
	s3d_list_init(&t->timer.node);
	t->timer.fn = lease_timer;
	s3d_list_init(&t->parked);
	s3d_tier_lease_init(&t->lease, leases.wait_ms, leases.ttl_s,
			    s3d_tier_stats.leases);
}

/**
 * s3d_tierlease_polled() - is block t->next one another node's lease
 *	promised?
 * @t: the FETCH's tier state
 *
 * Return: true: a GET of it is a poll (no new miss).
 */
bool s3d_tierlease_polled(const struct s3d_tier_fetch *t)
{
	return t->lease.state == S3D_TIER_LS_WAIT &&
	       s3d_tier_stripe_of(&t->obj, t->next) == t->lease.stripe;
}

/**
 * s3d_tierlease_read_end() - the tier's part of a FETCH ends
 * @t: its tier state
 *
 * No more polls nor waits; the lease's time is counted
 * (s3d_tier_lease_end()).
 */
void s3d_tierlease_read_end(struct s3d_tier_fetch *t)
{
	s3d_timer_cancel(&t->timer);
	lease_busy(t, false);
	s3d_tier_lease_end(&t->lease, t->upto >= t->end, s3d_now_ms());
}

/**
 * s3d_tierlease_fetch_end() - the FETCH is over
 * @t: its tier state
 *
 * Its timer stops, it leaves the probe's waiters, and its claims' answers
 * come to nobody.
 */
void s3d_tierlease_fetch_end(struct s3d_tier_fetch *t)
{
	struct s3d_list *pos;

	s3d_timer_cancel(&t->timer);
	if (t->is_parked) {
		s3d_list_del(&t->parked);
		t->is_parked = false;
	}
	for (pos = leases.claims.next; pos != &leases.claims;
	     pos = pos->next) {
		struct tier_claim *c = s3d_container_of(pos, struct tier_claim,
							node);

		if (c->t == t)
			c->t = NULL;
	}
}
