// SPDX-License-Identifier: GPL-2.0
/*
 * The mounts the kernel told us of (MOUNT, UMOUNT): bucket, prefix, cache
 * root and chunk size of each, its cache tracker (evict.c), shared by
 * reference with the operations running on it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bucket.h"
#include "caps.h"
#include "ctx.h"
#include "evict.h"
#include "lib/base.h"
#include "lib/log.h"
#include "lib/path.h"
#include "lib/util.h"
#include "listlog.h"
#include "mount.h"
#include "netlink.h"
#include "mpu.h"
#include "req.h"
#include "store.h"
#include "uapi/s3cachefs.h"

static struct s3d_list mounts = { &mounts, &mounts };

/*
 * Mounts refused for their cache directory (not the one the kernel
 * mounted, a symlink on the way, not ours): the kernel keeps them, and
 * re-sends their requests; each fails, and says why (at most every
 * REFUSED_LOG_MS per mount).
 */
struct refused_mount {
	struct s3d_list node;
	uint32_t id;
	int err;
	char *cache_dir;
	uint64_t logged_ms;
	unsigned long failed;	/* requests since the last line */
};

#define REFUSED_LOG_MS	10000

static struct s3d_list refused = { &refused, &refused };

static struct refused_mount *refused_find(uint32_t id)
{
	struct s3d_list *pos;

	for (pos = refused.next; pos != &refused; pos = pos->next) {
		struct refused_mount *f = s3d_container_of(pos, struct refused_mount,
							   node);

		if (f->id == id)
			return f;
	}
	return NULL;
}

static void refused_forget(uint32_t id)
{
	struct refused_mount *f = refused_find(id);

	if (!f)
		return;
	s3d_list_del(&f->node);
	free(f->cache_dir);
	free(f);
}

static void refused_add(uint32_t id, int err, const char *cache_dir)
{
	struct refused_mount *f;

	refused_forget(id);
	f = calloc(1, sizeof(*f));
	if (!f)
		return;
	f->id = id;
	f->err = err;
	f->cache_dir = strdup(cache_dir);
	if (!f->cache_dir) {
		free(f);
		return;
	}
	s3d_list_add_tail(&f->node, &refused);
}

static const char *refused_why(int err)
{
	switch (err) {
	case -ESTALE:
		return "it is not the directory the kernel mounted (it lacks the mount's token: a directory swapped in)";
	case -ELOOP:
		return "a symlink is on the way to it (swapped in since the mount)";
	case -ENOTEMPTY:
		return "it is neither empty nor an s3cachefs cache";
	case -EXDEV:
		return "it belongs to another bucket or prefix";
	default:
		return strerror(-err);
	}
}

/**
 * s3d_mount_refused() - a request for a mount we do not serve
 * @id: its mount id
 * @req_id: the request, for the log
 *
 * Return: the status to answer with: -EIO for a mount refused for its
 * cache directory (logged, at most every REFUSED_LOG_MS), else -ENODEV.
 */
int s3d_mount_refused(uint32_t id, uint64_t req_id)
{
	struct refused_mount *f = refused_find(id);
	uint64_t now = s3d_now_ms();

	if (!f) {
		s3d_err("request %llu: unknown mount %u",
			(unsigned long long)req_id, id);
		return -ENODEV;
	}
	f->failed++;
	if (!f->logged_ms || now - f->logged_ms >= REFUSED_LOG_MS) {
		s3d_err("mount %u: %lu request(s) failed (EIO), last %llu: its cache directory %s was refused: %s; nothing there is touched: unmount it",
			id, f->failed, (unsigned long long)req_id,
			f->cache_dir, refused_why(f->err));
		f->logged_ms = now;
		f->failed = 0;
	}
	return -EIO;
}

static void mount_go(void *arg, struct s3d_ctx *ctx, int err);

void s3d_mount_put(struct s3d_mount *m)
{
	if (--m->refs)
		return;
	s3d_cache_close(m->cache);
	s3d_strset_free(&m->whole);
	s3d_strset_free(&m->lookup_dirs);
	while (!s3d_list_empty(&m->ahead)) {
		struct s3d_ahead_dir *d = s3d_container_of(m->ahead.next,
							   struct s3d_ahead_dir, node);

		s3d_list_del(&d->node);
		free(d->path);
		free(d);
	}
	if (m->rootfd >= 0)
		close(m->rootfd);
	free(m->bucket);
	free(m->prefix);
	free(m->cache_dir);
	free(m);
}

/* The mount @id, with a reference (drop with s3d_mount_put()), or NULL. */
struct s3d_mount *s3d_mount_get(uint32_t id)
{
	struct s3d_list *pos;

	for (pos = mounts.next; pos != &mounts; pos = pos->next) {
		struct s3d_mount *m = s3d_container_of(pos, struct s3d_mount, node);

		if (m->id == id) {
			m->refs++;
			return m;
		}
	}
	return NULL;
}

static void mount_forget(uint32_t id)
{
	struct s3d_mount *m = s3d_mount_get(id);

	if (!m)
		return;
	s3d_list_del(&m->node);
	s3d_mount_put(m);	/* the table's reference */
	s3d_mount_put(m);	/* ours */
}

