// SPDX-License-Identifier: GPL-2.0
/*
 * LIST: ListObjectsV2 (delimiter '/', all pages) into the lower directory;
 * then its subdirectories, listed ahead of a walk in the background.
 *
 * A kernel's listing is streamed: the names applied so far go into the
 * listing's log (listlog.c) and each slice is reported (DONE), so a
 * readdir returns them while later pages are on their way. A directory
 * goes into the log once made. A file waits until the listing has passed
 * "name/" (a common prefix of that name, on a later page, would replace
 * it); at the end, every name in the lower directory not logged yet
 * follows: files kept or made meanwhile, and names a later page changed.
 *
 * The daemon also lists on its own: the subdirectories of a listed
 * directory, ahead of a walk, and a directory in which lookups of new
 * names show a loader opening its files by name; such lookups wait for
 * that listing instead of asking S3 each.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include "ctx.h"
#include "lib/base.h"
#include "lib/listguard.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "lib/path.h"
#include "lib/prio.h"
#include "lib/util.h"
#include "lib/xfer.h"
#include "lib/xml.h"
#include "listlog.h"
#include "mount.h"
#include "netlink.h"
#include "op_common.h"
#include "req.h"
#include "store.h"
#include "uapi/s3cachefs.h"

/*
 * Pages are applied to the cache directory a slice at a time from a timer,
 * so a directory of a million objects never holds the loop for long, and
 * the next page is already being fetched while this one is applied (at
 * most LIST_AHEAD pages parsed and waiting).
 */
#define LIST_SLICE	256
/* The first slice of a streamed listing is short: its reader waits. */
#define LIST_FIRST	32
#define LIST_AHEAD	2
/*
 * A listing that saw this many names hands the heap's free pages back at
 * its end: glibc would keep the memory of its set of names for good.
 */
#define LIST_HEAP_RELEASE	10000

/*
 * Listing ahead: after a listing, its subdirectories are listed in the
 * background, list_ahead at a time per mount, two levels down, so that a
 * walk (find, du, os.walk) finds them listed and a tree's directories are
 * listed in parallel rather than one after the other as the walk reaches
 * them. Bounded: a directory listed ahead gets one page (a bigger one is
 * left to the kernel's own LIST), at most AHEAD_QUEUE wait per mount, and
 * one listed in the last AHEAD_FRESH_S seconds (the kernel's default
 * meta_ttl) is skipped. Such a listing is an ordinary LIST without a
 * kernel request: a kernel LIST of the same directory rides on it.
 */
#define AHEAD_LEVELS	2
#define AHEAD_QUEUE	1024
#define AHEAD_FRESH_S	60

static unsigned int list_ahead = S3D_LIST_AHEAD_DEFAULT;

/*
 * Listing for lookups: a loader that opens files by name (from an index,
 * in shuffled order) costs S3 two requests per file in its LOOKUPs (a GET
 * and the LIST of "name/"), where one listing answers a directory's every
 * name. So the second name new to the cache looked up in a directory
 * within LOOKUP_WINDOW_S has that directory listed, if it has at most
 * lookup_list_pages pages: its pages are kept until the last has come,
 * and a bigger directory is left alone (nothing applied; its lookups ask
 * S3 one by one, and a readdir lists it whole). LOOKUPs in the directory
 * that come before its first page request wait for the listing and are
 * then answered from the lower directory, which the kernel trusts as
 * listed for meta_ttl. At most one such listing per directory every
 * LOOKUP_WINDOW_S (LOOKUP_BIG_S after one found it too big); at most
 * LOOKUP_DIRS directories remembered per mount. Not on posix_meta mounts:
 * a listing has no x-amz-meta-* attributes, the lookups must HEAD.
 */
#define LOOKUP_WINDOW_S	60
#define LOOKUP_BIG_S	600
#define LOOKUP_DIRS	4096

static unsigned int lookup_list_pages = S3D_LOOKUP_LIST_PAGES_DEFAULT;

/* A listing of more pages fails (lib/listguard.c). */
static unsigned int list_max_pages = S3D_LIST_PAGES_DEFAULT;

/*
 * A listing for lookups in progress, and the lookups waiting for it. A
 * lookup waits only for a listing that had sent no page when it came:
 * its answer must not be older than the lookup.
 */
struct lookup_listing {
	struct s3d_list node;		/* on lookup_listings while open */
	struct s3d_mount *m;		/* with a reference */
	struct s3d_list waiters;	/* struct s3d_list_waiter */
	char path[];
};

static struct s3d_list lookup_listings = { &lookup_listings, &lookup_listings };

static void lookup_list_close(struct s3d_req *r);
static void lookup_list_release(struct s3d_req *r, bool listed);
struct list_op;
static int list_begin(struct list_op *op);

enum { SEEN_FILE = 1, SEEN_DIR = 2, SEEN_TYPE = 3, SEEN_LOGGED = 4 };

/* A file applied, not in the log yet; with @metalen, one left to the index. */
struct held {
	struct held *next;
	uint8_t meta[S3CFS_META_MAX];
	size_t metalen;
	char name[];
};

struct deferred {
	struct deferred *next;
	struct s3d_obj obj;
	char name[];
};

