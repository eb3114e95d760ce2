// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel's requests, handed to what does each:
 *
 *   MOUNT   mount.c: open the cache root, check or write the format marker.
 *   UMOUNT  mount.c: forget the mount; stream.c: abort its streams.
 *   CANCEL  req.c: the kernel gave a request up; a LIST stops.
 *   LIST    op_list.c: ListObjectsV2 (delimiter '/', all pages) into the
 *           lower directory.
 *   LOOKUP  op_lookup.c: HEAD key and LIST key/ (max-keys 1) at once; make
 *           the lower entry a file, a directory, or nothing.
 *   FETCH   op_fetch.c: ranged GET with If-Match into the lower file with
 *           O_DIRECT.
 *   UPLOAD  op_upload.c: PutObject of a file the kernel wrote, on the
 *           condition it names (If-None-Match: * or If-Match); with
 *           S3CFS_UP_PART, stream.c: parts of a file still being written.
 *   MKDIR, DELETE, RENAME  op_ns.c: a directory's marker object, a
 *           DeleteObject, a CopyObject and DeleteObject.
 *   SETMETA op_setmeta.c: new POSIX attributes, a CopyObject of the key
 *           onto itself.
 *
 * A request on a mount waits for its bucket's credentials (ctx.c) first.
 */
#include <errno.h>

#include "caps.h"
#include "ctx.h"
#include "lib/config.h"
#include "lib/log.h"
#include "lib/path.h"
#include "lib/posix.h"
#include "mount.h"
#include "op_common.h"
#include "ops.h"
#include "req.h"
#include "stream.h"
#include "uapi/s3cachefs.h"

/* @r's context is ready (@err 0) or failed: run its operation. */
static void dispatch(void *arg, struct s3d_ctx *ctx, int err)
{
	struct s3d_req *r = arg;
	struct s3d_mount *m = r->mount;

	r->mount = NULL;
	if (err)
		s3d_op_done(r, m, ctx, err);
	else if (r->cmd == S3CFS_CMD_FETCH)
		s3d_op_fetch(r, m, ctx);
	else if (r->cmd == S3CFS_CMD_LOOKUP)
		s3d_op_lookup(r, m, ctx);
	else if (r->cmd == S3CFS_CMD_UPLOAD)
		s3d_op_upload(r, m, ctx);
	else if (r->cmd == S3CFS_CMD_MKDIR || r->cmd == S3CFS_CMD_DELETE ||
		 r->cmd == S3CFS_CMD_RENAME)
		s3d_op_ns(r, m, ctx);
	else if (r->cmd == S3CFS_CMD_SETMETA)
		s3d_op_setmeta(r, m, ctx);
	else
		s3d_op_list(r, m, ctx);
}

/**
 * s3d_req_handle() - act on one request
 * @r: the request; r->reply() is called exactly once (except for UMOUNT
 *	and CANCEL, which are freed here, and a request the kernel cancels),
 *	possibly before this returns
 */
