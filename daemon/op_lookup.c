// SPDX-License-Identifier: GPL-2.0
/*
 * LOOKUP: HEAD key (or, for a name new to the cache, GET its first bytes:
 * a small object arrives whole) and LIST key/ (max-keys 1) at once; make
 * the lower entry a file, a directory, or nothing.
 *
 * On a posix_meta mount the file also gets what the response's
 * x-amz-meta-mode, -uid, -gid and -mtime say (S3CFS_XATTR_POSIX, flags 0
 * for none: the kernel then knows the object was asked about), and
 * s3fs's legacy directory markers ("DIR_$folder$") are not files.
 *
 * A lookup in a directory whose listing for lookups (op_list.c) has not
 * sent its first page request yet waits for that listing instead, and
 * asks S3 only if the listing did not apply the whole directory.
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
#include "lib/posix.h"
#include "lib/prio.h"
#include "lib/s3.h"
#include "lib/util.h"
#include "lib/xfer.h"
#include "lib/xml.h"
#include "listlog.h"
#include "mount.h"
#include "op_common.h"
#include "req.h"
#include "store.h"

/* See S3D_LOOKUP_GET_MAX_DEFAULT; set from the configuration. */
static unsigned int lookup_get_max = S3D_LOOKUP_GET_MAX_DEFAULT;

struct lookup_op {
	struct s3d_req *r;
	struct s3d_mount *m;
	struct s3d_ctx *ctx;	/* its bucket's S3 context */
	char *key;
	char *dirprefix;	/* key + "/" */
	int left;		/* transfers still running */
	bool get;		/* @obj is a GET of the first bytes, not a HEAD */
	bool cut;		/* ... stopped: the object is longer */
	bool empty;		/* ... stopped: the object has no bytes */
	struct s3d_buf body;	/* ... what it brought */
	struct s3d_xfer obj;	/* HEAD key, or GET its first bytes */
	struct s3d_xfer list;
	struct s3d_list_waiter wait;	/* for a listing of the directory */
};

void s3d_op_lookup_set_get_max(unsigned int bytes)
{
	lookup_get_max = S3D_MIN(bytes, S3D_LOOKUP_GET_MAX_MAX);
}

static void lookup_finish(struct lookup_op *op, int err)
{
	struct s3d_req *r = op->r;
	struct s3d_mount *m = op->m;
	struct s3d_ctx *ctx = op->ctx;

	s3d_ctx_release(&op->obj);
	s3d_ctx_release(&op->list);
	s3d_buf_free(&op->body);
	free(op->key);
	free(op->dirprefix);
	free(op);
	s3d_op_done(r, m, ctx, err);
}

static int lookup_head_prepare(struct s3d_xfer *x)
{
	struct lookup_op *op = s3d_container_of(x, struct lookup_op, obj);

	op->r->started = true;
	return s3d_op_head_prepare(x, op->ctx, op->m, op->key);
}

/* The first lookup_get_max bytes: a small object whole, metadata of any. */
static int lookup_get_prepare(struct s3d_xfer *x)
{
	struct lookup_op *op = s3d_container_of(x, struct lookup_op, obj);
	struct s3d_kv h[1];
	char range[48];

	op->r->started = true;
	op->cut = false;
	op->empty = false;
	s3d_buf_free(&op->body);
	s3d_buf_init(&op->body, lookup_get_max);
	snprintf(range, sizeof(range), "bytes=0-%u", lookup_get_max - 1);
	h[0] = (struct s3d_kv){ "Range", range };
	return s3d_s3_build(s3d_ctx_s3(op->ctx), "GET", op->m->bucket, op->key,
			    NULL, 0, h, 1, time(NULL), &x->req);
}

/*
 * A zero-byte object has no byte 0: S3 answers 416; s3rver a 206 of range
 * "0-0/0" that promises one byte and closes. The headers say it all.
 */
static bool lookup_get_headers(struct s3d_xfer *x)
{
	struct lookup_op *op = s3d_container_of(x, struct lookup_op, obj);

	if (x->status >= 300 || x->range_total != 0)
		return true;
	op->empty = true;
	return false;
}

