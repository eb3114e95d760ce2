// SPDX-License-Identifier: GPL-2.0
/*
 * What the operations (op_list.c, op_lookup.c, op_fetch.c, op_ns.c,
 * op_setmeta.c) share: the S3 requests they build for a mount, the pieces
 * of a CopyObject, and their early failure.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctx.h"
#include "lib/log.h"
#include "lib/path.h"
#include "lib/s3.h"
#include "lib/util.h"
#include "lib/xfer.h"
#include "lib/xml.h"
#include "mount.h"
#include "op_common.h"
#include "req.h"
#include "store.h"

struct s3d_op_stats_lookup s3d_lookup_stats;

/*
 * The end of a request's operation (or its failure before one starts):
 * drop its mount and context, and answer it with @err.
 */
void s3d_op_done(struct s3d_req *r, struct s3d_mount *m, struct s3d_ctx *ctx,
		 int err)
{
	s3d_mount_put(m);
	s3d_ctx_put(ctx);
	s3d_req_finish(r, err);
}

/* PATH = PARENT "/" NAME; PARENT is "" for a top-level name. */
int s3d_op_split_path(const char *path, char **parent, const char **name)
{
	const char *slash = strrchr(path, '/');

	*parent = slash ? strndup(path, slash - path) : strdup("");
	*name = slash ? slash + 1 : path;
	return *parent ? 0 : -ENOMEM;
}

/* Say once per mount and key why an object is left out. */
void s3d_op_log_skip(const struct s3d_mount *m, const char *key,
		     const char *why)
{
	char once[S3D_KEY_MAX + 32], esc[4 * S3D_KEY_MAX / 2];

	snprintf(once, sizeof(once), "%u:%s", m->id, key);
	if (!s3d_log_once(once))
		return;
	s3d_escape(key, esc, sizeof(esc));
	s3d_warn("s3://%s/%s: %s", m->bucket, esc, why);
}

/* A ListObjectsV2 page under @prefix: one level, or (@one) one key. */
int s3d_op_list_prepare(struct s3d_xfer *x, struct s3d_ctx *ctx,
			const struct s3d_mount *m, const char *prefix,
			const char *token, bool one)
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
	return s3d_s3_build(s3d_ctx_s3(ctx), "GET", m->bucket, "", q, n, NULL,
			    0, time(NULL), &x->req);
}

int s3d_op_head_prepare(struct s3d_xfer *x, struct s3d_ctx *ctx,
			const struct s3d_mount *m, const char *key)
{
	return s3d_s3_build(s3d_ctx_s3(ctx), "HEAD", m->bucket, key, NULL, 0,
			    NULL, 0, time(NULL), &x->req);
}

/* Metadata of the object a successful HEAD describes. */
int s3d_op_head_meta(const struct s3d_xfer *x, struct s3d_meta *meta)
{
	if (!x->has_etag || x->content_length < 0)
		return -EIO;
	meta->etag = x->etag;
	meta->size = (uint64_t)x->content_length;
	meta->mtime = x->last_modified;
	meta->posix = NULL;	/* a LOOKUP on a posix_meta mount adds it */
	return 0;
}

/**
 * s3d_op_copy_source() - x-amz-copy-source for @key of @bucket
 * @b: set to "/BUCKET/KEY", the key url-encoded but for its slashes
 *	(s3d_buf_free() it)
 * @bucket: the bucket
 * @key: the key
 *
 * Return: 0 or -ENOMEM.
 */
int s3d_op_copy_source(struct s3d_buf *b, const char *bucket, const char *key)
{
	s3d_buf_init(b, 0);
	s3d_buf_addf(b, "/%s/", bucket);
	s3d_uri_encode(b, key, strlen(key), false);
	s3d_buf_str(b);
	return b->err ? -ENOMEM : 0;
}

/**
 * s3d_op_copy_result() - the outcome of a CopyObject answered 2xx
 * @x: its transfer, done (s3d_xfer_errno() said 0)
 * @bucket: the bucket
 * @key: the destination, for the log
 * @etag: set to the copy's ETag on success
 * @n: its room
 *
 * S3 answers 200 before it copies, and reports a failure while copying as
 * an <Error> in that 200's body.
 *
 * Return: 0, -errno of the S3 error inside, or -EIO (logged).
 */
int s3d_op_copy_result(struct s3d_xfer *x, const char *bucket,
		       const char *key, char *etag, size_t n)
{
	struct s3d_s3error e;
	char why[160];
	int err;

	memset(&e, 0, sizeof(e));
	err = s3d_xml_parse_copy(s3d_buf_str(&x->resp), x->resp.len, etag, n,
				 &e, why, sizeof(why));
	if (err == -EREMOTEIO)
		return s3d_s3_errno(500, e.code);
	if (err)
		s3d_err("COPY s3://%s/%s: unusable answer: %s", bucket, key,
			why);
	return err;
}

/* s3fs's directory markers of old, "DIR_$folder$": never files. */
#define FOLDER_SUFFIX	"_$folder$"

/**
 * s3d_op_hidden_obj() - is the object @name (@len bytes) not a file here?
 * @m: the mount
 * @name: one name
 * @len: its length
 *
 * Return: true on a posix_meta mount for s3fs's legacy directory markers.
 */
bool s3d_op_hidden_obj(const struct s3d_mount *m, const char *name,
		       size_t len)
{
	size_t sl = strlen(FOLDER_SUFFIX);

	return m->posix && len >= sl &&
	       !memcmp(name + len - sl, FOLDER_SUFFIX, sl);
}

/**
 * s3d_op_marker_headers() - the headers of a PUT of a directory's marker
 * @h: filled in (room for 3 + S3D_POSIX_NF)
 * @r: the request: its POSIX attributes, if it has them, go with it
 * @posix: holds their values' text
 *
 * An empty object of Content-Type application/x-directory, created only
 * if the key is free (If-None-Match: *): the S3 console's and s3fs's
 * convention, for MKDIR and for a directory's SETMETA alike.
 *
 * Return: the number of headers.
 */
size_t s3d_op_marker_headers(struct s3d_kv *h, const struct s3d_req *r,
			     struct s3d_posix_hdrs *posix)
{
	size_t nh = 0;

	h[nh++] = (struct s3d_kv){ "Content-Length", "0" };
	h[nh++] = (struct s3d_kv){ "Content-Type", "application/x-directory" };
	h[nh++] = (struct s3d_kv){ "If-None-Match", "*" };
	if (r->has_posix)
		nh += s3d_posix_headers(&r->posix, posix, h + nh);
	return nh;
}
