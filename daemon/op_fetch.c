// SPDX-License-Identifier: GPL-2.0
/*
 * FETCH: ranged GET with If-Match into the lower file with O_DIRECT; with
 * a fleet tier configured, the tier's verified blocks first (tier.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "ctx.h"
#include "evict.h"
#include "lib/base.h"
#include "lib/log.h"
#include "lib/path.h"
#include "lib/prio.h"
#include "lib/s3.h"
#include "lib/util.h"
#include "lib/xfer.h"
#include "mount.h"
#include "op_common.h"
#include "req.h"
#include "store.h"
#include "tier.h"
#include "uapi/s3cachefs.h"

/* Alignment of O_DIRECT buffers, offsets and lengths. */
#define S3D_DIO_ALIGN		4096U
/*
 * Largest piece of a FETCH held in memory before it is written out: with
 * 256 requests in flight, 256 x 128 KiB of body at most (t_memory bounds
 * the daemon's RSS); a direct write of 128 KiB costs NVMe little extra.
 */
#define S3D_PIECE_MAX		(128U << 10)

struct fetch_op {
	struct s3d_req *r;
	struct s3d_mount *m;
	struct s3d_ctx *ctx;	/* its bucket's S3 context */
	char *key;
	int fd;			/* lower file, O_RDWR | O_DIRECT; see below */
	uint64_t size;		/* object (and lower file) size */
	uint64_t start, end;	/* [start, end) is filled */
	uint64_t done;		/* [start, start + done) is written */
	char *buf;		/* 4096-aligned piece buffer; see below */
	size_t bufsz;
	uint64_t pos;		/* file offset of the next body byte */
	size_t fill;		/* buf holds [pos - fill, pos) */
	bool checked;		/* response headers vetted this attempt */
	bool etag_bad;		/* response ETag is not the one we want */
	bool whole;		/* this attempt: a 200, the whole object */
	bool whole_counted;	/* the cache tracker knows of the rest */
	bool renew;		/* stale path: the cache file itself was bad */
	bool counted;		/* the cache tracker knows of this fetch */
	bool gone;		/* the cache file went while we waited */
	bool shrunk;		/* a 416: the object is shorter than we know */
	struct s3d_xfer x;	/* the GET, then the HEAD if stale */
	struct s3d_tier_fetch tier;	/* the fleet tier's part */
};

/*
 * A FETCH holds its cache file open and its piece buffer only while an
 * attempt of its GET is in flight (from ->prepare to ->ended): thousands of
 * FETCHes may wait for a slot (the kernel queues up to max_pending), and
 * each would otherwise hold a descriptor (EMFILE at 1024 without systemd's
 * limit) and up to S3D_PIECE_MAX of memory. So descriptors and buffers
 * grow with --max-inflight, not with the queue.
 */
static void fetch_io_put(struct fetch_op *op)
{
	if (op->fd >= 0)
		close(op->fd);
	op->fd = -1;
	free(op->buf);
	op->buf = NULL;
}

static void fetch_finish(struct fetch_op *op, int err)
{
	struct s3d_req *r = op->r;
	struct s3d_mount *m = op->m;
	struct s3d_ctx *ctx = op->ctx;

	if (op->counted)
		s3d_cache_fetched(m->cache, r->path);
	s3d_tier_fetch_end(&op->tier, !err);
	s3d_ctx_release(&op->x);
	fetch_io_put(op);
	free(op->key);
	free(op);
	s3d_op_done(r, m, ctx, err);
}

static uint64_t round_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) / a * a;
}

/*
 * Write the @len bytes of @buf at file offset @off. Only the very
 * last piece of the object may be unaligned: it is written rounded up to
 * the block size and the file truncated back to the object size afterwards.
 *
 * No fdatasync: on ext4 and xfs a direct write into a hole allocates
 * unwritten extents and converts them to written only when the write has
 * completed, so after a crash the range reads back as a hole (missing, to
 * be fetched again), never as garbage presented as data.
 */