void s3d_req_handle(struct s3d_req *r)
{
	struct s3d_mount *m;
	struct s3d_ctx *ctx;
	int err;

	s3d_req_begin(r);
	switch (r->cmd) {
	case S3CFS_CMD_MOUNT:
		s3d_mount_start(r);
		return;
	case S3CFS_CMD_UMOUNT:
		/* Files of a mount that is gone are never closed here. */
		s3d_stream_drop_mount(r->mount_id);
		s3d_mount_stop(r);
		return;
	case S3CFS_CMD_CANCEL:
		if (!s3d_req_cancel(r->mount_id, r->id))
			s3d_dbg("CANCEL of request %llu: not pending (answered already)",
				(unsigned long long)r->id);
		s3d_req_drop(r);
		return;
	case S3CFS_CMD_FETCH:
	case S3CFS_CMD_LOOKUP:
	case S3CFS_CMD_LIST:
	case S3CFS_CMD_UPLOAD:
	case S3CFS_CMD_MKDIR:
	case S3CFS_CMD_DELETE:
	case S3CFS_CMD_RENAME:
	case S3CFS_CMD_SETMETA:
		break;
	default:
		s3d_req_finish(r, -EOPNOTSUPP);
		return;
	}
	if (!r->path || !s3d_path_valid(r->path)) {
		s3d_err("request %llu: invalid path", (unsigned long long)r->id);
		s3d_req_finish(r, -EINVAL);
		return;
	}
	if (r->has_posix && !s3d_posix_valid(&r->posix)) {
		s3d_err("request %llu: invalid POSIX attributes (flags %#x, mode %#o, nsec %u)",
			(unsigned long long)r->id, r->posix.flags,
			r->posix.mode, r->posix.mtime_nsec);
		s3d_req_finish(r, -EINVAL);
		return;
	}
	m = s3d_mount_get(r->mount_id);
	if (!m) {
		s3d_req_finish(r, s3d_mount_refused(r->mount_id, r->id));
		return;
	}
	if (s3d_req_join(r)) {
		s3d_mount_put(m);
		return;
	}
	/* The context as configured now: a reload affects new requests. */
	ctx = s3d_ctx_get(m->bucket, &err);
	if (!ctx) {
		s3d_mount_put(m);
		s3d_req_finish(r, err == -ENOENT ? -EACCES : err);
		return;
	}
	/* Credentials being resolved: it waits; failed lately: it fails. */
	r->mount = m;
	err = s3d_ctx_ready(ctx, dispatch, r);
	if (err <= 0)
		dispatch(r, ctx, err);
}

/* The operations' settings from @c. */
static void ops_tune(const struct s3d_conf *c)
{
	unsigned int get_max = s3d_conf_tune(c, S3D_TUNE_LOOKUP_GET_MAX);

	/*
	 * With a fleet tier a new name is asked with a HEAD (unless
	 * lookup_get_max says otherwise): its bytes then come by FETCH, from
	 * the tier where another node put them, where a first-bytes GET
	 * would take every small object from the origin.
	 */
	if (c->tier.bucket && !c->tune_set[S3D_TUNE_LOOKUP_GET_MAX])
		get_max = 0;
	s3d_op_lookup_set_get_max(get_max);
	s3d_op_list_set_ahead(s3d_conf_tune(c, S3D_TUNE_LIST_AHEAD));
	s3d_op_list_set_lookup_pages(s3d_conf_tune(c, S3D_TUNE_LOOKUP_LIST_PAGES));
	s3d_op_list_set_max_pages(s3d_conf_tune(c, S3D_TUNE_LIST_MAX_PAGES));
	s3d_op_upload_set_parts(s3d_conf_tune(c, S3D_TUNE_PART_SIZE),
				s3d_conf_tune(c, S3D_TUNE_UPLOAD_PARALLEL));
	s3d_caps_set_require(s3d_conf_tune(c, S3D_TUNE_REQUIRE_CONDITIONS));
}

/**
 * s3d_ops_init() - start handling requests under @c
 * @c: the configuration (see s3d_ops_set_conf())
 *
 * Return: 0 or -errno (the [global] context cannot be made; logged).
 */
int s3d_ops_init(const struct s3d_conf *c)
{
	s3d_req_init();
	ops_tune(c);
	return s3d_ctx_init(c);
}

/* Use @c for requests from now on (a reload; see s3d_ctx_set_conf()). */
int s3d_ops_set_conf(const struct s3d_conf *c)
{
	int err = s3d_ctx_set_conf(c);

	if (!err)
		ops_tune(c);
	return err;
}

/* Forget all mounts (operations still running keep theirs alive). */
void s3d_ops_fini(void)
{
	s3d_req_fini();
	s3d_mounts_fini();
	s3d_caps_fini();
	s3d_ctx_fini();
}

/* Requests handed in and not answered yet. */
unsigned int s3d_ops_pending(void)
{
	return s3d_req_pending();
}
