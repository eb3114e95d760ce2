// SPDX-License-Identifier: GPL-2.0
/*
 * Cache usage and eviction, per mount.
 *
 * Each mount has a cache limit (bytes of allocated blocks under its cache
 * directory; 0: none) and may have a free-space floor for the device its
 * cache lives on (bytes or a percentage; the same share of the device's
 * inodes is kept free too). Usage is the sum of st_blocks of the regular
 * files under the cache root: scanned after MOUNT, from the loop a slice
 * at a time (walk.c; no eviction pass starts before the scan is complete),
 * updated from a fresh stat after every FETCH, every eviction, and by
 * every eviction pass.
 *
 * When a mount is over its limit (or the device under its floor, or a
 * write of fetched data failed with ENOSPC) the daemon evicts that mount's
 * least recently used files until usage is back under the low-water mark
 * (95% of the limit) and the floor is respected. The LRU clock is the
 * lower file's atime, which the kernel sets on open and on read(2), at
 * most once per lru_interval (kmod/evict.c): a pass stats every file
 * again, so a file read from the page cache (never fetched) counts as
 * used. Ties go to the file fetched longest ago.
 *
 * A pass is incremental: it walks the file table a slice at a time (1024
 * files or 4 ms, then back to the event loop), keeping only the oldest files
 * that cover what must be freed in a heap (s3d_evict_sel), so that a cache
 * of millions of files neither blocks the loop nor is sorted whole.
 *
 * The daemon never punches holes itself: it sends S3CFS_CMD_EVICT for the
 * whole file and the kernel punches it, or answers -EBUSY when a fetch is
 * in flight in the file (then the file is skipped for BUSY_SKIP_MS). One
 * EVICT is in flight per mount at a time; the acks come back through the
 * event loop. An ack that never comes (lost to a full receive queue: the
 * socket reports ENOBUFS, netlink.c) does not stop the pass: the EVICT
 * times out after s3d_evict_timeout_ms, and a lost one is given up at
 * once; either way the file is stat()ed again, which tells what happened.
 *
 * Usage can run past the limit by the fetches in flight (each at most its
 * length, a chunk or a readahead window): a check runs when a FETCH starts
 * (counting its length) and again when it ends.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include "evict.h"
#include "lib/base.h"
#include "lib/config.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "lib/util.h"
#include "walk.h"
#include "uapi/s3cachefs.h"

struct s3d_cache_policy s3d_cache_default;
const struct s3d_cache_policy *(*s3d_cache_policy_hook)(const char *bucket);
struct s3d_evict_stats s3d_evict_stats;
uint64_t s3d_evict_timeout_ms = S3D_EVICT_TIMEOUT_DEFAULT * 1000;
int (*s3d_evict_send)(uint32_t mount_id, const char *path, uint64_t len,
		      void (*done)(void *arg, int err), void *arg);
bool (*s3d_evict_cancel)(void (*done)(void *arg, int err), void *arg);

/* Every live mount's tracker, for s3d_cache_foreach() (metrics). */
static struct s3d_list caches = { &caches, &caches };

/* Evict down to this share of the limit, so one eviction is not followed
 * by another at the very next fetch. */
#define LOW_WATER(limit)	((limit) - (limit) / 20)

/* A pass looks at this many files, or runs this long, then lets the loop
 * run again (a slice). */
#define SLICE_FILES		1024
#define SLICE_MS		4
/*
 * Passes for want of inodes at most this often: punching frees blocks,
 * not inodes, so passes one after the other would empty the cache for
 * nothing.
 */
#define INODE_PASS_MS		60000
/* A file refused as busy is not chosen again for this long. */
#define BUSY_SKIP_MS		10000

struct cfile {
	struct cfile *hnext;
	struct s3d_evict_file f;
	uint64_t busy_ms;	/* when EVICT last found it busy */
};

