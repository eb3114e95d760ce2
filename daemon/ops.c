// SPDX-License-Identifier: GPL-2.0
/*
 * The mounts, and what the daemon does for each kernel request.
 *
 *   MOUNT   open the cache root, check or write the format marker.
 *   LIST    ListObjectsV2 (delimiter '/', all pages) into the lower dir.
 *   LOOKUP  HEAD key and LIST key/ (max-keys 1) at once; make the lower
 *           entry a file, a directory, or nothing.
 *   FETCH   ranged GET with If-Match into the lower file with O_DIRECT.
 *
 * Each request becomes an operation that owns one or two S3 transfers and
 * finishes by calling r->reply() exactly once. Requests may be repeated
 * (the kernel re-sends pending ones to a daemon that registers again), so
 * everything here is idempotent.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "evict.h"
#include "lib/base.h"
#include "lib/config.h"
#include "lib/creds.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "lib/path.h"
#include "lib/prio.h"
#include "lib/retry.h"
#include "lib/s3.h"
#include "lib/util.h"
#include "lib/xfer.h"
#include "lib/xml.h"
#include "req.h"
#include "store.h"
#include "uapi/s3cachefs.h"

struct s3d_mount {
	struct s3d_list node;	/* on mounts */
	uint32_t id;
	int refs;		/* the table's, plus one per operation */
	char *bucket;
	char *prefix;
	char *cache_dir;
	uint32_t chunk;
	int rootfd;		/* O_PATH */
	struct s3d_cache *cache;	/* usage and eviction (NULL: untracked) */
	struct s3d_strset whole;	/* paths whose GET got the whole object */
};

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
 * @waiting: transfers waiting for a slot (s3d_xfer.ctx_node), by priority
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

/* A request waiting for its context's credentials, and what it holds. */
struct parked {
	struct s3d_list node;
	struct s3d_req *r;
	struct s3d_mount *m;
};

static const struct s3d_conf *conf;
static struct s3d_list ctxs = { &ctxs, &ctxs };
static struct s3d_list mounts = { &mounts, &mounts };
static struct s3d_list active = { &active, &active };	/* s3d_req.active */
static unsigned int pending;
static struct s3d_timer progress_timer;

/* ---- progress reports ---- */

/* Tell the kernel @r (and every request riding on it) is still going. */
static void report_progress(struct s3d_req *r)
{
	uint64_t now = s3d_now_ms();
	struct s3d_req *x;

	for (x = r; x; x = x == r ? r->riders : x->rider_next) {
		x->reported_ms = now;
		x->done = r->done;
		if (x->progress)
			x->progress(x);
	}
}

static void progress_tick(struct s3d_timer *t)
{
	uint64_t now = s3d_now_ms();
	struct s3d_list *pos;

	for (pos = active.next; pos != &active; pos = pos->next) {
		struct s3d_req *a = s3d_container_of(pos, struct s3d_req, active);

		/*
		 * Only while bytes move, or while it waits for a slot (the
		 * daemon's own queue, not S3's fault): a transfer that is
		 * stuck, or backing off, must not keep the kernel waiting past
		 * fetch_timeout; the retry policy bounds it below that.
		 */
		if (now - a->reported_ms >= S3D_PROGRESS_MS &&
		    (a->moved || !a->started)) {
			a->moved = false;
			report_progress(a);
		}
	}
	if (!s3d_list_empty(&active))
		s3d_timer_arm(t, S3D_PROGRESS_TICK_MS);
}

/* ---- requests ---- */

void s3d_req_free(struct s3d_req *r)
{
	if (!r)
		return;
	free(r->path);
	free(r->name);
	free(r->etag);
	free(r->bucket);
	free(r->prefix);
	free(r->cache_dir);
	free(r);
}

static void finish(struct s3d_req *r, int status)
{
	struct s3d_req *rider = r->riders;

	if (r->active.next)
		s3d_list_del(&r->active);
	pending--;
	s3d_dbg("request %llu (cmd %d) done: %d", (unsigned long long)r->id,
		r->cmd, status);
	r->reply(r, status);
	while (rider) {
		struct s3d_req *next = rider->rider_next;

		pending--;
		rider->reply(rider, status);
		rider = next;
	}
}

static bool str_eq(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

static bool same_req(const struct s3d_req *a, const struct s3d_req *b)
{
	if (a->cmd != b->cmd || a->mount_id != b->mount_id ||
	    !str_eq(a->path, b->path))
		return false;
	if (a->cmd == S3CFS_CMD_LOOKUP)
		return str_eq(a->name, b->name);
	if (a->cmd == S3CFS_CMD_FETCH)
		return a->off == b->off && a->len == b->len &&
		       str_eq(a->etag, b->etag);
	return true;
}

/*
 * The kernel re-sends a request whose wait timed out (or after a daemon
 * restart) under a new id. If the same work is already under way, answer
 * the newcomer with it instead of starting over: a 10k-entry listing on a
 * slow server must not restart (and slow itself down) with every retry.
 */
static bool join_active(struct s3d_req *r)
{
	struct s3d_list *pos;

	for (pos = active.next; pos != &active; pos = pos->next) {
		struct s3d_req *a = s3d_container_of(pos, struct s3d_req, active);

		if (!same_req(a, r))
			continue;
		s3d_dbg("request %llu joins request %llu (same work in progress)",
			(unsigned long long)r->id, (unsigned long long)a->id);
		r->rider_next = a->riders;
		a->riders = r;
		return true;
	}
	s3d_list_add_tail(&r->active, &active);
	if (!progress_timer.armed)
		s3d_timer_arm(&progress_timer, S3D_PROGRESS_TICK_MS);
	return false;
}

unsigned int s3d_ops_pending(void)
{
	return pending;
}

/* ---- per-bucket S3 contexts ---- */

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

static void ctx_dispatch(struct s3d_req *r, struct s3d_mount *m,
			 struct s3d_ctx *ctx);
static void mount_done(struct s3d_req *r, struct s3d_mount *m,
		       struct s3d_ctx *ctx, int err);
static void fail_early(struct s3d_req *r, struct s3d_mount *m,
		       struct s3d_ctx *ctx, int err);

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
		struct s3d_req *r = p->r;
		struct s3d_mount *m = p->m;

		s3d_list_del(&p->node);
		free(p);
		if (r->cmd == S3CFS_CMD_MOUNT)
			mount_done(r, m, c, ok ? 0 : err);
		else if (ok)
			ctx_dispatch(r, m, c);
		else
			fail_early(r, m, c, err);
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

/*
 * May @r go on with @c now? Return: 0 yes; 1 it waits for the resolution
 * in progress (it goes on, or fails, from ctx_unpark()); or -errno: the
 * credentials failed recently, fail it at once (no new attempt before
 * the back-off is over, so a dead endpoint is not asked per request).
 */
static int ctx_ready(struct s3d_ctx *c, struct s3d_req *r,
		     struct s3d_mount *m)
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
		p->r = r;
		p->m = m;
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
	    str_eq(seed->profile, c->profile) &&
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

		if (str_eq(c->bucket, section))
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
	struct s3d_ctx *c = x->ctx;
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
	x->ctx_slot = true;
	s3d_xfer_submit(x);
}

