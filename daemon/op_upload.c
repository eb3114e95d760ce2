// SPDX-License-Identifier: GPL-2.0
/*
 * UPLOAD: PutObject of a LOCAL lower file (one the kernel wrote), on the
 * condition the kernel names: If-None-Match: * for a file never uploaded,
 * If-Match: <the ETag we uploaded last> otherwise. The answer carries the
 * new object's ETag, which the kernel tags the file with.
 *
 * The daemon only reads the file, and only while the kernel waits for the
 * answer holding the file's i_rwsem, so nothing writes it meanwhile. The
 * file must still be the one the kernel named (its inode number) and
 * still LOCAL. Up to part_size bytes go in one PUT; a larger file is a
 * multipart upload (mpu.c) with the same condition on its Complete.
 * POSIX attributes, when the kernel sends them, go with the PUT or the
 * CreateMultipartUpload as x-amz-meta-* (lib/posix.c).
 *
 * A PUT sent again after its answer was lost (a timeout, a reset, a
 * daemon that died) fails its own condition if the first one took effect:
 * before that is called a conflict, a HEAD checks whether the object holds
 * our bytes (its size, and the MD5 ETag S3 gives them), or carries this
 * upload's writer token (writer.c: an earlier upload of this file took
 * effect unknown to the kernel; the PUT goes again, If-Match it, once).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <openssl/evp.h>

#include "ctx.h"
#include "lib/config.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "lib/path.h"
#include "lib/posix.h"
#include "lib/prio.h"
#include "lib/s3.h"
#include "lib/util.h"
#include "lib/xfer.h"
#include "lib/xml.h"
#include "caps.h"
#include "mpu.h"
#include "op_common.h"
#include "stream.h"
#include "writer.h"

/* Files above part_size go up in parts, upload_parallel at a time. */
static uint64_t part_size = S3D_PART_SIZE_DEFAULT;
static unsigned int upload_parallel = S3D_UPLOAD_PARALLEL_DEFAULT;

/* How often a running upload checks that its body moves (progress). */
#define UPLOAD_TICK_MS	1000

struct upload_op {
	struct s3d_req *r;
	struct s3d_mount *m;
	struct s3d_ctx *ctx;
	char *key;
	int fd;
	struct s3d_kv h[3 + S3D_POSIX_NF];
	struct s3d_posix_hdrs posix;	/* the values of h[] */
	char clen[24];
	uint64_t sent;		/* body position at the last tick */
	struct s3d_timer tick;
	struct s3d_mpu *mpu;	/* a multipart upload, or NULL: one PUT */
	int conflict;		/* the PUT's failed condition, being checked */
	char if_match[S3D_ETAG_MAX + 3];	/* as the server takes it */
	char token[S3D_WRITER_TOKEN_LEN + 1];	/* writer.c; "": none */
	struct s3d_buf hdrs;	/* the verify HEAD's headers */
	bool again;		/* sent again, If-Match our own earlier object */
	enum s3d_prio prio;	/* ASYNC: a write-back upload (S3CFS_A_PRIORITY) */
	struct s3d_xfer x;
};

/**
 * s3d_op_upload_set_parts() - how big files go up
 * @size: files above this many bytes are multipart uploads with parts of
 *	this size (at least S3D_PART_MIN; more for huge files); 0: default
 * @parallel: parts in flight per upload at most; 0: default
 */
void s3d_op_upload_set_parts(unsigned int size, unsigned int parallel)
{
	part_size = size ? S3D_MAX((uint64_t)size, S3D_PART_MIN) :
		S3D_PART_SIZE_DEFAULT;
	upload_parallel = parallel ?: S3D_UPLOAD_PARALLEL_DEFAULT;
}

static void upload_finish(struct upload_op *op, int err)
{
	struct s3d_req *r = op->r;
	struct s3d_mount *m = op->m;
	struct s3d_ctx *ctx = op->ctx;

	s3d_timer_cancel(&op->tick);
	s3d_ctx_release(&op->x);
	if (op->fd >= 0)
		close(op->fd);
	s3d_buf_free(&op->hdrs);
	free(op->key);
	free(op);
	s3d_op_done(r, m, ctx, err);
}

/* Bytes went up since the last tick: the kernel's wait goes on. */
static void upload_tick(struct s3d_timer *t)
{
	struct upload_op *op = s3d_container_of(t, struct upload_op, tick);

	uint64_t sent = op->mpu ? s3d_mpu_sent(op->mpu) : op->x.src.pos;

	if (sent != op->sent) {
		op->sent = sent;
		op->r->moved = true;
	}
	s3d_timer_arm(&op->tick, UPLOAD_TICK_MS);
}

