// SPDX-License-Identifier: GPL-2.0
/*
 * Synchronous S3 calls on top of the transfer engine (xfer.c): one
 * LIST (all pages), HEAD or GET at a time, run to completion on the loop.
 * Used by s3cachefsd --selftest and by s3cachectl ls/head/cat. The caller
 * has run s3d_s3_init() and s3d_engine_init().
 *
 * And the write requests, the same way: PUT from a file range, DELETE,
 * and a multipart upload's create, part, complete and abort (the host
 * tests drive them; the daemon's upload path will run them on its loop).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base.h"
#include "client.h"
#include "listguard.h"
#include "log.h"
#include "loop.h"
#include "retry.h"
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
	struct s3d_list_guard *guard;	/* listing: its pages move on */
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
	/* Writes: the request, fixed for every attempt. */
	const char *method;
	const struct s3d_kv *q;
	size_t nq;
	struct s3d_kv h[S3D_HDR_MAX];
	size_t nh;
	char *owned[S3D_HDR_MAX];	/* header names we made */
	size_t nowned;
	char clen[24];			/* Content-Length */
	struct s3d_xfer_src src;
	char *out;			/* the ETag or UploadId answered */
	size_t outlen;
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
	char why[320];
	int err;

	if (!s3d_xfer_ok(x))
		return call_fail(c);
	err = s3d_xml_parse_list(s3d_buf_str(&x->resp), x->resp.len, &pg, why,
				 sizeof(why));
	if (!err)
		err = s3d_list_guard_page(c->guard, &pg, why, sizeof(why));
	if (err) {
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
	size_t i;
	int err;

	if (c->ce)
		memset(c->ce, 0, sizeof(*c->ce));
	s3d_xfer_init(&c->x, ops, what, c->key);
	s3d_xfer_submit(&c->x);
	err = s3d_loop_run(call_finished, c);
	s3d_xfer_release(&c->x);
	free(c->token);
	for (i = 0; i < c->nowned; i++)
		free(c->owned[i]);
	return err ?: c->err;
}

/* ---- writes ---- */

static int write_prep(struct s3d_xfer *x)
{
	struct call *c = s3d_container_of(x, struct call, x);

	x->src = c->src;
	return s3d_s3_build(c->s3, c->method, c->bucket, c->key, c->q, c->nq,
			    c->h, c->nh, time(NULL), &x->req);
}

/* One more header of the request; -E2BIG when S3D_HDR_MAX would not do. */
static int add_hdr(struct call *c, const char *name, const char *value)
{
	if (c->nh + 5 >= S3D_HDR_MAX)
		return -E2BIG;
	c->h[c->nh++] = (struct s3d_kv){ name, value };
	return 0;
}

/* A body of @len bytes: its Content-Length, signed. */
static int add_length(struct call *c, uint64_t len)
{
	snprintf(c->clen, sizeof(c->clen), "%llu", (unsigned long long)len);
	return add_hdr(c, "Content-Length", c->clen);
}

/* The conditions of a PUT or Complete, and a new object's type and metadata. */
static int add_put_opts(struct call *c, const struct s3d_put_opts *o,
			bool conditions, bool object)
{
	size_t i;
	int err = 0;

	if (!o)
		return 0;
	if (o->if_match && o->if_none_match)
		return -EINVAL;
	if (conditions && o->if_match)
		err = add_hdr(c, "If-Match", o->if_match);
	if (conditions && o->if_none_match)
		err = err ?: add_hdr(c, "If-None-Match", "*");
	if (object && o->content_type)
		err = err ?: add_hdr(c, "Content-Type", o->content_type);
	for (i = 0; object && i < o->nmeta && !err; i++) {
		char *name;

		if (asprintf(&name, "x-amz-meta-%s", o->meta[i].name) < 0)
			return -ENOMEM;
		c->owned[c->nowned++] = name;
		err = add_hdr(c, name, o->meta[i].value);
	}
	return err;
}

/* A 412 to a create (If-None-Match: *) means the key exists. */
static int cond_errno(int err, const struct s3d_put_opts *o)
{
	return err == -ESTALE && o && o->if_none_match ? -EEXIST : err;
}

