/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The operations on kernel requests (op_list.c, op_lookup.c, op_fetch.c,
 * op_upload.c, op_ns.c, op_setmeta.c)
 * and what they share (op_common.c). Each request becomes an operation
 * that owns one or two S3 transfers and finishes by answering the request
 * exactly once. Requests may be repeated (the kernel re-sends pending ones
 * to a daemon that registers again), so every operation is idempotent.
 */
#ifndef S3D_OP_COMMON_H
#define S3D_OP_COMMON_H

#include <stdbool.h>
#include <stdint.h>

#include "ctx.h"
#include "lib/posix.h"
#include "lib/xfer.h"
#include "mount.h"
#include "req.h"
#include "store.h"
#include "uapi/s3cachefs.h"

void s3d_op_list(struct s3d_req *r, struct s3d_mount *m, struct s3d_ctx *ctx);
void s3d_op_list_set_ahead(unsigned int n);
void s3d_op_list_set_lookup_pages(unsigned int n);
void s3d_op_list_set_max_pages(unsigned int n);

/**
 * struct s3d_list_waiter - a LOOKUP waiting for a listing of its directory
 * @node: on the listing's waiters (op_list.c)
 * @done: called once when the listing ends: @listed if it applied the
 *	whole directory (the lower directory now answers the lookup), else
 *	the lookup asks S3 itself
 */
struct s3d_list_waiter {
	struct s3d_list node;
	void (*done)(struct s3d_list_waiter *w, bool listed);
};

bool s3d_op_list_wait(struct s3d_mount *m, const char *path, bool name_new,
		      struct s3d_list_waiter *w);
void s3d_op_list_unwait(struct s3d_list_waiter *w);
void s3d_op_lookup(struct s3d_req *r, struct s3d_mount *m, struct s3d_ctx *ctx);
void s3d_op_lookup_set_get_max(unsigned int bytes);

/* What the operations count (metrics.c exposes it). */
struct s3d_op_stats_lookup {
	uint64_t whole;		/* objects a LOOKUP's GET brought whole */
	uint64_t whole_bytes;	/* ... their bytes */
	uint64_t listings;	/* directories listed for lookups */
	uint64_t listings_big;	/* ... given up: more than the pages allowed */
	uint64_t listed;	/* LOOKUPs a listing answered (no request) */
	uint64_t indexed;	/* lower files made from a directory's index */
};

extern struct s3d_op_stats_lookup s3d_lookup_stats;
void s3d_op_fetch(struct s3d_req *r, struct s3d_mount *m, struct s3d_ctx *ctx);
void s3d_op_upload(struct s3d_req *r, struct s3d_mount *m, struct s3d_ctx *ctx);
void s3d_op_upload_set_parts(unsigned int size, unsigned int parallel);
void s3d_op_ns(struct s3d_req *r, struct s3d_mount *m, struct s3d_ctx *ctx);
void s3d_op_setmeta(struct s3d_req *r, struct s3d_mount *m,
		    struct s3d_ctx *ctx);

void s3d_op_done(struct s3d_req *r, struct s3d_mount *m, struct s3d_ctx *ctx,
		 int err);
int s3d_op_split_path(const char *path, char **parent, const char **name);
void s3d_op_log_skip(const struct s3d_mount *m, const char *key,
		     const char *why);
int s3d_op_list_prepare(struct s3d_xfer *x, struct s3d_ctx *ctx,
			const struct s3d_mount *m, const char *prefix,
			const char *token, bool one);
int s3d_op_head_prepare(struct s3d_xfer *x, struct s3d_ctx *ctx,
			const struct s3d_mount *m, const char *key);
int s3d_op_head_meta(const struct s3d_xfer *x, struct s3d_meta *meta);
int s3d_op_copy_source(struct s3d_buf *b, const char *bucket,
		       const char *key);
int s3d_op_copy_result(struct s3d_xfer *x, const char *bucket,
		       const char *key, char *etag, size_t n);
bool s3d_op_hidden_obj(const struct s3d_mount *m, const char *name,
		       size_t len);
size_t s3d_op_marker_headers(struct s3d_kv *h, const struct s3d_req *r,
			     struct s3d_posix_hdrs *posix);

#endif /* S3D_OP_COMMON_H */