static int mount_check(const struct s3d_req *r)
{
	if (!r->bucket || !s3d_bucket_valid(r->bucket))
		return -EINVAL;
	if (!r->prefix || !s3d_prefix_valid(r->prefix))
		return -EINVAL;
	if (!r->cache_dir || r->cache_dir[0] != '/')
		return -EINVAL;
	if (r->chunk < S3CFS_CHUNK_MIN || r->chunk > S3CFS_CHUNK_MAX ||
	    (r->chunk & (r->chunk - 1)))
		return -EINVAL;
	return 0;
}

/**
 * s3d_mount_start() - MOUNT: open and check the cache directory, then make
 *	the mount known once its bucket's credentials are
 * @r: the request, answered (here or from the loop)
 */
void s3d_mount_start(struct s3d_req *r)
{
	struct s3d_mount *m;
	struct s3d_ctx *ctx;
	int err;

	err = mount_check(r);
	if (err) {
		s3d_err("mount %u: invalid parameters (bucket, prefix, cache dir or chunk size %u)",
			r->mount_id, r->chunk);
		goto out;
	}
	m = calloc(1, sizeof(*m));
	if (!m) {
		err = -ENOMEM;
		goto out;
	}
	m->rootfd = -1;
	m->refs = 1;
	s3d_list_init(&m->ahead);
	m->id = r->mount_id;
	m->chunk = r->chunk;
	m->posix = r->flags & S3CFS_MOUNT_POSIX;
	/* Listings leave an index: asked for by a read-only mount only. */
	m->index = (r->flags & S3CFS_MOUNT_INDEX) && !m->posix &&
		   !(r->flags & S3CFS_MOUNT_WRITABLE) && s3d_nl_version() >= 9;
	m->bucket = strdup(r->bucket);
	m->prefix = strdup(r->prefix);
	m->cache_dir = strdup(r->cache_dir);
	if (!m->bucket || !m->prefix || !m->cache_dir) {
		err = -ENOMEM;
		goto put;
	}
	if (!r->has_token && s3d_nl_version() < 10 &&
	    s3d_log_once("mount-token"))
		s3d_warn("the module (protocol %u) does not tie cache directories to their mounts (needs 10): a directory swapped in for one would not be noticed",
			 s3d_nl_version());
	err = s3d_store_open_root(r->cache_dir,
				  r->has_token ? r->token : NULL, &m->rootfd);
	if (err) {
		s3d_err("mount %u: cache directory %s refused: %s", r->mount_id,
			r->cache_dir, refused_why(err));
		goto refuse;
	}
	err = s3d_store_check_format(m->rootfd, m->bucket, m->prefix);
	if (err) {
		s3d_err("mount %u: cache directory %s refused for s3://%s/%s: %s",
			r->mount_id, r->cache_dir, m->bucket, m->prefix,
			refused_why(err));
		goto refuse;
	}
	refused_forget(r->mount_id);
	/* Unusable credentials fail the mount, not each read after it. */
	ctx = s3d_ctx_get(m->bucket, &err);
	if (!ctx) {
		s3d_err("mount %u: s3://%s: no S3 client (see above)",
			r->mount_id, m->bucket);
		err = err == -ENOENT ? -EACCES : err;
		goto put;
	}
	/* Waits for credentials being resolved, on the loop. */
	r->mount = m;
	err = s3d_ctx_ready(ctx, mount_go, r);
	if (err <= 0)
		mount_go(r, ctx, err);
	return;
refuse:
	/* Announced again after a restart: the kernel holds the mount. */
	if (err != -ENOMEM) {
		mount_forget(r->mount_id);
		refused_add(r->mount_id, err, r->cache_dir);
	}
put:
	s3d_mount_put(m);
out:
	s3d_req_finish(r, err);
}

/* A MOUNT waiting for a check of its bucket (bucket.c) or server (caps.c). */
struct mount_check {
	struct s3d_req *r;
	struct s3d_ctx *ctx;
	struct s3d_mount *m;	/* referenced */
};

void (*s3d_mount_defaults_hook)(const char *bucket, int *writeback,
				int *upload_delay);

/* A writable mount's answer carries the bucket's configured defaults. */
static void mount_defaults(struct s3d_req *r, const char *bucket)
{
	int wb = -1, delay = -1;

	if (s3d_mount_defaults_hook)
		s3d_mount_defaults_hook(bucket, &wb, &delay);
	if (wb < 0 && delay < 0)
		return;
	r->reply_defaults = true;
	r->reply_flags = wb > 0 ? S3CFS_MOUNT_WRITEBACK : 0;
	r->reply_upload_delay = delay;
	if (s3d_nl_version() < 7)
		s3d_warn("s3://%s: the module (protocol %u) cannot take the bucket's writeback/upload_delay settings (needs 7): the mount's own options apply",
			 bucket, s3d_nl_version());
}