/* An answer that is not the result: why, for the caller and the log. */
static void bad_result(struct call *c, const char *doc, const char *why,
		       int err)
{
	s3d_err("%s s3://%s/%s: bad %s: %s", c->x.what, c->bucket, c->key,
		doc, why);
	if (c->ce)
		snprintf(c->ce->message, sizeof(c->ce->message), "bad %s: %s",
			 doc, why);
	c->err = err;
	c->finished = true;
}

/* PUT, UploadPart: the answer's ETag is the result. */
static int etag_done(struct s3d_xfer *x)
{
	struct call *c = s3d_container_of(x, struct call, x);

	if (!s3d_xfer_ok(x))
		return call_fail(c);
	note_info(c);
	if (!x->has_etag || !x->etag[0]) {
		char why[64];

		snprintf(why, sizeof(why), "HTTP %ld without an ETag", x->status);
		bad_result(c, "answer", why, -EIO);
	} else {
		snprintf(c->out, c->outlen, "%s", x->etag);
	}
	c->finished = true;
	return 0;
}

static const struct s3d_xfer_ops etag_xops = {
	.prepare = write_prep, .done = etag_done,
};

/* DELETE, AbortMultipartUpload: the status is all. */
static const struct s3d_xfer_ops plain_xops = {
	.prepare = write_prep, .done = obj_done,
};

static int create_done(struct s3d_xfer *x)
{
	struct call *c = s3d_container_of(x, struct call, x);
	char why[160] = "";

	if (!s3d_xfer_ok(x))
		return call_fail(c);
	note_info(c);
	if (s3d_xml_parse_initiate(s3d_buf_str(&x->resp), x->resp.len, c->out,
				   c->outlen, why, sizeof(why)))
		bad_result(c, "InitiateMultipartUploadResult", why, -EIO);
	c->finished = true;
	return 0;
}

static const struct s3d_xfer_ops create_xops = {
	.prepare = write_prep, .done = create_done,
};

/*
 * Complete's 200 may carry an Error (S3 failed while it assembled the
 * object): an InternalError is retried like a 500, anything else fails
 * with its code's errno.
 */
static int complete_done(struct s3d_xfer *x)
{
	struct call *c = s3d_container_of(x, struct call, x);
	struct s3d_s3error e;
	char why[512] = "";
	int err;

	if (!s3d_xfer_ok(x))
		return call_fail(c);
	note_info(c);
	err = s3d_xml_parse_complete(s3d_buf_str(&x->resp), x->resp.len,
				     c->out, c->outlen, &e, why, sizeof(why));
	if (err == -EREMOTEIO) {
		if (s3d_retry_transient(x->status, e.code) && x->can_retry) {
			/* The engine's retry line says "incomplete response". */
			s3d_warn("POST s3://%s/%s: Error %s inside a %ld (request id %s)",
				 c->bucket, c->key, e.code, x->status,
				 e.request_id[0] ? e.request_id : "-");
			return S3D_XFER_RETRY;
		}
		snprintf(why, sizeof(why), "Error %s in a %ld: %s (request id %s)",
			 e.code[0] ? e.code : "-", x->status, e.message,
			 e.request_id[0] ? e.request_id : "-");
		bad_result(c, "CompleteMultipartUploadResult", why,
			   s3d_s3_errno(x->status, e.code));
		if (c->ce) {
			c->ce->status = x->status;
			snprintf(c->ce->code, sizeof(c->ce->code), "%s", e.code);
			snprintf(c->ce->request_id, sizeof(c->ce->request_id),
				 "%s", e.request_id);
		}
	} else if (err) {
		bad_result(c, "CompleteMultipartUploadResult", why, -EIO);
	}
	c->finished = true;
	return 0;
}

static const struct s3d_xfer_ops complete_xops = {
	.prepare = write_prep, .done = complete_done,
};

/**
 * s3d_call_put() - PUT an object from a range of a file
 * @s3: the client
 * @bucket: bucket
 * @key: key
 * @fd: the file (read with pread(): every attempt sends the range whole)
 * @off: where in @fd the body starts
 * @len: its length (0: an empty object; @fd may then be -1)
 * @o: conditions, type and metadata (may be NULL)
 * @etag: out: the new object's ETag, as the server gave it
 * @ce: filled on failure (may be NULL)
 *
 * Return: 0, or -EEXIST (@o->if_none_match and the key exists), -ESTALE
 * (@o->if_match and the object changed), -ENOENT (@o->if_match and no
 * such object), -E2BIG (too many headers), -EINVAL (both conditions),
 * another -errno (logged).
 */