/* Hand free slots to the most urgent transfers waiting, longest first. */
static void ctx_pump(struct s3d_ctx *c)
{
	while (!s3d_pq_empty(&c->waiting) && ctx_has_slot(c)) {
		struct s3d_xfer *x = s3d_container_of(s3d_pq_pop(&c->waiting,
								 NULL),
						      struct s3d_xfer, ctx_node);

		x->ctx_waiting = false;
		ctx_admit(c, x);
	}
}

static int ctx_prepare(struct s3d_xfer *x)
{
	return x->ctx_ops->prepare(x);
}

static size_t ctx_body(struct s3d_xfer *x, const char *p, size_t n)
{
	return x->ctx_ops->body(x, p, n);
}

static void ctx_ended(struct s3d_xfer *x)
{
	if (x->ctx_ops->ended)
		x->ctx_ops->ended(x);
}

static int ctx_done(struct s3d_xfer *x);

/* Two tables: the engine collects the body itself when ->body is NULL. */
static const struct s3d_xfer_ops ctx_ops_body = {
	.prepare = ctx_prepare,
	.body = ctx_body,
	.done = ctx_done,
	.throttled = ctx_throttled,
	.ended = ctx_ended,
};

static const struct s3d_xfer_ops ctx_ops_nobody = {
	.prepare = ctx_prepare,
	.done = ctx_done,
	.throttled = ctx_throttled,
	.ended = ctx_ended,
};

static void ctx_enter(struct s3d_ctx *c, struct s3d_xfer *x)
{
	x->ctx = c;
	x->ctx_ops = x->ops;
	x->ops = x->ops->body ? &ctx_ops_body : &ctx_ops_nobody;
	x->budget = &c->budget;
}

/* @x leaves @c's admission; returns @c, whose reference the caller drops. */
static struct s3d_ctx *ctx_leave(struct s3d_xfer *x)
{
	struct s3d_ctx *c = x->ctx;

	x->ops = x->ctx_ops;
	x->ctx = NULL;
	x->budget = NULL;
	if (x->ctx_waiting)
		s3d_pq_del(&c->waiting, &x->ctx_node, x->prio);
	x->ctx_waiting = false;
	if (x->ctx_slot)
		c->inflight--;
	x->ctx_slot = false;
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
		x->ctx_slot = true;
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
	s3d_pq_add(&c->waiting, &x->ctx_node, x->prio, false);
	x->ctx_waiting = true;
}

/**
 * s3d_ctx_release() - s3d_xfer_release() for a transfer that may be in
 *	a context's admission (waiting, or holding a slot)
 * @x: the transfer
 */
void s3d_ctx_release(struct s3d_xfer *x)
{
	struct s3d_ctx *c = x->ctx ? ctx_leave(x) : NULL;

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
 * s3d_ops_set_conf() - use @c for requests from now on
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
int s3d_ops_set_conf(const struct s3d_conf *c)
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
	return 0;
}

/* ---- mounts ---- */

static void mount_put(struct s3d_mount *m)
{
	if (--m->refs)
		return;
	s3d_cache_close(m->cache);
	s3d_strset_free(&m->whole);
	if (m->rootfd >= 0)
		close(m->rootfd);
	free(m->bucket);
	free(m->prefix);
	free(m->cache_dir);
	free(m);
}

/* A request that fails before its operation starts: drop what it holds. */
static void fail_early(struct s3d_req *r, struct s3d_mount *m,
		       struct s3d_ctx *ctx, int err)
{
	mount_put(m);
	s3d_ctx_put(ctx);
	finish(r, err);
}

static struct s3d_mount *mount_get(uint32_t id)
{
	struct s3d_list *pos;

	for (pos = mounts.next; pos != &mounts; pos = pos->next) {
		struct s3d_mount *m = s3d_container_of(pos, struct s3d_mount, node);

		if (m->id == id) {
			m->refs++;
			return m;
		}
	}
	return NULL;
}

static void mount_forget(uint32_t id)
{
	struct s3d_mount *m = mount_get(id);

	if (!m)
		return;
	s3d_list_del(&m->node);
	mount_put(m);	/* the table's reference */
	mount_put(m);	/* ours */
}

static int mount_check(const struct s3d_req *r)
{
	if (!r->bucket || !s3d_bucket_valid(r->bucket))
		return -EINVAL;
	if (!r->prefix || !s3d_prefix_valid(r->prefix))
		return -EINVAL;
	if (!r->cache_dir || r->cache_dir[0] != '/')
		return -EINVAL;
	if (r->chunk < S3CFS_CHUNK_MIN || r->chunk > S3CFS_CHUNK_MAX ||
	    (r->chunk & (r->chunk - 1)))
		return -EINVAL;
	return 0;
}

static void do_mount(struct s3d_req *r)
{
	struct s3d_mount *m;
	struct s3d_ctx *ctx;
	int err;

	err = mount_check(r);
	if (err) {
		s3d_err("mount %u: invalid parameters (bucket, prefix, cache dir or chunk size %u)",
			r->mount_id, r->chunk);
		goto out;
	}
	m = calloc(1, sizeof(*m));
	if (!m) {
		err = -ENOMEM;
		goto out;
	}
	m->rootfd = -1;
	m->refs = 1;
	m->id = r->mount_id;
	m->chunk = r->chunk;
	m->bucket = strdup(r->bucket);
	m->prefix = strdup(r->prefix);
	m->cache_dir = strdup(r->cache_dir);
	if (!m->bucket || !m->prefix || !m->cache_dir) {
		err = -ENOMEM;
		goto put;
	}
	err = s3d_store_open_root(r->cache_dir, &m->rootfd);
	if (err) {
		s3d_err("mount %u: cache directory %s: %s", r->mount_id,
			r->cache_dir, strerror(-err));
		goto put;
	}
	err = s3d_store_check_format(m->rootfd, m->bucket, m->prefix);
	if (err) {
		s3d_err("mount %u: cache directory %s refused for s3://%s/%s: %s",
			r->mount_id, r->cache_dir, m->bucket, m->prefix,
			strerror(-err));
		goto put;
	}
	/* Unusable credentials fail the mount, not each read after it. */
	ctx = s3d_ctx_get(m->bucket, &err);
	if (!ctx) {
		s3d_err("mount %u: s3://%s: no S3 client (see above)",
			r->mount_id, m->bucket);
		err = err == -ENOENT ? -EACCES : err;
		goto put;
	}
	/* Waits for credentials being resolved, on the loop. */
	err = ctx_ready(ctx, r, m);
	if (err <= 0)
		mount_done(r, m, ctx, err);
	return;
put:
	mount_put(m);
out:
	finish(r, err);
}

/* The second half of a MOUNT, once its context's credentials are known. */
static void mount_done(struct s3d_req *r, struct s3d_mount *m,
		       struct s3d_ctx *ctx, int err)
{
	if (err) {
		s3d_err("mount %u: s3://%s: no AWS credentials (%s; see above)",
			r->mount_id, m->bucket, strerror(-err));
		mount_put(m);
		s3d_ctx_put(ctx);
		finish(r, err);
		return;
	}
	/* A MOUNT for a known id (the kernel re-sends them) replaces it. */
	mount_forget(m->id);
	m->cache = s3d_cache_open(m->id, m->rootfd,
				  s3d_cache_policy_for(m->bucket));
	s3d_list_add_tail(&m->node, &mounts);
	s3d_info("mount %u: s3://%s/%s cached in %s (chunk %u KiB, %s settings)",
		 m->id, m->bucket, m->prefix, m->cache_dir, m->chunk >> 10,
		 ctx->bucket ? "its [bucket] section's" : "[global]");
	s3d_ctx_put(ctx);
	finish(r, 0);
}