struct s3d_cache {
	struct s3d_list all;	/* on caches while the mount lives */
	uint32_t mount_id;
	int refs;		/* the mount's, plus one per EVICT in flight */
	bool dead;		/* the mount is gone */
	int rootfd;		/* O_PATH, our own dup */
	struct s3d_walk *walk;	/* the usage scan, while it runs */
	struct s3d_cache_policy pol;
	uint64_t used;		/* bytes allocated to cached files */
	struct cfile **tab;
	size_t nbuckets, nfiles;
	/* the eviction pass under way */
	bool evicting;
	bool choosing;		/* walking the table (then: evicting) */
	bool again;		/* a check came during the pass: redo it after */
	bool nospace;		/* a write failed for want of space */
	bool short_inodes;	/* at the last look, under the inode floor */
	uint64_t inode_pass_ms;	/* when a pass last started for inodes */
	struct s3d_evict_sel sel;	/* choosing: the oldest files so far */
	size_t cursor;		/* choosing: the next bucket */
	size_t cursor_nbuckets;	/* ... of a table this size */
	struct s3d_timer slice;	/* the next slice of choosing */
	struct s3d_timer ack;	/* the EVICT in flight times out */
	struct s3d_timer recheck;	/* the check put off by a pass */
	char **queue;		/* paths, in eviction order */
	size_t nqueue, qnext;
	uint64_t pass_freed;
};

/* The limits for a new mount of @bucket (the config's, else the flags'). */
const struct s3d_cache_policy *s3d_cache_policy_for(const char *bucket)
{
	const struct s3d_cache_policy *p = NULL;

	if (s3d_cache_policy_hook)
		p = s3d_cache_policy_hook(bucket);
	return p ?: &s3d_cache_default;
}

/* ---- the choice (pure; tests drive it) ---- */

/* Order of eviction: < 0 if @x goes before @y. */
static int lru_cmp(const struct s3d_evict_file *x, const struct s3d_evict_file *y)
{
	if (x->atime_ns != y->atime_ns)
		return x->atime_ns < y->atime_ns ? -1 : 1;
	if (x->fetched_ms != y->fetched_ms)
		return x->fetched_ms < y->fetched_ms ? -1 : 1;
	return strcmp(x->path, y->path);	/* stable, for tests */
}

/* The heap is a max-heap in eviction order: the last to go on top. */
static bool sel_above(const struct s3d_evict_sel *s, size_t a, size_t b)
{
	return lru_cmp(&s->v[a].f, &s->v[b].f) > 0;
}

static void sel_swap(struct s3d_evict_sel *s, size_t a, size_t b)
{
	struct s3d_evict_pick t = s->v[a];

	s->v[a] = s->v[b];
	s->v[b] = t;
}

static void sel_down(struct s3d_evict_sel *s, size_t i, size_t n)
{
	for (;;) {
		size_t l = 2 * i + 1, m = i;

		if (l < n && sel_above(s, l, m))
			m = l;
		if (l + 1 < n && sel_above(s, l + 1, m))
			m = l + 1;
		if (m == i)
			return;
		sel_swap(s, i, m);
		i = m;
	}
}

static void sel_pop(struct s3d_evict_sel *s)
{
	s->bytes -= s->v[0].f.bytes;
	free(s->v[0].f.path);
	s->v[0] = s->v[--s->n];
	sel_down(s, 0, s->n);
}

/**
 * s3d_evict_sel_init() - start choosing the files to evict
 * @s: the selection
 * @need: bytes to free
 */
void s3d_evict_sel_init(struct s3d_evict_sel *s, uint64_t need)
{
	memset(s, 0, sizeof(*s));
	s->need = need;
}

/**
 * s3d_evict_sel_add() - consider one file
 * @s: the selection
 * @f: the file (its path is copied if it is kept)
 * @idx: the caller's index of it, returned with it
 *
 * Keeps the shortest run of least recently used files seen so far that
 * holds @s->need bytes: O(log k) for k kept, and only the files older
 * than the newest kept one are copied. Empty and busy files are skipped.
 *
 * Return: 0 or -ENOMEM.
 */
int s3d_evict_sel_add(struct s3d_evict_sel *s, const struct s3d_evict_file *f,
		      size_t idx)
{
	size_t i;

	if (!f->bytes || f->busy || !s->need)
		return 0;
	if (s->bytes >= s->need && lru_cmp(f, &s->v[0].f) >= 0)
		return 0;	/* newer than everything it would replace */
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		struct s3d_evict_pick *v = realloc(s->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		s->v = v;
		s->cap = cap;
	}
	i = s->n;
	s->v[i].f = *f;
	s->v[i].idx = idx;
	s->v[i].f.path = strdup(f->path);
	if (!s->v[i].f.path)
		return -ENOMEM;
	s->n++;
	s->bytes += f->bytes;
	for (; i && sel_above(s, i, (i - 1) / 2); i = (i - 1) / 2)
		sel_swap(s, i, (i - 1) / 2);
	/* Drop the newest while the rest still cover the need. */
	while (s->n > 1 && s->bytes - s->v[0].f.bytes >= s->need)
		sel_pop(s);
	return 0;
}

