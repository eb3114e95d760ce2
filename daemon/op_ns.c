// SPDX-License-Identifier: GPL-2.0
/*
 * MKDIR, DELETE and RENAME: the kernel's namespace changes, made in S3
 * before the kernel makes them in the cache directory.
 *
 *   MKDIR   PUT "KEY/" (empty, Content-Type application/x-directory, the
 *           S3 console's and s3fs's marker; the POSIX attributes as
 *           x-amz-meta-* when the kernel sends them) with If-None-Match: *,
 *           then the lower directory, empty and listed now.
 *   DELETE  a file: DeleteObject KEY (the kernel removes its lower file).
 *           A directory: ListObjectsV2 "KEY/" (delimiter, max-keys 2)
 *           must show nothing but the marker; the lower directory is
 *           emptied of cached files and must then hold no LOCAL file; then
 *           DeleteObject "KEY/" (the kernel removes the directory).
 *   RENAME  CopyObject SRC -> DST with x-amz-copy-source-if-match (the
 *           version the kernel has), then DeleteObject SRC. Objects above
 *           5 GiB need a multipart copy: -EXDEV, and mv copies the file.
 *
 * On a server that ignores x-amz-copy-source-if-match (caps.c), a HEAD of
 * the source checks its ETag just before the copy.
 *
 * A DeleteObject of a key that is gone is a success (S3 answers 204 as
 * well). A RENAME the kernel sends again after the first one took effect
 * finds its source gone (404): a HEAD of the destination with the source's
 * ETag says it was ours. A source that is another version (412) is never
 * taken for ours: its delete would lose the other writer's object.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "caps.h"
#include "lib/log.h"
#include "lib/path.h"
#include "lib/posix.h"
#include "lib/prio.h"
#include "lib/s3.h"
#include "lib/util.h"
#include "lib/xml.h"
#include "mpu.h"
#include "op_common.h"


enum ns_step {
	NS_MARKER,	/* MKDIR: PUT the marker */
	NS_CHECK,	/* DELETE of a directory: is it empty? */
	NS_DELETE,	/* DeleteObject of key */
	NS_SRCHEAD,	/* RENAME on a server that ignores copy conditions:
			 * HEAD key, its ETag the kernel's? */
	NS_COPY,	/* RENAME: CopyObject key -> key2 */
	NS_VERIFY,	/* RENAME: HEAD key2 after the source was gone */
};

struct ns_op {
	struct s3d_req *r;
	struct s3d_mount *m;
	struct s3d_ctx *ctx;
	enum ns_step step;
	char *key;		/* the object (a directory's: its marker) */
	char *key2;		/* RENAME: the destination */
	char *dir;		/* MKDIR, DELETE: path of the entry (parent/name) */
	struct s3d_buf src;	/* RENAME: x-amz-copy-source */
	char etag[S3D_ETAG_MAX + 1];	/* RENAME: the copy's ETag */
	char if_match[S3D_ETAG_MAX + 3];	/* RENAME: as the server takes it */
	struct s3d_posix_hdrs posix;	/* MKDIR: its x-amz-meta-* values */
	struct s3d_kv h[3 + S3D_POSIX_NF];
	struct s3d_xfer x;
};

static const struct s3d_xfer_ops ns_ops;

static void ns_finish(struct ns_op *op, int err)
{
	struct s3d_req *r = op->r;
	struct s3d_mount *m = op->m;
	struct s3d_ctx *ctx = op->ctx;
	const char *what = r->cmd == S3CFS_CMD_MKDIR ? "MKDIR" :
			   r->cmd == S3CFS_CMD_DELETE ? "DELETE" : "RENAME";

	if (!err && r->cmd == S3CFS_CMD_RENAME) {
		r->reply_etag = strdup(op->etag);
		if (!r->reply_etag)
			err = -ENOMEM;
	}
	if (err)
		s3d_info("%s s3://%s/%s: %s", what, m->bucket,
			 op->key ? op->key : r->path, strerror(-err));
	else if (r->cmd == S3CFS_CMD_RENAME)
		s3d_info("RENAME s3://%s/%s -> %s: ETag %s", m->bucket, op->key,
			 op->key2, op->etag);
	else
		s3d_info("%s s3://%s/%s: done", what, m->bucket, op->key);
	s3d_ctx_release(&op->x);
	s3d_buf_free(&op->src);
	free(op->key);
	free(op->key2);
	free(op->dir);
	free(op);
	s3d_op_done(r, m, ctx, err);
}

/* The next request of @op: @step, on @key. */
static void ns_submit(struct ns_op *op, enum ns_step step, const char *what,
		      const char *key)
{
	s3d_ctx_release(&op->x);
	op->step = step;
	s3d_xfer_init(&op->x, &ns_ops, what, key);
	op->x.prio = S3D_PRIO_SYNC;
	s3d_ctx_submit(op->ctx, &op->x);
}

