// SPDX-License-Identifier: GPL-2.0
/*
 * A multipart upload of a file, on the loop: CreateMultipartUpload, the
 * parts (UploadPart, @parallel at a time, each retried by the engine from
 * the file), CompleteMultipartUpload with the caller's condition, and
 * AbortMultipartUpload after any failure, a failed condition or a cancel,
 * before the caller hears of it: a failed upload leaves no parts behind.
 * The abort waits for the answer of every part already sent: S3 stores a
 * part it received whole even when its client hung up, and a part stored
 * after the abort would stay. The upload reads its own descriptor of the
 * file meanwhile.
 *
 * Once CreateMultipartUpload has answered, before any part goes out, the
 * upload is in the mount's journal (journal.c) until S3 no longer has it:
 * a daemon that dies mid-upload leaves the record, and the next one aborts
 * the upload at MOUNT (s3d_mpu_recover()). A crash before that answer
 * leaves an empty upload no record names (no part: no storage).
 *
 * An upload may also be opened before the file's size is known (a stream,
 * s3d_mpu_open()): the writer's finished parts go up while it writes
 * (s3d_mpu_ready()), and s3d_mpu_close() names the size and the condition
 * once the file is complete; the parts after the streamed ones are then
 * sized to fit S3D_PARTS_MAX as a whole.
 *
 * A Complete whose answer was lost is sent again; S3 then answers
 * NoSuchUpload, since the first one took effect. That is not a failure: a
 * HEAD finds the object, and it is ours when its ETag is the one S3 gives
 * an object of exactly our parts (the MD5 of their MD5s, "-N"). A Complete
 * whose condition fails on an object that carries our writer token (an
 * earlier upload of this file took effect unknown to the kernel,
 * writer.c) is sent once more, If-Match that object.
 */
#include <errno.h>
#include <inttypes.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <fcntl.h>

#include <openssl/evp.h>

#include "lib/log.h"
#include "lib/prio.h"
#include "lib/retry.h"
#include "lib/util.h"
#include "lib/xfer.h"
#include "caps.h"
#include "journal.h"
#include "mpu.h"
#include "writer.h"

enum mpu_stage { MPU_CREATE, MPU_PARTS, MPU_COMPLETE, MPU_VERIFY, MPU_ABORT };

struct mpu_slot {
	struct s3d_xfer x;
	struct s3d_mpu *u;
	unsigned int number;		/* the part in flight; 0: idle */
	char num[16];
	char clen[24];
	struct s3d_kv q[2];
	struct s3d_kv h[1];
};

struct s3d_mpu {
	struct s3d_list live;		/* on live_uploads */
	struct s3d_ctx *ctx;
	int rootfd;			/* the journal's cache root, or -1 */
	bool recorded;			/* in the journal */
	char *bucket;
	char *key;
	char *if_match;
	bool if_none_match;
	bool has_posix;			/* x-amz-meta-* on the create */
	struct s3cfs_posix posix;
	struct s3d_posix_hdrs posix_hdrs;	/* ... their values */
	int fd;				/* ours: a cancel does not wait */
	uint64_t size;
	uint64_t part;			/* part size in use (after @early) */
	bool open;			/* a stream: size and condition to come */
	unsigned int early;		/* parts of @part0 bytes first */
	uint64_t part0;
	unsigned int nparts;		/* open: the parts ready to send */
	unsigned int next;		/* next part to send (0-based) */
	unsigned int ndone;
	unsigned int parallel;
	enum s3d_prio prio;
	uint64_t done_bytes;		/* of the parts done */
	char **etags;			/* [nparts], each part's */
	struct mpu_slot *slots;		/* [parallel] */
	enum mpu_stage stage;
	bool failing;			/* no new part: abort once none is out */
	struct s3d_xfer ctl;		/* create, complete, HEAD, abort */
	bool ctl_busy;
	char upload_id[S3D_UPLOAD_ID_MAX + 1];
	char etag[S3D_ETAG_MAX + 1];	/* the object's, on success */
	char want[S3D_ETAG_MAX + 1];	/* ... as our parts make it */
	struct s3d_buf body;		/* Complete's XML */
	char clen[24];
	struct s3d_kv h[S3D_MAX(3, S3D_POSIX_NF + 1)];
	char token[S3D_WRITER_TOKEN_LEN + 1];	/* writer.c; "": none */
	struct s3d_buf hdrs;		/* the verify HEAD's headers */
	bool again;			/* Complete sent again over our own */
	bool was_new;			/* ... a create (If-None-Match) before */
	int err;			/* the first failure */
	int conflict;			/* Complete's failed condition, checked */
	bool detached;			/* cancelled: nobody to tell */
	void (*done)(void *arg, int err, const char *etag);
	void *arg;
};