static int upload_prepare(struct s3d_xfer *x)
{
	struct upload_op *op = s3d_container_of(x, struct upload_op, x);
	size_t nh = 0;

	op->r->started = true;
	x->src.fd = op->fd;
	x->src.off = 0;
	x->src.len = op->r->size;
	snprintf(op->clen, sizeof(op->clen), "%" PRIu64, op->r->size);
	op->h[nh++] = (struct s3d_kv){ "Content-Length", op->clen };
	if ((op->r->flags & S3CFS_UP_NEW) && !op->again)
		op->h[nh++] = (struct s3d_kv){ "If-None-Match", "*" };
	else
		op->h[nh++] = (struct s3d_kv){ "If-Match", op->if_match };
	if (op->r->has_posix)
		nh += s3d_posix_headers(&op->r->posix, &op->posix, op->h + nh);
	if (op->token[0])
		op->h[nh++] = (struct s3d_kv){ S3D_WRITER_HDR, op->token };
	return s3d_s3_build(s3d_ctx_s3(op->ctx), "PUT", op->m->bucket, op->key,
			    NULL, 0, op->h, nh, time(NULL), &x->req);
}

/* The upload is over (nothing of it is left in S3 but a new object). */
static void upload_result(struct upload_op *op, int err, const char *etag)
{
	if (!err) {
		op->r->reply_etag = strdup(etag);
		if (!op->r->reply_etag)
			err = -ENOMEM;
	}
	if (err == -EEXIST || err == -ESTALE || err == -ENOENT)
		s3d_warn("UPLOAD s3://%s/%s: %s in S3 meanwhile (conflict)",
			 op->m->bucket, op->key,
			 err == -EEXIST ? "created" : err == -ENOENT ?
			 "deleted" : "changed");
	else if (err)
		s3d_err("UPLOAD s3://%s/%s: %s", op->m->bucket, op->key,
			strerror(-err));
	else
		s3d_info("UPLOAD s3://%s/%s: %" PRIu64 " bytes%s, ETag %s",
			 op->m->bucket, op->key, op->r->size,
			 op->mpu ? " in parts" : "", etag);
	op->mpu = NULL;
	upload_finish(op, err);
}

/* "\"<MD5 of the file's first @size bytes>\"": a PutObject's ETag. */
static int file_etag(int fd, uint64_t size, char out[S3D_ETAG_MAX + 1])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	EVP_MD_CTX *c = EVP_MD_CTX_new();
	uint64_t off = 0;
	char *buf = malloc(1 << 20);
	int err = -ENOMEM;

	if (!c || !buf || !EVP_DigestInit_ex(c, EVP_md5(), NULL))
		goto out;
	while (off < size) {
		ssize_t n = pread(fd, buf, S3D_MIN(size - off, (uint64_t)1 << 20),
				  (off_t)off);

		if (n <= 0) {
			err = n < 0 ? -errno : -EIO;
			goto out;
		}
		EVP_DigestUpdate(c, buf, (size_t)n);
		off += (uint64_t)n;
	}
	err = -EIO;
	if (!EVP_DigestFinal_ex(c, md, &mdlen) || mdlen != 16)
		goto out;
	out[0] = '"';
	s3d_hex(md, 16, out + 1);
	out[33] = '"';
	out[34] = '\0';
	err = 0;
out:
	free(buf);
	EVP_MD_CTX_free(c);
	return err;
}

static int verify_prepare(struct s3d_xfer *x)
{
	struct upload_op *op = s3d_container_of(x, struct upload_op, x);

	s3d_buf_reset(&op->hdrs);
	x->hdrs = &op->hdrs;
	return s3d_op_head_prepare(x, op->ctx, op->m, op->key);
}

static const struct s3d_xfer_ops upload_ops;

/*
 * The failed condition is our own: the object carries this upload's
 * writer token. The PUT goes again, If-Match that object, once.
 */
static bool upload_again(struct upload_op *op, const struct s3d_xfer *x)
{
	if (op->again || !x->has_etag || !x->etag[0] ||
	    !s3d_writer_is(&op->hdrs, op->token))
		return false;
	s3d_info("UPLOAD s3://%s/%s: the object (ETag %s) is an earlier upload of this file that took effect unknown to the kernel; putting over it",
		 op->m->bucket, op->key, x->etag);
	s3d_caps_if_match(op->m->bucket, x->etag, op->if_match,
			  sizeof(op->if_match));
	op->again = true;
	s3d_upload_stats.again++;
	s3d_ctx_release(&op->x);
	s3d_xfer_init(&op->x, &upload_ops, "PUT", op->key);
	op->x.prio = op->prio;
	s3d_ctx_submit(op->ctx, &op->x);
	return true;
}

