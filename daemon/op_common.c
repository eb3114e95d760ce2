// SPDX-License-Identifier: GPL-2.0
/*
 * What the operations (op_list.c, op_lookup.c, op_fetch.c) share: the S3
 * requests they build for a mount, and their early failure.
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
	return 0;
}