struct s3d_upload_stats s3d_upload_stats;

/* Every upload of this daemon, so that recovery leaves them alone. */
static struct s3d_list live_uploads = { &live_uploads, &live_uploads };

/* At least @asked and S3D_PART_MIN, and @size fits in @nparts (whole MiB). */
static uint64_t part_size_in(uint64_t size, uint64_t asked,
			     unsigned int nparts)
{
	uint64_t p = S3D_MAX(asked, S3D_PART_MIN);
	uint64_t need = (size + nparts - 1) / nparts;

	need = (need + (1ULL << 20) - 1) & ~((1ULL << 20) - 1);
	return S3D_MAX(p, need);
}

/**
 * s3d_mpu_part_size() - the part size an upload of @size bytes uses
 * @size: the object's size
 * @asked: the configured part size
 *
 * At least @asked and S3D_PART_MIN, and large enough (in whole MiB) that
 * @size fits in S3D_PARTS_MAX parts: 5 TiB takes 525 MiB parts.
 */
uint64_t s3d_mpu_part_size(uint64_t size, uint64_t asked)
{
	return part_size_in(size, asked, S3D_PARTS_MAX);
}

/**
 * s3d_mpu_etag() - the ETag S3 gives an object of these parts
 * @etags: each part's ETag, in order, as UploadPart answered it
 * @n: their number
 * @out: "\"<MD5 of the parts' MD5s>-<n>\""
 *
 * Return: 0, or -EINVAL when a part's ETag is not a plain MD5 (SSE-KMS,
 * other servers): the object's ETag cannot be known in advance then.
 */
int s3d_mpu_etag(const char *const *etags, unsigned int n,
		 char out[S3D_ETAG_MAX + 1])
{
	unsigned char *md5s, md[EVP_MAX_MD_SIZE];
	unsigned int i, j, mdlen = 0;
	int ok;

	out[0] = '\0';
	if (!n)
		return -EINVAL;
	md5s = malloc((size_t)n * 16);
	if (!md5s)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		const char *e = etags[i];
		size_t len = strlen(e);

		if (len == 34 && e[0] == '"' && e[33] == '"') {
			e++;
			len = 32;
		}
		for (j = 0; j < 16 && len == 32; j++) {
			int hi = s3d_hexval(e[2 * j]), lo = s3d_hexval(e[2 * j + 1]);

			if (hi < 0 || lo < 0)
				break;
			md5s[i * 16 + j] = (unsigned char)(hi << 4 | lo);
		}
		if (j != 16) {
			free(md5s);
			return -EINVAL;
		}
	}
	ok = EVP_Digest(md5s, (size_t)n * 16, md, &mdlen, EVP_md5(), NULL);
	free(md5s);
	if (!ok || mdlen != 16)
		return -EIO;
	out[0] = '"';
	s3d_hex(md, 16, out + 1);
	snprintf(out + 33, S3D_ETAG_MAX + 1 - 33, "-%u\"", n);
	return 0;
}

static void mpu_free(struct s3d_mpu *u)
{
	unsigned int i;

	if (u->etags)
		for (i = 0; i < u->nparts; i++)
			free(u->etags[i]);
	free(u->etags);
	free(u->slots);
	s3d_buf_free(&u->body);
	s3d_buf_free(&u->hdrs);
	s3d_list_del(&u->live);
	s3d_ctx_put(u->ctx);
	if (u->rootfd >= 0)
		close(u->rootfd);
	if (u->fd >= 0)
		close(u->fd);
	free(u->bucket);
	free(u->key);
	free(u->if_match);
	free(u);
}

/*
 * An upload of @key in @bucket, holding @ctx and a copy of @rootfd (the
 * journal's cache root; -1: none), on live_uploads. NULL: no memory or
 * descriptor.
 */
static struct s3d_mpu *mpu_new(struct s3d_ctx *ctx, const char *bucket,
			       const char *key, int rootfd)
{
	struct s3d_mpu *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	s3d_buf_init(&u->body, 0);
	s3d_buf_init(&u->hdrs, 16 << 10);
	s3d_list_add_tail(&u->live, &live_uploads);
	u->ctx = ctx;
	s3d_ctx_hold(ctx);
	u->fd = -1;
	u->rootfd = rootfd >= 0 ? fcntl(rootfd, F_DUPFD_CLOEXEC, 0) : -1;
	u->bucket = strdup(bucket);
	u->key = strdup(key);
	if (!u->bucket || !u->key || (rootfd >= 0 && u->rootfd < 0)) {
		mpu_free(u);
		return NULL;
	}
	return u;
}

/* S3 no longer has the upload (completed or aborted): unrecord it. */
static void mpu_gone(struct s3d_mpu *u)
{
	if (u->recorded)
		s3d_journal_del(u->rootfd, u->upload_id);
	u->recorded = false;
}

