// SPDX-License-Identifier: GPL-2.0
/*
 * A new mount's bucket must exist and let us list it, as mountpoint-s3
 * checks: a ListObjectsV2 of one key under the mount's prefix at its
 * MOUNT. 404 (NoSuchBucket) fails the mount with ENOENT, 403 with EACCES,
 * each with one log line that names the bucket. Anything else (the server
 * unreachable, a 5xx, no answer within BUCKET_WAIT_MS) lets the mount go
 * on with a warning: what is cached still serves, and each request will
 * say what went wrong. A MOUNT announced again after a daemon restart is
 * not checked: the kernel holds that mount already.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bucket.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "lib/prio.h"
#include "lib/s3.h"
#include "lib/util.h"
#include "lib/xfer.h"
#include "lib/xml.h"

#define BUCKET_WAIT_MS	5000

struct bucket_check {
	struct s3d_xfer x;
	struct s3d_ctx *ctx;
	char *bucket;
	char *prefix;
	struct s3d_timer wait;		/* the MOUNT's patience */
	void (*done)(void *arg, int err);	/* NULL once called */
	void *arg;
	struct s3d_kv q[3];
};

/* Tell the MOUNT, once. */
static void check_answer(struct bucket_check *c, int err)
{
	void (*done)(void *arg, int err) = c->done;

	s3d_timer_cancel(&c->wait);
	c->done = NULL;
	if (done)
		done(c->arg, err);
}

static void check_waited(struct s3d_timer *t)
{
	struct bucket_check *c = s3d_container_of(t, struct bucket_check, wait);

	s3d_warn("s3://%s: no answer to the bucket check within %d ms: mounting without knowing",
		 c->bucket, BUCKET_WAIT_MS);
	check_answer(c, 0);
}

static int check_prepare(struct s3d_xfer *x)
{
	struct bucket_check *c = s3d_container_of(x, struct bucket_check, x);

	c->q[0] = (struct s3d_kv){ "list-type", "2" };
	c->q[1] = (struct s3d_kv){ "prefix", c->prefix };
	c->q[2] = (struct s3d_kv){ "max-keys", "1" };
	return s3d_s3_build(s3d_ctx_s3(c->ctx), "GET", c->bucket, "", c->q, 3,
			    NULL, 0, time(NULL), &x->req);
}

static int check_done(struct s3d_xfer *x)
{
	struct bucket_check *c = s3d_container_of(x, struct bucket_check, x);
	struct s3d_s3error e;
	int err = s3d_xfer_errno(x, c->bucket), verdict = 0;

	memset(&e, 0, sizeof(e));
	if (err && x->status)
		s3d_xml_parse_error(s3d_buf_str(&x->resp), x->resp.len, &e);
	if (x->status == 404) {
		s3d_err("s3://%s: the bucket does not exist (%s): mount refused",
			c->bucket, e.code[0] ? e.code : "HTTP 404");
		verdict = -ENOENT;
	} else if (x->status == 403) {
		s3d_err("s3://%s: access denied listing the bucket (%s): mount refused (the credentials need s3:ListBucket on it)",
			c->bucket, e.code[0] ? e.code : "HTTP 403");
		verdict = -EACCES;
	} else if (err) {
		s3d_warn("s3://%s: the bucket could not be checked (%s): mounting without knowing",
			 c->bucket, x->status ? (e.code[0] ? e.code : "HTTP error") :
			 strerror(-err));
	}
	s3d_ctx_release(x);
	check_answer(c, verdict);
	s3d_ctx_put(c->ctx);
	free(c->bucket);
	free(c->prefix);
	free(c);
	return 0;
}

static const struct s3d_xfer_ops check_ops = {
	.prepare = check_prepare,
	.done = check_done,
};

/**
 * s3d_bucket_check() - does @bucket exist and let us list it?
 * @ctx: the bucket's context (credentials known)
 * @bucket: the bucket
 * @prefix: the mount's prefix
 * @done: called once, from the loop: 0 (go on), -ENOENT (no such
 *	bucket) or -EACCES (not ours to list)
 * @arg: for @done
 *
 * Return: 0, or -ENOMEM (@done is not called).
 */
int s3d_bucket_check(struct s3d_ctx *ctx, const char *bucket,
		     const char *prefix, void (*done)(void *arg, int err),
		     void *arg)
{
	struct bucket_check *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	c->bucket = strdup(bucket);
	c->prefix = strdup(prefix);
	if (!c->bucket || !c->prefix) {
		free(c->bucket);
		free(c->prefix);
		free(c);
		return -ENOMEM;
	}
	c->ctx = ctx;
	s3d_ctx_hold(ctx);
	c->done = done;
	c->arg = arg;
	s3d_list_init(&c->wait.node);
	c->wait.fn = check_waited;
	s3d_xfer_init(&c->x, &check_ops, "LIST", "");
	c->x.prio = S3D_PRIO_META;
	s3d_timer_arm(&c->wait, BUCKET_WAIT_MS);
	s3d_ctx_submit(ctx, &c->x);
	return 0;
}
