// SPDX-License-Identifier: GPL-2.0
/*
 * Synchronous S3 calls on top of the transfer engine (xfer.c): one
 * LIST (all pages), HEAD or GET at a time, run to completion on the loop.
 * Used by s3cachefsd --selftest and by s3cachectl ls/head/cat. The caller
 * has run s3d_s3_init() and s3d_engine_init().
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base.h"
#include "client.h"
#include "log.h"
#include "loop.h"
#include "s3.h"
#include "util.h"
#include "xfer.h"
#include "xml.h"

struct call {
	struct s3d_xfer x;
	struct s3d_s3 *s3;
	const char *bucket;
	const char *key;	/* key, or listing prefix */
	const char *delimiter;	/* listing: "/" or NULL */
	char *token;
	const char *range;	/* "bytes=a-b" or NULL */
	uint64_t delivered;	/* GET: body bytes taken by the sink */
	char etag[S3D_ETAG_MAX + 1];	/* GET: of the first attempt */
	char resume[64];	/* GET: the Range of a resumed attempt */
	uint64_t base;		/* GET: delivered when this attempt began */
	uint64_t skip;		/* GET: bytes still to drop (Range ignored) */
	int64_t total;		/* GET: object size from a 200, or -1 */
	int (*page)(void *arg, const struct s3d_list_page *pg);
	size_t (*sink)(void *arg, const char *p, size_t n);
	void *arg;
	struct s3d_obj_info *info;
	struct s3d_call_err *ce;
	bool finished;
	int err;
};

static bool call_finished(void *arg)
{
	return ((struct call *)arg)->finished;
}

static void note_info(struct call *c)
{
	struct s3d_obj_info *i = c->info;

	if (!i)
		return;
	i->status = c->x.status;
	snprintf(i->etag, sizeof(i->etag), "%s", c->x.etag);
	i->size = c->x.content_length;
	i->mtime = c->x.last_modified;
	i->bytes = c->sink ? c->delivered : c->x.body_bytes;
}

/* Record what went wrong (for the caller's message), then log it. */
static int call_fail(struct call *c)
{
	struct s3d_xfer *x = &c->x;
	struct s3d_call_err *ce = c->ce;

	if (ce) {
		memset(ce, 0, sizeof(*ce));
		ce->status = x->status;
		if (x->err) {
			snprintf(ce->message, sizeof(ce->message), "%s",
				 strerror(-x->err));
		} else if (x->cres != CURLE_OK) {
			ce->status = 0;
			snprintf(ce->message, sizeof(ce->message), "%s%s%s",
				 curl_easy_strerror(x->cres),
				 x->errbuf[0] ? ": " : "", x->errbuf);
		} else {
			struct s3d_s3error e;

			s3d_xml_parse_error(s3d_buf_str(&x->resp), x->resp.len, &e);
			snprintf(ce->code, sizeof(ce->code), "%s", e.code);
			snprintf(ce->message, sizeof(ce->message), "%s", e.message);
			snprintf(ce->request_id, sizeof(ce->request_id), "%s",
				 e.request_id[0] ? e.request_id : x->request_id);
		}
	}
	note_info(c);
	c->err = s3d_xfer_errno(x, c->bucket);
	if (!c->err)
		c->err = -EIO;
	c->finished = true;
	return 0;
}

/* ---- list ---- */
static int list_prep(struct s3d_xfer *x)
{
	struct call *c = s3d_container_of(x, struct call, x);
	struct s3d_kv q[5] = {
		{ "list-type", "2" }, { "prefix", c->key },
		{ "encoding-type", "url" },
	};
	size_t n = 3;

	if (c->delimiter)
		q[n++] = (struct s3d_kv){ "delimiter", c->delimiter };
	if (c->token)
		q[n++] = (struct s3d_kv){ "continuation-token", c->token };
	return s3d_s3_build(c->s3, "GET", c->bucket, "", q, n, NULL, 0,
			    time(NULL), &x->req);
}

static int list_done(struct s3d_xfer *x)
{
	struct call *c = s3d_container_of(x, struct call, x);
	struct s3d_list_page pg;
	char why[160];
	int err;

	if (!s3d_xfer_ok(x))
		return call_fail(c);
	if (s3d_xml_parse_list(s3d_buf_str(&x->resp), x->resp.len, &pg, why,
			       sizeof(why))) {
		if (c->ce) {
			memset(c->ce, 0, sizeof(*c->ce));
			snprintf(c->ce->message, sizeof(c->ce->message),
				 "bad listing: %s", why);
		}
		s3d_err("LIST s3://%s/%s: bad listing: %s", c->bucket, c->key,
			why);
		c->err = -EIO;
		c->finished = true;
		s3d_list_page_free(&pg);
		return 0;
	}
	err = c->page(c->arg, &pg);
	if (err) {
		c->err = err;
		c->finished = true;
		s3d_list_page_free(&pg);
		return 0;
	}
	if (pg.truncated && pg.next_token) {
		free(c->token);
		c->token = pg.next_token;
		pg.next_token = NULL;
		s3d_list_page_free(&pg);
		s3d_xfer_submit(x);
		return 0;
	}
	s3d_list_page_free(&pg);
	c->finished = true;
	return 0;
}

static const struct s3d_xfer_ops list_xops = {
	.prepare = list_prep, .done = list_done,
};

/* ---- head / get ---- */
static int head_prep(struct s3d_xfer *x)
{
	struct call *c = s3d_container_of(x, struct call, x);

	return s3d_s3_build(c->s3, "HEAD", c->bucket, c->key, NULL, 0,
			    NULL, 0, time(NULL), &x->req);
}

static int obj_done(struct s3d_xfer *x)
{
	struct call *c = s3d_container_of(x, struct call, x);

	if (!s3d_xfer_ok(x))
		return call_fail(c);
	note_info(c);
	c->finished = true;
	return 0;
}