/* Nothing is left in S3: tell the caller, unless it is gone. */
static void mpu_finish(struct s3d_mpu *u)
{
	if (!u->detached)
		u->done(u->arg, u->err, u->err ? NULL : u->etag);
	mpu_free(u);
}

static void ctl_release(struct s3d_mpu *u)
{
	if (u->ctl_busy) {
		s3d_ctx_release(&u->ctl);
		u->ctl_busy = false;
	}
}

/*
 * Send no more parts: drop those the server has not got (queued, backing
 * off); those it has are left to answer. Return: how many are left.
 */
static unsigned int parts_stop(struct s3d_mpu *u)
{
	unsigned int i, out = 0;

	u->failing = true;
	for (i = 0; i < u->parallel; i++) {
		if (!u->slots[i].number)
			continue;
		if (s3d_xfer_sent(&u->slots[i].x)) {
			out++;
			continue;
		}
		s3d_ctx_release(&u->slots[i].x);
		u->slots[i].number = 0;
	}
	return out;
}

static void ctl_submit(struct s3d_mpu *u, enum mpu_stage stage,
		       const struct s3d_xfer_ops *ops, const char *what)
{
	u->stage = stage;
	s3d_xfer_init(&u->ctl, ops, what, u->key);
	u->ctl.prio = u->prio;
	/* S3 answers a long Complete with spaces until the object is made. */
	u->ctl.trickle = stage == MPU_COMPLETE;
	u->ctl_busy = true;
	s3d_ctx_submit(u->ctx, &u->ctl);
}

/* ---- abort ---- */

static int abort_prepare(struct s3d_xfer *x)
{
	struct s3d_mpu *u = s3d_container_of(x, struct s3d_mpu, ctl);
	struct s3d_kv q[] = { { "uploadId", u->upload_id } };

	return s3d_s3_build(s3d_ctx_s3(u->ctx), "DELETE", u->bucket, u->key,
			    q, 1, NULL, 0, time(NULL), &x->req);
}

static int abort_done(struct s3d_xfer *x)
{
	struct s3d_mpu *u = s3d_container_of(x, struct s3d_mpu, ctl);
	int err = s3d_xfer_errno(x, u->bucket);

	/* NoSuchUpload: aborted already, or a Complete took effect after all. */
	if (err && err != -ENOENT) {
		s3d_err("UPLOAD s3://%s/%s: upload %s could not be aborted (%s): %s",
			u->bucket, u->key, u->upload_id, strerror(-err),
			u->recorded ? "the next mount tries again" :
			"its parts stay until a lifecycle rule (AbortIncompleteMultipartUpload) removes them");
		s3d_upload_stats.abort_failed++;
	} else {
		s3d_info("UPLOAD s3://%s/%s: upload %s aborted", u->bucket,
			 u->key, u->upload_id);
		s3d_upload_stats.aborted++;
		mpu_gone(u);
	}
	ctl_release(u);
	mpu_finish(u);
	return 0;
}

static const struct s3d_xfer_ops abort_ops = {
	.prepare = abort_prepare,
	.done = abort_done,
};

/* No part is out any more: abort the upload, then tell the caller. */
static void mpu_abort(struct s3d_mpu *u)
{
	if (!u->upload_id[0]) {
		mpu_finish(u);
		return;
	}
	ctl_submit(u, MPU_ABORT, &abort_ops, "DELETE");
}

/* Fail with @err: stop the parts, and abort once they are answered. */
static void mpu_fail(struct s3d_mpu *u, int err)
{
	if (!u->err)
		u->err = err;
	ctl_release(u);
	if (parts_stop(u)) {
		u->stage = MPU_PARTS;	/* the last part's end aborts */
		return;
	}
	mpu_abort(u);
}

/* ---- verify: a Complete sent again found no upload ---- */

static int verify_prepare(struct s3d_xfer *x)
{
	struct s3d_mpu *u = s3d_container_of(x, struct s3d_mpu, ctl);

	s3d_buf_reset(&u->hdrs);
	x->hdrs = &u->hdrs;
	return s3d_s3_build(s3d_ctx_s3(u->ctx), "HEAD", u->bucket, u->key,
			    NULL, 0, NULL, 0, time(NULL), &x->req);
}

static const struct s3d_xfer_ops complete_ops;

/*
 * The failed condition is our own: the object carries this upload's
 * writer token. Complete again, If-Match that object, once.
 */