/* ---- helpers shared by the operations ---- */

/* PATH = PARENT "/" NAME; PARENT is "" for a top-level name. */
static int split_path(const char *path, char **parent, const char **name)
{
	const char *slash = strrchr(path, '/');

	*parent = slash ? strndup(path, slash - path) : strdup("");
	*name = slash ? slash + 1 : path;
	return *parent ? 0 : -ENOMEM;
}

static void log_skip(const struct s3d_mount *m, const char *key,
		     const char *why)
{
	char once[S3D_KEY_MAX + 32], esc[4 * S3D_KEY_MAX / 2];

	snprintf(once, sizeof(once), "%u:%s", m->id, key);
	if (!s3d_log_once(once))
		return;
	s3d_escape(key, esc, sizeof(esc));
	s3d_warn("s3://%s/%s: %s", m->bucket, esc, why);
}

static int list_prepare(struct s3d_xfer *x, struct s3d_ctx *ctx,
			const struct s3d_mount *m, const char *prefix, const char *token, bool one)
{
	struct s3d_kv q[6];
	size_t n = 0;

	/* Keys may hold bytes XML 1.0 cannot carry: have them url-encoded. */
	q[n++] = (struct s3d_kv){ "encoding-type", "url" };
	q[n++] = (struct s3d_kv){ "list-type", "2" };
	q[n++] = (struct s3d_kv){ "prefix", prefix };
	if (one)
		q[n++] = (struct s3d_kv){ "max-keys", "1" };
	else
		q[n++] = (struct s3d_kv){ "delimiter", "/" };
	if (token)
		q[n++] = (struct s3d_kv){ "continuation-token", token };
	return s3d_s3_build(&ctx->s3, "GET", m->bucket, "", q, n, NULL, 0,
			    time(NULL), &x->req);
}

static int head_prepare(struct s3d_xfer *x, struct s3d_ctx *ctx,
			const struct s3d_mount *m, const char *key)
{
	return s3d_s3_build(&ctx->s3, "HEAD", m->bucket, key, NULL, 0, NULL, 0,
			    time(NULL), &x->req);
}

/* Metadata of the object a successful HEAD describes. */
static int head_meta(const struct s3d_xfer *x, struct s3d_meta *meta)
{
	if (!x->has_etag || x->content_length < 0)
		return -EIO;
	meta->etag = x->etag;
	meta->size = (uint64_t)x->content_length;
	meta->mtime = x->last_modified;
	return 0;
}

/* ---- LIST ---- */

/*
 * Pages are applied to the cache directory a slice at a time from a timer,
 * so a directory of a million objects never holds the loop for long, and
 * the next page is already being fetched while this one is applied (at
 * most LIST_AHEAD pages parsed and waiting).
 */
#define LIST_SLICE	256
#define LIST_AHEAD	2

enum { SEEN_FILE = 1, SEEN_DIR = 2 };

struct deferred {
	struct deferred *next;
	struct s3d_obj obj;
	char name[];
};

struct list_page {
	struct list_page *next;
	struct s3d_list_page pg;
	size_t next_prefix;	/* the first not applied yet */
	size_t next_obj;
};

struct list_op {
	struct s3d_req *r;
	struct s3d_mount *m;
	struct s3d_ctx *ctx;	/* its bucket's S3 context */
	char *lp;		/* listing prefix */
	int dirfd;
	bool at_root;
	char *token;		/* continuation token for the next page */
	bool more;		/* a next page exists and is not requested yet */
	bool fetching;		/* a page request is queued or in flight */
	bool last;		/* the final page has arrived */
	struct list_page *head, *tail;	/* parsed pages, oldest first */
	unsigned int queued;
	unsigned int pages;
	struct s3d_strset seen;
	struct deferred *deferred;	/* files whose name is a dir on disk */
	struct s3d_timer work;
	struct s3d_xfer x;
};

static void list_finish(struct list_op *op, int err)
{
	struct s3d_req *r = op->r;

	while (op->deferred) {
		struct deferred *d = op->deferred;

		op->deferred = d->next;
		free(d->obj.etag);
		free(d);
	}
	while (op->head) {
		struct list_page *p = op->head;

		op->head = p->next;
		s3d_list_page_free(&p->pg);
		free(p);
	}
	s3d_timer_cancel(&op->work);
	s3d_ctx_release(&op->x);
	s3d_strset_free(&op->seen);
	if (op->dirfd >= 0)
		close(op->dirfd);
	mount_put(op->m);
	s3d_ctx_put(op->ctx);
	free(op->lp);
	free(op->token);
	free(op);
	finish(r, err);
}

static int list_page_prepare(struct s3d_xfer *x)
{
	struct list_op *op = s3d_container_of(x, struct list_op, x);

	op->r->started = true;
	return list_prepare(x, op->ctx, op->m, op->lp, op->token, false);
}

static int list_dir(struct list_op *op, const char *cp)
{
	char name[256];
	size_t len;
	const char *p = s3d_list_name(op->lp, cp, true, &len);
	int err;

	if (!p || !s3d_name_valid(p, len, op->at_root)) {
		log_skip(op->m, cp, "common prefix is not a usable directory name; skipped");
		return 0;
	}
	memcpy(name, p, len);
	name[len] = '\0';
	if (s3d_strset_put(&op->seen, name, SEEN_DIR) < 0)
		return -ENOMEM;
	err = s3d_store_ensure_dir(op->dirfd, name, true);
	if (err == 1)
		log_skip(op->m, cp, "a directory replaces the object of the same name");
	return err < 0 ? err : 0;
}

static int defer_file(struct list_op *op, const char *name,
		      const struct s3d_obj *o)
{
	struct deferred *d = calloc(1, sizeof(*d) + strlen(name) + 1);

	if (!d)
		return -ENOMEM;
	strcpy(d->name, name);
	d->obj = *o;
	d->obj.key = NULL;
	d->obj.etag = strdup(o->etag);
	if (!d->obj.etag) {
		free(d);
		return -ENOMEM;
	}
	d->next = op->deferred;
	op->deferred = d;
	return 0;
}

static int list_file(struct list_op *op, const struct s3d_obj *o)
{
	struct s3d_meta meta = { o->etag, o->size, o->mtime };
	const char *p;
	size_t len;
	int seen, err;

	if (!strcmp(o->key, op->lp))
		return 0;	/* the "dir/" marker object itself */
	p = s3d_list_name(op->lp, o->key, false, &len);
	if (!p || !s3d_name_valid(p, len, op->at_root)) {
		log_skip(op->m, o->key, "key is not a usable file name; skipped");
		return 0;
	}
	if (s3d_strset_get(&op->seen, p, &seen) && seen == SEEN_DIR) {
		log_skip(op->m, o->key, "object hidden by a directory of the same name");
		return 0;
	}
	if (s3d_strset_put(&op->seen, p, SEEN_FILE) < 0)
		return -ENOMEM;
	/*
	 * A directory on disk may yet be confirmed by a common prefix on a
	 * later page; only replace it (and its cached contents) at the end.
	 */
	err = s3d_store_ensure_file(op->dirfd, p, &meta, false);
	if (err == -EISDIR)
		return defer_file(op, p, o);
	return err < 0 ? err : 0;
}

