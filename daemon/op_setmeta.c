// SPDX-License-Identifier: GPL-2.0
/*
 * SETMETA: new POSIX attributes for an object (chmod, chown, utimes on a
 * posix_meta mount), as s3fs-fuse sets them: S3 changes an object's
 * metadata only by a CopyObject of the key onto itself with
 * x-amz-metadata-directive: REPLACE.
 *
 *   HEAD KEY   the version the kernel has (its ETag, else -ESTALE; gone:
 *              -ESTALE), no larger than one CopyObject takes (-EXDEV),
 *              and what REPLACE would drop: Content-Type and the other
 *              headers S3 keeps with the object, the other x-amz-meta-*.
 *   COPY       KEY onto itself, x-amz-copy-source-if-match: ETAG, those
 *              headers again and the new x-amz-meta-mode/-uid/-gid/
 *              -mtime (the fields the kernel names; the others kept).
 *
 * The answer carries the copy's ETag: the same for a plain object, a
 * plain MD5 for a multipart one. The kernel retags its lower file; the
 * daemon leaves it alone. The HEAD also stands in for the condition on a
 * server that ignores x-amz-copy-source-if-match (caps.c).
 *
 * A directory's (S3CFS_SETMETA_DIR, chmod/chown of a directory) go on its
 * marker "KEY/", as s3fs keeps them: the kernel has no version of it, so
 * the copy is conditional on the ETag the HEAD found; a directory without
 * a marker gets one (PUT, If-None-Match: *, as MKDIR's). A marker
 * changed or made by someone else between the two requests fails the
 * condition: the HEAD is asked again, once.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "caps.h"
#include "lib/log.h"
#include "lib/path.h"
#include "lib/posix.h"
#include "lib/prio.h"
#include "lib/s3.h"
#include "lib/util.h"
#include "mpu.h"
#include "op_common.h"
#include "writer.h"

enum setmeta_step {
	SM_HEAD,	/* HEAD key: the version, its headers */
	SM_COPY,	/* CopyObject key -> key, REPLACE */
	SM_MARKER,	/* a directory without a marker: PUT one */
};

/* The HEAD's headers we keep to send again (S3 sends a few KiB at most). */
#define SM_HDRS_MAX	(64 << 10)
/* Ours on the copy: Content-Length, the source, its condition, REPLACE. */
#define SM_FIXED	4
#define SM_KEEP_MAX	(S3D_HDR_MAX - 5 - SM_FIXED - S3D_POSIX_NF)

struct setmeta_op {
	struct s3d_req *r;
	struct s3d_mount *m;
	struct s3d_ctx *ctx;
	enum setmeta_step step;
	char *key;
	struct s3d_buf src;	/* x-amz-copy-source */
	struct s3d_buf hdrs;	/* the HEAD's headers, "name\0value\0" */
	struct s3d_kv keep[SM_KEEP_MAX];	/* ... those sent again */
	size_t nkeep;
	struct s3d_posix_hdrs posix;	/* the values of the new x-amz-meta-* */
	char etag[S3D_ETAG_MAX + 1];	/* the copy's */
	char if_match[S3D_ETAG_MAX + 3];	/* as the server takes it */
	bool dir;			/* S3CFS_SETMETA_DIR: KEY is the marker */
	bool again;			/* a directory's HEAD asked again */
	char base[S3D_ETAG_MAX + 1];	/* ... the marker's ETag, its HEAD's */
	struct s3d_kv h[S3D_HDR_MAX - 5];
	struct s3d_xfer x;
};

/*
 * What REPLACE drops and an object keeps: its system metadata as S3
 * returns it (storage class and encryption too: a copy would otherwise
 * fall back to STANDARD and the bucket's default).
 */
static const char *const kept_headers[] = {
	"Content-Type", "Content-Encoding", "Content-Disposition",
	"Content-Language", "Cache-Control", "Expires",
	"x-amz-storage-class", "x-amz-website-redirect-location",
	"x-amz-server-side-encryption",
	"x-amz-server-side-encryption-aws-kms-key-id",
	"x-amz-server-side-encryption-bucket-key-enabled",
};

static const struct s3d_xfer_ops setmeta_ops;