static int fetch_write(struct fetch_op *op, char *buf, uint64_t off,
		       size_t len)
{
	size_t alen = round_up(len, S3D_DIO_ALIGN), put = 0;
	ssize_t n;
	int err;

	if (off % S3D_DIO_ALIGN || (alen != len && off + len != op->size))
		return -EINVAL;		/* cannot happen: pieces are aligned */
	memset(buf + len, 0, alen - len);
	/* The kernel may be making the file LOCAL (kmod/local.c). */
	err = s3d_store_lock_fill(op->fd, op->r->etag);
	if (err)
		return err;
	while (!err && put < alen) {
		n = pwrite(op->fd, buf + put, alen - put, (off_t)(off + put));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			err = n < 0 ? -errno : -EIO;
		else
			put += n;
	}
	if (!err && alen != len && ftruncate(op->fd, (off_t)op->size))
		err = -errno;
	s3d_store_unlock_fill(op->fd);
	return err;
}

static int fetch_open(struct fetch_op *op);

/*
 * The cache file and the buffer, for an attempt that starts now. The file
 * was checked when the FETCH came and closed while it waited: a LIST or
 * LOOKUP may have renewed it since (-ESTALE), or removed it.
 */
static int fetch_io_get(struct fetch_op *op)
{
	int err;

	if (op->fd < 0) {
		err = fetch_open(op);
		if (err) {
			op->gone = err == -ENOENT;
			fetch_io_put(op);
			return err;
		}
	}
	if (!op->buf &&
	    posix_memalign((void **)&op->buf, S3D_DIO_ALIGN, op->bufsz)) {
		op->buf = NULL;
		return -ENOMEM;
	}
	return 0;
}

static void fetch_get_ended(struct s3d_xfer *x)
{
	/* A retry starts over after the last piece written (prepare). */
	fetch_io_put(s3d_container_of(x, struct fetch_op, x));
}

static int fetch_get_prepare(struct s3d_xfer *x)
{
	struct fetch_op *op = s3d_container_of(x, struct fetch_op, x);
	char range[64];
	struct s3d_kv h[2];
	int err;

	err = fetch_io_get(op);
	if (err)
		return err;
	/* A retry resumes after the pieces already written. */
	op->r->started = true;
	op->fill = 0;
	op->pos = op->start + op->done;
	op->checked = false;
	op->whole = false;
	snprintf(range, sizeof(range), "bytes=%llu-%llu",
		 (unsigned long long)(op->start + op->done),
		 (unsigned long long)(op->end - 1));
	h[0] = (struct s3d_kv){ "Range", range };
	/* Exactly as the server gave it (RGW compares If-Match verbatim). */
	h[1] = (struct s3d_kv){ "If-Match", op->r->etag };
	return s3d_s3_build(s3d_ctx_s3(op->ctx), "GET", op->m->bucket, op->key, NULL, 0, h, 2,
			    time(NULL), &x->req);
}

/*
 * First body bytes of an attempt: is this the response we asked for? A
 * 206 must say, in Content-Range and Content-Length, exactly the bytes we
 * asked for, of an object of the size we know; a 200 (Range ignored) must
 * be the whole object. Anything else is an error, not data.
 */
static bool fetch_vet(struct fetch_op *op, struct s3d_xfer *x)
{
	uint64_t from = op->start + op->done;

	op->checked = true;
	if (!x->has_etag || !s3d_etag_eq(x->etag, op->r->etag)) {
		op->etag_bad = true;
		return false;
	}
	if (x->status == 206) {
		if (x->range_start != (int64_t)from ||
		    x->range_end != (int64_t)(op->end - 1) ||
		    (x->range_total >= 0 && x->range_total != (int64_t)op->size) ||
		    (x->content_length >= 0 &&
		     x->content_length != (int64_t)(op->end - from))) {
			s3d_err("GET s3://%s/%s: asked for bytes %llu-%llu of %llu, got Content-Range %lld-%lld/%lld, Content-Length %lld",
				op->m->bucket, op->key, (unsigned long long)from,
				(unsigned long long)(op->end - 1),
				(unsigned long long)op->size,
				(long long)x->range_start, (long long)x->range_end,
				(long long)x->range_total,
				(long long)x->content_length);
			x->err = -EIO;
			return false;
		}
		return true;
	}
	if (x->status != 200 ||
	    (x->content_length >= 0 && x->content_length != (int64_t)op->size)) {
		s3d_err("GET s3://%s/%s: HTTP %ld with %lld bytes for an object of %llu",
			op->m->bucket, op->key, x->status,
			(long long)x->content_length,
			(unsigned long long)op->size);
		x->err = -EIO;
		return false;
	}
	/*
	 * 200: the server ignored Range and sends the whole object. Every
	 * byte of it is valid for this ETag: keep it all (the chunks before
	 * and after ours are found on disk by the FETCHes that follow), so
	 * a sequential reader costs one GET, not one whole object per chunk.
	 */
	if (!op->whole_counted) {
		s3d_cache_fetching(op->m->cache, op->size - (op->end - op->start));
		op->whole_counted = true;
	}
	op->whole = true;
	op->pos = 0;
	/* Bounded: past it, later FETCHes just GET again. */
	if (op->m->whole.count < 65536)
		s3d_strset_put(&op->m->whole, op->r->path, 1);
	return true;
}