/* Apply up to @budget entries of @lp; returns the budget left or -errno. */
static int list_apply(struct list_op *op, struct list_page *lp, int budget)
{
	const struct s3d_list_page *pg = &lp->pg;
	int err;

	while (budget > 0 && lp->next_prefix < pg->nprefixes) {
		err = list_dir(op, pg->prefixes[lp->next_prefix++]);
		if (err)
			return err;
		budget--;
	}
	while (budget > 0 && lp->next_obj < pg->nobjs) {
		err = list_file(op, &pg->objs[lp->next_obj++]);
		if (err)
			return err;
		budget--;
	}
	return budget;
}

static int list_deferred(struct list_op *op)
{
	struct deferred *d;
	int seen, err;

	for (d = op->deferred; d; d = d->next) {
		struct s3d_meta meta = { d->obj.etag, d->obj.size, d->obj.mtime };

		if (!s3d_strset_get(&op->seen, d->name, &seen) ||
		    seen != SEEN_FILE)
			continue;
		err = s3d_store_ensure_file(op->dirfd, d->name, &meta, true);
		if (err < 0)
			return err;
	}
	return 0;
}

static bool list_keep(const char *name, void *arg)
{
	struct list_op *op = arg;

	return s3d_strset_get(&op->seen, name, NULL);
}

static void list_complete(struct list_op *op)
{
	int err;

	err = list_deferred(op);
	err = err ?: s3d_store_prune(op->dirfd, op->at_root, list_keep, op);
	err = err ?: s3d_store_set_listed(op->dirfd, time(NULL));
	if (err)
		s3d_err("LIST s3://%s/%s: cache directory: %s", op->m->bucket,
			op->lp, strerror(-err));
	else
		s3d_dbg("LIST s3://%s/%s: %zu entries in %u pages",
			op->m->bucket, op->lp, op->seen.count, op->pages);
	list_finish(op, err);
}

static void list_fetch_more(struct list_op *op)
{
	if (!op->more || op->fetching || op->queued >= LIST_AHEAD)
		return;
	op->more = false;
	op->fetching = true;
	s3d_ctx_submit(op->ctx, &op->x);
}

static void list_work(struct s3d_timer *t)
{
	struct list_op *op = s3d_container_of(t, struct list_op, work);
	int budget = LIST_SLICE;

	while (op->head && budget > 0) {
		struct list_page *p = op->head;

		budget = list_apply(op, p, budget);
		if (budget < 0) {
			s3d_err("LIST s3://%s/%s: cache directory: %s",
				op->m->bucket, op->lp, strerror(-budget));
			list_finish(op, budget);
			return;
		}
		if (p->next_prefix < p->pg.nprefixes || p->next_obj < p->pg.nobjs)
			break;
		op->head = p->next;
		if (!op->head)
			op->tail = NULL;
		op->queued--;
		s3d_list_page_free(&p->pg);
		free(p);
		list_fetch_more(op);
	}
	if (op->head)
		s3d_timer_arm(&op->work, 0);	/* more after other events */
	else if (op->last && !op->fetching)
		list_complete(op);
}

static int list_page_done(struct s3d_xfer *x)
{
	struct list_op *op = s3d_container_of(x, struct list_op, x);
	struct list_page *p;
	char why[160];
	int err;

	op->fetching = false;
	err = s3d_xfer_errno(x, op->m->bucket);
	if (err) {
		list_finish(op, err);
		return 0;
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		list_finish(op, -ENOMEM);
		return 0;
	}
	op->pages++;
	err = s3d_xml_parse_list(s3d_buf_str(&x->resp), x->resp.len, &p->pg,
				 why, sizeof(why));
	if (!err && p->pg.truncated && op->token &&
	    !strcmp(op->token, p->pg.next_token)) {
		snprintf(why, sizeof(why), "continuation token repeated");
		err = -EINVAL;
	}
	if (err) {
		s3d_err("LIST s3://%s/%s: unusable response (page %u): %s",
			op->m->bucket, op->lp, op->pages, why);
		s3d_list_page_free(&p->pg);
		free(p);
		list_finish(op, err == -ENOMEM ? err : -EIO);
		return 0;
	}
	if (p->pg.truncated) {
		free(op->token);
		op->token = p->pg.next_token;
		p->pg.next_token = NULL;
		op->more = true;
	} else {
		op->last = true;
	}
	if (op->tail)
		op->tail->next = p;
	else
		op->head = p;
	op->tail = p;
	op->queued++;
	report_progress(op->r);		/* a page: the listing moves on */
	list_fetch_more(op);
	if (!op->work.armed)
		s3d_timer_arm(&op->work, 0);
	return 0;
}

static const struct s3d_xfer_ops list_ops = {
	.prepare = list_page_prepare,
	.done = list_page_done,
};

static void do_list(struct s3d_req *r, struct s3d_mount *m,
		    struct s3d_ctx *ctx)
{
	struct list_op *op;
	int err;

	op = calloc(1, sizeof(*op));
	if (!op) {
		fail_early(r, m, ctx, -ENOMEM);
		return;
	}
	op->r = r;
	op->m = m;
	op->ctx = ctx;
	op->dirfd = -1;
	op->at_root = !*r->path;
	s3d_strset_init(&op->seen);
	s3d_list_init(&op->work.node);
	op->work.fn = list_work;
	s3d_xfer_init(&op->x, &list_ops, "LIST", "");
	op->lp = s3d_list_prefix(m->prefix, r->path);
	if (!op->lp) {
		list_finish(op, -errno);
		return;
	}
	op->x.key = op->lp;
	err = s3d_store_open_dir(m->rootfd, r->path, true, &op->dirfd);
	if (err) {
		s3d_err("LIST %s: cache directory %s/%s: %s", op->lp,
			m->cache_dir, r->path, strerror(-err));
		list_finish(op, err);
		return;
	}
	op->fetching = true;
	s3d_ctx_submit(op->ctx, &op->x);
}

/* ---- LOOKUP ---- */

struct lookup_op {
	struct s3d_req *r;
	struct s3d_mount *m;
	struct s3d_ctx *ctx;	/* its bucket's S3 context */
	char *key;
	char *dirprefix;	/* key + "/" */
	int left;		/* transfers still running */
	struct s3d_xfer head;
	struct s3d_xfer list;
};

static void lookup_finish(struct lookup_op *op, int err)
{
	struct s3d_req *r = op->r;

	s3d_ctx_release(&op->head);
	s3d_ctx_release(&op->list);
	mount_put(op->m);
	s3d_ctx_put(op->ctx);
	free(op->key);
	free(op->dirprefix);
	free(op);
	finish(r, err);
}