int s3d_call_put(struct s3d_s3 *s3, const char *bucket, const char *key,
		 int fd, uint64_t off, uint64_t len,
		 const struct s3d_put_opts *o, char etag[S3D_ETAG_MAX + 1],
		 struct s3d_call_err *ce)
{
	struct call c = { .s3 = s3, .bucket = bucket, .key = key, .ce = ce,
			  .method = "PUT", .out = etag,
			  .outlen = S3D_ETAG_MAX + 1,
			  .src = { .fd = fd, .off = off, .len = len } };
	int err;

	etag[0] = '\0';
	if (ce)
		memset(ce, 0, sizeof(*ce));
	err = add_length(&c, len);
	err = err ?: add_put_opts(&c, o, true, true);
	if (err) {
		while (c.nowned)
			free(c.owned[--c.nowned]);
		return err;
	}
	return cond_errno(call_run(&c, &etag_xops, "PUT"), o);
}

/**
 * s3d_call_delete() - DELETE an object
 * @s3: the client
 * @bucket: bucket
 * @key: key
 * @ce: filled on failure (may be NULL)
 *
 * S3 answers 204 whether or not the key existed.
 *
 * Return: 0 or -errno (logged).
 */
int s3d_call_delete(struct s3d_s3 *s3, const char *bucket, const char *key,
		    struct s3d_call_err *ce)
{
	struct call c = { .s3 = s3, .bucket = bucket, .key = key, .ce = ce,
			  .method = "DELETE", .src = { .fd = -1 } };

	return call_run(&c, &plain_xops, "DELETE");
}

/**
 * s3d_call_mpu_create() - start a multipart upload (CreateMultipartUpload)
 * @s3: the client
 * @bucket: bucket
 * @key: key
 * @o: the object's type and metadata (conditions belong to Complete; may
 *	be NULL)
 * @upload_id: out: the upload's id
 * @idlen: its size (S3D_UPLOAD_ID_MAX + 1)
 * @ce: filled on failure (may be NULL)
 *
 * Return: 0 or -errno (logged); -EIO for a 200 without a usable UploadId.
 */
int s3d_call_mpu_create(struct s3d_s3 *s3, const char *bucket,
			const char *key, const struct s3d_put_opts *o,
			char *upload_id, size_t idlen, struct s3d_call_err *ce)
{
	static const struct s3d_kv q[] = { { "uploads", NULL } };
	struct call c = { .s3 = s3, .bucket = bucket, .key = key, .ce = ce,
			  .method = "POST", .q = q, .nq = 1, .out = upload_id,
			  .outlen = idlen, .src = { .fd = -1 } };
	int err;

	upload_id[0] = '\0';
	if (ce)
		memset(ce, 0, sizeof(*ce));
	err = add_put_opts(&c, o, false, true);
	if (err) {
		while (c.nowned)
			free(c.owned[--c.nowned]);
		return err;
	}
	return call_run(&c, &create_xops, "POST");
}

/**
 * s3d_call_mpu_part() - upload one part (UploadPart) from a range of a file
 * @s3: the client
 * @bucket: bucket
 * @key: key
 * @upload_id: from s3d_call_mpu_create()
 * @part: its number, 1..S3D_PARTS_MAX
 * @fd: the file (pread(), as for s3d_call_put())
 * @off: where the part starts in @fd
 * @len: its length (all parts but the last at least 5 MiB: S3's rule,
 *	enforced at Complete)
 * @etag: out: the part's ETag, for Complete
 * @ce: filled on failure (may be NULL)
 *
 * Return: 0, -EINVAL (a bad part number), -ENOENT (no such upload) or
 * another -errno (logged).
 */
int s3d_call_mpu_part(struct s3d_s3 *s3, const char *bucket, const char *key,
		      const char *upload_id, unsigned int part, int fd,
		      uint64_t off, uint64_t len, char etag[S3D_ETAG_MAX + 1],
		      struct s3d_call_err *ce)
{
	char num[16];
	struct s3d_kv q[] = { { "partNumber", num }, { "uploadId", upload_id } };
	struct call c = { .s3 = s3, .bucket = bucket, .key = key, .ce = ce,
			  .method = "PUT", .q = q, .nq = 2, .out = etag,
			  .outlen = S3D_ETAG_MAX + 1,
			  .src = { .fd = fd, .off = off, .len = len } };
	int err;