/*
 * Whole chunks written since the last report: tell the kernel now, so that
 * a reader waiting for the first chunk of a long range goes on while the
 * rest streams in. The answer covers the last chunk, unless the rest of a
 * whole object is still to be written after our range (then all of it).
 */
static void fetch_report_landed(struct fetch_op *op)
{
	uint64_t chunk = op->m->chunk, len = op->end - op->start;
	uint64_t upto = (op->start + op->done) / chunk * chunk - op->start;

	if (op->done >= len && op->whole && op->pos < op->size)
		upto = len;
	else if (op->start + op->done >= op->end)
		return;
	if (upto <= op->r->done)
		return;
	op->r->done = upto;
	s3d_req_progress(op->r);
}

/* The buffer holds [pos - fill, pos): write it out. */
static int fetch_flush(struct fetch_op *op, struct s3d_xfer *x)
{
	uint64_t off = op->pos - op->fill;
	int err;

	err = fetch_write(op, op->buf, off, op->fill);
	if (err == -EAGAIN || err == -ESTALE) {
		s3d_info("GET s3://%s/%s: the cache file is %s; not written",
			 op->m->bucket, op->key, err == -EAGAIN ?
			 "being written here" : "another version now");
		x->err = err;
		return err;
	}
	if (err) {
		s3d_err("GET s3://%s/%s: writing to the cache file: %s",
			op->m->bucket, op->key, strerror(-err));
		if (err == -ENOSPC || err == -EDQUOT)
			s3d_cache_nospace(op->m->cache, op->fill);
		x->err = err;
		return err;
	}
	op->fill = 0;
	/* Blocks another node may be waiting for go to the tier now. */
	s3d_tier_fetch_written(&op->tier, op->pos);
	s3d_xfer_progress(x);	/* the retry clock starts again */
	/* Everything below pos is written (a 206 resumes at start + done). */
	if (op->pos > op->start + op->done && off <= op->start + op->done) {
		op->done = S3D_MIN(op->pos, op->end) - op->start;
		fetch_report_landed(op);
	}
	return 0;
}

static size_t fetch_body(struct s3d_xfer *x, const char *p, size_t n)
{
	struct fetch_op *op = s3d_container_of(x, struct fetch_op, x);
	size_t taken = n, c;
	uint64_t limit;

	if (!op->checked && !fetch_vet(op, x))
		return 0;
	limit = op->whole ? op->size : op->end;
	if (n)
		op->r->moved = true;
	while (n) {
		if (op->pos >= limit) {
			s3d_err("GET s3://%s/%s: response longer than %s",
				op->m->bucket, op->key,
				op->whole ? "the object" : "the range asked for");
			x->err = -EIO;
			return 0;
		}
		c = S3D_MIN(S3D_MIN((uint64_t)n, limit - op->pos),
			    op->bufsz - op->fill);
		memcpy(op->buf + op->fill, p, c);
		s3d_tier_fetch_feed(&op->tier, op->pos, p, c);
		op->fill += c;
		op->pos += c;
		p += c;
		n -= c;
		if ((op->fill == op->bufsz || op->pos == limit) &&
		    fetch_flush(op, x))
			return 0;
	}
	return taken;
}

static void fetch_stale(struct fetch_op *op, const char *why);