static int ns_prepare(struct s3d_xfer *x)
{
	struct ns_op *op = s3d_container_of(x, struct ns_op, x);
	const struct s3d_s3 *s3 = s3d_ctx_s3(op->ctx);
	const char *bucket = op->m->bucket;
	struct s3d_kv q[5];
	size_t nh = 0, nq = 0;

	op->r->started = true;
	switch (op->step) {
	case NS_MARKER:
		nh = s3d_op_marker_headers(op->h, op->r, &op->posix);
		return s3d_s3_build(s3, "PUT", bucket, op->key, NULL, 0, op->h,
				    nh, time(NULL), &x->req);
	case NS_CHECK:
		q[nq++] = (struct s3d_kv){ "encoding-type", "url" };
		q[nq++] = (struct s3d_kv){ "list-type", "2" };
		q[nq++] = (struct s3d_kv){ "prefix", op->key };
		q[nq++] = (struct s3d_kv){ "delimiter", "/" };
		q[nq++] = (struct s3d_kv){ "max-keys", "2" };
		return s3d_s3_build(s3, "GET", bucket, "", q, nq, NULL, 0,
				    time(NULL), &x->req);
	case NS_DELETE:
		return s3d_s3_build(s3, "DELETE", bucket, op->key, NULL, 0,
				    NULL, 0, time(NULL), &x->req);
	case NS_COPY:
		op->h[nh++] = (struct s3d_kv){ "Content-Length", "0" };
		op->h[nh++] = (struct s3d_kv){ "x-amz-copy-source", op->src.p };
		op->h[nh++] = (struct s3d_kv){ "x-amz-copy-source-if-match",
			s3d_caps_if_match(bucket, op->r->etag, op->if_match,
					  sizeof(op->if_match)) };
		return s3d_s3_build(s3, "PUT", bucket, op->key2, NULL, 0, op->h,
				    nh, time(NULL), &x->req);
	case NS_VERIFY:
		return s3d_op_head_prepare(x, op->ctx, op->m, op->key2);
	case NS_SRCHEAD:
		return s3d_op_head_prepare(x, op->ctx, op->m, op->key);
	}
	return -EINVAL;
}

/* The listing of a directory to delete: nothing but its marker? */
static int ns_check_empty(struct ns_op *op)
{
	struct s3d_list_page pg;
	char why[160];
	size_t i;
	int err;

	err = s3d_xml_parse_list(s3d_buf_str(&op->x.resp), op->x.resp.len, &pg,
				 why, sizeof(why));
	if (err) {
		s3d_err("LIST s3://%s/%s: unusable response: %s", op->m->bucket,
			op->key, why);
		s3d_list_page_free(&pg);
		return -EIO;
	}
	err = pg.nprefixes || pg.nskipped ? -ENOTEMPTY : 0;
	for (i = 0; !err && i < pg.nobjs; i++)
		if (strcmp(pg.objs[i].key, op->key))
			err = -ENOTEMPTY;
	s3d_list_page_free(&pg);
	return err;
}

/*
 * The lower directory of a directory S3 says is empty: cached files of
 * objects gone from S3 go; a file written here and not uploaded keeps it
 * (-ENOTEMPTY).
 */
static int ns_empty_lower(struct ns_op *op)
{
	const char *name;
	char *parent;
	int pfd, err;

	err = s3d_op_split_path(op->dir, &parent, &name);
	if (err)
		return err;
	err = s3d_store_open_dir(op->m->rootfd, parent, false, &pfd);
	free(parent);
	if (err == -ENOENT)
		return 0;
	if (err)
		return err;
	err = s3d_store_empty_dir(pfd, name);
	close(pfd);
	return err;
}

/* The marker is in S3: the lower directory, empty and listed now. */
static int ns_make_lower(struct ns_op *op)
{
	int pfd, fd, err;

	err = s3d_store_open_dir(op->m->rootfd, op->r->path, true, &pfd);
	if (err)
		return err;
	err = s3d_store_ensure_dir(pfd, op->r->name, true);
	close(pfd);
	if (err < 0)
		return err;
	err = s3d_store_open_dir(op->m->rootfd, op->dir, false, &fd);
	if (err)
		return err;
	err = s3d_store_set_listed(fd, time(NULL));
	close(fd);
	return err;
}