static int lookup_head_prepare(struct s3d_xfer *x)
{
	struct lookup_op *op = s3d_container_of(x, struct lookup_op, head);

	op->r->started = true;
	return head_prepare(x, op->ctx, op->m, op->key);
}

static int lookup_list_prepare(struct s3d_xfer *x)
{
	struct lookup_op *op = s3d_container_of(x, struct lookup_op, list);

	op->r->started = true;
	return list_prepare(x, op->ctx, op->m, op->dirprefix, NULL, true);
}

/* 1: the listing shows a directory, 0: it does not, <0: it failed. */
static int lookup_is_dir(struct lookup_op *op)
{
	struct s3d_list_page pg;
	char why[160];
	int err;

	err = s3d_xfer_errno(&op->list, op->m->bucket);
	if (err)
		return err;
	err = s3d_xml_parse_list(s3d_buf_str(&op->list.resp), op->list.resp.len,
				 &pg, why, sizeof(why));
	if (err) {
		s3d_err("LIST s3://%s/%s: unusable response: %s", op->m->bucket,
			op->dirprefix, why);
		return -EIO;
	}
	err = pg.nobjs + pg.nprefixes > 0;
	s3d_list_page_free(&pg);
	return err;
}

static int lookup_apply(struct lookup_op *op, bool dir, struct s3d_meta *meta)
{
	const char *name = op->r->name;
	int dirfd, err;

	err = s3d_store_open_dir(op->m->rootfd, op->r->path, true, &dirfd);
	if (err) {
		s3d_err("LOOKUP %s: cache directory %s/%s: %s", op->key,
			op->m->cache_dir, op->r->path, strerror(-err));
		return err;
	}
	if (dir)
		err = s3d_store_ensure_dir(dirfd, name, true);
	else
		err = s3d_store_ensure_file(dirfd, name, meta, true);
	if (err == 1 && dir)
		log_skip(op->m, op->key, "a directory replaces the object of the same name");
	close(dirfd);
	if (err < 0)
		s3d_err("LOOKUP %s: cache entry: %s", op->key, strerror(-err));
	return err < 0 ? err : 0;
}

/* Neither an object nor a prefix: drop whatever the cache still has. */
static int lookup_negative(struct lookup_op *op)
{
	int dirfd, err;

	err = s3d_store_open_dir(op->m->rootfd, op->r->path, false, &dirfd);
	if (err)
		return -ENOENT;
	err = s3d_store_remove(dirfd, op->r->name);
	close(dirfd);
	if (err)
		s3d_err("LOOKUP %s: removing stale cache entry: %s", op->key,
			strerror(-err));
	return -ENOENT;
}

static void lookup_decide(struct lookup_op *op)
{
	struct s3d_meta meta;
	int is_dir, err;

	is_dir = lookup_is_dir(op);
	if (is_dir == 1) {
		lookup_finish(op, lookup_apply(op, true, NULL));
		return;
	}
	if (s3d_xfer_ok(&op->head)) {
		err = head_meta(&op->head, &meta);
		if (err)
			s3d_err("HEAD s3://%s/%s: response without ETag or Content-Length",
				op->m->bucket, op->key);
		else
			err = lookup_apply(op, false, &meta);
		lookup_finish(op, err);
		return;
	}
	err = s3d_xfer_errno(&op->head, op->m->bucket);
	if (err == -ENOENT && is_dir == 0)
		err = lookup_negative(op);
	else if (err == -ENOENT)
		err = is_dir;	/* the listing failed: that is the answer */
	lookup_finish(op, err);
}

static int lookup_head_done(struct s3d_xfer *x)
{
	struct lookup_op *op = s3d_container_of(x, struct lookup_op, head);

	if (--op->left == 0)
		lookup_decide(op);
	return 0;
}

static int lookup_list_done(struct s3d_xfer *x)
{
	struct lookup_op *op = s3d_container_of(x, struct lookup_op, list);

	if (--op->left == 0)
		lookup_decide(op);
	return 0;
}

static const struct s3d_xfer_ops lookup_head_ops = {
	.prepare = lookup_head_prepare,
	.done = lookup_head_done,
};

static const struct s3d_xfer_ops lookup_list_ops = {
	.prepare = lookup_list_prepare,
	.done = lookup_list_done,
};

static void do_lookup(struct s3d_req *r, struct s3d_mount *m,
		    struct s3d_ctx *ctx)
{
	struct lookup_op *op;
	size_t n;

	if (!r->name || !s3d_name_valid(r->name, strlen(r->name), !*r->path)) {
		/* Names we never map do not exist as far as anyone can see. */
		fail_early(r, m, ctx, -ENOENT);
		return;
	}
	op = calloc(1, sizeof(*op));
	if (!op) {
		fail_early(r, m, ctx, -ENOMEM);
		return;
	}
	op->r = r;
	op->m = m;
	op->ctx = ctx;
	s3d_xfer_init(&op->head, &lookup_head_ops, "HEAD", "");
	s3d_xfer_init(&op->list, &lookup_list_ops, "LIST", "");
	op->key = s3d_key_of(m->prefix, r->path, r->name);
	if (!op->key) {
		lookup_finish(op, -errno);
		return;
	}
	n = strlen(op->key);
	op->dirprefix = malloc(n + 2);
	if (!op->dirprefix) {
		lookup_finish(op, -ENOMEM);
		return;
	}
	memcpy(op->dirprefix, op->key, n);
	strcpy(op->dirprefix + n, "/");
	op->head.key = op->key;
	op->list.key = op->dirprefix;
	op->left = 2;
	s3d_ctx_submit(op->ctx, &op->head);
	s3d_ctx_submit(op->ctx, &op->list);
}

/* ---- FETCH ---- */

struct fetch_op {
	struct s3d_req *r;
	struct s3d_mount *m;
	struct s3d_ctx *ctx;	/* its bucket's S3 context */
	char *key;
	int fd;			/* lower file, O_RDWR | O_DIRECT; see below */
	uint64_t size;		/* object (and lower file) size */
	uint64_t start, end;	/* [start, end) is filled */
	uint64_t done;		/* [start, start + done) is written */
	char *buf;		/* 4096-aligned piece buffer; see below */
	size_t bufsz;
	uint64_t pos;		/* file offset of the next body byte */
	size_t fill;		/* buf holds [pos - fill, pos) */
	bool checked;		/* response headers vetted this attempt */
	bool etag_bad;		/* response ETag is not the one we want */
	bool whole;		/* this attempt: a 200, the whole object */
	bool whole_counted;	/* the cache tracker knows of the rest */
	bool renew;		/* stale path: the cache file itself was bad */
	bool counted;		/* the cache tracker knows of this fetch */
	bool gone;		/* the cache file went while we waited */
	struct s3d_xfer x;	/* the GET, then the HEAD if stale */
};

/*
 * A FETCH holds its cache file open and its piece buffer only while an
 * attempt of its GET is in flight (from ->prepare to ->ended): thousands of
 * FETCHes may wait for a slot (the kernel queues up to max_pending), and
 * each would otherwise hold a descriptor (EMFILE at 1024 without systemd's
 * limit) and up to S3D_PIECE_MAX of memory. So descriptors and buffers
 * grow with --max-inflight, not with the queue.
 */