static const struct s3d_xfer_ops head_xops = {
	.prepare = head_prep, .done = obj_done,
};

/*
 * The engine repeats an attempt that failed on the way (a reset, a 5xx):
 * the sink already has the first bytes, so a repeat asks for the rest
 * only, and only of the same object (If-Match on the first ETag).
 */
static int get_prep(struct s3d_xfer *x)
{
	struct call *c = s3d_container_of(x, struct call, x);
	struct s3d_kv h[2] = { { "Range", c->range } };
	unsigned long long first = 0, last = 0;
	size_t n = c->range ? 1 : 0;
	int have_last = 0;

	c->base = c->delivered;
	c->skip = 0;
	if (c->delivered) {
		if (c->range &&
		    sscanf(c->range, "bytes=%llu-%llu", &first, &last) == 2)
			have_last = 1;
		if (!have_last && c->total > 0) {
			last = (unsigned long long)c->total - 1;
			have_last = 1;
		}
		if (have_last)
			snprintf(c->resume, sizeof(c->resume), "bytes=%llu-%llu",
				 first + c->delivered, last);
		else
			snprintf(c->resume, sizeof(c->resume), "bytes=%llu-",
				 first + c->delivered);
		h[0].value = c->resume;
		n = 1;
		if (c->etag[0])
			h[n++] = (struct s3d_kv){ "If-Match", c->etag };
	}
	return s3d_s3_build(c->s3, "GET", c->bucket, c->key, NULL, 0, h, n,
			    time(NULL), &x->req);
}

static size_t get_body(struct s3d_xfer *x, const char *p, size_t n)
{
	struct call *c = s3d_container_of(x, struct call, x);
	size_t got;

	if (!c->delivered && !c->etag[0]) {
		snprintf(c->etag, sizeof(c->etag), "%s", x->etag);
		if (x->status == 200 && !c->range)
			c->total = x->content_length;
	}
	/* A resumed attempt answered 200: the whole object again. */
	if (x->body_bytes == n && c->base && x->status == 200 && !c->range)
		c->skip = c->base;
	if (c->skip) {
		size_t drop = (size_t)S3D_MIN((uint64_t)n, c->skip);

		c->skip -= drop;
		if (drop == n)
			return n;
		p += drop;
		got = c->sink(c->arg, p, n - drop);
		c->delivered += got;
		if (got != n - drop)
			x->err = -EPIPE;
		return got == n - drop ? n : got;
	}
	got = c->sink(c->arg, p, n);
	c->delivered += got;
	if (got != n)
		x->err = -EPIPE;
	return got;
}

static const struct s3d_xfer_ops get_xops = {
	.prepare = get_prep, .body = get_body, .done = obj_done,
};

static int call_run(struct call *c, const struct s3d_xfer_ops *ops,
		    const char *what)
{
	int err;

	if (c->ce)
		memset(c->ce, 0, sizeof(*c->ce));
	s3d_xfer_init(&c->x, ops, what, c->key);
	s3d_xfer_submit(&c->x);
	err = s3d_loop_run(call_finished, c);
	s3d_xfer_release(&c->x);
	free(c->token);
	return err ?: c->err;
}

/**
 * s3d_call_list() - list a prefix, all pages
 * @s3: the client
 * @bucket: bucket
 * @prefix: key prefix ("" for all)
 * @delimiter: "/" for one level, NULL for everything below
 * @page: called for each page; nonzero (-errno) stops the listing
 * @arg: for @page
 * @ce: filled on failure (may be NULL)
 *
 * Return: 0 or -errno (logged).
 */
int s3d_call_list(struct s3d_s3 *s3, const char *bucket, const char *prefix,
		  const char *delimiter,
		  int (*page)(void *arg, const struct s3d_list_page *pg),
		  void *arg, struct s3d_call_err *ce)
{
	struct call c = { .s3 = s3, .bucket = bucket, .key = prefix,
			  .delimiter = delimiter, .page = page, .arg = arg,
			  .ce = ce };

	return call_run(&c, &list_xops, "LIST");
}

/**
 * s3d_call_head() - HEAD one object
 * @s3: the client
 * @bucket: bucket
 * @key: key
 * @info: its metadata, on success
 * @ce: filled on failure (may be NULL)
 *
 * Return: 0 or -errno (logged; a 404 at debug level only).
 */
int s3d_call_head(struct s3d_s3 *s3, const char *bucket, const char *key,
		  struct s3d_obj_info *info, struct s3d_call_err *ce)
{
	struct call c = { .s3 = s3, .bucket = bucket, .key = key,
			  .info = info, .ce = ce };

	return call_run(&c, &head_xops, "HEAD");
}

/**
 * s3d_call_get() - GET one object (or a range of it) into a sink
 * @s3: the client
 * @bucket: bucket
 * @key: key
 * @range: "bytes=FIRST-LAST" or NULL for all of it
 * @sink: takes the body; returning less than given aborts (-EPIPE)
 * @arg: for @sink
 * @info: status, ETag, sizes, on success (may be NULL)
 * @ce: filled on failure (may be NULL)
 *
 * Return: 0 or -errno (logged).
 */
int s3d_call_get(struct s3d_s3 *s3, const char *bucket, const char *key,
		 const char *range,
		 size_t (*sink)(void *arg, const char *p, size_t n), void *arg,
		 struct s3d_obj_info *info, struct s3d_call_err *ce)
{
	struct call c = { .s3 = s3, .bucket = bucket, .key = key,
			  .range = range, .sink = sink, .arg = arg,
			  .info = info, .ce = ce, .total = -1 };

	return call_run(&c, &get_xops, "GET");
}