static bool complete_again(struct s3d_mpu *u, const struct s3d_xfer *x)
{
	char *m;

	if (!u->conflict || u->again || u->detached || !x->has_etag ||
	    !x->etag[0] || !s3d_writer_is(&u->hdrs, u->token))
		return false;
	m = malloc(S3D_ETAG_MAX + 3);
	if (!m)
		return false;
	s3d_caps_if_match(u->bucket, x->etag, m, S3D_ETAG_MAX + 3);
	s3d_info("UPLOAD s3://%s/%s: the object (ETag %s) is an earlier upload of this file that took effect unknown to the kernel; completing over it",
		 u->bucket, u->key, x->etag);
	free(u->if_match);
	u->if_match = m;
	u->was_new = u->if_none_match;
	u->if_none_match = false;
	u->again = true;
	u->conflict = 0;
	s3d_upload_stats.again++;
	return true;
}

static int verify_done(struct s3d_xfer *x)
{
	struct s3d_mpu *u = s3d_container_of(x, struct s3d_mpu, ctl);
	int err = s3d_xfer_errno(x, u->bucket);
	bool ours = !err && x->has_etag && s3d_etag_eq(x->etag, u->want);

	if (!ours && complete_again(u, x)) {
		ctl_release(u);
		ctl_submit(u, MPU_COMPLETE, &complete_ops, "POST");
		return 0;
	}
	ctl_release(u);
	if (ours) {
		s3d_info("UPLOAD s3://%s/%s: the object is ours (ETag %s): %s",
			 u->bucket, u->key, x->etag, u->conflict ?
			 "an earlier upload of these bytes took effect" :
			 "the first Complete took effect");
		snprintf(u->etag, sizeof(u->etag), "%s", x->etag);
		u->err = 0;
		s3d_upload_stats.ours++;
		s3d_upload_stats.multipart++;
		s3d_upload_stats.bytes += u->size;
	} else if (u->conflict) {
		u->err = u->conflict;
	} else {
		s3d_err("UPLOAD s3://%s/%s: the upload is gone and the object is not ours (%s %s, ours %s): whether our Complete took effect is unknown",
			u->bucket, u->key, err ? "error" : "ETag",
			err ? strerror(-err) : x->etag, u->want);
		u->err = -EIO;
	}
	/* A failed condition left our upload open: abort it, whatever S3 has. */
	if (u->conflict) {
		mpu_abort(u);
		return 0;
	}
	mpu_gone(u);
	mpu_finish(u);
	return 0;
}

static const struct s3d_xfer_ops verify_ops = {
	.prepare = verify_prepare,
	.done = verify_done,
};

/* ---- complete ---- */

static int complete_prepare(struct s3d_xfer *x)
{
	struct s3d_mpu *u = s3d_container_of(x, struct s3d_mpu, ctl);
	struct s3d_kv q[] = { { "uploadId", u->upload_id } };
	size_t nh = 0;

	x->src = (struct s3d_xfer_src){ .fd = -1, .mem = u->body.p,
					.len = u->body.len };
	snprintf(u->clen, sizeof(u->clen), "%zu", u->body.len);
	u->h[nh++] = (struct s3d_kv){ "Content-Length", u->clen };
	u->h[nh++] = (struct s3d_kv){ "Content-Type", "application/xml" };
	if (u->if_match)
		u->h[nh++] = (struct s3d_kv){ "If-Match", u->if_match };
	else if (u->if_none_match)
		u->h[nh++] = (struct s3d_kv){ "If-None-Match", "*" };
	return s3d_s3_build(s3d_ctx_s3(u->ctx), "POST", u->bucket, u->key,
			    q, 1, u->h, nh, time(NULL), &x->req);
}