static void fetch_io_put(struct fetch_op *op)
{
	if (op->fd >= 0)
		close(op->fd);
	op->fd = -1;
	free(op->buf);
	op->buf = NULL;
}

static void fetch_finish(struct fetch_op *op, int err)
{
	struct s3d_req *r = op->r;

	if (op->counted)
		s3d_cache_fetched(op->m->cache, r->path);
	s3d_ctx_release(&op->x);
	fetch_io_put(op);
	mount_put(op->m);
	s3d_ctx_put(op->ctx);
	free(op->key);
	free(op);
	finish(r, err);
}

static uint64_t round_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) / a * a;
}

/*
 * Write the @len bytes of the buffer at file offset @off. Only the very
 * last piece of the object may be unaligned: it is written rounded up to
 * the block size and the file truncated back to the object size afterwards.
 *
 * No fdatasync: on ext4 and xfs a direct write into a hole allocates
 * unwritten extents and converts them to written only when the write has
 * completed, so after a crash the range reads back as a hole (missing, to
 * be fetched again), never as garbage presented as data.
 */
static int fetch_write(struct fetch_op *op, uint64_t off, size_t len)
{
	size_t alen = round_up(len, S3D_DIO_ALIGN), put = 0;
	ssize_t n;

	if (off % S3D_DIO_ALIGN || (alen != len && off + len != op->size))
		return -EINVAL;		/* cannot happen: pieces are aligned */
	memset(op->buf + len, 0, alen - len);
	while (put < alen) {
		n = pwrite(op->fd, op->buf + put, alen - put, (off_t)(off + put));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO;
		put += n;
	}
	if (alen != len && ftruncate(op->fd, (off_t)op->size))
		return -errno;
	return 0;
}

static int fetch_open(struct fetch_op *op);

/*
 * The cache file and the buffer, for an attempt that starts now. The file
 * was checked when the FETCH came and closed while it waited: a LIST or
 * LOOKUP may have renewed it since (-ESTALE), or removed it.
 */
static int fetch_io_get(struct fetch_op *op)
{
	int err;

	if (op->fd < 0) {
		err = fetch_open(op);
		if (err) {
			op->gone = err == -ENOENT;
			fetch_io_put(op);
			return err;
		}
	}
	if (!op->buf &&
	    posix_memalign((void **)&op->buf, S3D_DIO_ALIGN, op->bufsz)) {
		op->buf = NULL;
		return -ENOMEM;
	}
	return 0;
}

static void fetch_get_ended(struct s3d_xfer *x)
{
	/* A retry starts over after the last piece written (prepare). */
	fetch_io_put(s3d_container_of(x, struct fetch_op, x));
}

static int fetch_get_prepare(struct s3d_xfer *x)
{
	struct fetch_op *op = s3d_container_of(x, struct fetch_op, x);
	char range[64];
	struct s3d_kv h[2];
	int err;

	err = fetch_io_get(op);
	if (err)
		return err;
	/* A retry resumes after the pieces already written. */
	op->r->started = true;
	op->fill = 0;
	op->pos = op->start + op->done;
	op->checked = false;
	op->whole = false;
	snprintf(range, sizeof(range), "bytes=%llu-%llu",
		 (unsigned long long)(op->start + op->done),
		 (unsigned long long)(op->end - 1));
	h[0] = (struct s3d_kv){ "Range", range };
	/* Exactly as the server gave it (RGW compares If-Match verbatim). */
	h[1] = (struct s3d_kv){ "If-Match", op->r->etag };
	return s3d_s3_build(&op->ctx->s3, "GET", op->m->bucket, op->key, NULL, 0, h, 2,
			    time(NULL), &x->req);
}

/*
 * First body bytes of an attempt: is this the response we asked for? A
 * 206 must say, in Content-Range and Content-Length, exactly the bytes we
 * asked for, of an object of the size we know; a 200 (Range ignored) must
 * be the whole object. Anything else is an error, not data.
 */
static bool fetch_vet(struct fetch_op *op, struct s3d_xfer *x)
{
	uint64_t from = op->start + op->done;

	op->checked = true;
	if (!x->has_etag || !s3d_etag_eq(x->etag, op->r->etag)) {
		op->etag_bad = true;
		return false;
	}
	if (x->status == 206) {
		if (x->range_start != (int64_t)from ||
		    x->range_end != (int64_t)(op->end - 1) ||
		    (x->range_total >= 0 && x->range_total != (int64_t)op->size) ||
		    (x->content_length >= 0 &&
		     x->content_length != (int64_t)(op->end - from))) {
			s3d_err("GET s3://%s/%s: asked for bytes %llu-%llu of %llu, got Content-Range %lld-%lld/%lld, Content-Length %lld",
				op->m->bucket, op->key, (unsigned long long)from,
				(unsigned long long)(op->end - 1),
				(unsigned long long)op->size,
				(long long)x->range_start, (long long)x->range_end,
				(long long)x->range_total,
				(long long)x->content_length);
			x->err = -EIO;
			return false;
		}
		return true;
	}
	if (x->status != 200 ||
	    (x->content_length >= 0 && x->content_length != (int64_t)op->size)) {
		s3d_err("GET s3://%s/%s: HTTP %ld with %lld bytes for an object of %llu",
			op->m->bucket, op->key, x->status,
			(long long)x->content_length,
			(unsigned long long)op->size);
		x->err = -EIO;
		return false;
	}
	/*
	 * 200: the server ignored Range and sends the whole object. Every
	 * byte of it is valid for this ETag: keep it all (the chunks before
	 * and after ours are found on disk by the FETCHes that follow), so
	 * a sequential reader costs one GET, not one whole object per chunk.
	 */
	if (!op->whole_counted) {
		s3d_cache_fetching(op->m->cache, op->size - (op->end - op->start));
		op->whole_counted = true;
	}
	op->whole = true;
	op->pos = 0;
	/* Bounded: past it, later FETCHes just GET again. */
	if (op->m->whole.count < 65536)
		s3d_strset_put(&op->m->whole, op->r->path, 1);
	return true;
}

/*
 * Whole chunks written since the last report: tell the kernel now, so that
 * a reader waiting for the first chunk of a long range goes on while the
 * rest streams in. The answer covers the last chunk, unless the rest of a
 * whole object is still to be written after our range (then all of it).
 */
static void fetch_report_landed(struct fetch_op *op)
{
	uint64_t chunk = op->m->chunk, len = op->end - op->start;
	uint64_t upto = (op->start + op->done) / chunk * chunk - op->start;

	if (op->done >= len && op->whole && op->pos < op->size)
		upto = len;
	else if (op->start + op->done >= op->end)
		return;
	if (upto <= op->r->done)
		return;
	op->r->done = upto;
	report_progress(op->r);
}

/* The buffer holds [pos - fill, pos): write it out. */
static int fetch_flush(struct fetch_op *op, struct s3d_xfer *x)
{
	uint64_t off = op->pos - op->fill;
	int err;

	err = fetch_write(op, off, op->fill);
	if (err) {
		s3d_err("GET s3://%s/%s: writing to the cache file: %s",
			op->m->bucket, op->key, strerror(-err));
		if (err == -ENOSPC || err == -EDQUOT)
			s3d_cache_nospace(op->m->cache, op->fill);
		x->err = err;
		return err;
	}
	op->fill = 0;
	s3d_xfer_progress(x);	/* the retry clock starts again */
	/* Everything below pos is written (a 206 resumes at start + done). */
	if (op->pos > op->start + op->done && off <= op->start + op->done) {
		op->done = S3D_MIN(op->pos, op->end) - op->start;
		fetch_report_landed(op);
	}
	return 0;
}