static int fetch_get_done(struct s3d_xfer *x)
{
	struct fetch_op *op = s3d_container_of(x, struct fetch_op, x);
	uint64_t total = op->end - op->start;
	int err;

	if (op->gone) {
		op->gone = false;
		op->renew = true;
		fetch_stale(op, "the cache file is gone");
		return 0;
	}
	if (op->etag_bad) {
		fetch_stale(op, x->has_etag ? "the response carries another ETag" :
				"the response carries no ETag");
		return 0;
	}
	if (x->cres == CURLE_OK && x->status == 412) {
		fetch_stale(op, "precondition failed (If-Match)");
		return 0;
	}
	/*
	 * No byte where the object we know has bytes: it is shorter now, so
	 * it changed, as a 412 says (a server that ignores If-Match, s3rver,
	 * answers so when the object shrank under the reader).
	 */
	if (x->cres == CURLE_OK && x->status == 416) {
		op->shrunk = true;
		fetch_stale(op, "range not satisfiable (the object is shorter now)");
		return 0;
	}
	if (x->err) {
		/* Already logged where it happened (body sink, prepare). */
		fetch_finish(op, x->err);
		return 0;
	}
	if (op->done >= total) {
		/* Our range is in (of a whole object, maybe not all the rest). */
		s3d_dbg("GET s3://%s/%s: %llu bytes at %llu cached%s",
			op->m->bucket, op->key, (unsigned long long)total,
			(unsigned long long)op->start,
			op->whole ? " (the server sent the whole object)" : "");
		fetch_finish(op, 0);
		return 0;
	}
	err = s3d_xfer_errno(x, op->m->bucket);
	if (err) {
		fetch_finish(op, err);
		return 0;
	}
	if (x->can_retry)
		return S3D_XFER_RETRY;
	s3d_err("GET s3://%s/%s: body ended after %llu of %llu bytes, giving up",
		op->m->bucket, op->key,
		(unsigned long long)(op->done + op->fill),
		(unsigned long long)total);
	fetch_finish(op, -EIO);
	return 0;
}

static const struct s3d_xfer_ops fetch_get_ops = {
	.prepare = fetch_get_prepare,
	.body = fetch_body,
	.done = fetch_get_done,
	.ended = fetch_get_ended,
};

static int fetch_head_prepare(struct s3d_xfer *x)
{
	struct fetch_op *op = s3d_container_of(x, struct fetch_op, x);

	op->r->started = true;
	return s3d_op_head_prepare(x, op->ctx, op->m, op->key);
}

/* The object changed (or its cache file vanished): renew the file. */
static int fetch_head_done(struct s3d_xfer *x)
{
	struct fetch_op *op = s3d_container_of(x, struct fetch_op, x);
	const char *name;
	struct s3d_meta meta;
	char *parent;
	int dirfd, err;

	err = s3d_xfer_errno(x, op->m->bucket);
	if (!err)
		err = s3d_op_head_meta(x, &meta);
	err = err ?: s3d_op_split_path(op->r->path, &parent, &name);
	if (err) {
		/* Deleted: the kernel learns it from -ENOENT; LIST cleans up. */
		fetch_finish(op, err);
		return 0;
	}
	if (!op->renew && s3d_etag_eq(meta.etag, op->r->etag) &&
	    !(op->shrunk && meta.size != op->size)) {
		/*
		 * S3 says the object is the version we asked for, yet the GET
		 * disagreed. Renewing the file would only send the kernel
		 * round again; let the read fail instead.
		 */
		s3d_err("s3://%s/%s: GET and HEAD disagree about ETag %s",
			op->m->bucket, op->key, op->r->etag);
		free(parent);
		fetch_finish(op, -EIO);
		return 0;
	}
	/*
	 * A file of this version already there is kept: another FETCH of the
	 * old version (or a LOOKUP) renewed it first, and the kernel may have
	 * an inode for it already, whose FETCHes would fill a file it never
	 * reads if we replaced it again.
	 */
	err = s3d_store_open_dir(op->m->rootfd, parent, true, &dirfd);
	free(parent);
	if (!err) {
		err = s3d_store_ensure_file(dirfd, name, &meta, NULL, false);
		close(dirfd);
	}
	if (err < 0) {
		s3d_err("FETCH %s: replacing the cache file: %s", op->key,
			strerror(-err));
		fetch_finish(op, err);
		return 0;
	}
	s3d_info("s3://%s/%s: now ETag %s, %llu bytes; cache file %s",
		 op->m->bucket, op->key, meta.etag,
		 (unsigned long long)meta.size,
		 err ? "renewed" : "renewed already");
	fetch_finish(op, -ESTALE);
	return 0;
}