/**
 * s3d_evict_sel_finish() - the chosen files, least recently used first
 * @s: the selection; @s->v[0 .. return value) is sorted in place
 *
 * Return: the number of files chosen.
 */
size_t s3d_evict_sel_finish(struct s3d_evict_sel *s)
{
	size_t n;

	for (n = s->n; n > 1; n--) {
		sel_swap(s, 0, n - 1);
		sel_down(s, 0, n - 1);
	}
	return s->n;
}

void s3d_evict_sel_free(struct s3d_evict_sel *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		free(s->v[i].f.path);
	free(s->v);
	s3d_evict_sel_init(s, 0);
}

/**
 * s3d_evict_choose() - which files to evict, in order
 * @files: the mount's files
 * @n: how many
 * @need: bytes to free
 * @out: room for @n indices into @files
 *
 * Least recently used first (atime, then fetch time), skipping files with
 * nothing allocated and files marked busy, until the chosen files hold at
 * least @need bytes (or there are no more).
 *
 * Return: the number of indices written to @out.
 */
size_t s3d_evict_choose(const struct s3d_evict_file *files, size_t n,
			uint64_t need, size_t *out)
{
	struct s3d_evict_sel s;
	size_t i, k;

	if (!n || !need)
		return 0;
	s3d_evict_sel_init(&s, need);
	for (i = 0; i < n; i++)
		if (s3d_evict_sel_add(&s, &files[i], i))
			break;
	k = s3d_evict_sel_finish(&s);
	for (i = 0; i < k; i++)
		out[i] = s.v[i].idx;
	s3d_evict_sel_free(&s);
	return k;
}

/**
 * s3d_evict_need() - bytes to free now
 * @pol: the mount's limits
 * @used: the mount's usage
 * @avail: bytes available on the cache device
 * @total: size of the cache device
 * @start: true to decide whether to start a pass (over the limit), false
 *	to decide whether to go on (above the low-water mark)
 *
 * Return: 0 when nothing needs evicting.
 */
uint64_t s3d_evict_need(const struct s3d_cache_policy *pol, uint64_t used,
			uint64_t avail, uint64_t total, bool start)
{
	uint64_t need = 0, floor = 0, target;

	if (pol->limit) {
		target = start ? pol->limit : LOW_WATER(pol->limit);
		if (used > target)
			need = used - (start ? LOW_WATER(pol->limit) : target);
	}
	if (pol->min_free_pct)
		floor = total / 100 * pol->min_free_pct;
	else
		floor = pol->min_free;
	if (floor && avail < floor)
		need = S3D_MAX(need, floor - avail);
	return need;
}

/**
 * s3d_evict_inodes_short() - is the cache device under its inode floor?
 * @pol: the mount's limits
 * @favail: inodes available on the cache device
 * @files: inodes of the cache device (0: it does not count them)
 * @total: size of the cache device in bytes
 *
 * The floor is the share of the inodes that min_free is of the bytes (the
 * percentage itself, or min_free / @total).
 *
 * Return: true if fewer inodes than the floor are free.
 */
bool s3d_evict_inodes_short(const struct s3d_cache_policy *pol,
			    uint64_t favail, uint64_t files, uint64_t total)
{
	uint64_t floor = 0;

	if (!files)
		return false;
	if (pol->min_free_pct)
		floor = files * pol->min_free_pct / 100 ?: 1;
	else if (pol->min_free && total)
		floor = (uint64_t)((double)files * pol->min_free / total) ?: 1;
	return floor && favail < floor;
}

/* ---- the file table ---- */

static struct cfile **slot_of(struct s3d_cache *c, const char *path)
{
	struct cfile **pp = &c->tab[s3d_hash_str(path) % c->nbuckets];

	while (*pp && strcmp((*pp)->f.path, path))
		pp = &(*pp)->hnext;
	return pp;
}

