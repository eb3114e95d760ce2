// SPDX-License-Identifier: GPL-2.0
/*
 * Cache usage and eviction, per mount.
 *
 * Each mount has a cache limit (bytes of allocated blocks under its cache
 * directory; 0: none) and may have a free-space floor for the device its
 * cache lives on (bytes or a percentage). Usage is the sum of st_blocks of
 * the regular files under the cache root: scanned after MOUNT, from the
 * loop a slice at a time (walk.c; no eviction pass starts before the scan
 * is complete), updated from a fresh stat after every FETCH and every
 * eviction.
 *
 * When a mount is over its limit (or the device under its floor) the
 * daemon evicts that mount's least recently used files until usage is back
 * under the low-water mark (95% of the limit) and the floor is respected.
 * The LRU clock is the lower file's atime (the kernel sets it on open, at
 * most once a minute); ties go to the file fetched longest ago. The daemon
 * never punches holes itself: it sends S3CFS_CMD_EVICT for the whole file
 * and the kernel punches it, or answers -EBUSY when a fetch is in flight
 * in the file (then the file is skipped this pass). One EVICT is in flight
 * per mount at a time; the acks come back through the event loop.
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

#include "s3cachefsd.h"
#include "walk.h"

struct s3d_cache_policy s3d_cache_default;
const struct s3d_cache_policy *(*s3d_cache_policy_hook)(const char *bucket);
struct s3d_evict_stats s3d_evict_stats;

/* Every live mount's tracker, for s3d_cache_foreach() (metrics). */
static struct s3d_list caches = { &caches, &caches };

/* Evict down to this share of the limit, so one eviction is not followed
 * by another at the very next fetch. */
#define LOW_WATER(limit)	((limit) - (limit) / 20)

struct cfile {
	struct cfile *hnext;
	struct s3d_evict_file f;
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

static int lru_cmp(const void *a, const void *b)
{
	const struct s3d_evict_file *x = *(const struct s3d_evict_file * const *)a;
	const struct s3d_evict_file *y = *(const struct s3d_evict_file * const *)b;

	if (x->atime_ns != y->atime_ns)
		return x->atime_ns < y->atime_ns ? -1 : 1;
	if (x->fetched_ms != y->fetched_ms)
		return x->fetched_ms < y->fetched_ms ? -1 : 1;
	return strcmp(x->path, y->path);	/* stable, for tests */
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
	const struct s3d_evict_file **v;
	uint64_t got = 0;
	size_t i, k = 0;

	if (!n || !need)
		return 0;
	v = malloc(n * sizeof(*v));
	if (!v)
		return 0;
	for (i = 0; i < n; i++)
		v[i] = &files[i];
	qsort(v, n, sizeof(*v), lru_cmp);
	for (i = 0; i < n && got < need; i++) {
		if (!v[i]->bytes || v[i]->busy)
			continue;
		out[k++] = (size_t)(v[i] - files);
		got += v[i]->bytes;
	}
	free(v);
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

/* ---- the file table ---- */

static size_t hash_path(const char *s)
{
	size_t h = 1469598103934665603ULL;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
	return h;
}

static struct cfile **slot_of(struct s3d_cache *c, const char *path)
{
	struct cfile **pp = &c->tab[hash_path(path) % c->nbuckets];

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
			size_t b = hash_path(f->f.path) % n;

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
	c->used -= S3D_MIN(c->used, f->f.bytes);
	f->f.bytes = (uint64_t)st->st_blocks * 512;
	f->f.size = (uint64_t)st->st_size;
	f->f.atime_ns = (int64_t)st->st_atim.tv_sec * 1000000000 +
			st->st_atim.tv_nsec;
	if (fetched)
		f->f.fetched_ms = s3d_now_ms();
	c->used += f->f.bytes;
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
	uint64_t avail = UINT64_MAX, total = 0;

	if ((c->pol.min_free || c->pol.min_free_pct) &&
	    fstatvfs(c->rootfd, &sv) == 0) {
		avail = (uint64_t)sv.f_bavail * sv.f_frsize;
		total = (uint64_t)sv.f_blocks * sv.f_frsize;
		avail -= S3D_MIN(avail, extra);
	}
	return s3d_evict_need(&c->pol, c->used + extra, avail, total, start);
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
	s3d_dbg("mount %u: eviction pass done, %llu bytes freed, %llu in use",
		c->mount_id, (unsigned long long)c->pass_freed,
		(unsigned long long)c->used);
}

static void evict_next(struct s3d_cache *c);

static void evict_done(void *arg, int err)
{
	struct s3d_cache *c = arg;
	const char *path = c->queue[c->qnext - 1];
	uint64_t before = c->used;

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
		s3d_dbg("mount %u: %s is being fetched; not evicted", c->mount_id,
			path);
	} else if (err == -ENOENT) {
		account(c, path, NULL, false);
	} else {
		s3d_evict_stats.failures++;
		s3d_warn("mount %u: EVICT %s: %s", c->mount_id, path,
			 strerror(-err));
	}
	evict_next(c);
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
		err = s3d_nl_evict(c->mount_id, path, (*pp)->f.size, evict_done,
				   c);
		if (!err)
			return;		/* evict_done() goes on */
		c->refs--;
		s3d_warn("mount %u: sending EVICT %s: %s", c->mount_id, path,
			 strerror(-err));
		break;
	}
	pass_end(c);
}

/* Start a pass if over the limit (@extra: bytes about to be written). */
static void check(struct s3d_cache *c, uint64_t extra)
{
	struct s3d_evict_file *files;
	struct cfile *f;
	size_t i, j = 0, k, *idx;
	uint64_t need;

	/* Before the scan ends, usage is too low and the LRU order partial. */
	if (c->evicting || c->dead || c->walk)
		return;
	need = need_now(c, extra, true);
	if (!need || !c->nfiles)
		return;
	files = calloc(c->nfiles, sizeof(*files));
	idx = calloc(c->nfiles, sizeof(*idx));
	if (!files || !idx)
		goto out;
	for (i = 0; i < c->nbuckets; i++)
		for (f = c->tab[i]; f; f = f->hnext)
			files[j++] = f->f;
	/* Ask for more than needed: some may turn out busy. */
	k = s3d_evict_choose(files, j, need + need / 2, idx);
	c->queue = calloc(k ?: 1, sizeof(*c->queue));
	if (!c->queue)
		goto out;
	for (i = 0; i < k; i++) {
		c->queue[i] = strdup(files[idx[i]].path);
		if (!c->queue[i])
			break;
	}
	c->nqueue = i;
	c->qnext = 0;
	c->pass_freed = 0;
	c->evicting = true;
	s3d_info("mount %u: %llu bytes cached (limit %llu): evicting up to %zu files",
		 c->mount_id, (unsigned long long)c->used,
		 (unsigned long long)c->pol.limit, c->nqueue);
	evict_next(c);
out:
	free(files);
	free(idx);
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
	cache_put(c);
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