static int complete_done(struct s3d_xfer *x)
{
	struct s3d_mpu *u = s3d_container_of(x, struct s3d_mpu, ctl);
	struct s3d_s3error e;
	char why[160] = "";
	int err = s3d_xfer_errno(x, u->bucket);

	memset(&e, 0, sizeof(e));
	if (!err) {
		err = s3d_xml_parse_complete(s3d_buf_str(&x->resp), x->resp.len,
					     u->etag, sizeof(u->etag), &e, why,
					     sizeof(why));
		if (err == -EREMOTEIO) {
			/* An Error inside the 200 (S3 failed assembling it). */
			if (s3d_retry_transient(x->status, e.code) &&
			    x->can_retry) {
				s3d_warn("UPLOAD s3://%s/%s: Error %s inside a %ld (request id %s)",
					 u->bucket, u->key, e.code, x->status,
					 e.request_id[0] ? e.request_id : "-");
				return S3D_XFER_RETRY;
			}
			s3d_err("UPLOAD s3://%s/%s: Complete answered Error %s: %s",
				u->bucket, u->key, e.code, e.message);
			err = s3d_s3_errno(x->status, e.code);
			if (!err || err == -ENOENT || err == -ESTALE)
				err = -EIO;
		} else if (err) {
			s3d_err("UPLOAD s3://%s/%s: bad CompleteMultipartUploadResult: %s",
				u->bucket, u->key, why);
			err = -EIO;
			/* A 200 without an Error: the object is likely there. */
			if (u->want[0]) {
				u->conflict = err;
				ctl_release(u);
				ctl_submit(u, MPU_VERIFY, &verify_ops, "HEAD");
				return 0;
			}
		}
		if (!err) {
			s3d_upload_stats.multipart++;
			s3d_upload_stats.bytes += u->size;
			mpu_gone(u);
			ctl_release(u);
			mpu_finish(u);
			return 0;
		}
		mpu_fail(u, err);
		return 0;
	}
	s3d_xml_parse_error(s3d_buf_str(&x->resp), x->resp.len, &e);
	if (x->status == 404 && !strcmp(e.code, "NoSuchUpload")) {
		ctl_release(u);
		if (x->attempt > 1 && u->want[0]) {
			/* An earlier attempt's answer was lost: did it take effect? */
			ctl_submit(u, MPU_VERIFY, &verify_ops, "HEAD");
			return 0;
		}
		mpu_gone(u);
		u->err = -EIO;
		mpu_finish(u);
		return 0;
	}
	/* A failed condition: -ESTALE, or -EEXIST for a create. */
	if (err == -ESTALE && (u->if_none_match || u->was_new))
		err = -EEXIST;
	/* Only a missing key fails If-Match with a 404. */
	if (err == -ENOENT && (!u->if_match || strcmp(e.code, "NoSuchKey")))
		err = -EIO;
	/*
	 * Our own bytes may be what fails the condition: an earlier upload of
	 * this file whose answer never reached the kernel (a daemon killed
	 * after its Complete). A HEAD tells; the upload is aborted either way.
	 */
	if ((err == -EEXIST || err == -ESTALE) && (u->want[0] || u->token[0])) {
		u->conflict = err;
		ctl_release(u);
		ctl_submit(u, MPU_VERIFY, &verify_ops, "HEAD");
		return 0;
	}
	mpu_fail(u, err);
	return 0;
}

static const struct s3d_xfer_ops complete_ops = {
	.prepare = complete_prepare,
	.done = complete_done,
};

static void mpu_complete(struct s3d_mpu *u)
{
	struct s3d_part *parts;
	unsigned int i;
	int err;

	parts = calloc(u->nparts, sizeof(*parts));
	if (!parts) {
		mpu_fail(u, -ENOMEM);
		return;
	}
	for (i = 0; i < u->nparts; i++)
		parts[i] = (struct s3d_part){ i + 1, u->etags[i] };
	s3d_buf_reset(&u->body);
	err = s3d_xml_build_complete(&u->body, parts, u->nparts);
	free(parts);
	if (err) {
		mpu_fail(u, err);
		return;
	}
	/* Not knowing the ETag in advance only costs the lost-answer check. */
	s3d_mpu_etag((const char *const *)u->etags, u->nparts, u->want);
	ctl_submit(u, MPU_COMPLETE, &complete_ops, "POST");
}

/* ---- parts ---- */

/* Where part @n (from 1) lies in the file. */
static void part_range(const struct s3d_mpu *u, unsigned int n, uint64_t *off,
		       uint64_t *len)
{
	if (n <= u->early) {
		*off = (uint64_t)(n - 1) * u->part0;
		*len = u->part0;
		return;
	}
	*off = (uint64_t)u->early * u->part0 +
	       (uint64_t)(n - 1 - u->early) * u->part;
	*len = S3D_MIN(u->part, u->size - *off);
}

static int part_prepare(struct s3d_xfer *x)
{
	struct mpu_slot *s = s3d_container_of(x, struct mpu_slot, x);
	struct s3d_mpu *u = s->u;
	uint64_t off, len;

	part_range(u, s->number, &off, &len);
	if (u->failing)
		return -ECANCELED;	/* a retry of a part sent before */
	x->src = (struct s3d_xfer_src){ .fd = u->fd, .off = off, .len = len };
	snprintf(s->num, sizeof(s->num), "%u", s->number);
	snprintf(s->clen, sizeof(s->clen), "%" PRIu64, len);
	s->q[0] = (struct s3d_kv){ "partNumber", s->num };
	s->q[1] = (struct s3d_kv){ "uploadId", u->upload_id };
	s->h[0] = (struct s3d_kv){ "Content-Length", s->clen };
	return s3d_s3_build(s3d_ctx_s3(u->ctx), "PUT", u->bucket, u->key,
			    s->q, 2, s->h, 1, time(NULL), &x->req);
}

static void parts_fill(struct s3d_mpu *u);

static const struct s3d_xfer_ops part_ops;

