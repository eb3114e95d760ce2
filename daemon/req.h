/* SPDX-License-Identifier: GPL-2.0 */
/*
 * req.c: one request from the kernel, from its arrival to its one reply:
 * progress reports while it runs, identical requests answered together.
 */
#ifndef S3D_REQ_H
#define S3D_REQ_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/base.h"
#include "uapi/s3cachefs.h"

struct s3d_mount;

/**
 * struct s3d_req - one request from the kernel (or from --selftest)
 * @reply: called exactly once with 0 or -errno; owns freeing @r after.
 * @cancel: if set (by the operation working on it), stops that work: the
 *	kernel gave the request up (CANCEL) and no other request rides on it.
 *	It must end the operation (s3d_req_finish(), which answers nothing
 *	for a cancelled request), possibly before it returns.
 * @cancel_arg: its argument
 * @progress: if set, sends a progress report (STATUS -EINPROGRESS) for a
 *	request still in progress; @r stays ours. Called after each listing
 *	page, each whole chunk of a FETCH written, and every S3D_PROGRESS_MS
 *	while bytes move for it (or while it waits for its first attempt, for
 *	a slot): never for a request whose S3 transfer is stuck or backing
 *	off, so the kernel's fetch_timeout bounds those.
 */
struct s3d_req {
	int cmd;
	uint64_t id;
	uint32_t mount_id;
	char *path;
	char *name;
	char *etag;
	uint64_t off;
	uint64_t len;
	uint64_t done;		/* FETCH: [off, off + done) is written;
				 * LIST: bytes of its log written */
	uint32_t prio;		/* FETCH: enum s3cfs_prio (absent: SYNC) */
	uint64_t ino;		/* UPLOAD: the lower file's inode number;
				 * LIST: its log's */
	uint64_t size;		/* UPLOAD: bytes to put; RENAME, SETMETA: the
				 * object's */
	uint32_t flags;		/* UPLOAD: S3CFS_UP_*; MOUNT: S3CFS_MOUNT_*;
				 * DELETE: S3CFS_DEL_* */
	uint64_t stream;	/* UPLOAD: a streamed upload's id (version 8) */
	uint32_t parts;		/* ... its parts; with S3CFS_UP_PART, @len
				 * is their size */
	char *path2;		/* RENAME: the destination */
	bool has_posix;		/* UPLOAD, MKDIR, SETMETA: @posix is given */
	struct s3cfs_posix posix;	/* ... the object's POSIX attributes */
	char *reply_etag;	/* UPLOAD, RENAME, SETMETA: the new ETag, sent
				 * with the answer */
	bool reply_defaults;	/* MOUNT: the answer carries the bucket's
				 * defaults (version 7): */
	uint32_t reply_flags;	/* ... S3CFS_MOUNT_WRITEBACK */
	int reply_upload_delay;	/* ... seconds, or -1: none */
	bool ahead;		/* LIST: ours, ahead of a walk (not the kernel's) */
	unsigned int ahead_levels;	/* ... of subdirectories to list too */
	unsigned int ahead_pages;	/* ... pages at most, else none is
					 * applied (0: one) */
	bool for_lookups;	/* ... for lookups waiting for it */
	/* MOUNT */
	char *bucket;
	char *prefix;
	char *cache_dir;
	uint32_t chunk;
	bool has_token;		/* version 10: @token is given */
	uint8_t token[S3CFS_TOKEN_LEN];	/* ... what the cache root carries */
	void (*reply)(struct s3d_req *r, int status);
	void (*progress)(struct s3d_req *r);
	void (*cancel)(void *arg);
	void *cancel_arg;
	void *priv;
	struct s3d_mount *mount;	/* its mount, while credentials load */
	bool server_busy;		/* it goes on with no byte moving (S3
					 * copying, a FETCH waiting for another
					 * node's tier blocks): reported as if
					 * bytes moved */
	/* req.c private */
	uint64_t reported_ms;		/* start or last progress report */
	bool moved;			/* body bytes arrived since then */
	bool started;			/* its first S3 attempt has begun */
	bool cancelled;			/* the kernel gave it up: no reply */
	struct s3d_list active;		/* on the in-progress list */
	struct s3d_req *riders;		/* identical requests answered with it */
	struct s3d_req *rider_next;
};

/*
 * The kernel restarts a request's wait (fetch_timeout) on each progress
 * report: report a pending request that moved bytes (or has not started
 * yet) when this long has passed since its start or its last report
 * (checked every S3D_PROGRESS_TICK_MS), so while bytes move two reports
 * are never more than 4 s apart.
 */
#define S3D_PROGRESS_MS		3000
#define S3D_PROGRESS_TICK_MS	1000

void s3d_req_init(void);
void s3d_req_fini(void);
void s3d_req_begin(struct s3d_req *r);
bool s3d_req_join(struct s3d_req *r);
void s3d_req_progress(struct s3d_req *r);
void s3d_req_set_log(struct s3d_req *r, uint64_t done, uint64_t ino);
void s3d_req_finish(struct s3d_req *r, int status);
void s3d_req_drop(struct s3d_req *r);
bool s3d_req_cancel(uint32_t mount_id, uint64_t id);
void s3d_req_free(struct s3d_req *r);
unsigned int s3d_req_pending(void);

#endif /* S3D_REQ_H */