/* A longer body (a server that ignores Range) is cut short: not kept. */
static size_t lookup_get_body(struct s3d_xfer *x, const char *p, size_t n)
{
	struct lookup_op *op = s3d_container_of(x, struct lookup_op, obj);

	s3d_buf_add(&op->body, p, n);
	if (op->body.err == -E2BIG) {
		op->cut = true;
		return 0;
	}
	if (op->body.err) {
		x->err = op->body.err;
		return 0;
	}
	return n;
}

static int lookup_list_prepare(struct s3d_xfer *x)
{
	struct lookup_op *op = s3d_container_of(x, struct lookup_op, list);

	op->r->started = true;
	return s3d_op_list_prepare(x, op->ctx, op->m, op->dirprefix, NULL, true);
}

/* 1: the listing shows a directory, 0: it does not, <0: it failed. */
static int lookup_is_dir(struct lookup_op *op)
{
	struct s3d_list_page pg;
	char why[160];
	int err;

	err = s3d_xfer_errno(&op->list, op->m->bucket);
	if (err)
		return err;
	err = s3d_xml_parse_list(s3d_buf_str(&op->list.resp), op->list.resp.len,
				 &pg, why, sizeof(why));
	if (err) {
		s3d_err("LIST s3://%s/%s: unusable response: %s", op->m->bucket,
			op->dirprefix, why);
		return -EIO;
	}
	err = pg.nobjs + pg.nprefixes > 0;
	s3d_list_page_free(&pg);
	return err;
}

/* Return: as s3d_store_ensure_dir()/_file() (>= 0: done), or -errno. */
static int lookup_apply(struct lookup_op *op, bool dir,
			const struct s3d_meta *meta, const void *data)
{
	const char *name = op->r->name;
	int dirfd, err;

	err = s3d_store_open_dir(op->m->rootfd, op->r->path, true, &dirfd);
	if (err) {
		s3d_err("LOOKUP %s: cache directory %s/%s: %s", op->key,
			op->m->cache_dir, op->r->path, strerror(-err));
		return err;
	}
	if (dir)
		err = s3d_store_ensure_dir(dirfd, name, true);
	else
		err = s3d_store_ensure_file(dirfd, name, meta, data, true);
	if (err == 1 && dir)
		s3d_op_log_skip(op->m, op->key, "a directory replaces the object of the same name");
	/* Kept as it was: the kernel may trust it for meta_ttl from now. */
	if (!err) {
		int e = s3d_store_set_checked(dirfd, name);

		if (e)
			s3d_warn("LOOKUP %s: recording the check: %s", op->key, strerror(-e));
	}
	close(dirfd);
	if (err < 0)
		s3d_err("LOOKUP %s: cache entry: %s", op->key, strerror(-err));
	return err;
}

/* A file with the object's bytes in it: the cache tracker counts them. */
static int lookup_apply_whole(struct lookup_op *op,
			      const struct s3d_meta *meta, const void *data)
{
	char *path;
	int err;

	s3d_cache_fetching(op->m->cache, meta->size);
	err = lookup_apply(op, false, meta, data);
	if (err == 2) {
		s3d_lookup_stats.whole++;
		s3d_lookup_stats.whole_bytes += meta->size;
	}
	path = s3d_key_of("", op->r->path, op->r->name);
	if (path)
		s3d_cache_fetched(op->m->cache, path);
	free(path);
	return err;
}

/* Neither an object nor a prefix: drop whatever the cache still has. */
static int lookup_negative(struct lookup_op *op)
{
	int dirfd, err;

	err = s3d_store_open_dir(op->m->rootfd, op->r->path, false, &dirfd);
	if (err)
		return -ENOENT;
	err = s3d_store_remove(dirfd, op->r->name);
	close(dirfd);
	if (err)
		s3d_err("LOOKUP %s: removing stale cache entry: %s", op->key,
			strerror(-err));
	return -ENOENT;
}

/*
 * The object's metadata from a successful HEAD, or from the GET of its
 * first bytes (vetted by lookup_get_vet(); @data is set when the body is
 * the whole object).
 */
static int lookup_obj_meta(struct lookup_op *op, struct s3d_meta *meta,
			   const void **data)
{
	struct s3d_xfer *x = &op->obj;
	uint64_t len = op->body.len;

	*data = NULL;
	if (!op->get)
		return s3d_op_head_meta(x, meta);
	meta->etag = x->etag;
	meta->mtime = x->last_modified;
	meta->posix = NULL;
	if (op->empty) {
		meta->size = 0;
	} else if (op->cut) {
		meta->size = (uint64_t)x->content_length;
	} else if (x->status == 206) {
		meta->size = (uint64_t)x->range_total;
		if (len == meta->size)
			*data = op->body.p;
	} else {
		meta->size = len;
		*data = op->body.p;
	}
	return 0;
}