static int part_done(struct s3d_xfer *x)
{
	struct mpu_slot *s = s3d_container_of(x, struct mpu_slot, x);
	struct s3d_mpu *u = s->u;
	unsigned int n = s->number;
	uint64_t len = x->src.len;
	int err = s3d_xfer_errno(x, u->bucket);

	if (!err && (!x->has_etag || !x->etag[0])) {
		s3d_err("UPLOAD s3://%s/%s: part %u: HTTP %ld without an ETag",
			u->bucket, u->key, n, x->status);
		err = -EIO;
	}
	if (!err) {
		u->etags[n - 1] = strdup(x->etag);
		if (!u->etags[n - 1])
			err = -ENOMEM;
	}
	s3d_ctx_release(&s->x);
	s->number = 0;
	if (u->failing) {
		if (!parts_stop(u))
			mpu_abort(u);
		return 0;
	}
	if (err) {
		/* No such upload for a part is the server's fault, not a conflict. */
		s3d_err("UPLOAD s3://%s/%s: part %u of %u failed: %s",
			u->bucket, u->key, n, u->nparts, strerror(-err));
		mpu_fail(u, err == -ENOENT || err == -ESTALE ? -EIO : err);
		return 0;
	}
	u->ndone++;
	u->done_bytes += len;
	s3d_upload_stats.parts++;
	if (u->ndone == u->nparts && !u->open)
		mpu_complete(u);
	else
		parts_fill(u);
	return 0;
}

static const struct s3d_xfer_ops part_ops = {
	.prepare = part_prepare,
	.done = part_done,
};

static void parts_fill(struct s3d_mpu *u)
{
	unsigned int i;

	for (i = 0; i < u->parallel && u->next < u->nparts; i++) {
		struct mpu_slot *s = &u->slots[i];

		if (s->number)
			continue;
		s->number = ++u->next;
		s3d_xfer_init(&s->x, &part_ops, "PUT", u->key);
		s->x.prio = u->prio;
		s3d_ctx_submit(u->ctx, &s->x);
	}
}

/* ---- create ---- */

static int create_prepare(struct s3d_xfer *x)
{
	struct s3d_mpu *u = s3d_container_of(x, struct s3d_mpu, ctl);
	static const struct s3d_kv q[] = { { "uploads", NULL } };
	size_t nh = 0;

	if (u->has_posix)
		nh = s3d_posix_headers(&u->posix, &u->posix_hdrs, u->h);
	if (u->token[0])
		u->h[nh++] = (struct s3d_kv){ S3D_WRITER_HDR, u->token };
	return s3d_s3_build(s3d_ctx_s3(u->ctx), "POST", u->bucket, u->key,
			    q, 1, u->h, nh, time(NULL), &x->req);
}

static int create_done(struct s3d_xfer *x)
{
	struct s3d_mpu *u = s3d_container_of(x, struct s3d_mpu, ctl);
	char why[160] = "";
	int err = s3d_xfer_errno(x, u->bucket);

	if (!err && s3d_xml_parse_initiate(s3d_buf_str(&x->resp), x->resp.len,
					   u->upload_id, sizeof(u->upload_id),
					   why, sizeof(why))) {
		s3d_err("UPLOAD s3://%s/%s: bad InitiateMultipartUploadResult: %s",
			u->bucket, u->key, why);
		u->upload_id[0] = '\0';
		err = -EIO;
	}
	ctl_release(u);
	if (err) {
		mpu_fail(u, err == -ENOENT ? -EIO : err);
		return 0;
	}
	if (u->rootfd >= 0) {
		err = s3d_journal_add(u->rootfd, u->key, u->upload_id);
		if (err)
			s3d_warn("UPLOAD s3://%s/%s: upload %s not recorded (%s): a crash would leave its parts behind",
				 u->bucket, u->key, u->upload_id, strerror(-err));
		u->recorded = !err;
	}
	if (u->detached) {
		/* Cancelled while it was created: abort it at once. */
		mpu_fail(u, -ECANCELED);
		return 0;
	}
	s3d_dbg("UPLOAD s3://%s/%s: upload %s, %u parts of %" PRIu64 " bytes",
		u->bucket, u->key, u->upload_id, u->nparts, u->part);
	u->stage = MPU_PARTS;
	parts_fill(u);
	return 0;
}

static const struct s3d_xfer_ops create_ops = {
	.prepare = create_prepare,
	.done = create_done,
};

/*
 * An upload of @p's file (a descriptor of its own) with room for @nparts
 * parts' ETags and @parallel parts in flight. NULL: *@err says why.
 */