struct list_page {
	struct list_page *next;
	struct s3d_list_page pg;
	size_t next_prefix;	/* the first not applied yet */
	size_t next_obj;
};

struct list_op {
	struct s3d_req *r;
	struct s3d_mount *m;
	struct s3d_ctx *ctx;	/* its bucket's S3 context */
	char *lp;		/* listing prefix */
	int dirfd;
	bool at_root;
	bool was_empty;		/* the directory held nothing at the start */
	bool index;		/* this listing leaves an index */
	bool begun_apply;	/* list_begin() was called */
	char *token;		/* continuation token for the next page */
	bool more;		/* a next page exists and is not requested yet */
	bool fetching;		/* a page request is queued or in flight */
	bool last;		/* the final page has arrived */
	struct list_page *head, *tail;	/* parsed pages, oldest first */
	unsigned int queued;
	unsigned int pages;
	struct s3d_strset seen;
	struct s3d_list_guard guard;	/* the pages move on */
	struct deferred *deferred;	/* files whose name is a dir on disk */
	struct s3d_listlog log;		/* a kernel's listing: its log */
	struct held *held;		/* files not logged yet */
	char *passed;			/* the last key or prefix applied */
	char **subdirs;			/* to list ahead when done */
	size_t nsub, capsub;
	unsigned int levels;		/* ... and this many levels below */
	struct s3d_timer work;
	struct timespec begun;		/* when it began (CLOCK_REALTIME) */
	struct s3d_xfer x;
};

static void list_finish(struct list_op *op, int err)
{
	struct s3d_req *r = op->r;
	struct s3d_mount *m = op->m;
	struct s3d_ctx *ctx = op->ctx;
	size_t seen;

	while (op->deferred) {
		struct deferred *d = op->deferred;

		op->deferred = d->next;
		free(d->obj.etag);
		free(d);
	}
	while (op->head) {
		struct list_page *p = op->head;

		op->head = p->next;
		s3d_list_page_free(&p->pg);
		free(p);
	}
	while (op->held) {
		struct held *h = op->held;

		op->held = h->next;
		free(h);
	}
	s3d_listlog_close(&op->log);
	free(op->passed);
	while (op->nsub)
		free(op->subdirs[--op->nsub]);
	free(op->subdirs);
	s3d_timer_cancel(&op->work);
	s3d_ctx_release(&op->x);
	seen = op->seen.count;
	s3d_strset_free(&op->seen);
	s3d_list_guard_free(&op->guard);
	/* Its names were ~55 bytes each: return them, not only to malloc. */
	if (seen >= LIST_HEAP_RELEASE)
		s3d_heap_release();
	if (op->dirfd >= 0)
		close(op->dirfd);
	free(op->lp);
	free(op->token);
	free(op);
	s3d_op_done(r, m, ctx, err);
}

static int list_page_prepare(struct s3d_xfer *x)
{
	struct list_op *op = s3d_container_of(x, struct list_op, x);

	op->r->started = true;
	if (op->r->for_lookups)
		lookup_list_close(op->r);
	return s3d_op_list_prepare(x, op->ctx, op->m, op->lp, op->token, false);
}

