// SPDX-License-Identifier: GPL-2.0
/*
 * Per-bucket S3 contexts: the S3 client of each config section (endpoint,
 * addressing, credentials resolved on the loop), its cap on requests in
 * flight with admission by priority class ahead of the engine, its
 * throttling (AIMD on "slow down" answers) and its retry budget. The
 * table is rebuilt on a reload; requests in flight keep their context.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ctx.h"
#include "lib/base.h"
#include "lib/config.h"
#include "lib/creds.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "lib/prio.h"
#include "lib/retry.h"
#include "lib/s3.h"
#include "lib/util.h"
#include "lib/xfer.h"

/**
 * struct s3d_ctx - the S3 client of one config section, and its cap
 * @node: on ctxs while it belongs to the current configuration
 * @refs: the table's (while current), plus one per operation and per
 *	transfer in its admission (waiting or holding a slot)
 * @bucket: its [bucket NAME] section, or NULL for [global] (every bucket
 *	without a section of its own)
 * @s3: endpoint, addressing, CA bundle, credentials
 * @max: S3 requests of this bucket in flight at most; 0: no cap
 * @inflight: slots held (requests queued in the engine, in flight or
 *	waiting for a retry)
 * @waiting: transfers waiting for a slot (s3d_xfer.gate_node), by priority
 *	class, FIFO within one (prio.c)
 * @budget: its retry budget (retry.c): a dead endpoint is not asked ten
 *	times for each request
 * @limit: while throttled, slots at most (below @max); 0: not throttled
 * @ok_streak: requests answered since @limit last moved
 * @throttled_ms: when @limit was last lowered
 * @profile: the section's profile (NULL: the default), for a resolution
 * @resolving: its credentials are being resolved on the loop
 *	(creds_async.c); requests wait on @parked meanwhile
 * @creds_ok: @s3 can sign (or is anonymous)
 * @creds_err: the last resolution's -errno, or 0 (while @creds_ok, the
 *	keys are older ones kept over a reload)
 * @creds_failures: resolutions failed in a row, for the back-off
 * @creds_retry_ms: while failed, no new resolution before this
 * @creds_told: the failure was logged for a request since it happened
 * @parked: requests waiting for @resolving (struct parked)
 *
 * A reload makes a new table; contexts of the old one live on until the
 * last operation using them finishes, so nothing in flight is dropped.
 */
struct s3d_ctx {
	struct s3d_list node;
	int refs;
	char *bucket;
	struct s3d_s3 s3;
	unsigned int max;
	unsigned int inflight;
	struct s3d_pq waiting;
	struct s3d_retry_budget budget;
	unsigned int limit;
	unsigned int ok_streak;
	uint64_t throttled_ms;
	char *profile;
	struct s3d_creds_req *resolving;
	bool creds_ok;
	int creds_err;
	unsigned int creds_failures;
	uint64_t creds_retry_ms;
	bool creds_told;
	struct s3d_list parked;
};

/* A request waiting for its context's credentials: how it goes on. */
struct parked {
	struct s3d_list node;
	void (*go)(void *arg, struct s3d_ctx *c, int err);
	void *arg;
};

static const struct s3d_conf *conf;
/* Bumped by each s3d_ctx_set_conf() that takes: users re-read on a change. */
static unsigned int conf_gen;
static struct s3d_list ctxs = { &ctxs, &ctxs };

/**
 * s3d_ctx_hold() - one more reference to @c (s3d_ctx_put() drops it)
 * @c: the context
 *
 * For work that outlives the operation that started it (an abort in the
 * background) or that submits transfers one after the other.
 */
void s3d_ctx_hold(struct s3d_ctx *c)
{
	c->refs++;
}

void s3d_ctx_put(struct s3d_ctx *c)
{
	if (!c || --c->refs)
		return;
	/* Nothing is parked: each parked request holds a reference. */
	s3d_creds_resolve_cancel(c->resolving);
	s3d_s3_fini(&c->s3);
	free(c->profile);
	free(c->bucket);
	free(c);
}