static const struct s3d_xfer_ops fetch_head_ops = {
	.prepare = fetch_head_prepare,
	.done = fetch_head_done,
};

static void fetch_stale(struct fetch_op *op, const char *why)
{
	s3d_info("GET s3://%s/%s (ETag %s): %s; checking the object",
		 op->m->bucket, op->key, op->r->etag, why);
	s3d_ctx_release(&op->x);
	fetch_io_put(op);
	s3d_xfer_init(&op->x, &fetch_head_ops, "HEAD", op->key);
	s3d_ctx_submit(op->ctx, &op->x);
}

/* Argument checks; the kernel validates too, but trust nothing. */
static int fetch_check(const struct s3d_req *r, const struct s3d_mount *m)
{
	if (!*r->path || !r->etag || !*r->etag || !r->len)
		return -EINVAL;
	/* It goes into If-Match: a line break would end the header. */
	if (!s3d_etag_ok(r->etag, strlen(r->etag)))
		return -EINVAL;
	if (r->off % m->chunk || r->off > UINT64_MAX - r->len)
		return -EINVAL;
	return 0;
}

static int fetch_open(struct fetch_op *op)
{
	char etag[S3CFS_ETAG_MAX + 2];
	struct stat st;
	int err;

	err = s3d_store_open_file(op->m->rootfd, op->r->path,
				  O_RDWR | O_DIRECT, &op->fd);
	if (err)
		return err;
	err = s3d_store_get_etag(op->fd, etag, sizeof(etag));
	/* Written here (kmod/local.c): its bytes are not the object's. */
	if (err == -EBUSY)
		return -EAGAIN;
	if (err == -ENODATA)
		return -ENOENT;		/* not one of ours: renew it */
	if (err)
		return err;
	if (!s3d_etag_eq(etag, op->r->etag))
		return -ESTALE;		/* already replaced by a newer one */
	/*
	 * The object's size: the file's i_size may be longer (a crash after
	 * writing the last piece rounded up, before the truncate back); a
	 * file of an older cache has no size stored and is its i_size long,
	 * as the kernel takes it too.
	 */
	err = s3d_store_get_size(op->fd, &op->size);
	if (err == -EINVAL)
		return -ENOENT;		/* a bad size: renew it */
	if (err != -ENODATA)
		return err;
	if (fstat(op->fd, &st))
		return -errno;
	op->size = (uint64_t)st.st_size;
	return 0;
}

/*
 * A server that ignored Range for this file gave us the whole object, and
 * [start, end) is data in the lower file already: written whole by this
 * daemon for this ETag (pieces are written whole, and a range is only
 * complete when all of its pieces are), so nothing is to be fetched.
 * Other files are asked for as ever (the GET's If-Match revalidates).
 */
static bool fetch_present(const struct fetch_op *op)
{
	off_t hole;

	if (!s3d_strset_get(&op->m->whole, op->r->path, NULL))
		return false;
	hole = lseek(op->fd, (off_t)op->start, SEEK_HOLE);
	return hole >= 0 && (uint64_t)hole >= op->end;
}

/*
 * A verified tier block: into the cache file as origin's bytes go (a
 * block larger than a chunk may reach past the range: the same version's
 * bytes, as a whole-object 200 writes them).
 */
static int fetch_tier_deliver(void *arg, uint64_t off, char *buf, size_t len)
{
	struct fetch_op *op = arg;
	int err;

	op->r->started = true;
	if (op->fd < 0) {
		err = fetch_open(op);
		if (err) {
			fetch_io_put(op);
			return err;
		}
	}
	if (off < op->start || off + len > op->end)
		s3d_cache_fetching(op->m->cache,
				   len - (S3D_MIN(off + len, op->end) -
					  S3D_MAX(off, op->start)));
	err = fetch_write(op, buf, off, len);
	if (err)
		return err;
	op->r->moved = true;
	return 0;
}