/*
 * Is the answer to the GET of the first bytes one we can vouch for? A 206
 * must be the range asked for, cut at the end of an object of known size,
 * as long as its Content-Range says; a 200 (Range ignored) the whole object, or cut
 * short by us with its length announced. NULL if so, else why not (the
 * lookup then asks with a HEAD).
 */
static const char *lookup_get_vet(struct lookup_op *op)
{
	struct s3d_xfer *x = &op->obj;
	uint64_t len = op->body.len;

	if (!x->has_etag)
		return "the response has no ETag";
	if (op->empty)
		return NULL;
	if (op->cut)
		return x->status == 200 && x->content_length > (int64_t)len ?
		       NULL : "more body than asked for";
	if (x->status == 206) {
		/* Bytes 0 to the end of what we asked for or of the object. */
		if (x->range_start != 0 || x->range_total < 0 ||
		    x->range_end + 1 != (int64_t)len ||
		    x->range_end + 1 != S3D_MIN(x->range_total,
						(int64_t)lookup_get_max))
			return "Content-Range does not match the body";
		return NULL;
	}
	if (x->content_length >= 0 && x->content_length != (int64_t)len)
		return "Content-Length does not match the body";
	return NULL;
}

/* The object's POSIX attributes from @op's response; one warning if bad. */
static void lookup_posix(struct lookup_op *op, struct s3cfs_posix *p)
{
	const struct s3d_posix_hdrs *t = &op->obj.posix;
	uint32_t bad = s3d_posix_parse(t, p);
	char esc[S3D_POSIX_NF][2 * S3D_POSIX_VAL_MAX];
	int i;

	if (!bad)
		return;
	for (i = 0; i < S3D_POSIX_NF; i++)
		s3d_escape(t->v[i], esc[i], sizeof(esc[i]));
	s3d_warn("s3://%s/%s: unusable x-amz-meta-* ignored: mode '%s' uid '%s' gid '%s' mtime '%s'%s%s%s%s",
		 op->m->bucket, op->key, esc[0], esc[1], esc[2], esc[3],
		 (bad & S3CFS_POSIX_MODE) ? " (mode bad)" : "",
		 (bad & S3CFS_POSIX_UID) ? " (uid bad)" : "",
		 (bad & S3CFS_POSIX_GID) ? " (gid bad)" : "",
		 (bad & S3CFS_POSIX_MTIME) ? " (mtime bad)" : "");
}

static void lookup_decide(struct lookup_op *op)
{
	struct s3cfs_posix posix;
	struct s3d_meta meta;
	const void *data;
	bool found;
	int is_dir, err;

	is_dir = lookup_is_dir(op);
	if (is_dir == 1) {
		err = lookup_apply(op, true, NULL, NULL);
		lookup_finish(op, err < 0 ? err : 0);
		return;
	}
	found = op->get ? !op->obj.err &&
		(op->cut || op->empty || s3d_xfer_ok(&op->obj)) :
		s3d_xfer_ok(&op->obj);
	if (found) {
		err = lookup_obj_meta(op, &meta, &data);
		if (!err && op->m->posix) {
			lookup_posix(op, &posix);
			meta.posix = &posix;
		}
		if (err)
			s3d_err("HEAD s3://%s/%s: response without ETag or Content-Length",
				op->m->bucket, op->key);
		else if (data)
			err = lookup_apply_whole(op, &meta, data);
		else
			err = lookup_apply(op, false, &meta, NULL);
		lookup_finish(op, err < 0 ? err : 0);
		return;
	}
	err = s3d_xfer_errno(&op->obj, op->m->bucket);
	if (err == -ENOENT && is_dir == 0)
		err = lookup_negative(op);
	else if (err == -ENOENT)
		err = is_dir;	/* the listing failed: that is the answer */
	lookup_finish(op, err);
}

static const struct s3d_xfer_ops lookup_head_ops;