/*
 * Temporary credentials (web identity, container, IMDS) are renewed on the
 * loop before they expire. The watch points into @c, which never moves;
 * s3d_s3_fini() in s3d_ctx_put() ends it.
 */
static void ctx_watch(struct s3d_ctx *c)
{
	int err;

	if (!c->s3.creds.expires || c->s3.creds.watcher)
		return;
	err = s3d_creds_watch(&c->s3.creds, c->profile);
	if (err)
		s3d_err("%s: cannot watch credentials (they will not be refreshed): %s",
			c->bucket ?: "[global]", strerror(-err));
}

/* The requests that waited for @c's resolution: on, or failed. */
static void ctx_unpark(struct s3d_ctx *c)
{
	struct s3d_list list;
	int err = c->creds_err == -ENOENT ? -EACCES : c->creds_err;
	bool ok = c->creds_ok;

	if (s3d_list_empty(&c->parked))
		return;
	/* Take them all first: each may drop the last reference to @c. */
	list = c->parked;
	list.next->prev = &list;
	list.prev->next = &list;
	s3d_list_init(&c->parked);
	while (!s3d_list_empty(&list)) {
		struct parked *p = s3d_container_of(list.next, struct parked,
						    node);
		void (*go)(void *arg, struct s3d_ctx *c, int err) = p->go;
		void *arg = p->arg;

		s3d_list_del(&p->node);
		free(p);
		go(arg, c, ok ? 0 : err);
	}
}

/* A resolution of @c's credentials is over (at once, or on the loop). */
static void ctx_settle(struct s3d_ctx *c, int err, const char *why)
{
	const char *what = c->bucket ?: "[global]";
	uint64_t ms = S3D_CREDS_FAIL_FIRST_MS;
	unsigned int i;

	c->resolving = NULL;
	if (!err) {
		c->creds_ok = true;
		c->creds_err = 0;
		c->creds_failures = 0;
		s3d_info("%s: credentials from the %s (key id %s%s)", what,
			 c->s3.creds.source, c->s3.creds.access_key,
			 c->s3.creds.token ? ", session token" : "");
		ctx_watch(c);
	} else if (c->creds_ok) {
		/* Keys kept over a reload: they sign on (and are refreshed). */
		c->creds_err = err;
		s3d_warn("%s: cannot load fresh AWS credentials (%s: %s); the ones loaded before the reload stay in use",
			 what, strerror(-err), why && *why ? why : "-");
	} else {
		for (i = 0; i < c->creds_failures && ms < S3D_CREDS_FAIL_MAX_MS;
		     i++)
			ms *= 2;
		ms = S3D_MIN(ms, (uint64_t)S3D_CREDS_FAIL_MAX_MS);
		c->creds_failures++;
		c->creds_err = err;
		c->creds_retry_ms = s3d_now_ms() + ms;
		c->creds_told = false;
		if (err == -ENOENT && c->profile)
			s3d_err("%s: no AWS credentials found for profile '%s'; its requests fail (EACCES) for %llu ms, then the chain is asked again",
				what, c->profile, (unsigned long long)ms);
		else if (err == -ENOENT)
			s3d_err("%s: no AWS credentials found; configure a provider, or set anonymous = true for a public bucket; its requests fail (EACCES) for %llu ms, then the chain is asked again",
				what, (unsigned long long)ms);
		else
			s3d_err("%s: cannot load AWS credentials (%s); its requests fail for %llu ms, then the chain is asked again",
				what, strerror(-err), (unsigned long long)ms);
	}
	ctx_unpark(c);
}

static void ctx_resolved(void *arg, int err, const char *why)
{
	ctx_settle(arg, err, why);
}

/* Ask the chain for @c's credentials; settled here unless a server is asked. */
static void ctx_resolve(struct s3d_ctx *c)
{
	char why[1024];
	int err = 0;

	c->resolving = s3d_creds_resolve_async(&c->s3.creds, c->profile,
					       ctx_resolved, c, &err, why,
					       sizeof(why));
	if (c->resolving)
		s3d_dbg("%s: resolving AWS credentials on the loop",
			c->bucket ?: "[global]");
	else
		ctx_settle(c, err, why);
}