static struct s3d_mpu *mpu_alloc(const struct s3d_mpu_params *p,
				 unsigned int nparts, unsigned int parallel,
				 int *err)
{
	struct s3d_mpu *u;
	unsigned int i;

	*err = -ENOMEM;
	u = mpu_new(p->ctx, p->bucket, p->key, p->rootfd);
	if (!u)
		return NULL;
	u->fd = fcntl(p->fd, F_DUPFD_CLOEXEC, 0);
	if (u->fd < 0) {
		*err = -errno;
		mpu_free(u);
		return NULL;
	}
	u->parallel = parallel;
	u->prio = p->prio;
	u->has_posix = p->posix;
	if (p->posix)
		u->posix = *p->posix;
	if (p->token)
		snprintf(u->token, sizeof(u->token), "%s", p->token);
	u->done = p->done;
	u->arg = p->arg;
	u->etags = calloc(nparts, sizeof(*u->etags));
	u->slots = calloc(parallel, sizeof(*u->slots));
	if (!u->etags || !u->slots) {
		mpu_free(u);
		return NULL;
	}
	for (i = 0; i < parallel; i++)
		u->slots[i].u = u;
	*err = 0;
	return u;
}

/**
 * s3d_mpu_start() - start a multipart upload of @p->fd
 * @p: what to upload where
 * @err: -errno when it cannot start (nothing was sent)
 *
 * Return: the upload (its end is @p->done), or NULL.
 */
struct s3d_mpu *s3d_mpu_start(const struct s3d_mpu_params *p, int *err)
{
	struct s3d_mpu *u;
	uint64_t part;
	unsigned int nparts;

	*err = -EINVAL;
	if (!p->size || p->size > S3D_OBJECT_MAX || !p->parallel ||
	    (p->if_match && p->if_none_match))
		return NULL;
	part = s3d_mpu_part_size(p->size, p->part_size);
	nparts = (unsigned int)((p->size + part - 1) / part);
	u = mpu_alloc(p, nparts, S3D_MIN(p->parallel, nparts), err);
	if (!u)
		return NULL;
	u->size = p->size;
	u->part = part;
	u->nparts = nparts;
	u->if_none_match = p->if_none_match;
	u->if_match = p->if_match ? strdup(p->if_match) : NULL;
	if (p->if_match && !u->if_match) {
		*err = -ENOMEM;
		mpu_free(u);
		return NULL;
	}
	ctl_submit(u, MPU_CREATE, &create_ops, "POST");
	return u;
}

/**
 * s3d_mpu_open() - start a multipart upload of a file still being written
 * @p: what to upload where; @p->size and the condition are not used
 *	(s3d_mpu_close() gives them), @p->part_size is the streamed parts'
 *	exact size
 * @err: -errno when it cannot start (nothing was sent)
 *
 * No part is sent before s3d_mpu_ready() says it is written. @p->done is
 * called if the upload fails before s3d_mpu_close() (it is aborted).
 *
 * Return: the upload, or NULL.
 */
struct s3d_mpu *s3d_mpu_open(const struct s3d_mpu_params *p, int *err)
{
	struct s3d_mpu *u;

	*err = -EINVAL;
	if (p->part_size < S3D_PART_MIN || p->part_size > S3D_SINGLE_MAX ||
	    !p->parallel)
		return NULL;
	u = mpu_alloc(p, S3D_PARTS_MAX, p->parallel, err);
	if (!u)
		return NULL;
	u->open = true;
	u->part0 = p->part_size;
	u->part = p->part_size;
	ctl_submit(u, MPU_CREATE, &create_ops, "POST");
	return u;
}

/**
 * s3d_mpu_ready() - the first @n parts of an open upload are written
 * @u: the upload (s3d_mpu_open())
 * @n: parts of the streamed size, from the file's start; fewer than
 *	before, or past the streamed share of S3D_PARTS_MAX, is refused
 *
 * Return: 0, or -EINVAL.
 */
int s3d_mpu_ready(struct s3d_mpu *u, unsigned int n)
{
	if (!u->open || n < u->nparts || n > S3CFS_STREAM_PARTS_MAX)
		return -EINVAL;
	u->nparts = n;
	u->early = n;
	if (u->stage == MPU_PARTS && !u->failing)
		parts_fill(u);
	return 0;
}

/**
 * s3d_mpu_close() - the file of an open upload is complete
 * @u: the upload (s3d_mpu_open())
 * @p: @p->size, the condition and what to call at the end (@p->done,
 *	@p->arg); the rest is as at the open
 * @early: the streamed parts that hold the file's first bytes: all those
 *	s3d_mpu_ready() announced, or the upload cannot be used
 *
 * The rest of the file goes up in parts sized so that the object fits in
 * S3D_PARTS_MAX, then the Complete, with @p's condition.
 *
 * Return: 0 (@p->done will be called), or -errno: the upload cannot be
 * used (failing, another layout, a size it cannot make); the caller
 * cancels it.
 */
