/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tierfetch.h: the fleet tier's part of one FETCH (struct s3d_tier_fetch,
 * embedded in op_fetch.c's request through tier.h), shared by tier.c
 * (read-through, write-behind) and tierlease.c (its leases). Apart from
 * tier.h so that tierlease.c has it without including tier.h: the leases
 * sit below tier.c (tests/host/layering.py).
 */
#ifndef S3D_TIERFETCH_H
#define S3D_TIERFETCH_H

#include <stdbool.h>
#include <stdint.h>

#include "ctx.h"
#include "lib/loop.h"
#include "lib/util.h"
#include "lib/xfer.h"
#include "tierblk.h"
#include "uapi/s3cachefs.h"

/* A bucket name and its NUL (as s3d_bucket_valid() allows them). */
#define S3D_TIER_BUCKET_MAX	(S3CFS_BUCKET_MAX + 1)

/**
 * struct s3d_tier_fetch_ops - how a FETCH takes what the tier gives it
 * @deliver: write the verified block [@off, @off + @len) from @buf (4096
 *	aligned, zeroed up to @len rounded up to 4096) into the cache file.
 *	Return: 0 or -errno (the tier stops; origin sends the rest).
 * @done: the tier's part is over: [start, @upto) is in the cache file, the
 *	rest of the range is origin's
 * @waiting: the tier's part waits on leases (@on), or no more: no bytes
 *	move meanwhile, yet the FETCH is alive (tier_lease_wait_ms bounds
 *	it); NULL: not told
 */
struct s3d_tier_fetch_ops {
	int (*deliver)(void *arg, uint64_t off, char *buf, size_t len);
	void (*done)(void *arg, uint64_t upto);
	void (*waiting)(void *arg, bool on);
};

/* A block origin sent whole during a FETCH, its checksum, queued yet. */
struct s3d_tier_seen {
	uint64_t index;
	char sha[S3D_TIER_HEX + 1];
	bool queued;
};

/**
 * struct s3d_tier_fetch - the tier's part of one FETCH (in struct fetch_op;
 *	zeroed before use)
 * @ops: the FETCH's callbacks
 * @arg: their argument
 * @active: the object's blocks are named (@obj): origin bytes are hashed
 *	for the write-behind
 * @reading: a tier read is under way (@ops->done is still to come)
 * @obj: the object version's block names
 * @etag: the version as the cache file has it (checked before a put)
 * @path: the cache file
 * @mount_id: its mount
 * @start: the FETCH's range
 * @end: its end
 * @upto: [start, upto) is delivered
 * @next: the block to ask the tier for next
 * @heal: a block the tier had wrong (put back unconditionally), or
 *	UINT64_MAX
 * @prio: the FETCH's priority class, its tier GETs' too
 * @ctx: the tier's context, held while reading
 * @bucket: the tier's bucket when the read started
 * @buf: the block being received
 * @fill: bytes of it received
 * @too_long: the body was longer than the block
 * @hdrs: the response's headers (its metadata)
 * @key: the block's name
 * @x: the tier GET
 * @md: the hash of the block origin is sending (EVP_MD_CTX), or NULL
 * @hashing: @md covers [block start, @hpos) of the block at @hpos
 * @hpos: the next origin byte @md expects
 * @seen: blocks origin sent whole, to be put when the FETCH succeeds
 *	(those of a stripe this node holds the lease of: once written)
 * @nseen: their number
 * @capseen: room in @seen
 * @scan: @seen before it were looked at for a lease (written)
 * @written: every byte of origin's below it is in the cache file
 * @lease: the FETCH's leases, stripe by stripe
 * @timer: a waiting FETCH's next poll, or its patience with the probe
 * @twhat: what @timer does (enum in tierlease.c)
 * @parked: on the list of FETCHes waiting for the probe's verdict
 * @is_parked: ... while true
 * @probe_late: the probe did not answer in time: no lease this FETCH
 * @held: a stripe whose lease this node holds, plus 1; 0: none known
 * @lkey: the current stripe's lease
 * @letag: its ETag, as a HEAD gave it
 * @lblocks: the blocks this FETCH fetches of it, "FIRST-LAST"
 * @lmatch: the If-Match of a takeover
 * @lh: a lease PUT's headers
 * @lbody: a lease PUT's body (its holder, random bytes)
 * @busy: @ops->waiting was told it waits on leases
 */
struct s3d_tier_fetch {
	const struct s3d_tier_fetch_ops *ops;
	void *arg;
	bool active;
	bool reading;
	struct s3d_tier_obj obj;
	char *etag;
	char *path;
	uint32_t mount_id;
	uint64_t start, end;
	uint64_t upto;
	uint64_t next;
	uint64_t heal;
	int prio;
	struct s3d_ctx *ctx;
	char bucket[S3D_TIER_BUCKET_MAX];
	char *buf;
	size_t fill;
	bool too_long;
	struct s3d_buf hdrs;
	char key[S3D_TIER_KEY_MAX];
	struct s3d_xfer x;
	void *md;
	bool hashing;
	uint64_t hpos;
	struct s3d_tier_seen *seen;
	size_t nseen, capseen;
	size_t scan;
	uint64_t written;
	struct s3d_tier_lease lease;
	struct s3d_timer timer;
	int twhat;
	struct s3d_list parked;
	bool is_parked;
	bool probe_late;
	uint64_t held;
	char lkey[S3D_TIER_KEY_MAX];
	char letag[S3D_ETAG_MAX + 1];
	char lblocks[48];
	char lmatch[S3D_ETAG_MAX + 3];
	struct s3d_kv lh[3];
	char lbody[S3D_TIER_LEASE_BODY];
	bool busy;
};

#endif /* S3D_TIERFETCH_H */
