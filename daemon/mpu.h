/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mpu.c: one multipart upload of a file on the loop: create, the parts in
 * parallel, a conditional Complete, and an Abort after any failure, so
 * that a failed or given-up upload leaves no parts behind.
 */
#ifndef S3D_MPU_H
#define S3D_MPU_H

#include <stdbool.h>
#include <stdint.h>

#include "ctx.h"
#include "lib/posix.h"
#include "lib/prio.h"
#include "lib/s3.h"
#include "lib/xml.h"

/*
 * S3's limits: the smallest part but the last, the largest object, the
 * largest object one PutObject or CopyObject makes.
 */
#define S3D_PART_MIN		(5ULL << 20)
#define S3D_OBJECT_MAX		(5ULL << 40)
#define S3D_SINGLE_MAX		(5ULL << 30)

/**
 * struct s3d_mpu_params - what one multipart upload puts where
 * @ctx: the bucket's context (the caller holds it until @done)
 * @bucket: bucket (copied)
 * @key: key (copied)
 * @fd: the file, read with pread(); the caller keeps it open until @done
 *	or s3d_mpu_cancel()
 * @rootfd: the mount's cache root, for the journal (journal.c); -1: none
 * @size: the object's size: more than one part
 * @part_size: the part size asked for (grown so the object fits in
 *	S3D_PARTS_MAX parts)
 * @parallel: parts in flight at most
 * @prio: the class of its requests (S3D_PRIO_SYNC: a close or fsync
 *	waits; S3D_PRIO_ASYNC: a write-back upload, behind blocked reads)
 * @if_match: Complete's If-Match (the base ETag), or NULL
 * @if_none_match: Complete's If-None-Match: *
 * @posix: the object's POSIX attributes (copied; sent as x-amz-meta-* with
 *	the CreateMultipartUpload), or NULL
 * @token: the upload's writer token (writer.c; copied; sent with the
 *	CreateMultipartUpload, and compared with an object's at a failed
 *	condition; given to s3d_mpu_close() only the latter), or NULL or "":
 *	none
 * @done: called once with 0 and the object's ETag, or -errno (-EEXIST,
 *	-ESTALE, -ENOENT: the condition failed) once nothing is left in S3
 * @arg: for @done
 */
struct s3d_mpu_params {
	struct s3d_ctx *ctx;
	const char *bucket;
	const char *key;
	int fd;
	int rootfd;
	uint64_t size;
	uint64_t part_size;
	unsigned int parallel;
	enum s3d_prio prio;
	const char *if_match;
	bool if_none_match;
	const struct s3cfs_posix *posix;
	const char *token;
	void (*done)(void *arg, int err, const char *etag);
	void *arg;
};

struct s3d_mpu;

/* What uploads did (metrics.c exposes it). */
struct s3d_upload_stats {
	uint64_t bytes;		/* of objects put (PUT or multipart) */
	uint64_t multipart;	/* objects put as multipart uploads */
	uint64_t parts;		/* parts put */
	uint64_t aborted;	/* multipart uploads aborted */
	uint64_t abort_failed;	/* ... that could not be (parts left) */
	uint64_t ours;		/* failed conditions found to be our bytes */
	uint64_t again;		/* ... to be an earlier upload of the same
				 * file (its writer token): sent again over it */
	uint64_t recovered;	/* uploads of a dead daemon aborted at MOUNT */
	uint64_t streamed;	/* uploads that used a stream (stream.c) */
	uint64_t stream_dropped;	/* streams aborted unused */
};

extern struct s3d_upload_stats s3d_upload_stats;

struct s3d_mpu *s3d_mpu_start(const struct s3d_mpu_params *p, int *err);
struct s3d_mpu *s3d_mpu_open(const struct s3d_mpu_params *p, int *err);
int s3d_mpu_ready(struct s3d_mpu *u, unsigned int n);
int s3d_mpu_close(struct s3d_mpu *u, const struct s3d_mpu_params *p,
		  unsigned int early);
uint64_t s3d_mpu_sent(const struct s3d_mpu *u);
void s3d_mpu_cancel(struct s3d_mpu *u);
int s3d_mpu_recover(struct s3d_ctx *ctx, const char *bucket, int rootfd);
uint64_t s3d_mpu_part_size(uint64_t size, uint64_t asked);
int s3d_mpu_etag(const char *const *etags, unsigned int n,
		 char out[S3D_ETAG_MAX + 1]);

#endif /* S3D_MPU_H */