int s3d_mpu_close(struct s3d_mpu *u, const struct s3d_mpu_params *p,
		  unsigned int early)
{
	uint64_t head, rest, part;

	if (!u->open || u->failing || u->err || early != u->nparts ||
	    !early || (p->if_match && p->if_none_match))
		return -EINVAL;
	head = (uint64_t)early * u->part0;
	if (p->size < head || p->size > S3D_OBJECT_MAX)
		return -EINVAL;
	rest = p->size - head;
	/* The rest fits in the parts the streamed ones left. */
	part = part_size_in(rest, p->part_size, S3D_PARTS_MAX - early);
	if (p->if_match) {
		u->if_match = strdup(p->if_match);
		if (!u->if_match)
			return -ENOMEM;
	}
	u->if_none_match = p->if_none_match;
	if (p->token && !u->token[0])
		snprintf(u->token, sizeof(u->token), "%s", p->token);
	u->open = false;
	u->size = p->size;
	u->part = part;
	u->nparts = early + (unsigned int)((rest + part - 1) / part);
	u->prio = p->prio;
	u->done = p->done;
	u->arg = p->arg;
	if (u->stage == MPU_PARTS) {
		if (u->ndone == u->nparts)
			mpu_complete(u);
		else
			parts_fill(u);
	}
	return 0;
}

/**
 * s3d_mpu_sent() - bytes moved so far: of the parts (done and in flight),
 *	and of the Complete's answer (S3 sends spaces while it assembles a
 *	large object, so a long Complete is seen to be alive)
 * @u: the upload
 */
uint64_t s3d_mpu_sent(const struct s3d_mpu *u)
{
	uint64_t n = u->done_bytes;
	unsigned int i;

	for (i = 0; i < u->parallel; i++)
		if (u->slots[i].number)
			n += u->slots[i].x.src.pos;
	if (u->stage == MPU_COMPLETE && u->ctl_busy)
		n += u->ctl.body_bytes;
	return n;
}

/**
 * s3d_mpu_cancel() - the caller gives the upload up
 * @u: the upload
 *
 * No more parts are sent (the caller may close its file on return), and
 * the upload is aborted in the background once those sent are answered;
 * @done is not called.
 */
void s3d_mpu_cancel(struct s3d_mpu *u)
{
	u->detached = true;
	switch (u->stage) {
	case MPU_CREATE:
		/* Its answer names the upload to abort: wait for it. */
		return;
	case MPU_PARTS:
	case MPU_COMPLETE:
		mpu_fail(u, -ECANCELED);
		return;
	case MPU_VERIFY:
	case MPU_ABORT:
		return;
	}
}

struct recover {
	struct s3d_ctx *ctx;
	const char *bucket;
	int rootfd;
	unsigned int aborting;
};

static bool upload_live(const char *upload_id)
{
	struct s3d_list *pos;

	for (pos = live_uploads.next; pos != &live_uploads; pos = pos->next) {
		struct s3d_mpu *u = s3d_container_of(pos, struct s3d_mpu, live);

		if (!strcmp(u->upload_id, upload_id))
			return true;
	}
	return false;
}

/* One record of an upload no upload of ours is running: abort it. */
static void recover_one(void *arg, const char *key, const char *upload_id)
{
	struct recover *rc = arg;
	struct s3d_mpu *u;

	if (upload_live(upload_id))
		return;
	u = mpu_new(rc->ctx, rc->bucket, key, rc->rootfd);
	if (!u)
		return;
	u->detached = true;
	u->recorded = true;
	snprintf(u->upload_id, sizeof(u->upload_id), "%s", upload_id);
	s3d_info("UPLOAD s3://%s/%s: upload %s was left by an earlier daemon: aborting it",
		 u->bucket, u->key, u->upload_id);
	rc->aborting++;
	s3d_upload_stats.recovered++;
	u->err = -ECANCELED;
	ctl_submit(u, MPU_ABORT, &abort_ops, "DELETE");
}

/**
 * s3d_mpu_recover() - abort the uploads an earlier daemon left in a
 *	mount's journal
 * @ctx: the bucket's context
 * @bucket: the bucket
 * @rootfd: the mount's cache root
 *
 * Uploads this daemon is running are left alone (a MOUNT sent again).
 * The aborts run in the background; a failed one keeps its record.
 *
 * Return: the number of aborts started, or -errno.
 */
int s3d_mpu_recover(struct s3d_ctx *ctx, const char *bucket, int rootfd)
{
	struct recover rc = { .ctx = ctx, .bucket = bucket, .rootfd = rootfd };
	int n = s3d_journal_scan(rootfd, recover_one, &rc);

	return n < 0 ? n : (int)rc.aborting;
}
