// SPDX-License-Identifier: GPL-2.0
/*
 * Conditional writes, probed: a PUT of an empty object under a name that
 * cannot exist (PREFIX.s3cfs-probe-<random>, a daemon temporary the mount
 * never shows) with If-Match a made-up ETag. A server that honours the
 * condition answers 404 NoSuchKey (or 412) and creates nothing; one that
 * ignores it creates the object (200), which is deleted at once. Anything
 * else (403 for a bucket we may only read, a 5xx) says nothing: the MOUNT
 * goes on and the next writable MOUNT probes again.
 *
 * Without conditions an upload cannot tell another writer's object from
 * the one it replaces: by default the MOUNT succeeds with a warning, and
 * with require_conditions = 1 it fails with EOPNOTSUPP.
 *
 * The kernel waits for the MOUNT: a probe not answered within
 * CAPS_WAIT_MS lets it go on (as "unknown") and finishes in the
 * background, its result kept for the next writable MOUNT.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/rand.h>

#include "caps.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "lib/prio.h"
#include "lib/util.h"
#include "lib/xfer.h"
#include "lib/xml.h"

#define CAPS_WAIT_MS	5000

enum caps_state { CAPS_UNKNOWN, CAPS_CONDITIONAL, CAPS_NONE };

struct caps_bucket {
	struct caps_bucket *next;
	enum caps_state state;
	char name[];
};

struct caps_probe {
	struct s3d_xfer x;
	struct s3d_ctx *ctx;
	char *bucket;
	char *key;
	bool deleting;		/* the probe object was created: DELETE it */
	struct s3d_timer wait;	/* the MOUNT's patience */
	void (*done)(void *arg, int err);	/* NULL once called */
	void *arg;
	struct s3d_kv h[2];
};

static struct caps_bucket *known;
static bool require;

/**
 * s3d_caps_set_require() - fail writable MOUNTs of servers without
 *	conditional writes (require_conditions)
 * @req: true: EOPNOTSUPP; false: a warning
 */
void s3d_caps_set_require(bool req)
{
	require = req;
}

static struct caps_bucket *caps_of(const char *bucket, bool add)
{
	struct caps_bucket *b;

	for (b = known; b; b = b->next)
		if (!strcmp(b->name, bucket))
			return b;
	if (!add)
		return NULL;
	b = calloc(1, sizeof(*b) + strlen(bucket) + 1);
	if (!b)
		return NULL;
	strcpy(b->name, bucket);
	b->next = known;
	known = b;
	return b;
}

/* The MOUNT's answer for a bucket whose server does @state. */
static int caps_verdict(const char *bucket, enum caps_state state)
{
	if (state != CAPS_NONE)
		return 0;
	if (require) {
		s3d_err("s3://%s: the server ignores conditional writes (If-Match): writable mount refused (require_conditions = 1)",
			bucket);
		return -EOPNOTSUPP;
	}
	s3d_warn("s3://%s: the server ignores conditional writes (If-Match, If-None-Match): an upload from this mount may overwrite another writer's object unseen (set require_conditions = 1 to refuse such mounts)",
		 bucket);
	return 0;
}

/* Tell the MOUNT, once. */
static void probe_answer(struct caps_probe *p, int err)
{
	void (*done)(void *arg, int err) = p->done;

	s3d_timer_cancel(&p->wait);
	p->done = NULL;
	if (done)
		done(p->arg, err);
}

/* The probe takes long: the MOUNT goes on; the probe goes on too. */
static void probe_waited(struct s3d_timer *t)
{
	struct caps_probe *p = s3d_container_of(t, struct caps_probe, wait);

	s3d_warn("s3://%s: no answer to the conditional-write probe within %d ms: mounting without knowing",
		 p->bucket, CAPS_WAIT_MS);
	probe_answer(p, 0);
}

static void probe_finish(struct caps_probe *p, enum caps_state state)
{
	struct caps_bucket *b = caps_of(p->bucket, true);

	if (b && state != CAPS_UNKNOWN)
		b->state = state;
	s3d_ctx_release(&p->x);
	if (p->done)
		probe_answer(p, caps_verdict(p->bucket, state));
	else if (state == CAPS_NONE)
		caps_verdict(p->bucket, state);	/* the log line */
	s3d_ctx_put(p->ctx);
	free(p->bucket);
	free(p->key);
	free(p);
}