static size_t fetch_body(struct s3d_xfer *x, const char *p, size_t n)
{
	struct fetch_op *op = s3d_container_of(x, struct fetch_op, x);
	size_t taken = n, c;
	uint64_t limit;

	if (!op->checked && !fetch_vet(op, x))
		return 0;
	limit = op->whole ? op->size : op->end;
	if (n)
		op->r->moved = true;
	while (n) {
		if (op->pos >= limit) {
			s3d_err("GET s3://%s/%s: response longer than %s",
				op->m->bucket, op->key,
				op->whole ? "the object" : "the range asked for");
			x->err = -EIO;
			return 0;
		}
		c = S3D_MIN(S3D_MIN((uint64_t)n, limit - op->pos),
			    op->bufsz - op->fill);
		memcpy(op->buf + op->fill, p, c);
		op->fill += c;
		op->pos += c;
		p += c;
		n -= c;
		if ((op->fill == op->bufsz || op->pos == limit) &&
		    fetch_flush(op, x))
			return 0;
	}
	return taken;
}

static void fetch_stale(struct fetch_op *op, const char *why);

static int fetch_get_done(struct s3d_xfer *x)
{
	struct fetch_op *op = s3d_container_of(x, struct fetch_op, x);
	uint64_t total = op->end - op->start;
	int err;

	if (op->gone) {
		op->gone = false;
		op->renew = true;
		fetch_stale(op, "the cache file is gone");
		return 0;
	}
	if (op->etag_bad) {
		fetch_stale(op, x->has_etag ? "the response carries another ETag" :
				"the response carries no ETag");
		return 0;
	}
	if (x->cres == CURLE_OK && x->status == 412) {
		fetch_stale(op, "precondition failed (If-Match)");
		return 0;
	}
	if (x->err) {
		/* Already logged where it happened (body sink, prepare). */
		fetch_finish(op, x->err);
		return 0;
	}
	if (op->done >= total) {
		/* Our range is in (of a whole object, maybe not all the rest). */
		s3d_dbg("GET s3://%s/%s: %llu bytes at %llu cached%s",
			op->m->bucket, op->key, (unsigned long long)total,
			(unsigned long long)op->start,
			op->whole ? " (the server sent the whole object)" : "");
		fetch_finish(op, 0);
		return 0;
	}
	err = s3d_xfer_errno(x, op->m->bucket);
	if (err) {
		fetch_finish(op, err);
		return 0;
	}
	if (x->can_retry)
		return S3D_XFER_RETRY;
	s3d_err("GET s3://%s/%s: body ended after %llu of %llu bytes, giving up",
		op->m->bucket, op->key,
		(unsigned long long)(op->done + op->fill),
		(unsigned long long)total);
	fetch_finish(op, -EIO);
	return 0;
}

static const struct s3d_xfer_ops fetch_get_ops = {
	.prepare = fetch_get_prepare,
	.body = fetch_body,
	.done = fetch_get_done,
	.ended = fetch_get_ended,
};

static int fetch_head_prepare(struct s3d_xfer *x)
{
	struct fetch_op *op = s3d_container_of(x, struct fetch_op, x);

	op->r->started = true;
	return head_prepare(x, op->ctx, op->m, op->key);
}

/* The object changed (or its cache file vanished): renew the file. */
static int fetch_head_done(struct s3d_xfer *x)
{
	struct fetch_op *op = s3d_container_of(x, struct fetch_op, x);
	const char *name;
	struct s3d_meta meta;
	char *parent;
	int dirfd, err;

	err = s3d_xfer_errno(x, op->m->bucket);
	if (!err)
		err = head_meta(x, &meta);
	err = err ?: split_path(op->r->path, &parent, &name);
	if (err) {
		/* Deleted: the kernel learns it from -ENOENT; LIST cleans up. */
		fetch_finish(op, err);
		return 0;
	}
	if (!op->renew && s3d_etag_eq(meta.etag, op->r->etag)) {
		/*
		 * S3 says the object is the version we asked for, yet the GET
		 * disagreed. Renewing the file would only send the kernel
		 * round again; let the read fail instead.
		 */
		s3d_err("s3://%s/%s: GET and HEAD disagree about ETag %s",
			op->m->bucket, op->key, op->r->etag);
		free(parent);
		fetch_finish(op, -EIO);
		return 0;
	}
	err = s3d_store_open_dir(op->m->rootfd, parent, true, &dirfd);
	free(parent);
	if (!err) {
		err = s3d_store_replace_file(dirfd, name, &meta);
		close(dirfd);
	}
	if (err) {
		s3d_err("FETCH %s: replacing the cache file: %s", op->key,
			strerror(-err));
		fetch_finish(op, err);
		return 0;
	}
	s3d_info("s3://%s/%s: now ETag %s, %llu bytes; cache file renewed",
		 op->m->bucket, op->key, meta.etag,
		 (unsigned long long)meta.size);
	fetch_finish(op, -ESTALE);
	return 0;
}

static const struct s3d_xfer_ops fetch_head_ops = {
	.prepare = fetch_head_prepare,
	.done = fetch_head_done,
};

static void fetch_stale(struct fetch_op *op, const char *why)
{
	s3d_info("GET s3://%s/%s (ETag %s): %s; checking the object",
		 op->m->bucket, op->key, op->r->etag, why);
	s3d_ctx_release(&op->x);
	fetch_io_put(op);
	s3d_xfer_init(&op->x, &fetch_head_ops, "HEAD", op->key);
	s3d_ctx_submit(op->ctx, &op->x);
}

/* Argument checks; the kernel validates too, but trust nothing. */
static int fetch_check(const struct s3d_req *r, const struct s3d_mount *m)
{
	if (!*r->path || !r->etag || !*r->etag || !r->len)
		return -EINVAL;
	if (r->off % m->chunk || r->off > UINT64_MAX - r->len)
		return -EINVAL;
	return 0;
}

static int fetch_open(struct fetch_op *op)
{
	char etag[S3CFS_ETAG_MAX + 2];
	struct stat st;
	int err;

	err = s3d_store_open_file(op->m->rootfd, op->r->path,
				  O_RDWR | O_DIRECT, &op->fd);
	if (err)
		return err;
	err = s3d_store_get_etag(op->fd, etag, sizeof(etag));
	if (err == -ENODATA)
		return -ENOENT;		/* not one of ours: renew it */
	if (err)
		return err;
	if (!s3d_etag_eq(etag, op->r->etag))
		return -ESTALE;		/* already replaced by a newer one */
	/*
	 * The object's size: the file's i_size may be longer (a crash after
	 * writing the last piece rounded up, before the truncate back); a
	 * file of an older cache has no size stored and is its i_size long,
	 * as the kernel takes it too.
	 */
	err = s3d_store_get_size(op->fd, &op->size);
	if (err == -EINVAL)
		return -ENOENT;		/* a bad size: renew it */
	if (err != -ENODATA)
		return err;
	if (fstat(op->fd, &st))
		return -errno;
	op->size = (uint64_t)st.st_size;
	return 0;
}