/* A writable MOUNT, once its server's conditional writes are known. */
static void mount_caps_done(void *arg, int err)
{
	struct mount_check *mc = arg;
	struct s3d_mount *now = err ? s3d_mount_get(mc->r->mount_id) : NULL;

	/* Refused: forget it, unless a MOUNT sent since replaced it. */
	if (now == mc->m)
		mount_forget(mc->r->mount_id);
	if (now)
		s3d_mount_put(now);
	if (!err)
		mount_defaults(mc->r, mc->m->bucket);
	s3d_mount_put(mc->m);
	s3d_ctx_put(mc->ctx);
	s3d_req_finish(mc->r, err);
	free(mc);
}

/* The last part of a MOUNT: the mount is known from here on. */
static void mount_known(struct s3d_req *r, struct s3d_ctx *ctx,
			struct s3d_mount *m)
{
	int err;

	/* A MOUNT for a known id (the kernel re-sends them) replaces it. */
	mount_forget(m->id);
	m->cache = s3d_cache_open(m->id, m->rootfd,
				  s3d_cache_policy_for(m->bucket));
	s3d_list_add_tail(&m->node, &mounts);
	s3d_info("mount %u: s3://%s/%s cached in %s (chunk %u KiB, %s settings)",
		 m->id, m->bucket, m->prefix, m->cache_dir, m->chunk >> 10,
		 s3d_ctx_section(ctx) ? "its [bucket] section's" : "[global]");
	/* Multipart uploads a daemon that died left in S3: abort them. */
	err = s3d_mpu_recover(ctx, m->bucket, m->rootfd);
	if (err < 0)
		s3d_warn("mount %u: upload journal: %s", m->id, strerror(-err));
	s3d_listlog_clear(m->rootfd);
	if (m->index) {
		r->reply_defaults = true;
		r->reply_flags = S3CFS_MOUNT_INDEX;
		r->reply_upload_delay = -1;
	}
	if (r->flags & S3CFS_MOUNT_WRITABLE) {
		struct mount_check *mc = malloc(sizeof(*mc));

		if (mc) {
			*mc = (struct mount_check){ .r = r, .ctx = ctx, .m = m };
			m->refs++;
			if (!s3d_caps_check(ctx, m->bucket, m->prefix,
					    mount_caps_done, mc))
				return;
			s3d_mount_put(m);
			free(mc);
		}
		mount_forget(r->mount_id);
		s3d_ctx_put(ctx);
		s3d_req_finish(r, -ENOMEM);
		return;
	}
	s3d_ctx_put(ctx);
	s3d_req_finish(r, 0);
}

/* A new mount's bucket checked (bucket.c): refused, or on to mount_known(). */
static void mount_checked(void *arg, int err)
{
	struct mount_check *mc = arg;

	if (err) {
		s3d_err("mount %u: s3://%s: refused (%s)", mc->r->mount_id,
			mc->m->bucket, strerror(-err));
		s3d_mount_put(mc->m);
		s3d_ctx_put(mc->ctx);
		s3d_req_finish(mc->r, err);
	} else {
		mount_known(mc->r, mc->ctx, mc->m);
	}
	free(mc);
}

/* The second half of a MOUNT, once its context's credentials are known. */
static void mount_go(void *arg, struct s3d_ctx *ctx, int err)
{
	struct s3d_req *r = arg;
	struct s3d_mount *m = r->mount;
	struct mount_check *mc;

	r->mount = NULL;
	if (err) {
		s3d_err("mount %u: s3://%s: no AWS credentials (%s; see above)",
			r->mount_id, m->bucket, strerror(-err));
		s3d_mount_put(m);
		s3d_ctx_put(ctx);
		s3d_req_finish(r, err);
		return;
	}
	/* Announced again after a restart (id 0): the kernel holds it. */
	if (!r->id) {
		mount_known(r, ctx, m);
		return;
	}
	mc = malloc(sizeof(*mc));
	if (mc)
		*mc = (struct mount_check){ .r = r, .ctx = ctx, .m = m };
	if (!mc || s3d_bucket_check(ctx, m->bucket, m->prefix, mount_checked,
				    mc)) {
		free(mc);
		s3d_mount_put(m);
		s3d_ctx_put(ctx);
		s3d_req_finish(r, -ENOMEM);
	}
}

/* UMOUNT: forget the mount (operations still running keep it alive). */
void s3d_mount_stop(struct s3d_req *r)
{
	s3d_info("mount %u: unmounted", r->mount_id);
	mount_forget(r->mount_id);
	refused_forget(r->mount_id);
	s3d_req_drop(r);	/* a notification: no reply */
}

/* Forget all mounts (operations still running keep theirs alive). */
void s3d_mounts_fini(void)
{
	while (!s3d_list_empty(&mounts)) {
		struct s3d_mount *m = s3d_container_of(mounts.next,
						       struct s3d_mount, node);

		s3d_list_del(&m->node);
		s3d_mount_put(m);
	}
	while (!s3d_list_empty(&refused)) {
		struct refused_mount *f = s3d_container_of(refused.next,
							   struct refused_mount,
							   node);

		refused_forget(f->id);
	}
}