static int ns_done(struct s3d_xfer *x)
{
	struct ns_op *op = s3d_container_of(x, struct ns_op, x);
	int err = s3d_xfer_errno(x, op->m->bucket);

	switch (op->step) {
	case NS_MARKER:
		if (err == -ESTALE)
			err = -EEXIST;	/* 412: the marker exists */
		ns_finish(op, err ?: ns_make_lower(op));
		return 0;
	case NS_CHECK:
		err = err ?: ns_check_empty(op);
		err = err ?: ns_empty_lower(op);
		if (err)
			ns_finish(op, err);
		else
			ns_submit(op, NS_DELETE, "DELETE", op->key);
		return 0;
	case NS_DELETE:
		ns_finish(op, err == -ENOENT ? 0 : err);
		return 0;
	case NS_COPY:
		if (err == -ENOENT) {
			/* Source gone: our own copy and delete, sent again? */
			ns_submit(op, NS_VERIFY, "HEAD", op->key2);
			return 0;
		}
		err = err ?: s3d_op_copy_result(x, op->m->bucket, op->key2,
						op->etag, sizeof(op->etag));
		if (err)
			ns_finish(op, err);
		else
			ns_submit(op, NS_DELETE, "DELETE", op->key);
		return 0;
	case NS_SRCHEAD:
		/*
		 * The check the server does not make, made just before the
		 * copy: another writer's PUT between the two is not seen.
		 */
		if (err == -ENOENT)
			ns_submit(op, NS_VERIFY, "HEAD", op->key2);
		else if (err)
			ns_finish(op, err);
		else if (!x->has_etag || !s3d_etag_eq(x->etag, op->r->etag))
			ns_finish(op, -ESTALE);
		else
			ns_submit(op, NS_COPY, "COPY", op->key2);
		return 0;
	case NS_VERIFY:
		if (!err && x->has_etag && s3d_etag_eq(x->etag, op->r->etag)) {
			snprintf(op->etag, sizeof(op->etag), "%s", x->etag);
			ns_submit(op, NS_DELETE, "DELETE", op->key);
			return 0;
		}
		ns_finish(op, -ESTALE);
		return 0;
	}
	ns_finish(op, -EINVAL);
	return 0;
}

static const struct s3d_xfer_ops ns_ops = {
	.prepare = ns_prepare,
	.done = ns_done,
};

/* Why s3d_key_of() or s3d_list_prefix() gave no key, as -errno. */
static int key_error(void)
{
	return errno == ENAMETOOLONG ? -ENAMETOOLONG : -ENOMEM;
}

/* Keys and the first step of @op. Return: 0 or -errno. */
static int ns_start(struct ns_op *op)
{
	struct s3d_req *r = op->r;
	const char *pfx = op->m->prefix;

	if (r->cmd == S3CFS_CMD_RENAME) {
		if (!r->path2 || !*r->path || !*r->path2 ||
		    !s3d_path_valid(r->path2) || !r->etag || !*r->etag)
			return -EINVAL;
		if (r->size > S3D_SINGLE_MAX)
			return -EXDEV;
		op->key = s3d_key_of(pfx, r->path, NULL);
		if (!op->key)
			return key_error();
		op->key2 = s3d_key_of(pfx, r->path2, NULL);
		if (!op->key2)
			return key_error();
		if (s3d_op_copy_source(&op->src, op->m->bucket, op->key))
			return -ENOMEM;
		/*
		 * S3 copies a large object for as long as a minute before
		 * it answers, no byte moving: the kernel's wait goes on.
		 */
		r->server_busy = true;
		if (s3d_caps_of(op->m->bucket)->copy_ignores)
			ns_submit(op, NS_SRCHEAD, "HEAD", op->key);
		else
			ns_submit(op, NS_COPY, "COPY", op->key2);
		return 0;
	}
	if (!r->name || !s3d_name_valid(r->name, strlen(r->name), !*r->path))
		return -EINVAL;
	if (asprintf(&op->dir, "%s%s%s", r->path, *r->path ? "/" : "",
		     r->name) < 0) {
		op->dir = NULL;
		return -ENOMEM;
	}
	if (r->cmd == S3CFS_CMD_DELETE && !(r->flags & S3CFS_DEL_DIR)) {
		op->key = s3d_key_of(pfx, r->path, r->name);
		if (!op->key)
			return key_error();
		ns_submit(op, NS_DELETE, "DELETE", op->key);
		return 0;
	}
	op->key = s3d_list_prefix(pfx, op->dir);
	if (!op->key)
		return key_error();
	/* The marker's key is the directory's and a '/': S3's limit too. */
	if (r->cmd == S3CFS_CMD_MKDIR && strlen(op->key) > S3D_KEY_MAX)
		return -ENAMETOOLONG;
	if (r->cmd == S3CFS_CMD_MKDIR)
		ns_submit(op, NS_MARKER, "PUT", op->key);
	else
		ns_submit(op, NS_CHECK, "LIST", op->key);
	return 0;
}

/**
 * s3d_op_ns() - a MKDIR, DELETE or RENAME request
 * @r: the request
 * @m: its mount
 * @ctx: its bucket's context
 */
void s3d_op_ns(struct s3d_req *r, struct s3d_mount *m, struct s3d_ctx *ctx)
{
	struct ns_op *op = calloc(1, sizeof(*op));
	int err;

	if (!op) {
		s3d_op_done(r, m, ctx, -ENOMEM);
		return;
	}
	op->r = r;
	op->m = m;
	op->ctx = ctx;
	s3d_xfer_init(&op->x, &ns_ops, "", "");
	err = ns_start(op);
	if (err)
		ns_finish(op, err);
}
