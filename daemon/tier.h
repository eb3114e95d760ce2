/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tier.c: the fleet tier, a second S3 bucket shared by many nodes, below
 * the FETCH operation (op_fetch.c is its only caller): read-through of
 * verified blocks, write-behind of what origin sent, the breaker, and
 * leases (one node fetches a stripe from origin, the others wait for it:
 * tierlease.c, below tier.c alone). The FETCH's tier state is tierfetch.h.
 */
#ifndef S3D_TIER_H
#define S3D_TIER_H

#include <stdbool.h>
#include <stdint.h>

#include "ctx.h"
#include "tierfetch.h"

/**
 * struct s3d_tier_want - what a FETCH asks of the tier
 * @origin: the origin bucket's S3 context (its endpoint names the blocks)
 * @bucket: the origin bucket
 * @key: the object's key
 * @etag: the version the cache file holds
 * @size: its size
 * @start: the range to fill, [start, end)
 * @end: its end
 * @mount_id: the mount (write-behind reads the cache file back)
 * @path: the cache file, relative to the mount's cache directory
 * @prio: the FETCH's priority class
 */
struct s3d_tier_want {
	struct s3d_ctx *origin;
	const char *bucket;
	const char *key;
	const char *etag;
	uint64_t size;
	uint64_t start, end;
	uint32_t mount_id;
	const char *path;
	int prio;
};

bool s3d_tier_fetch_start(struct s3d_tier_fetch *t,
			  const struct s3d_tier_want *w,
			  const struct s3d_tier_fetch_ops *ops, void *arg);
void s3d_tier_fetch_feed(struct s3d_tier_fetch *t, uint64_t pos,
			 const char *p, size_t n);
void s3d_tier_fetch_written(struct s3d_tier_fetch *t, uint64_t upto);
void s3d_tier_fetch_end(struct s3d_tier_fetch *t, bool ok);

#endif /* S3D_TIER_H */