static int remember_subdir(struct list_op *op, const char *name)
{
	if (op->nsub == op->capsub) {
		size_t cap = op->capsub ? 2 * op->capsub : 16;
		char **v = realloc(op->subdirs, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		op->subdirs = v;
		op->capsub = cap;
	}
	op->subdirs[op->nsub] = strdup(name);
	if (!op->subdirs[op->nsub])
		return -ENOMEM;
	op->nsub++;
	return 0;
}

/* The listing gives @name as @type (SEEN_FILE, SEEN_DIR); logged stays. */
static int see(struct list_op *op, const char *name, int type)
{
	int was = 0;

	s3d_strset_get(&op->seen, name, &was);
	return s3d_strset_put(&op->seen, name, type | (was & SEEN_LOGGED));
}

/* Put @name into the log as the lower directory has it now. */
static int log_entry(struct list_op *op, const char *name, int seen)
{
	struct stat st;
	int was;

	/* Once only, should a server list a name twice or out of order. */
	if (op->log.fd < 0 || (s3d_strset_get(&op->seen, name, &was) &&
			       (was & SEEN_LOGGED)))
		return 0;
	/* Gone or changed meanwhile: the scan at the end decides. */
	if (fstatat(op->dirfd, name, &st, AT_SYMLINK_NOFOLLOW) ||
	    !(S_ISDIR(st.st_mode) || S_ISREG(st.st_mode)) ||
	    S_ISDIR(st.st_mode) != (seen == SEEN_DIR))
		return 0;
	if (s3d_strset_put(&op->seen, name, seen | SEEN_LOGGED) < 0)
		return -ENOMEM;
	return s3d_listlog_add(&op->log, name, S_ISDIR(st.st_mode) ? DT_DIR :
			       DT_REG, (uint64_t)st.st_ino, NULL, 0);
}

/*
 * A file applied (@metalen 0) or left to the index (its metadata): logged
 * once the listing passes "name/".
 */
static int hold_file(struct list_op *op, const char *name, const uint8_t *meta,
		     size_t metalen)
{
	struct held *h;

	if (op->log.fd < 0)
		return 0;
	h = malloc(sizeof(*h) + strlen(name) + 1);
	if (!h)
		return -ENOMEM;
	strcpy(h->name, name);
	h->metalen = metalen;
	if (metalen)
		memcpy(h->meta, meta, metalen);
	h->next = op->held;
	op->held = h;
	return 0;
}

/* Log @h, a file no later page can replace any more. */
static int log_held(struct list_op *op, const struct held *h)
{
	if (!h->metalen)
		return log_entry(op, h->name, SEEN_FILE);
	if (s3d_strset_put(&op->seen, h->name, SEEN_FILE | SEEN_LOGGED) < 0)
		return -ENOMEM;
	return s3d_listlog_add(&op->log, h->name, DT_REG, 0, h->meta,
			       h->metalen);
}

/* Is "@name/" at or before @op->passed (relative to the listing prefix)? */
static bool passed_dir_of(const struct list_op *op, const char *name)
{
	const char *pos = op->passed + strlen(op->lp);
	size_t len = strlen(name);
	int c = strncmp(name, pos, len);

	if (c)
		return c < 0;
	return (unsigned char)pos[len] >= '/';
}

/*
 * Log the held files no later page can replace any more: those the
 * listing has passed, or, at its end (@all), every one.
 */
static int release_held(struct list_op *op, bool all)
{
	struct held **pp = &op->held, *h;
	int seen, err;

	while ((h = *pp)) {
		if (!all && !passed_dir_of(op, h->name)) {
			pp = &h->next;
			continue;
		}
		*pp = h->next;
		err = 0;
		if (s3d_strset_get(&op->seen, h->name, &seen) &&
		    seen == SEEN_FILE)
			err = log_held(op, h);
		free(h);
		if (err < 0)
			return err;
	}
	return 0;
}

/*
 * Part of @p is applied: its prefixes first, then its keys, each in order.
 * A prefix "name/" not applied yet is past both the last applied: on this
 * page after them, or on a later page, past all of this one.
 */
static int page_progress(struct list_op *op, const struct list_page *p)
{
	const struct s3d_list_page *pg = &p->pg;
	const char *last = NULL;
	char *copy;

	if (p->next_obj)
		last = pg->objs[p->next_obj - 1].key;
	if (p->next_prefix && (!last ||
			       strcmp(pg->prefixes[p->next_prefix - 1], last) > 0))
		last = pg->prefixes[p->next_prefix - 1];
	if (op->log.fd < 0 || !last || strncmp(last, op->lp, strlen(op->lp)))
		return 0;
	/* Files held before may have been passed already (a prefix "z/"). */
	if (!op->passed || strcmp(last, op->passed)) {
		copy = strdup(last);
		if (!copy)
			return -ENOMEM;
		free(op->passed);
		op->passed = copy;
	}
	return release_held(op, false);
}

/* At the end: every name of the lower directory not in the log yet. */
static int log_rest(struct list_op *op)
{
	struct dirent *de;
	int fd, seen, err = 0;
	DIR *d;

	if (op->log.fd < 0)
		return 0;
	fd = openat(op->dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -errno;
	}
	while (!err && (de = readdir(d))) {
		const char *nm = de->d_name;
		unsigned int type = de->d_type;
		struct stat st;

		if (!s3d_name_valid(nm, strlen(nm), op->at_root) ||
		    (s3d_strset_get(&op->seen, nm, &seen) && (seen & SEEN_LOGGED)))
			continue;
		if (type == DT_UNKNOWN) {
			if (fstatat(op->dirfd, nm, &st, AT_SYMLINK_NOFOLLOW))
				continue;
			type = S_ISDIR(st.st_mode) ? DT_DIR :
			       S_ISREG(st.st_mode) ? DT_REG : DT_UNKNOWN;
		}
		if (type == DT_DIR || type == DT_REG)
			err = s3d_listlog_add(&op->log, nm, type,
					      (uint64_t)de->d_ino, NULL, 0);
	}
	closedir(d);
	return err;
}

/* Write what the log gathered and tell the kernel (and riders). */
static void log_report(struct list_op *op)
{
	uint64_t done;

	if (op->log.fd < 0)
		return;
	done = s3d_listlog_flush(&op->log);
	if (done == op->r->done)
		return;
	s3d_req_set_log(op->r, done, op->log.ino);
	s3d_req_progress(op->r);
}

static int list_dir(struct list_op *op, const char *cp)
{
	char name[256];
	size_t len;
	const char *p = s3d_list_name(op->lp, cp, true, &len);
	int err;

	if (!p || !s3d_name_valid(p, len, op->at_root)) {
		s3d_op_log_skip(op->m, cp, "common prefix is not a usable directory name; skipped");
		return 0;
	}
	memcpy(name, p, len);
	name[len] = '\0';
	if (see(op, name, SEEN_DIR) < 0)
		return -ENOMEM;
	err = s3d_store_ensure_dir(op->dirfd, name, true);
	if (err == -EEXIST) {
		s3d_op_log_skip(op->m, cp, "a file written here keeps the name of this common prefix");
		return 0;
	}
	if (err == 1)
		s3d_op_log_skip(op->m, cp, "a directory replaces the object of the same name");
	if (err >= 0)
		err = log_entry(op, name, SEEN_DIR);
	if (err >= 0 && op->levels && op->nsub < AHEAD_QUEUE)
		return remember_subdir(op, name);
	return err < 0 ? err : 0;
}

static int defer_file(struct list_op *op, const char *name,
		      const struct s3d_obj *o)
{
	struct deferred *d = calloc(1, sizeof(*d) + strlen(name) + 1);

	if (!d)
		return -ENOMEM;
	strcpy(d->name, name);
	d->obj = *o;
	d->obj.key = NULL;
	d->obj.etag = strdup(o->etag);
	if (!d->obj.etag) {
		free(d);
		return -ENOMEM;
	}
	d->next = op->deferred;
	op->deferred = d;
	return 0;
}

/*
 * On an index mount, an object with no lower entry gets none: the index
 * holds it until its first lookup. One the cache has is kept up to date
 * as on any mount.
 */
static bool list_index_only(const struct list_op *op, const char *name)
{
	struct stat st;

	return op->index && (op->was_empty ||
		(fstatat(op->dirfd, name, &st, AT_SYMLINK_NOFOLLOW) &&
		 errno == ENOENT));
}

static int list_file(struct list_op *op, const struct s3d_obj *o)
{
	struct s3d_meta meta = { o->etag, o->size, o->mtime, NULL };
	const char *p;
	size_t len;
	int seen, err;

	if (!strcmp(o->key, op->lp))
		return 0;	/* the "dir/" marker object itself */
	p = s3d_list_name(op->lp, o->key, false, &len);
	/* s3fs's "DIR_$folder$" on a posix_meta mount: not a file. */
	if (p && s3d_op_hidden_obj(op->m, p, len))
		return 0;
	if (!p || !s3d_name_valid(p, len, op->at_root)) {
		s3d_op_log_skip(op->m, o->key, "key is not a usable file name; skipped");
		return 0;
	}
	if (s3d_strset_get(&op->seen, p, &seen) && (seen & SEEN_TYPE) == SEEN_DIR) {
		s3d_op_log_skip(op->m, o->key, "object hidden by a directory of the same name");
		return 0;
	}
	if (see(op, p, SEEN_FILE) < 0)
		return -ENOMEM;
	if (list_index_only(op, p)) {
		uint8_t v[S3CFS_META_MAX];
		int n = s3d_meta_encode(&meta, false, v);

		/* A record's metadata is at most 255 bytes (a very long ETag). */
		if (n > 0 && n <= UINT8_MAX)
			return hold_file(op, p, v, (size_t)n);
	}
	/*
	 * A directory on disk may yet be confirmed by a common prefix on a
	 * later page; only replace it (and its cached contents) at the end.
	 */
	err = op->was_empty ? s3d_store_add_file(op->dirfd, p, &meta) :
		s3d_store_ensure_file(op->dirfd, p, &meta, NULL, false);
	if (err == -EISDIR)
		return defer_file(op, p, o);
	if (err == -EBUSY) {
		s3d_op_log_skip(op->m, o->key, "the name changed under the listing; left to the next one");
		return 0;
	}
	return err < 0 ? err : hold_file(op, p, NULL, 0);
}

/* Apply up to @budget entries of @lp; returns the budget left or -errno. */
static int list_apply(struct list_op *op, struct list_page *lp, int budget)
{
	const struct s3d_list_page *pg = &lp->pg;
	int err;

	while (budget > 0 && lp->next_prefix < pg->nprefixes) {
		err = list_dir(op, pg->prefixes[lp->next_prefix++]);
		if (err)
			return err;
		budget--;
	}
	while (budget > 0 && lp->next_obj < pg->nobjs) {
		err = list_file(op, &pg->objs[lp->next_obj++]);
		if (err)
			return err;
		budget--;
	}
	return budget;
}

static int list_deferred(struct list_op *op)
{
	struct deferred *d;
	int seen, err;

	for (d = op->deferred; d; d = d->next) {
		struct s3d_meta meta = { d->obj.etag, d->obj.size,
					 d->obj.mtime, NULL };

		if (!s3d_strset_get(&op->seen, d->name, &seen) ||
		    (seen & SEEN_TYPE) != SEEN_FILE)
			continue;
		err = s3d_store_ensure_file(op->dirfd, d->name, &meta, NULL, true);
		if (err == -EEXIST) {
			s3d_op_log_skip(op->m, d->name, "a directory holding files written here keeps this name");
			continue;
		}
		if (err < 0)
			return err;
	}
	return 0;
}

/*
 * A name the listing did not give stays if it came after the listing
 * began (its ctime): a directory made, or a file renamed in, while the
 * pages were on their way (a LIST ahead runs outside the kernel's
 * directory lock). The next listing decides about it.
 */
static bool list_keep(const char *name, void *arg)
{
	struct list_op *op = arg;
	struct stat st;

	if (s3d_strset_get(&op->seen, name, NULL))
		return true;
	return !fstatat(op->dirfd, name, &st, AT_SYMLINK_NOFOLLOW) &&
	       (st.st_ctim.tv_sec > op->begun.tv_sec ||
		(st.st_ctim.tv_sec == op->begun.tv_sec &&
		 st.st_ctim.tv_nsec >= op->begun.tv_nsec));
}

static void ahead_pump(struct s3d_mount *m);

/* A listing ahead ended (or rode on another that did). */
static void ahead_reply(struct s3d_req *r, int status)
{
	struct s3d_mount *m = r->priv;

	if (status && status != -ECANCELED && status != -EFBIG)
		s3d_dbg("listing %s ahead: %s", r->path, strerror(-status));
	s3d_req_free(r);
	m->ahead_running--;
	ahead_pump(m);
	s3d_mount_put(m);
}

static void ahead_go(void *arg, struct s3d_ctx *ctx, int err)
{
	struct s3d_req *r = arg;
	struct s3d_mount *m = r->mount;

	r->mount = NULL;
	if (err)
		s3d_op_done(r, m, ctx, err);
	else
		s3d_op_list(r, m, ctx);
}

/* Start @r, a listing of ours (not the kernel's), on @m (a live mount). */
static bool list_ours(struct s3d_mount *m, struct s3d_req *r)
{
	struct s3d_ctx *ctx;
	int err;

	s3d_req_begin(r);
	if (s3d_req_join(r))
		return true;	/* that directory is being listed already */
	ctx = s3d_ctx_get(m->bucket, &err);
	if (!ctx) {
		s3d_req_finish(r, err);
		return false;
	}
	m->refs++;		/* the operation's */
	r->mount = m;
	err = s3d_ctx_ready(ctx, ahead_go, r);
	if (err <= 0)
		ahead_go(r, ctx, err);
	return false;
}

/* Start one listing ahead of @d on @m (a live mount). */
static void ahead_start(struct s3d_mount *m, struct s3d_ahead_dir *d)
{
	struct s3d_req *r = calloc(1, sizeof(*r));

	if (!r) {
		free(d->path);
		free(d);
		return;
	}
	r->cmd = S3CFS_CMD_LIST;
	r->mount_id = m->id;
	r->path = d->path;
	r->ahead = true;
	r->ahead_levels = d->levels;
	r->reply = ahead_reply;
	r->priv = m;
	free(d);
	m->refs++;		/* r->priv's */
	m->ahead_running++;
	list_ours(m, r);
}

static void ahead_pump(struct s3d_mount *m)
{
	struct s3d_mount *live = s3d_mount_get(m->id);
	time_t now = time(NULL);

	if (live)
		s3d_mount_put(live);
	while (!s3d_list_empty(&m->ahead) &&
	       (live != m || m->ahead_running < list_ahead)) {
		struct s3d_ahead_dir *d = s3d_container_of(m->ahead.next,
							   struct s3d_ahead_dir, node);
		time_t at;

		s3d_list_del(&d->node);
		m->ahead_queued--;
		at = live == m ? s3d_store_get_listed(m->rootfd, d->path) : now;
		if (at && now - at < AHEAD_FRESH_S) {
			/* Listed lately, or the mount is gone: not again. */
			free(d->path);
			free(d);
			continue;
		}
		ahead_start(m, d);
	}
}

/* Queue the subdirectories @op found, to be listed ahead. */
static void ahead_queue(struct list_op *op)
{
	struct s3d_mount *m = op->m;
	size_t i;

	for (i = 0; i < op->nsub && m->ahead_queued < AHEAD_QUEUE; i++) {
		struct s3d_ahead_dir *d = calloc(1, sizeof(*d));

		if (!d)
			break;
		d->path = s3d_key_of("", op->r->path, op->subdirs[i]);
		if (!d->path) {
			free(d);
			break;
		}
		d->levels = op->levels - 1;
		s3d_list_add_tail(&d->node, &m->ahead);
		m->ahead_queued++;
	}
	if (op->nsub)
		ahead_pump(m);
}

static void list_complete(struct list_op *op)
{
	int err;

	err = list_deferred(op);
	err = err ?: s3d_store_prune(op->dirfd, op->at_root, list_keep, op);
	/* An index mount's lower directory lacks the objects left to the index. */
	if (!err && !op->index)
		err = s3d_store_set_listed(op->dirfd, time(NULL));
	/* The log's last records go out before the answer, which says the
	 * log is whole (DONE) only if it is: a reader of it fails otherwise. */
	err = err ?: release_held(op, true);
	err = err ?: log_rest(op);
	if (!err)
		log_report(op);
	/* Objects left to an index no one can read: the listing failed. */
	if (!err && op->index)
		err = s3d_listlog_publish(&op->log, op->dirfd, op->begun.tv_sec);
	if (op->log.failed)
		s3d_req_set_log(op->r, 0, 0);
	if (err)
		s3d_err("LIST s3://%s/%s: cache directory: %s", op->m->bucket,
			op->lp, strerror(-err));
	else
		s3d_dbg("LIST s3://%s/%s: %zu entries in %u pages%s",
			op->m->bucket, op->lp, op->seen.count, op->pages,
			op->r->ahead ? " (listed ahead)" : "");
	if (!err)
		ahead_queue(op);
	list_finish(op, err);
}

/*
 * A listing ahead waits behind others, unless a kernel LIST rides on it or
 * lookups wait for it.
 */
static int list_prio(const struct list_op *op)
{
	return op->r->ahead && !op->r->for_lookups && !op->r->riders ?
	       S3D_PRIO_ASYNC : S3D_PRIO_META;
}

/* Does a kernel LIST (a readdir, not a listing of ours) ride on @r? */
static bool kernel_rides(const struct s3d_req *r)
{
	const struct s3d_req *x;

	for (x = r->riders; x; x = x->rider_next)
		if (!x->ahead)
			return true;
	return false;
}

/*
 * A listing of ours, with no kernel LIST riding on it, takes a few pages
 * at most: it keeps them until the last (and applies none if there are
 * more).
 */
static bool list_capped(const struct list_op *op)
{
	return op->r->ahead && !kernel_rides(op->r);
}

static void list_fetch_more(struct list_op *op)
{
	if (!op->more || op->fetching ||
	    (op->queued >= LIST_AHEAD && !list_capped(op)))
		return;
	op->more = false;
	op->fetching = true;
	op->x.prio = list_prio(op);
	s3d_ctx_submit(op->ctx, &op->x);
}

static void list_work(struct s3d_timer *t)
{
	struct list_op *op = s3d_container_of(t, struct list_op, work);
	int budget = op->log.fd >= 0 && !op->log.written ? LIST_FIRST :
		     LIST_SLICE;

	if (!op->begun_apply) {
		int err = list_begin(op);

		if (err) {
			list_finish(op, err);
			return;
		}
	}

	while (op->head && budget > 0) {
		struct list_page *p = op->head;

		budget = list_apply(op, p, budget);
		if (budget >= 0)
			budget = page_progress(op, p) ?: budget;
		if (budget < 0) {
			s3d_err("LIST s3://%s/%s: cache directory: %s",
				op->m->bucket, op->lp, strerror(-budget));
			list_finish(op, budget);
			return;
		}
		if (p->next_prefix < p->pg.nprefixes || p->next_obj < p->pg.nobjs)
			break;
		op->head = p->next;
		if (!op->head)
			op->tail = NULL;
		op->queued--;
		s3d_list_page_free(&p->pg);
		free(p);
		list_fetch_more(op);
	}
	if (op->last && !op->fetching && !op->head) {
		list_complete(op);
		return;
	}
	log_report(op);
	if (op->head)
		s3d_timer_arm(&op->work, 0);	/* more after other events */
}

static int list_page_done(struct s3d_xfer *x)
{
	struct list_op *op = s3d_container_of(x, struct list_op, x);
	struct list_page *p;
	char why[320];
	int err;

	op->fetching = false;
	err = s3d_xfer_errno(x, op->m->bucket);
	if (err) {
		/* A page over S3D_LIST_PAGE_MAX (logged): not "too big to list". */
		list_finish(op, err == -EFBIG ? -EIO : err);
		return 0;
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		list_finish(op, -ENOMEM);
		return 0;
	}
	op->pages++;
	err = s3d_xml_parse_list(s3d_buf_str(&x->resp), x->resp.len, &p->pg,
				 why, sizeof(why));
	if (!err)
		err = s3d_list_guard_page(&op->guard, &p->pg, why, sizeof(why));
	if (err) {
		s3d_err("LIST s3://%s/%s: unusable response (page %u): %s",
			op->m->bucket, op->lp, op->pages, why);
		s3d_list_page_free(&p->pg);
		free(p);
		list_finish(op, err == -ENOMEM ? err : -EIO);
		return 0;
	}
	if (p->pg.truncated && op->r->for_lookups && !list_capped(op) &&
	    op->pages >= op->r->ahead_pages)
		lookup_list_release(op->r, false);
	if (p->pg.truncated && list_capped(op) &&
	    op->pages >= (op->r->ahead_pages ?: 1)) {
		/* Too big to list for lookups or ahead: a kernel LIST will. */
		if (op->pages == 1)
			s3d_dbg("LIST s3://%s/%s: more than a page, not listed %s",
				op->m->bucket, op->lp,
				op->r->for_lookups ? "for lookups" : "ahead");
		else
			s3d_dbg("LIST s3://%s/%s: more than %u pages, not listed for lookups",
				op->m->bucket, op->lp, op->pages);
		s3d_list_page_free(&p->pg);
		free(p);
		list_finish(op, -EFBIG);
		return 0;
	}
	if (p->pg.truncated) {
		free(op->token);
		op->token = p->pg.next_token;
		p->pg.next_token = NULL;
		op->more = true;
	} else {
		op->last = true;
	}
	if (op->tail)
		op->tail->next = p;
	else
		op->head = p;
	op->tail = p;
	op->queued++;
	s3d_req_progress(op->r);		/* a page: the listing moves on */
	list_fetch_more(op);
	if (!op->work.armed && (op->last || !list_capped(op)))
		s3d_timer_arm(&op->work, 0);
	return 0;
}

static const struct s3d_xfer_ops list_ops = {
	.prepare = list_page_prepare,
	.done = list_page_done,
};

/*
 * The kernel gave the listing up (an interrupted ls): stop fetching pages.
 * What was applied stays (entries of the listing, right as far as they
 * go); the directory is not marked listed, so the next readdir lists it
 * again.
 */
static void list_cancel(void *arg)
{
	struct list_op *op = arg;

	s3d_info("LIST %s: stopped after %u page%s: nobody waits for it",
		 op->lp, op->pages, op->pages == 1 ? "" : "s");
	list_finish(op, -ECANCELED);
}

/*
 * Before the listing applies anything: the last listing's index goes (the
 * kernel must not read it as this one's, nor take the lower directory for
 * a whole listing while objects are left to the index), and the log
 * opens. Streamed to a kernel's readdir; a listing ahead has no reader,
 * but on an index mount every listing's log becomes the index.
 */
static int list_begin(struct list_op *op)
{
	struct s3d_req *r = op->r;
	struct s3d_mount *m = op->m;
	int err;

	op->begun_apply = true;
	err = s3d_store_unlist(op->dirfd, m->index);
	if (err) {
		s3d_err("LIST %s: cache directory %s/%s: %s", op->lp,
			m->cache_dir, r->path, strerror(-err));
		return err;
	}
	if ((!r->ahead && s3d_nl_version() >= 6) || m->index) {
		err = s3d_listlog_open(&op->log, m->rootfd, op->dirfd);
		if (err && s3d_log_once("listlog"))
			s3d_warn("LIST %s: no listing log (%s): readdir waits for the whole listing",
				 op->lp, strerror(-err));
		op->log.index = !err && m->index;
	}
	/* Without a log, the lower directory takes every object as before. */
	op->index = op->log.index;
	return 0;
}

void s3d_op_list(struct s3d_req *r, struct s3d_mount *m, struct s3d_ctx *ctx)
{
	struct list_op *op;
	int err;

	if (r->cancelled && !r->riders) {
		/* Given up while it waited for its bucket's credentials. */
		s3d_op_done(r, m, ctx, -ECANCELED);
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
	op->dirfd = -1;
	s3d_listlog_init(&op->log);
	op->at_root = !*r->path;
	clock_gettime(CLOCK_REALTIME, &op->begun);
	s3d_strset_init(&op->seen);
	s3d_list_guard_init(&op->guard, list_max_pages);
	s3d_list_init(&op->work.node);
	op->work.fn = list_work;
	s3d_xfer_init(&op->x, &list_ops, "LIST", "");
	op->lp = s3d_list_prefix(m->prefix, r->path);
	if (!op->lp) {
		list_finish(op, -errno);
		return;
	}
	op->x.key = op->lp;
	err = s3d_store_open_dir(m->rootfd, r->path, true, &op->dirfd);
	if (err) {
		s3d_err("LIST %s: cache directory %s/%s: %s", op->lp,
			m->cache_dir, r->path, strerror(-err));
		list_finish(op, err);
		return;
	}
	/* A first listing: its names are new, linked without a look first. */
	op->was_empty = s3d_store_dir_empty(op->dirfd, op->at_root);
	/* A listing ahead may yet give up: it replaces nothing until it applies. */
	if (!r->ahead) {
		err = list_begin(op);
		if (err) {
			list_finish(op, err);
			return;
		}
	}
	r->cancel = list_cancel;
	r->cancel_arg = op;
	op->levels = !list_ahead ? 0 : r->ahead ? r->ahead_levels : AHEAD_LEVELS;
	op->fetching = true;
	op->x.prio = list_prio(op);
	s3d_ctx_submit(op->ctx, &op->x);
}

void s3d_op_list_set_ahead(unsigned int n)
{
	list_ahead = S3D_MIN(n, S3D_LIST_AHEAD_MAX);
}

void s3d_op_list_set_max_pages(unsigned int n)
{
	list_max_pages = S3D_MIN(n ?: S3D_LIST_PAGES_DEFAULT, S3D_LIST_PAGES_MAX);
}

void s3d_op_list_set_lookup_pages(unsigned int n)
{
	lookup_list_pages = S3D_MIN(n, S3D_LOOKUP_LIST_PAGES_MAX);
}

/* Seconds on the monotonic clock, from 1: 0 means none in the set. */
static int lookup_now(void)
{
	return (int)(s3d_now_ms() / 1000) + 1;
}

static struct lookup_listing *lookup_listing_of(const struct s3d_mount *m,
						const char *path)
{
	struct s3d_list *pos;

	for (pos = lookup_listings.next; pos != &lookup_listings; pos = pos->next) {
		struct lookup_listing *ll = s3d_container_of(pos,
							     struct lookup_listing, node);

		if (ll->m == m && !strcmp(ll->path, path))
			return ll;
	}
	return NULL;
}

/* The listing takes no more waiters (its first page is on its way). */
static void lookup_list_close(struct s3d_req *r)
{
	struct lookup_listing *ll = r->priv;

	s3d_list_del(&ll->node);
}

/* Answer the lookups waiting for @r: @listed, the lower directory answers. */
static void lookup_list_release(struct s3d_req *r, bool listed)
{
	struct lookup_listing *ll = r->priv;

	while (!s3d_list_empty(&ll->waiters)) {
		struct s3d_list_waiter *w = s3d_container_of(ll->waiters.next,
							     struct s3d_list_waiter,
							     node);

		s3d_list_del(&w->node);
		if (listed)
			s3d_lookup_stats.listed++;
		w->done(w, listed);
	}
}

/* The listing for lookups ended: 0 if it applied the whole directory. */
static void lookup_list_reply(struct s3d_req *r, int status)
{
	struct lookup_listing *ll = r->priv;

	s3d_list_del(&ll->node);
	if (status == -EFBIG) {
		/* Not again for a while: each try costs its pages. */
		s3d_lookup_stats.listings_big++;
		s3d_strset_put(&ll->m->lookup_dirs, ll->path,
			       -(lookup_now() + LOOKUP_BIG_S));
	} else if (status && status != -ECANCELED) {
		s3d_info("LIST %s for lookups: %s; they ask S3 themselves",
			 r->path, strerror(-status));
	}
	lookup_list_release(r, !status);
	s3d_mount_put(ll->m);
	free(ll);
	s3d_req_free(r);
}

/*
 * Is this the second name new to the cache looked up in @path within
 * LOOKUP_WINDOW_S (and no listing for lookups of it in that time)? The
 * set holds, per directory, the second of the last such lookup (> 0), or
 * until when none may start a listing (< 0).
 */
static bool lookup_list_due(struct s3d_mount *m, const char *path)
{
	struct s3d_strset *set = &m->lookup_dirs;
	int now = lookup_now(), v = 0;
	time_t at;

	s3d_strset_get(set, path, &v);
	if (v < 0 && now < -v)
		return false;		/* listed for lookups lately */
	if (v <= 0 || now - v >= LOOKUP_WINDOW_S) {
		if (set->count >= LOOKUP_DIRS) {
			s3d_strset_free(set);
			s3d_strset_init(set);
		}
		s3d_strset_put(set, path, now);
		return false;
	}
	s3d_strset_put(set, path, -(now + LOOKUP_WINDOW_S));
	/* Listed lately by a readdir (the kernel trusts it, or did). */
	at = s3d_store_get_listed(m->rootfd, path);
	return !at || time(NULL) - at >= LOOKUP_WINDOW_S;
}

/*
 * Start listing @path of @m for lookups, @w the first to wait for it.
 * Return: false if @w does not wait (it asks S3 itself): no memory, or
 * the directory was being listed already (that listing may predate @w).
 */
static bool lookup_list_start(struct s3d_mount *m, const char *path,
			      struct s3d_list_waiter *w)
{
	size_t n = strlen(path) + 1;
	struct lookup_listing *ll = malloc(sizeof(*ll) + n);
	struct s3d_req *r = calloc(1, sizeof(*r));

	if (ll)
		memcpy(ll->path, path, n);
	if (r)
		r->path = strdup(path);
	if (!ll || !r || !r->path) {
		free(ll);
		s3d_req_free(r);
		return false;
	}
	ll->m = m;
	m->refs++;		/* ll's */
	s3d_list_init(&ll->waiters);
	s3d_list_add_tail(&w->node, &ll->waiters);
	s3d_list_add_tail(&ll->node, &lookup_listings);
	r->cmd = S3CFS_CMD_LIST;
	r->mount_id = m->id;
	r->ahead = true;
	r->ahead_pages = lookup_list_pages;
	r->for_lookups = true;
	r->reply = lookup_list_reply;
	r->priv = ll;
	s3d_dbg("LIST %s for lookups of new names in it", path);
	/* May end, and call @w, before it returns. */
	if (!list_ours(m, r)) {
		s3d_lookup_stats.listings++;
		return true;
	}
	/* It rides on a listing under way: @w asks S3 itself. */
	s3d_list_del(&w->node);
	s3d_list_del(&ll->node);
	return false;
}

/**
 * s3d_op_list_wait() - have a LOOKUP in @path wait for a listing of it
 * @m: the mount
 * @path: the directory, as in the request
 * @name_new: the name looked up is not in the cache (counts towards
 *	listing the directory)
 * @w: the lookup's waiter; @w->done is called once, possibly before this
 *	returns
 *
 * Return: true if @w waits for (or was answered by) a listing for
 * lookups, false if the lookup should ask S3 itself.
 */
bool s3d_op_list_wait(struct s3d_mount *m, const char *path, bool name_new,
		      struct s3d_list_waiter *w)
{
	struct lookup_listing *ll;

	if (!lookup_list_pages || m->posix)
		return false;
	ll = lookup_listing_of(m, path);
	if (ll) {
		s3d_list_add_tail(&w->node, &ll->waiters);
		return true;
	}
	if (!name_new || !lookup_list_due(m, path))
		return false;
	return lookup_list_start(m, path, w);
}

/* @w (waiting) no longer waits: the kernel gave its LOOKUP up. */
void s3d_op_list_unwait(struct s3d_list_waiter *w)
{
	s3d_list_del(&w->node);
}
