// SPDX-License-Identifier: GPL-2.0
/*
 * LOOKUP: HEAD key and LIST key/ (max-keys 1) at once; make the lower
 * entry a file, a directory, or nothing.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "ctx.h"
#include "lib/base.h"
#include "lib/log.h"
#include "lib/path.h"
#include "lib/util.h"
#include "lib/xfer.h"
#include "lib/xml.h"
#include "mount.h"
#include "op_common.h"
#include "req.h"
#include "store.h"

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
	struct s3d_mount *m = op->m;
	struct s3d_ctx *ctx = op->ctx;

	s3d_ctx_release(&op->head);
	s3d_ctx_release(&op->list);
	free(op->key);
	free(op->dirprefix);
	free(op);
	s3d_op_done(r, m, ctx, err);
}

static int lookup_head_prepare(struct s3d_xfer *x)
{
	struct lookup_op *op = s3d_container_of(x, struct lookup_op, head);

	op->r->started = true;
	return s3d_op_head_prepare(x, op->ctx, op->m, op->key);
}

static int lookup_list_prepare(struct s3d_xfer *x)
{
	struct lookup_op *op = s3d_container_of(x, struct lookup_op, list);

	op->r->started = true;
	return s3d_op_list_prepare(x, op->ctx, op->m, op->dirprefix, NULL, true);
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
		s3d_op_log_skip(op->m, op->key, "a directory replaces the object of the same name");
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
		err = s3d_op_head_meta(&op->head, &meta);
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

void s3d_op_lookup(struct s3d_req *r, struct s3d_mount *m, struct s3d_ctx *ctx)
{
	struct lookup_op *op;
	size_t n;

	if (!r->name || !s3d_name_valid(r->name, strlen(r->name), !*r->path)) {
		/* Names we never map do not exist as far as anyone can see. */
		s3d_op_done(r, m, ctx, -ENOENT);
		return;
	}
	op = calloc(1, sizeof(*op));
	if (!op) {
		s3d_op_done(r, m, ctx, -ENOMEM);
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