/**
 * s3d_ctx_ready() - may a request go on with @c's credentials now?
 * @c: the context
 * @go: called later, from the loop, when the answer was 1: with 0 (go
 *	on) or -errno (the resolution failed)
 * @arg: its argument
 *
 * Return: 0 yes; 1 it waits for the resolution in progress (@go tells);
 * or -errno: the credentials failed recently, fail it at once (no new
 * attempt before the back-off is over, so a dead endpoint is not asked
 * per request).
 */
int s3d_ctx_ready(struct s3d_ctx *c,
		  void (*go)(void *arg, struct s3d_ctx *c, int err), void *arg)
{
	struct parked *p;

	if (c->creds_ok)
		return 0;
	if (!c->resolving && s3d_now_ms() >= c->creds_retry_ms) {
		s3d_info("%s: asking for AWS credentials again",
			 c->bucket ?: "[global]");
		ctx_resolve(c);
		if (c->creds_ok)
			return 0;
	}
	if (c->resolving) {
		p = calloc(1, sizeof(*p));
		if (!p)
			return -ENOMEM;
		p->go = go;
		p->arg = arg;
		s3d_list_add_tail(&p->node, &c->parked);
		return 1;
	}
	if (!c->creds_told) {
		s3d_warn("%s: requests fail without AWS credentials (%s) until the next attempt in %llu ms",
			 c->bucket ?: "[global]", strerror(-c->creds_err),
			 (unsigned long long)(c->creds_retry_ms - s3d_now_ms()));
		c->creds_told = true;
	}
	return c->creds_err == -ENOENT ? -EACCES : c->creds_err;
}

/* Wait for @c's credentials; 0, or -errno (for the selftest and tests). */
static bool ctx_settled(void *arg)
{
	return !((struct s3d_ctx *)arg)->resolving;
}

int s3d_ctx_wait(struct s3d_ctx *c)
{
	if (c->resolving)
		s3d_loop_run(ctx_settled, c);
	return c->creds_ok ? 0 : c->creds_err;
}

/*
 * A context for @section under the current configuration. Credentials are
 * resolved on the loop (ctx_ready() waits for them). Over a reload
 * (@seed: the old table's context of the section, or NULL), keys of the
 * same profile sign on while fresh ones are resolved, as in a refresh.
 */
static struct s3d_ctx *ctx_new(const char *section, struct s3d_ctx *seed,
			       int *err)
{
	const struct s3d_conf_bucket *b = s3d_conf_bucket(conf, section);
	struct s3d_ctx *c = calloc(1, sizeof(*c));
	struct s3d_conf_s3 set;

	s3d_conf_settings(conf, section, &set);
	if (c) {
		c->bucket = section ? strdup(section) : NULL;
		c->profile = set.profile ? strdup(set.profile) : NULL;
	}
	if (!c || (section && !c->bucket) || (set.profile && !c->profile)) {
		if (c) {
			free(c->bucket);
			free(c->profile);
		}
		free(c);
		*err = -ENOMEM;
		return NULL;
	}
	*err = s3d_conf_s3_client(conf, section, &c->s3);
	if (*err) {
		free(c->profile);
		free(c->bucket);
		free(c);
		return NULL;
	}
	s3d_list_init(&c->parked);
	c->refs = 1;		/* the table's */
	c->max = b ? b->max_concurrency : 0;
	s3d_pq_init(&c->waiting);
	s3d_retry_budget_init(&c->budget, s3d_engine_retry()->budget);
	s3d_list_add_tail(&c->node, &ctxs);
	s3d_info("%s: %s://%s, region %s, %s%s%s%s%s", section ?: "[global]",
		 c->s3.scheme, c->s3.authority, c->s3.region,
		 c->s3.path_style ? "path style" : "virtual-host style",
		 c->s3.anonymous ? ", anonymous" : "",
		 c->s3.ca_bundle ? ", CA bundle " : "", c->s3.ca_bundle ?: "",
		 c->max ? ", concurrency capped" : "");
	if (c->s3.anonymous) {
		c->creds_ok = true;
		return c;
	}
	if (seed && seed->creds_ok && !seed->s3.anonymous &&
	    s3d_str_eq(seed->profile, c->profile) &&
	    !s3d_creds_copy(&c->s3.creds, &seed->s3.creds)) {
		c->creds_ok = true;
		ctx_watch(c);
	}
	ctx_resolve(c);
	return c;
}