/* Ask again with a HEAD; the listing goes on meanwhile. */
static void lookup_head_instead(struct lookup_op *op, const char *why)
{
	if (why)
		s3d_warn("GET s3://%s/%s (first %u bytes): %s; asking with a HEAD",
			 op->m->bucket, op->key, lookup_get_max, why);
	s3d_ctx_release(&op->obj);
	s3d_buf_free(&op->body);
	op->get = false;
	op->cut = false;
	s3d_xfer_init(&op->obj, &lookup_head_ops, "HEAD", op->key);
	s3d_ctx_submit(op->ctx, &op->obj);
}

static int lookup_obj_done(struct s3d_xfer *x)
{
	struct lookup_op *op = s3d_container_of(x, struct lookup_op, obj);
	bool stopped = op->cut || op->empty;	/* by us, on purpose */
	bool answered = x->cres == CURLE_OK ||
			(x->cres == CURLE_WRITE_ERROR && stopped);

	if (op->get && answered && !x->err) {
		/* S3's answer for a zero-byte object (see lookup_get_headers()). */
		if (x->status == 416) {
			lookup_head_instead(op, NULL);
			return 0;
		}
		if ((x->status >= 200 && x->status < 300) || stopped) {
			const char *why = lookup_get_vet(op);

			if (why) {
				lookup_head_instead(op, why);
				return 0;
			}
		}
	}
	if (--op->left == 0)
		lookup_decide(op);
	return 0;
}

static int lookup_list_done(struct s3d_xfer *x)
{
	struct lookup_op *op = s3d_container_of(x, struct lookup_op, list);

	if (--op->left == 0)
		lookup_decide(op);
	return 0;
}

static const struct s3d_xfer_ops lookup_head_ops = {
	.prepare = lookup_head_prepare,
	.done = lookup_obj_done,
};

static const struct s3d_xfer_ops lookup_get_ops = {
	.prepare = lookup_get_prepare,
	.headers = lookup_get_headers,
	.body = lookup_get_body,
	.done = lookup_obj_done,
};

static const struct s3d_xfer_ops lookup_list_ops = {
	.prepare = lookup_list_prepare,
	.done = lookup_list_done,
};

/*
 * Is @r's name new to the cache? Then the object's first bytes are worth
 * asking for. A name the cache has (listed, or cached before) is only
 * revalidated: a HEAD, no body.
 */
static bool lookup_name_new(const struct s3d_req *r, const struct s3d_mount *m)
{
	struct stat st;
	int dirfd, err;

	err = s3d_store_open_dir(m->rootfd, r->path, false, &dirfd);
	if (err)
		return err == -ENOENT;
	err = fstatat(dirfd, r->name, &st, AT_SYMLINK_NOFOLLOW) ? errno : 0;
	close(dirfd);
	return err == ENOENT;
}

/*
 * On an index mount: @r's name in a directory whose index holds what the
 * last listing found (the kernel says the index is fresh, or a listing
 * for lookups just left it). An object the index holds gets its lower
 * file, made from the index and as checked at the listing's time.
 * Return: 0 or -ENOENT (answered), or 1: ask S3 (no usable index, or a
 * name the index has as a directory).
 */
static int lookup_from_index(const struct s3d_req *r, struct s3d_mount *m)
{
	char etag[S3CFS_ETAG_MAX + 1];
	struct s3d_meta meta = { etag, 0, 0, NULL };
	struct timespec ts[2] = { { .tv_nsec = UTIME_OMIT }, { 0 } };
	uint8_t v[S3CFS_META_MAX];
	struct stat st;
	int64_t mtime;
	time_t when;
	size_t n;
	int dirfd, err;

	if (!m->index || s3d_store_open_dir(m->rootfd, r->path, false, &dirfd))
		return 1;
	/* Made meanwhile (another lookup): the kernel finds it. */
	if (!fstatat(dirfd, r->name, &st, AT_SYMLINK_NOFOLLOW)) {
		close(dirfd);
		return 0;
	}
	err = s3d_index_find(m->rootfd, dirfd, r->name, &when, v, &n);
	if (!err && s3d_meta_decode(v, n, etag, &meta.size, &mtime))
		err = -EINVAL;
	if (!err) {
		meta.mtime = (time_t)mtime;
		/* Taken meanwhile: what is there stays as it is. */
		err = s3d_store_add_new(dirfd, r->name, &meta);
		ts[1].tv_sec = when;
		if (!err && utimensat(dirfd, r->name, ts, AT_SYMLINK_NOFOLLOW))
			s3d_warn("LOOKUP %s/%s: recording the listing's time: %s",
				 r->path, r->name, strerror(errno));
		if (!err)
			s3d_lookup_stats.indexed++;
		else if (err != -EEXIST)
			s3d_err("LOOKUP %s/%s: cache entry from the index: %s",
				r->path, r->name, strerror(-err));
		if (err == -EEXIST)
			err = 0;
	}
	close(dirfd);
	if (err == -ENOENT)
		return -ENOENT;
	return err < 0 ? 1 : 0;
}