static void setmeta_finish(struct setmeta_op *op, int err)
{
	struct s3d_req *r = op->r;
	struct s3d_mount *m = op->m;
	struct s3d_ctx *ctx = op->ctx;

	if (!err) {
		r->reply_etag = strdup(op->etag);
		if (!r->reply_etag)
			err = -ENOMEM;
	}
	if (err)
		s3d_info("SETMETA s3://%s/%s: %s", m->bucket,
			 op->key ? op->key : r->path, strerror(-err));
	else
		s3d_info("SETMETA s3://%s/%s: ETag %s", m->bucket, op->key,
			 op->etag);
	s3d_ctx_release(&op->x);
	s3d_buf_free(&op->src);
	s3d_buf_free(&op->hdrs);
	free(op->key);
	free(op);
	s3d_op_done(r, m, ctx, err);
}

static void setmeta_submit(struct setmeta_op *op, enum setmeta_step step,
			   const char *what)
{
	s3d_ctx_release(&op->x);
	op->step = step;
	s3d_xfer_init(&op->x, &setmeta_ops, what, op->key);
	op->x.prio = S3D_PRIO_SYNC;
	if (step == SM_HEAD)
		op->x.hdrs = &op->hdrs;
	s3d_ctx_submit(op->ctx, &op->x);
}

static int setmeta_prepare(struct s3d_xfer *x)
{
	struct setmeta_op *op = s3d_container_of(x, struct setmeta_op, x);
	const char *bucket = op->m->bucket;
	size_t nh = 0;

	op->r->started = true;
	if (op->step == SM_HEAD)
		return s3d_op_head_prepare(x, op->ctx, op->m, op->key);
	if (op->step == SM_MARKER) {
		nh = s3d_op_marker_headers(op->h, op->r, &op->posix);
		return s3d_s3_build(s3d_ctx_s3(op->ctx), "PUT", bucket,
				    op->key, NULL, 0, op->h, nh, time(NULL),
				    &x->req);
	}
	op->h[nh++] = (struct s3d_kv){ "Content-Length", "0" };
	op->h[nh++] = (struct s3d_kv){ "x-amz-copy-source", op->src.p };
	op->h[nh++] = (struct s3d_kv){ "x-amz-copy-source-if-match",
		s3d_caps_if_match(bucket, op->dir ? op->base : op->r->etag,
				  op->if_match, sizeof(op->if_match)) };
	op->h[nh++] = (struct s3d_kv){ "x-amz-metadata-directive", "REPLACE" };
	memcpy(op->h + nh, op->keep, op->nkeep * sizeof(op->keep[0]));
	nh += op->nkeep;
	nh += s3d_posix_headers(&op->r->posix, &op->posix, op->h + nh);
	return s3d_s3_build(s3d_ctx_s3(op->ctx), "PUT", bucket, op->key, NULL,
			    0, op->h, nh, time(NULL), &x->req);
}

/* Is the HEAD's header @name one the copy sends again? */
static bool setmeta_keeps(const struct setmeta_op *op, const char *name)
{
	size_t i, len = strlen(name);
	int f;

	if (len > 11 && !strncasecmp(name, "x-amz-meta-", 11)) {
		/* The copy is a version of its own, no upload's (writer.c). */
		if (!strcasecmp(name, S3D_WRITER_HDR))
			return false;
		/* The kernel's new values replace those it names. */
		f = s3d_posix_field_of(name, len);
		return f < 0 || !(op->r->posix.flags & (1U << f));
	}
	for (i = 0; i < S3D_ARRAY_SIZE(kept_headers); i++)
		if (!strcasecmp(name, kept_headers[i]))
			return true;
	return false;
}

/* The headers to send again, pointing into @op->hdrs. Return: 0, -EIO. */
static int setmeta_collect(struct setmeta_op *op)
{
	const char *p = op->hdrs.p, *end = p + op->hdrs.len, *name, *value;

	if (op->hdrs.err) {
		s3d_err("HEAD s3://%s/%s: headers too large to keep",
			op->m->bucket, op->key);
		return -EIO;
	}
	op->nkeep = 0;
	while (p && p < end) {
		name = p;
		value = name + strlen(name) + 1;
		p = value + strlen(value) + 1;
		if (!setmeta_keeps(op, name))
			continue;
		if (op->nkeep == SM_KEEP_MAX) {
			s3d_err("SETMETA s3://%s/%s: more than %d metadata headers to keep",
				op->m->bucket, op->key, SM_KEEP_MAX);
			return -EIO;
		}
		op->keep[op->nkeep++] = (struct s3d_kv){ name, value };
	}
	return 0;
}