static struct s3d_ctx *ctx_find(struct s3d_list *table, const char *section)
{
	struct s3d_list *pos;

	for (pos = table->next; pos != table; pos = pos->next) {
		struct s3d_ctx *c = s3d_container_of(pos, struct s3d_ctx, node);

		if (s3d_str_eq(c->bucket, section))
			return c;
	}
	return NULL;
}

/**
 * s3d_ctx_get() - the S3 context for requests of @bucket
 * @bucket: the bucket; NULL for the [global] context
 * @err: set to -errno (logged) when NULL is returned
 *
 * The context of @bucket's [bucket] section under the current
 * configuration, else the [global] one; created on first use and shared.
 *
 * Return: a reference (drop with s3d_ctx_put()), or NULL.
 */
struct s3d_ctx *s3d_ctx_get(const char *bucket, int *err)
{
	const char *section = s3d_conf_bucket(conf, bucket) ? bucket : NULL;
	struct s3d_ctx *c = ctx_find(&ctxs, section);

	if (c) {
		c->refs++;
		return c;
	}
	c = ctx_new(section, NULL, err);
	if (c)
		c->refs++;
	return c;
}

struct s3d_s3 *s3d_ctx_s3(struct s3d_ctx *c)
{
	return &c->s3;
}

unsigned int s3d_ctx_inflight(const struct s3d_ctx *c)
{
	return c->inflight;
}

/* Slots at most now: the throttled limit, else max_concurrency; 0: none. */
static unsigned int ctx_cap(const struct s3d_ctx *c)
{
	return c->limit ?: c->max;
}

static bool ctx_has_slot(const struct s3d_ctx *c)
{
	return !ctx_cap(c) || c->inflight < ctx_cap(c);
}

/*
 * The server said "slow down" (503 SlowDown, 429): halve the requests of
 * this context in flight (at most once a second, down to 1), so the
 * sender slows down; transfers already admitted finish (or back off),
 * new ones wait for a slot.
 */
static void ctx_throttled(struct s3d_xfer *x)
{
	struct s3d_ctx *c = x->gate;
	uint64_t now = s3d_now_ms();
	unsigned int cur;

	if (!c || (c->limit && now - c->throttled_ms < 1000))
		return;
	cur = c->limit ?: (c->max ? S3D_MIN(c->max, c->inflight) : c->inflight);
	c->limit = S3D_MAX(cur / 2, 1U);
	c->ok_streak = 0;
	c->throttled_ms = now;
	s3d_info("%s: throttled (HTTP %ld): %u request%s in flight at most for now",
		 c->bucket ?: "[global]", x->status, c->limit,
		 c->limit == 1 ? "" : "s");
}

/*
 * A request answered: after as many answers as the limit, one slot more
 * (additive increase); past max_concurrency (or max_inflight) the limit
 * is lifted.
 */
static void ctx_answered(struct s3d_ctx *c)
{
	unsigned int top;

	if (!c->limit || ++c->ok_streak < c->limit)
		return;
	c->ok_streak = 0;
	c->limit++;
	top = c->max ?: (conf && conf->max_inflight ? conf->max_inflight : 64);
	if (c->limit >= top) {
		c->limit = 0;
		s3d_info("%s: no longer throttled", c->bucket ?: "[global]");
	}
}

static void ctx_admit(struct s3d_ctx *c, struct s3d_xfer *x)
{
	c->inflight++;
	x->gate_slot = true;
	s3d_xfer_submit(x);
}