/*
 * The object is ours when it has exactly our bytes: its size, and the
 * ETag S3 gives them (the MD5, for objects not encrypted with SSE-KMS/C).
 */
static int verify_done(struct s3d_xfer *x)
{
	struct upload_op *op = s3d_container_of(x, struct upload_op, x);
	char want[S3D_ETAG_MAX + 1] = "";
	int err = s3d_xfer_errno(x, op->m->bucket);

	if (!err && x->has_etag &&
	    x->content_length == (int64_t)op->r->size &&
	    !file_etag(op->fd, op->r->size, want) && s3d_etag_eq(x->etag, want)) {
		s3d_info("UPLOAD s3://%s/%s: the object is ours (ETag %s): an earlier PUT of these bytes took effect",
			 op->m->bucket, op->key, x->etag);
		s3d_upload_stats.ours++;
		s3d_upload_stats.bytes += op->r->size;
		upload_result(op, 0, x->etag);
		return 0;
	}
	if (!err && upload_again(op, x))
		return 0;
	upload_result(op, op->conflict, NULL);
	return 0;
}

static const struct s3d_xfer_ops verify_ops = {
	.prepare = verify_prepare,
	.done = verify_done,
};

static int upload_done(struct s3d_xfer *x)
{
	struct upload_op *op = s3d_container_of(x, struct upload_op, x);
	int err = s3d_xfer_errno(x, op->m->bucket);

	/* A 412 to a create means the key exists. */
	if (err == -ESTALE && (op->r->flags & S3CFS_UP_NEW))
		err = -EEXIST;
	/* Only a missing key is a conflict (If-Match), not a missing bucket. */
	if (err == -ENOENT) {
		struct s3d_s3error e;

		memset(&e, 0, sizeof(e));
		s3d_xml_parse_error(s3d_buf_str(&x->resp), x->resp.len, &e);
		if (!((op->r->flags & S3CFS_UP_MATCH) || op->again) ||
		    strcmp(e.code, "NoSuchKey"))
			err = -EIO;
	}
	if (!err && (!x->has_etag || !x->etag[0])) {
		s3d_err("UPLOAD s3://%s/%s: HTTP %ld without an ETag",
			op->m->bucket, op->key, x->status);
		err = -EIO;
	}
	/*
	 * Our own bytes may be what fails the condition: a PUT sent again
	 * after a lost answer, or an UPLOAD the kernel sent again after a
	 * daemon died past its PUT. A HEAD tells that from a conflict.
	 */
	if (err == -EEXIST || err == -ESTALE) {
		op->conflict = err;
		s3d_ctx_release(&op->x);
		s3d_xfer_init(&op->x, &verify_ops, "HEAD", op->key);
		op->x.prio = op->prio;
		s3d_ctx_submit(op->ctx, &op->x);
		return 0;
	}
	if (!err)
		s3d_upload_stats.bytes += op->r->size;
	upload_result(op, err, x->etag);
	return 0;
}

static void upload_mpu_done(void *arg, int err, const char *etag)
{
	upload_result(arg, err, etag);
}

static const struct s3d_xfer_ops upload_ops = {
	.prepare = upload_prepare,
	.done = upload_done,
};

/* The kernel gave up (killed or timed out): stop sending the file. */
static void upload_cancel(void *arg)
{
	struct upload_op *op = arg;

	s3d_info("UPLOAD s3://%s/%s: given up by the kernel; stopped",
		 op->m->bucket, op->key);
	if (op->mpu) {
		/* No more parts go out; the upload is aborted in the background. */
		s3d_mpu_cancel(op->mpu);
		op->mpu = NULL;
	}
	upload_finish(op, -ECANCELED);
}