static int grow(struct s3d_cache *c)
{
	size_t n = c->nbuckets ? c->nbuckets * 2 : 256, i;
	struct cfile **tab = calloc(n, sizeof(*tab));

	if (!tab)
		return -ENOMEM;
	for (i = 0; i < c->nbuckets; i++) {
		while (c->tab[i]) {
			struct cfile *f = c->tab[i];
			size_t b = s3d_hash_str(f->f.path) % n;

			c->tab[i] = f->hnext;
			f->hnext = tab[b];
			tab[b] = f;
		}
	}
	free(c->tab);
	c->tab = tab;
	c->nbuckets = n;
	return 0;
}

static void drop_file(struct s3d_cache *c, struct cfile **pp)
{
	struct cfile *f = *pp;

	*pp = f->hnext;
	c->used -= S3D_MIN(c->used, f->f.bytes);
	c->nfiles--;
	free(f->f.path);
	free(f);
}

static void set_stat(struct s3d_cache *c, struct cfile *f,
		     const struct stat *st, bool fetched)
{
	c->used -= S3D_MIN(c->used, f->f.bytes);
	f->f.bytes = (uint64_t)st->st_blocks * 512;
	f->f.size = (uint64_t)st->st_size;
	f->f.atime_ns = (int64_t)st->st_atim.tv_sec * 1000000000 +
			st->st_atim.tv_nsec;
	if (fetched)
		f->f.fetched_ms = s3d_now_ms();
	c->used += f->f.bytes;
}

/* Record @st for @path (NULL @st: the file is gone). */
static int account(struct s3d_cache *c, const char *path,
		   const struct stat *st, bool fetched)
{
	struct cfile **pp, *f;

	if (c->nfiles >= c->nbuckets && grow(c))
		return -ENOMEM;
	pp = slot_of(c, path);
	if (!st) {
		if (*pp)
			drop_file(c, pp);
		return 0;
	}
	f = *pp;
	if (!f) {
		f = calloc(1, sizeof(*f));
		if (!f || !(f->f.path = strdup(path))) {
			free(f);
			return -ENOMEM;
		}
		*pp = f;
		c->nfiles++;
	}
	set_stat(c, f, st, fetched);
	return 0;
}