/* Hand free slots to the most urgent transfers waiting, longest first. */
static void ctx_pump(struct s3d_ctx *c)
{
	while (!s3d_pq_empty(&c->waiting) && ctx_has_slot(c)) {
		struct s3d_xfer *x = s3d_container_of(s3d_pq_pop(&c->waiting,
								 NULL),
						      struct s3d_xfer, gate_node);

		x->gate_waiting = false;
		ctx_admit(c, x);
	}
}

static int ctx_prepare(struct s3d_xfer *x)
{
	return x->gate_ops->prepare(x);
}

static bool ctx_headers(struct s3d_xfer *x)
{
	return !x->gate_ops->headers || x->gate_ops->headers(x);
}

static size_t ctx_body(struct s3d_xfer *x, const char *p, size_t n)
{
	return x->gate_ops->body(x, p, n);
}

static void ctx_ended(struct s3d_xfer *x)
{
	if (x->gate_ops->ended)
		x->gate_ops->ended(x);
}

static int ctx_done(struct s3d_xfer *x);

/* Two tables: the engine collects the body itself when ->body is NULL. */
static const struct s3d_xfer_ops ctx_ops_body = {
	.prepare = ctx_prepare,
	.headers = ctx_headers,
	.body = ctx_body,
	.done = ctx_done,
	.throttled = ctx_throttled,
	.ended = ctx_ended,
};

static const struct s3d_xfer_ops ctx_ops_nobody = {
	.prepare = ctx_prepare,
	.headers = ctx_headers,
	.done = ctx_done,
	.throttled = ctx_throttled,
	.ended = ctx_ended,
};

static void ctx_enter(struct s3d_ctx *c, struct s3d_xfer *x)
{
	x->gate = c;
	x->gate_ops = x->ops;
	x->ops = x->ops->body ? &ctx_ops_body : &ctx_ops_nobody;
	x->budget = &c->budget;
}

/* @x leaves @c's admission; returns @c, whose reference the caller drops. */
static struct s3d_ctx *ctx_leave(struct s3d_xfer *x)
{
	struct s3d_ctx *c = x->gate;

	x->ops = x->gate_ops;
	x->gate = NULL;
	x->budget = NULL;
	if (x->gate_waiting)
		s3d_pq_del(&c->waiting, &x->gate_node, x->prio);
	x->gate_waiting = false;
	if (x->gate_slot)
		c->inflight--;
	x->gate_slot = false;
	return c;
}

/*
 * The attempt is over: the slot is free while the caller's ->done() runs
 * (it may release or free @x, or submit it anew); a retry takes it back
 * at once, so a retrying request keeps its place.
 */
static int ctx_done(struct s3d_xfer *x)
{
	struct s3d_ctx *c = ctx_leave(x);
	int ret;

	if (s3d_xfer_ok(x) || (x->cres == CURLE_OK && x->status < 500 &&
			       x->status != 429))
		ctx_answered(c);
	ret = x->ops->done(x);
	if (ret == S3D_XFER_RETRY && x->can_retry) {
		ctx_enter(c, x);	/* keeps the reference */
		c->inflight++;
		x->gate_slot = true;
		return ret;
	}
	ctx_pump(c);
	s3d_ctx_put(c);
	return ret;
}

/**
 * s3d_ctx_submit() - submit @x under @c's cap on requests in flight
 * @c: the bucket's context
 * @x: initialized, not submitted
 *
 * Beyond the cap, transfers wait by priority class (@x->prio), in
 * submission order within one (FIFO per bucket, so mounts of one bucket
 * share it fairly); a bucket's requests never hold another bucket's up
 * beyond the engine's own --max-inflight queue.
 */
void s3d_ctx_submit(struct s3d_ctx *c, struct s3d_xfer *x)
{
	c->refs++;
	ctx_enter(c, x);
	if (s3d_pq_empty(&c->waiting) && ctx_has_slot(c)) {
		ctx_admit(c, x);
		return;
	}
	s3d_pq_add(&c->waiting, &x->gate_node, x->prio, false);
	x->gate_waiting = true;
}