/* The request names one condition, and the file is the kernel's LOCAL one. */
static int upload_check(struct upload_op *op)
{
	struct s3d_req *r = op->r;
	struct stat st;
	int err;

	if ((r->flags & (S3CFS_UP_NEW | S3CFS_UP_MATCH)) != S3CFS_UP_NEW &&
	    ((r->flags & (S3CFS_UP_NEW | S3CFS_UP_MATCH)) != S3CFS_UP_MATCH ||
	     !r->etag || !*r->etag))
		return -EINVAL;
	if (r->size > S3D_OBJECT_MAX)
		return -EFBIG;
	/* Not conflicts: the kernel's file should be there, as it says. */
	err = s3d_store_open_file(op->m->rootfd, r->path, O_RDONLY, &op->fd);
	if (err)
		return err == -ENOENT || err == -EISDIR ? -EIO : err;
	if (fstat(op->fd, &st))
		return -errno;
	if ((uint64_t)st.st_ino != r->ino || !s3d_store_is_local(op->fd)) {
		s3d_err("UPLOAD %s: the cache file is not the kernel's written file (inode %llu, %s)",
			r->path, (unsigned long long)st.st_ino,
			s3d_store_is_local(op->fd) ? "local" : "not local");
		return -EIO;
	}
	if ((uint64_t)st.st_size < r->size) {
		s3d_err("UPLOAD %s: the cache file has %lld bytes, the kernel says %" PRIu64,
			r->path, (long long)st.st_size, r->size);
		return -EIO;
	}
	return 0;
}

void s3d_op_upload(struct s3d_req *r, struct s3d_mount *m, struct s3d_ctx *ctx)
{
	struct s3d_mpu_params p;
	struct upload_op *op;
	bool complete_ignores;
	int err;

	if (r->cancelled) {
		/* Given up while it waited for credentials: the file may change now. */
		s3d_op_done(r, m, ctx, -ECANCELED);
		return;
	}
	if (r->flags & S3CFS_UP_PART) {
		s3d_stream_part(r, m, ctx, upload_parallel);
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
	op->fd = -1;
	s3d_buf_init(&op->hdrs, 16 << 10);
	op->prio = r->prio == S3CFS_PRIO_ASYNC ? S3D_PRIO_ASYNC : S3D_PRIO_SYNC;
	s3d_list_init(&op->tick.node);
	op->tick.fn = upload_tick;
	s3d_xfer_init(&op->x, &upload_ops, "PUT", "");
	op->key = s3d_key_of(m->prefix, r->path, NULL);
	if (!op->key) {
		upload_finish(op, -errno);
		return;
	}
	op->x.key = op->key;
	err = upload_check(op);
	if (err) {
		s3d_err("UPLOAD %s: %s", op->key, strerror(-err));
		upload_finish(op, err);
		return;
	}
	if (s3d_writer_token(op->fd, m->bucket, op->key,
			     (r->flags & S3CFS_UP_MATCH) ? r->etag : NULL,
			     op->token))
		op->token[0] = '\0';
	r->cancel = upload_cancel;
	r->cancel_arg = op;
	s3d_timer_arm(&op->tick, UPLOAD_TICK_MS);
	if (r->flags & S3CFS_UP_MATCH)
		s3d_caps_if_match(m->bucket, r->etag, op->if_match,
				  sizeof(op->if_match));
	p = (struct s3d_mpu_params){
		.ctx = ctx, .bucket = m->bucket, .key = op->key,
		.fd = op->fd, .rootfd = m->rootfd, .size = r->size,
		.part_size = part_size,
		.parallel = upload_parallel,
		.prio = op->prio,
		.if_match = (r->flags & S3CFS_UP_MATCH) ? op->if_match : NULL,
		.if_none_match = r->flags & S3CFS_UP_NEW,
		.posix = r->has_posix ? &r->posix : NULL,
		.token = op->token,
		.done = upload_mpu_done, .arg = op,
	};
	complete_ignores = s3d_caps_of(m->bucket)->complete_ignores;
	/* The parts a stream put already, and the rest (stream.c). */
	if (r->stream) {
		op->mpu = s3d_stream_finish(m, r, op->key, &p,
					    !complete_ignores);
		if (op->mpu) {
			r->started = true;
			return;
		}
	}
	/*
	 * In parts above part_size, unless the server ignores conditions on
	 * CompleteMultipartUpload (caps.c): then one conditional PUT, as far
	 * as one PUT goes.
	 */
	if (r->size > part_size &&
	    (!complete_ignores || r->size > S3D_SINGLE_MAX)) {
		r->started = true;
		op->mpu = s3d_mpu_start(&p, &err);
		if (!op->mpu) {
			s3d_err("UPLOAD %s: %s", op->key, strerror(-err));
			upload_finish(op, err);
		}
		return;
	}
	op->x.prio = op->prio;
	s3d_ctx_submit(op->ctx, &op->x);
}