/*
 * A server that ignored Range for this file gave us the whole object, and
 * [start, end) is data in the lower file already: written whole by this
 * daemon for this ETag (pieces are written whole, and a range is only
 * complete when all of its pieces are), so nothing is to be fetched.
 * Other files are asked for as ever (the GET's If-Match revalidates).
 */
static bool fetch_present(const struct fetch_op *op)
{
	off_t hole;

	if (!s3d_strset_get(&op->m->whole, op->r->path, NULL))
		return false;
	hole = lseek(op->fd, (off_t)op->start, SEEK_HOLE);
	return hole >= 0 && (uint64_t)hole >= op->end;
}

static void do_fetch(struct s3d_req *r, struct s3d_mount *m,
		    struct s3d_ctx *ctx)
{
	struct fetch_op *op;
	uint64_t len;
	int err;

	err = fetch_check(r, m);
	if (err) {
		s3d_err("FETCH %s: invalid request (offset %llu, length %llu)",
			r->path, (unsigned long long)r->off,
			(unsigned long long)r->len);
		fail_early(r, m, ctx, err);
		return;
	}
	op = calloc(1, sizeof(*op));
	if (!op) {
		fail_early(r, m, ctx, -ENOMEM);
		return;
	}
	op->r = r;
	op->m = m;
	op->ctx = ctx;
	op->fd = -1;
	s3d_xfer_init(&op->x, &fetch_get_ops, "GET", "");
	op->key = s3d_key_of(m->prefix, r->path, NULL);
	if (!op->key) {
		fetch_finish(op, -errno);
		return;
	}
	op->x.key = op->key;
	err = fetch_open(op);
	if (err == -ENOENT) {
		op->renew = true;
		fetch_stale(op, "no usable cache file");
		return;
	}
	if (err) {
		if (err != -ESTALE)
			s3d_err("FETCH %s: cache file %s/%s: %s", op->key,
				m->cache_dir, r->path, strerror(-err));
		fetch_finish(op, err);
		return;
	}
	if (r->off >= op->size) {
		fetch_finish(op, 0);	/* past EOF: nothing to fill */
		return;
	}
	op->start = r->off;
	op->end = S3D_MIN(r->off + r->len, op->size);
	/* Whole chunks only, or up to EOF: never round into real data. */
	if (op->end != op->size && op->end % m->chunk) {
		s3d_err("FETCH %s: length %llu is not a whole number of chunks",
			op->key, (unsigned long long)r->len);
		fetch_finish(op, -EINVAL);
		return;
	}
	if (fetch_present(op)) {
		/* Another FETCH's whole-object 200 brought it already. */
		s3d_dbg("FETCH %s: bytes %llu-%llu already in the cache file",
			op->key, (unsigned long long)op->start,
			(unsigned long long)(op->end - 1));
		fetch_finish(op, 0);
		return;
	}
	len = op->end - op->start;
	op->bufsz = (size_t)S3D_MIN(round_up(len, S3D_DIO_ALIGN),
				    (uint64_t)S3D_PIECE_MAX);
	/* Taken again when its GET starts (fetch_io_get()). */
	fetch_io_put(op);
	op->counted = true;
	s3d_cache_fetching(m->cache, len);
	op->x.prio = r->prio == S3CFS_PRIO_ASYNC ? S3D_PRIO_ASYNC :
		     S3D_PRIO_SYNC;
	s3d_ctx_submit(op->ctx, &op->x);
}

/* ---- dispatch ---- */

static void do_umount(struct s3d_req *r)
{
	s3d_info("mount %u: unmounted", r->mount_id);
	mount_forget(r->mount_id);
	pending--;
	s3d_req_free(r);	/* a notification: no reply */
}

/**
 * s3d_req_handle() - act on one request
 * @r: the request; r->reply() is called exactly once (except for UMOUNT,
 *	which is freed here), possibly before this returns
 */
void s3d_req_handle(struct s3d_req *r)
{
	struct s3d_mount *m;
	struct s3d_ctx *ctx;
	int err;

	pending++;
	r->reported_ms = s3d_now_ms();
	switch (r->cmd) {
	case S3CFS_CMD_MOUNT:
		do_mount(r);
		return;
	case S3CFS_CMD_UMOUNT:
		do_umount(r);
		return;
	case S3CFS_CMD_FETCH:
	case S3CFS_CMD_LOOKUP:
	case S3CFS_CMD_LIST:
		break;
	default:
		finish(r, -EOPNOTSUPP);
		return;
	}
	if (!r->path || !s3d_path_valid(r->path)) {
		s3d_err("request %llu: invalid path", (unsigned long long)r->id);
		finish(r, -EINVAL);
		return;
	}
	m = mount_get(r->mount_id);
	if (!m) {
		s3d_err("request %llu: unknown mount %u",
			(unsigned long long)r->id, r->mount_id);
		finish(r, -ENODEV);
		return;
	}
	if (join_active(r)) {
		mount_put(m);
		return;
	}
	/* The context as configured now: a reload affects new requests. */
	ctx = s3d_ctx_get(m->bucket, &err);
	if (!ctx) {
		mount_put(m);
		finish(r, err == -ENOENT ? -EACCES : err);
		return;
	}
	/* Credentials being resolved: it waits; failed lately: it fails. */
	err = ctx_ready(ctx, r, m);
	if (err < 0)
		fail_early(r, m, ctx, err);
	else if (!err)
		ctx_dispatch(r, m, ctx);
}

static void ctx_dispatch(struct s3d_req *r, struct s3d_mount *m,
			 struct s3d_ctx *ctx)
{
	if (r->cmd == S3CFS_CMD_FETCH)
		do_fetch(r, m, ctx);
	else if (r->cmd == S3CFS_CMD_LOOKUP)
		do_lookup(r, m, ctx);
	else
		do_list(r, m, ctx);
}

/**
 * s3d_ops_init() - start handling requests under @c
 * @c: the configuration (see s3d_ops_set_conf())
 *
 * Return: 0 or -errno (the [global] context cannot be made; logged).
 */
int s3d_ops_init(const struct s3d_conf *c)
{
	struct s3d_ctx *g;
	int err;

	s3d_list_init(&progress_timer.node);
	progress_timer.fn = progress_tick;
	err = s3d_ops_set_conf(c);
	if (err)
		return err;
	/* At start nothing is served yet: [global]'s credentials must load. */
	g = ctx_find(&ctxs, NULL);
	err = s3d_ctx_wait(g);
	if (err)
		ctxs_drop();
	return err;
}

/* Forget all mounts (operations still running keep theirs alive). */
void s3d_ops_fini(void)
{
	s3d_timer_cancel(&progress_timer);
	while (!s3d_list_empty(&mounts)) {
		struct s3d_mount *m = s3d_container_of(mounts.next,
						       struct s3d_mount, node);

		s3d_list_del(&m->node);
		mount_put(m);
	}
	ctxs_drop();
	conf = NULL;
}