/* Ask S3: the object (or its first bytes) and "key/" at once. */
static void lookup_ask(struct lookup_op *op)
{
	s3d_ctx_submit(op->ctx, &op->obj);
	s3d_ctx_submit(op->ctx, &op->list);
}

/*
 * The listing @op waited for ended: the lower directory (or on an index
 * mount, the index) answers if it has the whole directory (the kernel
 * looks the name up in it again).
 */
static void lookup_listed(struct s3d_list_waiter *w, bool listed)
{
	struct lookup_op *op = s3d_container_of(w, struct lookup_op, wait);

	/* An index mount's listing left the name to its index. */
	int err = !listed ? 1 : op->m->index ? lookup_from_index(op->r, op->m) : 0;

	op->r->cancel = NULL;
	if (err <= 0)
		lookup_finish(op, err);
	else
		lookup_ask(op);
}

/* The kernel gave the lookup up while it waited for a listing. */
static void lookup_cancel(void *arg)
{
	struct lookup_op *op = arg;

	s3d_op_list_unwait(&op->wait);
	lookup_finish(op, -ECANCELED);
}

void s3d_op_lookup(struct s3d_req *r, struct s3d_mount *m, struct s3d_ctx *ctx)
{
	struct lookup_op *op;
	bool fresh;
	size_t n;

	if (r->cancelled && !r->riders) {
		/* Given up while it waited for its bucket's credentials. */
		s3d_op_done(r, m, ctx, -ECANCELED);
		return;
	}
	if (!r->name || !s3d_name_valid(r->name, strlen(r->name), !*r->path) ||
	    s3d_op_hidden_obj(m, r->name, strlen(r->name))) {
		/* Names we never map do not exist as far as anyone can see. */
		s3d_op_done(r, m, ctx, -ENOENT);
		return;
	}
	if (r->flags & S3CFS_LOOKUP_INDEX) {
		int err = lookup_from_index(r, m);

		if (err <= 0) {
			s3d_op_done(r, m, ctx, err);
			return;
		}
	}
	op = calloc(1, sizeof(*op));
	if (!op) {
		s3d_op_done(r, m, ctx, -ENOMEM);
		return;
	}
	op->r = r;
	op->m = m;
	op->ctx = ctx;
	s3d_buf_init(&op->body, 0);
	fresh = lookup_name_new(r, m);
	op->get = lookup_get_max && fresh;
	if (op->get) {
		s3d_xfer_init(&op->obj, &lookup_get_ops, "GET", "");
		op->obj.prio = S3D_PRIO_META;
		op->obj.probe = true;
	} else {
		s3d_xfer_init(&op->obj, &lookup_head_ops, "HEAD", "");
	}
	s3d_xfer_init(&op->list, &lookup_list_ops, "LIST", "");
	op->key = s3d_key_of(m->prefix, r->path, r->name);
	if (!op->key) {
		lookup_finish(op, -errno);
		return;
	}
	n = strlen(op->key);
	op->dirprefix = malloc(n + 2);
	if (!op->dirprefix) {
		lookup_finish(op, -ENOMEM);
		return;
	}
	memcpy(op->dirprefix, op->key, n);
	strcpy(op->dirprefix + n, "/");
	op->obj.key = op->key;
	op->list.key = op->dirprefix;
	op->left = 2;
	op->wait.done = lookup_listed;
	r->cancel = lookup_cancel;
	r->cancel_arg = op;
	if (s3d_op_list_wait(m, r->path, fresh, &op->wait))
		return;
	r->cancel = NULL;
	lookup_ask(op);
}