	etag[0] = '\0';
	if (ce)
		memset(ce, 0, sizeof(*ce));
	if (!part || part > S3D_PARTS_MAX)
		return -EINVAL;
	snprintf(num, sizeof(num), "%u", part);
	err = add_length(&c, len);
	if (err)
		return err;
	return call_run(&c, &etag_xops, "PUT");
}

/**
 * s3d_call_mpu_complete() - finish a multipart upload
 *	(CompleteMultipartUpload)
 * @s3: the client
 * @bucket: bucket
 * @key: key
 * @upload_id: from s3d_call_mpu_create()
 * @parts: every part, by ascending number, with its ETag
 * @n: their number
 * @o: If-Match or If-None-Match on the key (may be NULL)
 * @etag: out: the object's ETag ("...-N" on S3)
 * @ce: filled on failure (may be NULL; an Error inside the 200 gives its
 *	Code here)
 *
 * The request is sent again, whole, after a transient failure, including
 * an InternalError inside a 200.
 *
 * Return: 0, -EEXIST/-ESTALE/-ENOENT (conditions, as s3d_call_put();
 * -ENOENT also for no such upload), -EINVAL (a bad part list, or S3 found
 * one: InvalidPart, EntityTooSmall...) or another -errno (logged).
 */
int s3d_call_mpu_complete(struct s3d_s3 *s3, const char *bucket,
			  const char *key, const char *upload_id,
			  const struct s3d_part *parts, size_t n,
			  const struct s3d_put_opts *o,
			  char etag[S3D_ETAG_MAX + 1], struct s3d_call_err *ce)
{
	struct s3d_kv q[] = { { "uploadId", upload_id } };
	struct call c = { .s3 = s3, .bucket = bucket, .key = key, .ce = ce,
			  .method = "POST", .q = q, .nq = 1, .out = etag,
			  .outlen = S3D_ETAG_MAX + 1 };
	struct s3d_buf body;
	int err;

	etag[0] = '\0';
	if (ce)
		memset(ce, 0, sizeof(*ce));
	s3d_buf_init(&body, 0);
	err = s3d_xml_build_complete(&body, parts, n);
	err = err ?: add_length(&c, body.len);
	err = err ?: add_hdr(&c, "Content-Type", "application/xml");
	err = err ?: add_put_opts(&c, o, true, false);
	if (!err) {
		c.src = (struct s3d_xfer_src){ .fd = -1, .mem = body.p,
					       .len = body.len };
		err = cond_errno(call_run(&c, &complete_xops, "POST"), o);
	}
	s3d_buf_free(&body);
	return err;
}

/**
 * s3d_call_mpu_abort() - drop a multipart upload and its parts
 *	(AbortMultipartUpload)
 * @s3: the client
 * @bucket: bucket
 * @key: key
 * @upload_id: from s3d_call_mpu_create()
 * @ce: filled on failure (may be NULL)
 *
 * Return: 0, -ENOENT (no such upload: completed or aborted already) or
 * another -errno (logged).
 */
int s3d_call_mpu_abort(struct s3d_s3 *s3, const char *bucket, const char *key,
		       const char *upload_id, struct s3d_call_err *ce)
{
	struct s3d_kv q[] = { { "uploadId", upload_id } };
	struct call c = { .s3 = s3, .bucket = bucket, .key = key, .ce = ce,
			  .method = "DELETE", .q = q, .nq = 1,
			  .src = { .fd = -1 } };

	return call_run(&c, &plain_xops, "DELETE");
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
	struct s3d_list_guard guard;
	struct call c = { .s3 = s3, .bucket = bucket, .key = prefix,
			  .delimiter = delimiter, .page = page, .arg = arg,
			  .ce = ce, .guard = &guard };
	int err;

	s3d_list_guard_init(&guard, 0);
	err = call_run(&c, &list_xops, "LIST");
	s3d_list_guard_free(&guard);
	return err;
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