/*
 * The HEAD: the kernel's version, small enough, and what it has; a
 * directory's marker: its version (-ENOENT: there is none).
 */
static int setmeta_head_done(struct setmeta_op *op, int err)
{
	struct s3d_xfer *x = &op->x;

	if (err == -ENOENT)
		return op->dir ? -ENOENT : -ESTALE;
	if (err)
		return err;
	if (!x->has_etag) {
		s3d_err("HEAD s3://%s/%s: response without ETag", op->m->bucket,
			op->key);
		return -EIO;
	}
	if (op->dir)
		snprintf(op->base, sizeof(op->base), "%s", x->etag);
	else if (!s3d_etag_eq(x->etag, op->r->etag))
		return -ESTALE;
	if (x->content_length > (int64_t)S3D_SINGLE_MAX)
		return -EXDEV;
	return setmeta_collect(op);
}

static int setmeta_done(struct s3d_xfer *x)
{
	struct setmeta_op *op = s3d_container_of(x, struct setmeta_op, x);
	int err = s3d_xfer_errno(x, op->m->bucket);

	if (op->step == SM_HEAD) {
		err = setmeta_head_done(op, err);
		if (err == -ENOENT && op->dir)
			setmeta_submit(op, SM_MARKER, "PUT");
		else if (err)
			setmeta_finish(op, err);
		else
			setmeta_submit(op, SM_COPY, "COPY");
		return 0;
	}
	/* 412: another version now; 404: gone. */
	if (err == -ENOENT)
		err = -ESTALE;
	/* A directory's marker changed, made or removed meanwhile. */
	if (op->dir && err == -ESTALE && !op->again) {
		op->again = true;
		setmeta_submit(op, SM_HEAD, "HEAD");
		return 0;
	}
	if (!err && op->step == SM_MARKER) {
		if (!x->has_etag || !x->etag[0]) {
			s3d_err("PUT s3://%s/%s: HTTP %ld without an ETag",
				op->m->bucket, op->key, x->status);
			err = -EIO;
		} else {
			snprintf(op->etag, sizeof(op->etag), "%s", x->etag);
		}
		setmeta_finish(op, err);
		return 0;
	}
	err = err ?: s3d_op_copy_result(x, op->m->bucket, op->key, op->etag,
					sizeof(op->etag));
	setmeta_finish(op, err);
	return 0;
}

static const struct s3d_xfer_ops setmeta_ops = {
	.prepare = setmeta_prepare,
	.done = setmeta_done,
};

/**
 * s3d_op_setmeta() - a SETMETA request
 * @r: the request
 * @m: its mount
 * @ctx: its bucket's context
 */
void s3d_op_setmeta(struct s3d_req *r, struct s3d_mount *m,
		    struct s3d_ctx *ctx)
{
	struct setmeta_op *op = calloc(1, sizeof(*op));

	if (!op) {
		s3d_op_done(r, m, ctx, -ENOMEM);
		return;
	}
	op->r = r;
	op->m = m;
	op->ctx = ctx;
	s3d_buf_init(&op->hdrs, SM_HDRS_MAX);
	s3d_xfer_init(&op->x, &setmeta_ops, "", "");
	op->dir = r->flags & S3CFS_SETMETA_DIR;
	if (!*r->path || !r->has_posix ||
	    (!op->dir && (!r->etag || !*r->etag))) {
		setmeta_finish(op, -EINVAL);
		return;
	}
	if (r->size > S3D_SINGLE_MAX) {
		setmeta_finish(op, -EXDEV);
		return;
	}
	op->key = op->dir ? s3d_list_prefix(m->prefix, r->path) :
			    s3d_key_of(m->prefix, r->path, NULL);
	if (op->dir && op->key && strlen(op->key) > S3D_KEY_MAX) {
		setmeta_finish(op, -ENAMETOOLONG);
		return;
	}
	if (!op->key || s3d_op_copy_source(&op->src, m->bucket, op->key)) {
		setmeta_finish(op, -ENOMEM);
		return;
	}
	r->server_busy = true;	/* a copy sends nothing until it ends */
	setmeta_submit(op, SM_HEAD, "HEAD");
}