static void restat(struct s3d_cache *c, const char *path, bool fetched)
{
	struct stat st;

	if (fstatat(c->rootfd, path, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    S_ISREG(st.st_mode))
		account(c, path, &st, fetched);
	else
		account(c, path, NULL, false);
}

/* The usage scan (walk.c) found a regular file. */
static int scan_file(void *arg, const char *path, const struct stat *st)
{
	return account(arg, path, st, false);
}

static void check(struct s3d_cache *c, uint64_t extra);

static void scan_done(void *arg, int err)
{
	struct s3d_cache *c = arg;

	c->walk = NULL;
	if (err)
		s3d_err("mount %u: scanning the cache: %s; usage counts only what was seen",
			c->mount_id, strerror(-err));
	s3d_info("mount %u: %zu cached files, %llu bytes (limit %llu%s)",
		 c->mount_id, c->nfiles, (unsigned long long)c->used,
		 (unsigned long long)c->pol.limit,
		 c->pol.limit ? "" : ": none");
	check(c, 0);
}

/* ---- eviction ---- */

static void cache_put(struct s3d_cache *c)
{
	size_t i;

	if (--c->refs)
		return;
	s3d_timer_cancel(&c->slice);
	s3d_timer_cancel(&c->ack);
	s3d_timer_cancel(&c->recheck);
	s3d_evict_sel_free(&c->sel);
	for (i = 0; i < c->nbuckets; i++)
		while (c->tab[i])
			drop_file(c, &c->tab[i]);
	for (i = 0; i < c->nqueue; i++)
		free(c->queue[i]);
	free(c->queue);
	free(c->tab);
	if (c->rootfd >= 0)
		close(c->rootfd);
	free(c);
}

static uint64_t need_now(struct s3d_cache *c, uint64_t extra, bool start)
{
	struct statvfs sv;
	uint64_t avail = UINT64_MAX, total = 0, need;

	if ((c->pol.min_free || c->pol.min_free_pct) &&
	    fstatvfs(c->rootfd, &sv) == 0) {
		avail = (uint64_t)sv.f_bavail * sv.f_frsize;
		total = (uint64_t)sv.f_blocks * sv.f_frsize;
		avail -= S3D_MIN(avail, extra);
		c->short_inodes = s3d_evict_inodes_short(&c->pol, sv.f_favail,
							 sv.f_files, total);
	}
	need = s3d_evict_need(&c->pol, c->used + extra, avail, total, start);
	/*
	 * Out of space (a write failed) or of inodes: give back a twentieth
	 * of what the mount holds, at least what the write wanted. Punching
	 * frees blocks, not inodes (that would take the kernel forgetting
	 * files): passes for inodes are rate-limited.
	 */
	if (c->short_inodes && start && c->inode_pass_ms &&
	    s3d_now_ms() - c->inode_pass_ms < INODE_PASS_MS)
		c->short_inodes = false;
	if ((c->nospace || c->short_inodes) &&
	    (start || c->pass_freed < c->used / 20))
		need = S3D_MAX(need, S3D_MAX(extra, c->used / 20));
	return need;
}

static void pass_end(struct s3d_cache *c)
{
	size_t i;

	for (i = 0; i < c->nqueue; i++)
		free(c->queue[i]);
	free(c->queue);
	c->queue = NULL;
	c->nqueue = c->qnext = 0;
	c->evicting = false;
	c->nospace = false;
	s3d_dbg("mount %u: eviction pass done, %llu bytes freed, %llu in use",
		c->mount_id, (unsigned long long)c->pass_freed,
		(unsigned long long)c->used);
	/*
	 * Fetches that ended during the pass were not counted in its choice;
	 * once the reads stop no other check would come, so look again.
	 */
	if (c->again) {
		c->again = false;
		s3d_timer_arm(&c->recheck, 0);
	}
}

static void evict_next(struct s3d_cache *c);

static void evict_done(void *arg, int err)
{
	struct s3d_cache *c = arg;
	const char *path = c->queue[c->qnext - 1];
	uint64_t before = c->used;
	struct cfile **pp;

	s3d_timer_cancel(&c->ack);
	if (c->dead) {
		cache_put(c);
		return;
	}
	cache_put(c);	/* the mount still holds one */
	if (!err) {
		restat(c, path, false);
		s3d_evict_stats.evictions++;
		s3d_evict_stats.bytes += before - S3D_MIN(before, c->used);
		c->pass_freed += before - S3D_MIN(before, c->used);
		s3d_dbg("mount %u: evicted %s", c->mount_id, path);
	} else if (err == -EBUSY) {
		s3d_evict_stats.busy++;
		pp = slot_of(c, path);
		if (*pp)
			(*pp)->busy_ms = s3d_now_ms();
		s3d_dbg("mount %u: %s is being fetched; not evicted", c->mount_id,
			path);
	} else if (err == -ENOENT) {
		account(c, path, NULL, false);
	} else if (err == -ETIMEDOUT || err == -ENOBUFS) {
		/* The ack is lost: the file itself tells what happened. */
		if (err == -ETIMEDOUT)
			s3d_evict_stats.timeouts++;
		else
			s3d_evict_stats.lost++;
		restat(c, path, false);
		c->pass_freed += before - S3D_MIN(before, c->used);
		s3d_warn("mount %u: EVICT %s: %s; going on", c->mount_id, path,
			 err == -ETIMEDOUT ? "no answer from the kernel" :
			 "the answer was lost (netlink receive queue full)");
	} else {
		s3d_evict_stats.failures++;
		s3d_warn("mount %u: EVICT %s: %s", c->mount_id, path,
			 strerror(-err));
	}
	evict_next(c);
}

/* An EVICT's ack did not come in time: stop waiting for it. */
static void ack_timeout(struct s3d_timer *t)
{
	struct s3d_cache *c = s3d_container_of(t, struct s3d_cache, ack);

	if (!s3d_evict_cancel || s3d_evict_cancel(evict_done, c))
		evict_done(c, -ETIMEDOUT);
}

static void evict_next(struct s3d_cache *c)
{
	struct cfile **pp;
	int err;

	while (c->qnext < c->nqueue && need_now(c, 0, false)) {
		const char *path = c->queue[c->qnext++];

		pp = slot_of(c, path);
		if (!*pp)
			continue;
		restat(c, path, false);
		pp = slot_of(c, path);
		if (!*pp || !(*pp)->f.bytes)
			continue;
		c->refs++;
		err = s3d_evict_send ? s3d_evict_send(c->mount_id, path,
						      (*pp)->f.size,
						      evict_done, c) :
				       -EOPNOTSUPP;
		if (!err) {
			/* evict_done() goes on, or the timeout does */
			s3d_timer_arm(&c->ack, s3d_evict_timeout_ms);
			return;
		}
		c->refs--;
		s3d_warn("mount %u: sending EVICT %s: %s", c->mount_id, path,
			 strerror(-err));
		break;
	}
	pass_end(c);
}

/* The files are chosen: evict them in order. */
static void choose_end(struct s3d_cache *c)
{
	size_t i, k = s3d_evict_sel_finish(&c->sel);

	c->choosing = false;
	c->queue = calloc(k ?: 1, sizeof(*c->queue));
	if (!c->queue) {
		s3d_evict_sel_free(&c->sel);
		pass_end(c);
		return;
	}
	/* The paths change hands. */
	for (i = 0; i < k; i++) {
		c->queue[i] = c->sel.v[i].f.path;
		c->sel.v[i].f.path = NULL;
	}
	c->nqueue = k;
	c->qnext = 0;
	s3d_evict_sel_free(&c->sel);
	s3d_info("mount %u: %llu bytes cached (limit %llu%s%s): evicting up to %zu files",
		 c->mount_id, (unsigned long long)c->used,
		 (unsigned long long)c->pol.limit,
		 c->nospace ? "; the device is full" : "",
		 c->short_inodes ? "; free inodes under the floor" : "",
		 c->nqueue);
	evict_next(c);
}

/*
 * One slice of choosing: stat the files of the next buckets again (their
 * atime is the kernel's record of use) and offer them to the selection,
 * for SLICE_MS at most; then the loop runs again and a timer goes on.
 */
static void choose_slice(struct s3d_cache *c)
{
	uint64_t t0 = s3d_now_ms(), now = t0;
	size_t seen = 0;
	struct s3d_evict_file ef;
	struct cfile **pp, *f;
	struct stat st;

	if (c->cursor_nbuckets != c->nbuckets) {
		/* The table grew: its buckets moved; start over. */
		uint64_t need = c->sel.need;

		s3d_evict_sel_free(&c->sel);
		s3d_evict_sel_init(&c->sel, need);
		c->cursor = 0;
		c->cursor_nbuckets = c->nbuckets;
	}
	while (c->cursor < c->nbuckets) {
		pp = &c->tab[c->cursor++];
		while ((f = *pp)) {
			if (fstatat(c->rootfd, f->f.path, &st,
				    AT_SYMLINK_NOFOLLOW) ||
			    !S_ISREG(st.st_mode)) {
				drop_file(c, pp);
				continue;
			}
			set_stat(c, f, &st, false);
			ef = f->f;
			ef.busy = f->busy_ms && now - f->busy_ms < BUSY_SKIP_MS;
			if (s3d_evict_sel_add(&c->sel, &ef, 0))
				c->cursor = c->nbuckets;	/* ENOMEM: go with it */
			pp = &f->hnext;
			seen++;
		}
		if (seen >= SLICE_FILES || (now = s3d_now_ms()) - t0 >= SLICE_MS)
			break;
	}
	s3d_evict_stats.slices++;
	s3d_evict_stats.slice_ms_max = S3D_MAX(s3d_evict_stats.slice_ms_max,
					       s3d_now_ms() - t0);
	if (c->cursor < c->nbuckets) {
		s3d_timer_arm(&c->slice, 1);
		return;
	}
	choose_end(c);
}

static void slice_timer(struct s3d_timer *t)
{
	choose_slice(s3d_container_of(t, struct s3d_cache, slice));
}

static void recheck_timer(struct s3d_timer *t)
{
	check(s3d_container_of(t, struct s3d_cache, recheck), 0);
}

/* Start a pass if over the limit (@extra: bytes about to be written). */
static void check(struct s3d_cache *c, uint64_t extra)
{
	uint64_t need;

	if (c->evicting) {
		c->again = true;
		return;
	}
	/* Before the scan ends, usage is too low and the LRU order partial. */
	if (c->dead || c->walk)
		return;
	need = need_now(c, extra, true);
	if (!need || !c->nfiles)
		return;
	s3d_evict_stats.passes++;
	if (c->short_inodes)
		c->inode_pass_ms = s3d_now_ms();
	c->evicting = true;
	c->choosing = true;
	c->pass_freed = 0;
	/* Ask for more than needed: some may turn out busy. */
	s3d_evict_sel_init(&c->sel, need + need / 2);
	c->cursor = 0;
	c->cursor_nbuckets = c->nbuckets;
	choose_slice(c);
}

/**
 * s3d_cache_scanning() - is the usage scan after MOUNT still running?
 * @c: the mount's cache
 *
 * Return: true until the scan has counted every file (no pass runs before).
 */
bool s3d_cache_scanning(const struct s3d_cache *c)
{
	return c->walk != NULL;
}

/**
 * s3d_cache_open() - start tracking a mount's cache
 * @mount_id: the mount
 * @rootfd: its cache root (duplicated)
 * @pol: its limits
 *
 * Return: the tracker, or NULL (logged; the mount then runs without).
 */
struct s3d_cache *s3d_cache_open(uint32_t mount_id, int rootfd,
				 const struct s3d_cache_policy *pol)
{
	struct s3d_cache *c = calloc(1, sizeof(*c));
	int err;

	if (!c)
		return NULL;
	c->refs = 1;
	s3d_list_init(&c->all);
	c->slice.fn = slice_timer;
	c->ack.fn = ack_timeout;
	c->recheck.fn = recheck_timer;
	c->mount_id = mount_id;
	c->pol = *pol;
	c->rootfd = fcntl(rootfd, F_DUPFD_CLOEXEC, 0);
	err = c->rootfd < 0 ? -errno : grow(c);
	if (!err) {
		c->walk = s3d_walk_start(c->rootfd, scan_file, scan_done, c);
		err = c->walk ? 0 : -errno;
	}
	if (err) {
		s3d_err("mount %u: scanning the cache: %s", mount_id,
			strerror(-err));
		cache_put(c);
		return NULL;
	}
	s3d_list_add_tail(&c->all, &caches);
	return c;
}

void s3d_cache_close(struct s3d_cache *c)
{
	if (!c)
		return;
	s3d_list_del(&c->all);
	s3d_walk_cancel(c->walk);
	c->walk = NULL;
	c->dead = true;
	/* A pass still choosing ends here; an EVICT in flight holds @c. */
	s3d_timer_cancel(&c->slice);
	s3d_timer_cancel(&c->recheck);
	cache_put(c);
}

/**
 * s3d_cache_nospace() - a write of fetched data found the device full
 * @c: the mount's tracker
 * @len: bytes the write wanted
 *
 * ENOSPC or EDQUOT: a pass starts at once, whatever the limits say.
 */
void s3d_cache_nospace(struct s3d_cache *c, uint64_t len)
{
	if (!c)
		return;
	s3d_evict_stats.nospace++;
	c->nospace = true;
	s3d_warn("mount %u: the cache device is full: evicting", c->mount_id);
	check(c, len);
}

/* Every pass may have lost its EVICT's ack: look at every mount again. */
void s3d_cache_recheck_all(void)
{
	struct s3d_list *pos;

	for (pos = caches.next; pos != &caches; pos = pos->next)
		check(s3d_container_of(pos, struct s3d_cache, all), 0);
}

/* A FETCH of @len bytes of @path starts. */
void s3d_cache_fetching(struct s3d_cache *c, uint64_t len)
{
	if (c)
		check(c, len);
}

/* A FETCH of @path ended (successfully or not). */
void s3d_cache_fetched(struct s3d_cache *c, const char *path)
{
	if (!c)
		return;
	restat(c, path, true);
	check(c, 0);
}

void s3d_cache_usage(const struct s3d_cache *c, uint64_t *used,
		     uint64_t *limit)
{
	*used = c ? c->used : 0;
	*limit = c ? c->pol.limit : 0;
}

/* Call @fn for each live mount's tracker, oldest mount first. */
void s3d_cache_foreach(void (*fn)(void *arg, uint32_t mount_id,
				  const struct s3d_cache *c), void *arg)
{
	struct s3d_list *pos;

	for (pos = caches.next; pos != &caches; pos = pos->next)
		fn(arg, s3d_container_of(pos, struct s3d_cache, all)->mount_id,
		   s3d_container_of(pos, struct s3d_cache, all));
}