static int probe_prepare(struct s3d_xfer *x)
{
	struct caps_probe *p = s3d_container_of(x, struct caps_probe, x);
	size_t nh = 0;

	if (p->deleting)
		return s3d_s3_build(s3d_ctx_s3(p->ctx), "DELETE", p->bucket,
				    p->key, NULL, 0, NULL, 0, time(NULL),
				    &x->req);
	p->h[nh++] = (struct s3d_kv){ "Content-Length", "0" };
	p->h[nh++] = (struct s3d_kv){ "If-Match",
				      "\"00000000000000000000000000000000\"" };
	return s3d_s3_build(s3d_ctx_s3(p->ctx), "PUT", p->bucket, p->key,
			    NULL, 0, p->h, nh, time(NULL), &x->req);
}

static const struct s3d_xfer_ops probe_ops;

static int probe_done(struct s3d_xfer *x)
{
	struct caps_probe *p = s3d_container_of(x, struct caps_probe, x);
	struct s3d_s3error e;
	int err = s3d_xfer_errno(x, p->bucket);

	if (p->deleting) {
		if (err)
			s3d_err("s3://%s/%s: the probe object could not be deleted (%s): delete it by hand",
				p->bucket, p->key, strerror(-err));
		probe_finish(p, CAPS_NONE);
		return 0;
	}
	if (!err) {
		/* Created in spite of If-Match: remove it again. */
		s3d_ctx_release(&p->x);
		p->deleting = true;
		s3d_xfer_init(&p->x, &probe_ops, "DELETE", p->key);
		s3d_ctx_submit(p->ctx, &p->x);
		return 0;
	}
	memset(&e, 0, sizeof(e));
	s3d_xml_parse_error(s3d_buf_str(&x->resp), x->resp.len, &e);
	if (x->status == 412 ||
	    (x->status == 404 && !strcmp(e.code, "NoSuchKey"))) {
		s3d_info("s3://%s: the server honours conditional writes",
			 p->bucket);
		probe_finish(p, CAPS_CONDITIONAL);
		return 0;
	}
	s3d_warn("s3://%s: probing conditional writes got HTTP %ld %s: unknown, probed again at the next writable mount",
		 p->bucket, x->status, e.code[0] ? e.code : "-");
	probe_finish(p, CAPS_UNKNOWN);
	return 0;
}

static const struct s3d_xfer_ops probe_ops = {
	.prepare = probe_prepare,
	.done = probe_done,
};

/**
 * s3d_caps_check() - may a writable mount of @bucket go ahead?
 * @ctx: the bucket's context (held by the caller until @done; the probe
 *	holds its own while it runs)
 * @bucket: the bucket
 * @prefix: the mount's prefix ("" or ending in "/"): the probe's key
 *	goes under it
 * @done: called with 0 or -EOPNOTSUPP (possibly before this returns)
 * @arg: for @done
 *
 * Return: 0, or -ENOMEM (@done is not called).
 */
int s3d_caps_check(struct s3d_ctx *ctx, const char *bucket,
		   const char *prefix,
		   void (*done)(void *arg, int err), void *arg)
{
	struct caps_bucket *b = caps_of(bucket, false);
	unsigned char rnd[8];
	struct caps_probe *p;
	unsigned int i;
	char hex[17];

	if (b && b->state != CAPS_UNKNOWN) {
		done(arg, caps_verdict(bucket, b->state));
		return 0;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	if (RAND_bytes(rnd, sizeof(rnd)) != 1)
		for (i = 0; i < sizeof(rnd); i++)
			rnd[i] = (unsigned char)random();
	s3d_hex(rnd, sizeof(rnd), hex);
	p->ctx = ctx;
	s3d_ctx_hold(ctx);
	p->done = done;
	p->arg = arg;
	s3d_list_init(&p->wait.node);
	p->wait.fn = probe_waited;
	p->bucket = strdup(bucket);
	if (asprintf(&p->key, "%s.s3cfs-probe-%s", prefix, hex) < 0)
		p->key = NULL;
	if (!p->bucket || !p->key) {
		free(p->bucket);
		free(p->key);
		free(p);
		return -ENOMEM;
	}
	s3d_xfer_init(&p->x, &probe_ops, "PUT", p->key);
	p->x.prio = S3D_PRIO_META;
	p->x.probe = true;	/* the 404 is the answer hoped for */
	s3d_ctx_submit(ctx, &p->x);
	s3d_timer_arm(&p->wait, CAPS_WAIT_MS);
	return 0;
}

/* Forget what was probed. */
void s3d_caps_fini(void)
{
	while (known) {
		struct caps_bucket *b = known;

		known = b->next;
		free(b);
	}
}