/**
 * s3d_ctx_release() - s3d_xfer_release() for a transfer that may be in
 *	a context's admission (waiting, or holding a slot)
 * @x: the transfer
 */
void s3d_ctx_release(struct s3d_xfer *x)
{
	struct s3d_ctx *c = x->gate ? ctx_leave(x) : NULL;

	s3d_xfer_release(x);
	if (c) {
		ctx_pump(c);
		s3d_ctx_put(c);
	}
}

/* Forget the current table; contexts in use live on until put. */
static void ctxs_drop(void)
{
	while (!s3d_list_empty(&ctxs)) {
		struct s3d_ctx *c = s3d_container_of(ctxs.next, struct s3d_ctx,
						     node);

		s3d_list_del(&c->node);
		s3d_ctx_put(c);
	}
}

/**
 * s3d_ctx_set_conf() - use @c for requests from now on
 * @c: the configuration (must stay valid until replaced)
 *
 * Makes the [global] context first: when its credentials cannot be
 * loaded without asking a server (a missing profile, a bad file, no
 * provider at all), nothing changes. One that asks a server (STS, IMDS)
 * is not waited for: the loop goes on. Contexts of the old table get
 * successors at once, which sign with the old keys of the same profile
 * until the new ones are there. Requests in progress finish with the
 * contexts they started with.
 *
 * Return: 0 or -errno (logged).
 */
int s3d_ctx_set_conf(const struct s3d_conf *c)
{
	const struct s3d_conf *old = conf;
	struct s3d_list keep = ctxs;
	struct s3d_ctx *g;
	int err;

	/* Build the new table aside, then swap. */
	if (!s3d_list_empty(&ctxs)) {
		keep.next->prev = &keep;
		keep.prev->next = &keep;
	} else {
		s3d_list_init(&keep);
	}
	s3d_list_init(&ctxs);
	conf = c;
	g = ctx_new(NULL, ctx_find(&keep, NULL), &err);
	if (g && !g->resolving)
		err = g->creds_err;	/* failed without asking a server */
	if (!g || err) {
		ctxs_drop();
		conf = old;
		ctxs = keep;
		if (s3d_list_empty(&keep)) {
			s3d_list_init(&ctxs);
		} else {
			ctxs.next->prev = &ctxs;
			ctxs.prev->next = &ctxs;
		}
		return err;
	}
	while (!s3d_list_empty(&keep)) {
		struct s3d_ctx *o = s3d_container_of(keep.next, struct s3d_ctx,
						     node);

		/* A section in use goes on in the new table (if still there). */
		if (o->bucket && s3d_conf_bucket(c, o->bucket) &&
		    !ctx_find(&ctxs, o->bucket))
			ctx_new(o->bucket, o, &err);
		s3d_list_del(&o->node);
		s3d_ctx_put(o);
	}
	conf_gen++;
	return 0;
}

/**
 * s3d_ctx_init() - make the contexts of @c
 * @c: the configuration (see s3d_ctx_set_conf())
 *
 * At start nothing is served yet: [global]'s credentials must load.
 *
 * Return: 0 or -errno (the [global] context cannot be made; logged).
 */
/**
 * s3d_ctx_conf() - the configuration requests are made under now
 * @gen: set to its generation (changes with each reload that takes)
 *
 * Return: the configuration, or NULL before s3d_ctx_init().
 */
const struct s3d_conf *s3d_ctx_conf(unsigned int *gen)
{
	*gen = conf_gen;
	return conf;
}

int s3d_ctx_init(const struct s3d_conf *c)
{
	int err = s3d_ctx_set_conf(c);

	if (err)
		return err;
	err = s3d_ctx_wait(ctx_find(&ctxs, NULL));
	if (err)
		ctxs_drop();
	return err;
}

/* Forget the table (contexts in use live on until put) and the config. */
void s3d_ctx_fini(void)
{
	ctxs_drop();
	conf = NULL;
}

/* @c's [bucket NAME] section, or NULL for [global]. */
const char *s3d_ctx_section(const struct s3d_ctx *c)
{
	return c->bucket;
}