/* The tier's part is over: the rest of the range from origin. */
static void fetch_tier_done(void *arg, uint64_t upto)
{
	struct fetch_op *op = arg;

	fetch_io_put(op);
	op->done = upto - op->start;
	if (op->done >= op->end - op->start) {
		s3d_dbg("FETCH %s: bytes %llu-%llu from the tier", op->key,
			(unsigned long long)op->start,
			(unsigned long long)(op->end - 1));
		fetch_finish(op, 0);
		return;
	}
	fetch_report_landed(op);
	s3d_ctx_submit(op->ctx, &op->x);
}

/*
 * The tier's part waits on leases (their requests, another node's
 * blocks): no byte moves, yet the kernel is told the FETCH goes on, as
 * for a copy (tier_lease_wait_ms bounds it).
 */
static void fetch_tier_waiting(void *arg, bool on)
{
	struct fetch_op *op = arg;

	op->r->server_busy = on;
}

static const struct s3d_tier_fetch_ops fetch_tier_ops = {
	.deliver = fetch_tier_deliver,
	.done = fetch_tier_done,
	.waiting = fetch_tier_waiting,
};

void s3d_op_fetch(struct s3d_req *r, struct s3d_mount *m, struct s3d_ctx *ctx)
{
	struct fetch_op *op;
	uint64_t len;
	int err;

	err = fetch_check(r, m);
	if (err) {
		s3d_err("FETCH %s: invalid request (offset %llu, length %llu)",
			r->path, (unsigned long long)r->off,
			(unsigned long long)r->len);
		s3d_op_done(r, m, ctx, err);
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
	s3d_xfer_init(&op->x, &fetch_get_ops, "GET", "");
	op->key = s3d_key_of(m->prefix, r->path, NULL);
	if (!op->key) {
		fetch_finish(op, -errno);
		return;
	}
	op->x.key = op->key;
	err = fetch_open(op);
	if (err == -ENOENT) {
		op->renew = true;
		fetch_stale(op, "no usable cache file");
		return;
	}
	if (err) {
		if (err != -ESTALE && err != -EAGAIN)
			s3d_err("FETCH %s: cache file %s/%s: %s", op->key,
				m->cache_dir, r->path, strerror(-err));
		fetch_finish(op, err);
		return;
	}
	if (r->off >= op->size) {
		fetch_finish(op, 0);	/* past EOF: nothing to fill */
		return;
	}
	op->start = r->off;
	op->end = S3D_MIN(r->off + r->len, op->size);
	/* Whole chunks only, or up to EOF: never round into real data. */
	if (op->end != op->size && op->end % m->chunk) {
		s3d_err("FETCH %s: length %llu is not a whole number of chunks",
			op->key, (unsigned long long)r->len);
		fetch_finish(op, -EINVAL);
		return;
	}
	if (fetch_present(op)) {
		/* Another FETCH's whole-object 200 brought it already. */
		s3d_dbg("FETCH %s: bytes %llu-%llu already in the cache file",
			op->key, (unsigned long long)op->start,
			(unsigned long long)(op->end - 1));
		fetch_finish(op, 0);
		return;
	}
	len = op->end - op->start;
	op->bufsz = (size_t)S3D_MIN(round_up(len, S3D_DIO_ALIGN),
				    (uint64_t)S3D_PIECE_MAX);
	/* Taken again when its GET starts (fetch_io_get()). */
	fetch_io_put(op);
	op->counted = true;
	s3d_cache_fetching(m->cache, len);
	op->x.prio = r->prio == S3CFS_PRIO_ASYNC ? S3D_PRIO_ASYNC :
		     S3D_PRIO_SYNC;
	if (s3d_tier_fetch_start(&op->tier, &(struct s3d_tier_want){
					.origin = ctx, .bucket = m->bucket,
					.key = op->key, .etag = r->etag,
					.size = op->size, .start = op->start,
					.end = op->end, .mount_id = m->id,
					.path = r->path, .prio = op->x.prio },
				 &fetch_tier_ops, op))
		return;
	s3d_ctx_submit(op->ctx, &op->x);
}
