// SPDX-License-Identifier: GPL-2.0
/*
 * s3cachefs: which chunks of a file are in the cache, and getting the
 * missing ones from the daemon.
 *
 * The lower filesystem's extent map is the durable record: a chunk is
 * present iff its whole range (clamped to the object's size, which is not
 * the lower i_size: see s3cfs_lower_size()) is data, which the daemon
 * guarantees by writing whole chunks with O_DIRECT. We scan it once
 * per inode with SEEK_DATA/SEEK_HOLE into a bitmap and keep the bitmap up to
 * date as fetches complete. Concurrent readers of a missing chunk share one
 * FETCH: in-flight fetches sit on the inode's list and a reader that needs
 * a chunk covered by one waits on it instead of sending another.
 */
#include "s3cachefs.h"
#include <linux/slab.h>
#include <linux/bitmap.h>
#include <linux/namei.h>
#include <linux/dcache.h>

/*
 * Longest run of chunks in one FETCH (one ranged GET). A readahead window
 * up to this size is one GET, whose chunks land in order (the daemon
 * reports each as it is written), the order a sequential reader wants
 * them; a bigger window (readahead=) is split into runs of this size,
 * fetched in parallel: on S3 a GET this long is no longer dominated by its
 * first-byte latency, and parallel GETs add bandwidth.
 */
#define S3CFS_RUN_MAX		(8ULL << 20)

static u64 s3cfs_size_to_chunks(const struct s3cfs_sb_info *sbi, loff_t size)
{
	return size > 0 ? ((u64)(size - 1) >> sbi->chunk_shift) + 1 : 0;
}

/*
 * Set the bits of the chunks wholly covered by data in [start, end) of
 * @lower, which caches an object of @size bytes (@nr chunks). @lock (if
 * not NULL) is taken around each bitmap update.
 */
static int s3cfs_scan_extents(struct s3cfs_sb_info *sbi, struct file *lower,
			      loff_t size, loff_t start, loff_t end,
			      unsigned long *bits, u64 nr, spinlock_t *lock)
{
	loff_t mask = sbi->opts.chunk_size - 1;
	loff_t pos = start, data, hole;
	u64 first, last;

	end = min(end, size);
	while (pos < end) {
		/* A fragmented file of millions of extents: be fair. */
		cond_resched();
		data = vfs_llseek(lower, pos, SEEK_DATA);
		if (data == -ENXIO || (data >= 0 && data >= end))
			break;
		if (data < 0)
			return data;
		hole = vfs_llseek(lower, data, SEEK_HOLE);
		if (hole < 0)
			return hole;
		first = (u64)(data + mask) >> sbi->chunk_shift;
		last = hole >= size ? nr : (u64)hole >> sbi->chunk_shift;
		if (last > nr)
			last = nr;
		if (last > first) {
			if (lock)
				spin_lock(lock);
			bitmap_set(bits, first, last - first);
			if (lock)
				spin_unlock(lock);
		}
		if (hole <= pos)
			break;
		pos = hole;
	}
	return 0;
}

/*
 * The presence bitmap of the whole of @lower, from its extent map: its
 * number of bits in *@nr. Return: the bitmap, or an ERR_PTR (-EFBIG: more
 * than S3CFS_CHUNKS_MAX chunks).
 */
static unsigned long *s3cfs_scan_file(struct s3cfs_sb_info *sbi,
				      struct file *lower, u64 *nr)
{
	loff_t size = s3cfs_lower_size(lower->f_path.dentry);
	unsigned long *bits;
	int err;

	*nr = s3cfs_size_to_chunks(sbi, size);
	if (*nr > S3CFS_CHUNKS_MAX) {
		pr_warn_ratelimited("%pd: %lld bytes is %llu chunks of %u KiB, more than the %llu a file may have\n",
				    lower->f_path.dentry, size, *nr,
				    sbi->opts.chunk_size >> 10,
				    S3CFS_CHUNKS_MAX);
		return ERR_PTR(-EFBIG);
	}
	bits = kvcalloc(BITS_TO_LONGS(max_t(u64, *nr, 1)), sizeof(long),
			GFP_KERNEL);
	if (!bits)
		return ERR_PTR(-ENOMEM);
	err = s3cfs_scan_extents(sbi, lower, size, 0, size, bits, *nr, NULL);
	if (err) {
		kvfree(bits);
		return ERR_PTR(err);
	}
	return bits;
}

/**
 * s3cfs_chunks_load() - build the presence bitmap of a file, if not built
 * @inode: upper inode of a regular file that has been opened
 *
 * Return: 0 or a negative errno.
 */
int s3cfs_chunks_load(struct inode *inode)
{
	struct s3cfs_sb_info *sbi = S3CFS_SB(inode->i_sb);
	struct s3cfs_inode_info *si = S3CFS_I(inode);
	unsigned long *bits = NULL;
	u64 nr;
	int err;

	spin_lock(&si->chunk_lock);
	err = si->present ? 1 : 0;
	spin_unlock(&si->chunk_lock);
	if (err)
		return 0;

	down_read(&si->data_sem);
	err = -EIO;
	if (!si->lower_file)
		goto out;
	bits = s3cfs_scan_file(sbi, si->lower_file, &nr);
	if (IS_ERR(bits)) {
		err = PTR_ERR(bits);
		bits = NULL;
		goto out;
	}
	err = 0;
	spin_lock(&si->chunk_lock);
	if (!si->present) {
		si->present = bits;
		si->nr_chunks = nr;
		bits = NULL;
	}
	spin_unlock(&si->chunk_lock);
out:
	up_read(&si->data_sem);
	kvfree(bits);
	return err;
}

/**
 * s3cfs_chunks_free() - drop the presence bitmap (inode eviction)
 * @si: the inode
 */
void s3cfs_chunks_free(struct s3cfs_inode_info *si)
{
	kvfree(si->present);
	si->present = NULL;
	si->nr_chunks = 0;
}

static bool s3cfs_range_present(struct s3cfs_inode_info *si, u64 c0, u64 c1)
{
	if (!si->present || c1 > si->nr_chunks)
		return false;
	return find_next_zero_bit(si->present, c1, c0) >= c1;
}

/**
 * s3cfs_chunks_present() - are all chunks of a byte range present?
 * @inode: upper inode
 * @pos: start of the range
 * @len: length of the range
 *
 * Call with data_sem held so that the answer stays true while reading.
 *
 * Return: true if every chunk overlapping [pos, pos + len) below EOF is
 * present in the lower file.
 */
bool s3cfs_chunks_present(struct inode *inode, loff_t pos, size_t len)
{
	struct s3cfs_sb_info *sbi = S3CFS_SB(inode->i_sb);
	struct s3cfs_inode_info *si = S3CFS_I(inode);
	loff_t end = min_t(loff_t, pos + len, i_size_read(inode));
	bool ret;

	if (pos >= end)
		return true;
	spin_lock(&si->chunk_lock);
	ret = s3cfs_range_present(si, pos >> sbi->chunk_shift,
				  ((u64)(end - 1) >> sbi->chunk_shift) + 1);
	spin_unlock(&si->chunk_lock);
	return ret;
}

/**
 * s3cfs_chunks_fetched() - the daemon says a FETCH is done: check it
 * @req: the FETCH request
 *
 * Trust, but verify: the chunks count as present only if the lower extent
 * map shows them as data, and only if the file still holds the object
 * version the request was for.
 *
 * Return: 0, -ECANCELED if the inode moved to another object version
 * meanwhile (the reader retries), or -EIO if the daemon claimed a fetch it
 * did not write.
 */
int s3cfs_chunks_fetched(struct s3cfs_req *req)
{
	struct s3cfs_sb_info *sbi = req->sbi;
	struct s3cfs_inode_info *si = S3CFS_I(req->inode);
	u64 c1 = req->first_chunk + req->nr_chunks;
	int err;

	down_read(&si->data_sem);
	err = -ECANCELED;
	if (!si->lower_file || strcmp(req->etag, si->etag))
		goto out;
	spin_lock(&si->chunk_lock);
	err = si->present && c1 <= si->nr_chunks ? 0 : -ECANCELED;
	spin_unlock(&si->chunk_lock);
	if (err)
		goto out;
	err = s3cfs_scan_extents(sbi, si->lower_file,
				 i_size_read(req->inode), req->offset,
				 req->offset + req->length, si->present,
				 si->nr_chunks, &si->chunk_lock);
	if (err)
		goto out;
	spin_lock(&si->chunk_lock);
	if (!s3cfs_range_present(si, req->first_chunk, c1))
		err = -EIO;
	spin_unlock(&si->chunk_lock);
	if (err)
		pr_warn_ratelimited("daemon reported %s [%llu, +%llu) fetched but it is not in the cache\n",
				    req->path, req->offset, req->length);
out:
	up_read(&si->data_sem);
	return err;
}

/**
 * s3cfs_chunks_landed() - a FETCH progress report: some chunks are written
 * @req: the FETCH request, still pending
 * @done: the first @done bytes of its range are in the cache, says the daemon
 *
 * Counts the chunks of [offset, offset + @done) present as soon as the
 * lower extent map shows them, so that a reader waiting for the first
 * chunk of a long FETCH does not wait for the last. Not verified here
 * beyond the extent map: the final answer checks the whole range.
 */
void s3cfs_chunks_landed(struct s3cfs_req *req, u64 done)
{
	struct s3cfs_inode_info *si = S3CFS_I(req->inode);
	u64 c1 = req->first_chunk + req->nr_chunks;
	bool ok;

	down_read(&si->data_sem);
	if (si->lower_file && !strcmp(req->etag, si->etag)) {
		spin_lock(&si->chunk_lock);
		ok = si->present && c1 <= si->nr_chunks;
		spin_unlock(&si->chunk_lock);
		if (ok)
			s3cfs_scan_extents(req->sbi, si->lower_file,
					   i_size_read(req->inode),
					   req->offset, req->offset + done,
					   si->present, si->nr_chunks,
					   &si->chunk_lock);
	}
	up_read(&si->data_sem);
	wake_up_all(&req->wait);
}

/*
 * s3cfs_req_wait() condition of a reader waiting for chunk *@arg: it has
 * landed, or the bitmap it was missing from is gone (look again).
 */
static bool s3cfs_chunk_ready(struct s3cfs_req *req, void *arg)
{
	struct s3cfs_inode_info *si = S3CFS_I(req->inode);
	u64 c = *(u64 *)arg;
	bool ret;

	spin_lock(&si->chunk_lock);
	ret = !si->present || c >= si->nr_chunks || test_bit(c, si->present);
	spin_unlock(&si->chunk_lock);
	return ret;
}

/* The in-flight FETCH covering chunk @c, if any. */
static struct s3cfs_req *s3cfs_fetch_find(struct s3cfs_inode_info *si, u64 c)
	__must_hold(&si->chunk_lock)
{
	struct s3cfs_req *req;

	list_for_each_entry(req, &si->fetches, inode_link)
		if (c >= req->first_chunk &&
		    c < req->first_chunk + req->nr_chunks)
			return req;
	return NULL;
}

/* End of the run of missing, not in-flight chunks starting at @c. */
static u64 s3cfs_run_end(struct s3cfs_sb_info *sbi,
			 struct s3cfs_inode_info *si, u64 c, u64 limit)
	__must_hold(&si->chunk_lock)
{
	u64 cap = max_t(u64, S3CFS_RUN_MAX >> sbi->chunk_shift, 1);
	u64 e = c + 1;

	limit = min(limit, si->nr_chunks);
	while (e < limit && e - c < cap && !test_bit(e, si->present) &&
	       !s3cfs_fetch_find(si, e))
		e++;
	return e;
}

/* A FETCH request for @inode, not yet armed with a range. */
static struct s3cfs_req *s3cfs_fetch_prepare(struct inode *inode)
{
	struct s3cfs_inode_info *si = S3CFS_I(inode);
	struct s3cfs_req *req;
	struct dentry *dentry;
	char *buf, *path, etag[S3CFS_ETAG_MAX + 1];
	int err;

	req = s3cfs_req_alloc(S3CFS_SB(inode->i_sb), S3CFS_CMD_FETCH);
	if (!req)
		return ERR_PTR(-ENOMEM);
	dentry = d_find_alias(inode);
	err = -ESTALE;
	if (!dentry)
		goto fail;
	err = s3cfs_inode_path(dentry, &buf, &path);
	dput(dentry);
	if (err)
		goto fail;
	req->path = kstrdup(path, GFP_KERNEL);
	__putname(buf);
	/*
	 * Under chunk_lock, not data_sem: this runs in ->readahead, under our
	 * invalidate_lock, and data_sem is held around lower SEEK_DATA.
	 */
	spin_lock(&si->chunk_lock);
	strscpy(etag, si->etag, sizeof(etag));
	spin_unlock(&si->chunk_lock);
	req->etag = kstrdup(etag, GFP_KERNEL);
	err = -ENOMEM;
	if (!req->path || !req->etag)
		goto fail;
	ihold(inode);
	req->inode = inode;
	return req;
fail:
	s3cfs_req_put(req);
	return ERR_PTR(err);
}

static void s3cfs_fetch_arm(struct s3cfs_sb_info *sbi,
			    struct s3cfs_inode_info *si, struct s3cfs_req *req,
			    u64 first, u64 n)
	__must_hold(&si->chunk_lock)
{
	req->first_chunk = first;
	req->nr_chunks = n;
	req->offset = first << sbi->chunk_shift;
	req->length = n << sbi->chunk_shift;
	list_add_tail(&req->inode_link, &si->fetches);
}

static int s3cfs_fetch_submit(struct s3cfs_req *req)
{
	struct s3cfs_sb_info *sbi = req->sbi;
	int err;

	atomic64_inc(&sbi->stats.fetches);
	err = s3cfs_req_submit(req);
	if (err)
		s3cfs_req_complete(req, err);
	return err;
}

/**
 * s3cfs_chunks_prefetch() - start fetching what is missing, without waiting
 * @inode: upper inode of an open regular file
 * @pos: start of the range
 * @len: length of the range
 *
 * Sends one FETCH per run of missing chunks that no one is fetching yet,
 * so that all the runs of a readahead window are in flight together.
 */
void s3cfs_chunks_prefetch(struct inode *inode, loff_t pos, u64 len)
{
	struct s3cfs_sb_info *sbi = S3CFS_SB(inode->i_sb);
	struct s3cfs_inode_info *si = S3CFS_I(inode);
	loff_t end = min_t(loff_t, pos + len, i_size_read(inode));
	struct s3cfs_req *req = NULL;
	u64 c, limit, e;

	if (pos >= end || !s3cfs_daemon_present() || s3cfs_chunks_load(inode))
		return;
	c = pos >> sbi->chunk_shift;
	limit = ((u64)(end - 1) >> sbi->chunk_shift) + 1;
	while (c < limit) {
		spin_lock(&si->chunk_lock);
		if (!si->present || c >= si->nr_chunks) {
			spin_unlock(&si->chunk_lock);
			break;
		}
		c = find_next_zero_bit(si->present, min(limit, si->nr_chunks), c);
		if (c >= min(limit, si->nr_chunks)) {
			spin_unlock(&si->chunk_lock);
			break;
		}
		if (s3cfs_fetch_find(si, c)) {
			spin_unlock(&si->chunk_lock);
			c++;
			continue;
		}
		/*
		 * A request (path, ETag, allocations) only once a chunk is
		 * missing: a warm 4 KiB random read comes here for every
		 * page and finds everything present.
		 */
		if (!req) {
			spin_unlock(&si->chunk_lock);
			req = s3cfs_fetch_prepare(inode);
			if (IS_ERR(req))
				return;
			continue;	/* look again: it may have landed */
		}
		e = s3cfs_run_end(sbi, si, c, limit);
		s3cfs_fetch_arm(sbi, si, req, c, e - c);
		spin_unlock(&si->chunk_lock);
		s3cfs_fetch_submit(req);
		s3cfs_req_put(req);
		req = NULL;
		c = e;
	}
	if (req)
		s3cfs_req_put(req);
}

/**
 * s3cfs_chunks_segment() - end of the uniform stretch starting at @pos
 * @inode: upper inode
 * @pos: start
 * @end: end of the range of interest
 *
 * Return: the first byte offset after @pos, at most @end, where chunk
 * presence changes (present chunks followed by a missing one or the other
 * way round), so a reader can finish the present part without waiting for
 * the missing part.
 */
loff_t s3cfs_chunks_segment(struct inode *inode, loff_t pos, loff_t end)
{
	struct s3cfs_sb_info *sbi = S3CFS_SB(inode->i_sb);
	struct s3cfs_inode_info *si = S3CFS_I(inode);
	u64 c = pos >> sbi->chunk_shift, n;
	loff_t seg = end;

	spin_lock(&si->chunk_lock);
	if (si->present && c < si->nr_chunks) {
		if (test_bit(c, si->present))
			n = find_next_zero_bit(si->present, si->nr_chunks, c);
		else
			n = find_next_bit(si->present, si->nr_chunks, c);
		if (n < si->nr_chunks && (loff_t)(n << sbi->chunk_shift) < end)
			seg = n << sbi->chunk_shift;
	}
	spin_unlock(&si->chunk_lock);
	return seg;
}

/**
 * s3cfs_chunks_ensure() - make every chunk of a byte range present
 * @inode: upper inode of an open regular file
 * @pos: start of the range
 * @len: length of the range
 * @may_refresh: we hold none of the VFS's locks of @inode: when the object
 *	changed in S3, rebind to the new lower file and go on; else (under
 *	invalidate_lock) only mark the inode (@refresh_pending) and fail
 *	with -ESTALE, for ->read_iter to rebind and retry
 *
 * Sends one FETCH per run of adjacent missing chunks that no other reader
 * is fetching already, and waits (killable, at most the fetch timeout) for
 * all the chunks of the range, each as soon as it lands (a progress report
 * of its FETCH or the answer). Does not hold data_sem while waiting.
 *
 * Return: the number of missing chunks this reader waited for (0: all present),
 * or -EIO (timeout or daemon error), -EINTR, -ESTALE, -ENOMEM.
 */
int s3cfs_chunks_ensure(struct inode *inode, loff_t pos, size_t len,
			bool may_refresh)
{
	struct s3cfs_sb_info *sbi = S3CFS_SB(inode->i_sb);
	struct s3cfs_inode_info *si = S3CFS_I(inode);
	unsigned long timeout =
		msecs_to_jiffies(READ_ONCE(sbi->opts.fetch_timeout_ms));
	unsigned long deadline = jiffies + timeout;
	struct s3cfs_req *new = NULL, *req;
	int err, missed = 0, stale = 0, gen;
	u64 c0, c1, c, lim;
	bool created;
	loff_t end;

again:
	gen = atomic_read(&si->gen);
	err = s3cfs_chunks_load(inode);
	if (err)
		goto out;
	end = min_t(loff_t, pos + len, i_size_read(inode));
	if (pos >= end)
		goto out;
	c0 = pos >> sbi->chunk_shift;
	c1 = ((u64)(end - 1) >> sbi->chunk_shift) + 1;
	for (;;) {
		created = false;
		spin_lock(&si->chunk_lock);
		if (!si->present) {
			/* Dropped by a refresh: rescan the new lower file. */
			spin_unlock(&si->chunk_lock);
			goto again;
		}
		lim = min(c1, si->nr_chunks);
		c = find_next_zero_bit(si->present, lim, c0);
		if (c >= lim) {
			spin_unlock(&si->chunk_lock);
			break;
		}
		/*
		 * The VFS retries a failed readahead page by page: a chunk
		 * whose fetch just timed out fails at once for a second, so
		 * that one read() does not wait out the timeout twice.
		 */
		if (c == si->failed_chunk && si->failed_at &&
		    time_before(jiffies, si->failed_at + HZ)) {
			spin_unlock(&si->chunk_lock);
			err = -EIO;
			goto out;
		}
		req = s3cfs_fetch_find(si, c);
		if (req) {
			refcount_inc(&req->ref);
		} else {
			if (!new) {
				spin_unlock(&si->chunk_lock);
				new = s3cfs_fetch_prepare(inode);
				if (IS_ERR(new)) {
					err = PTR_ERR(new);
					new = NULL;
					goto out;
				}
				continue;
			}
			s3cfs_fetch_arm(sbi, si, new,
					c, s3cfs_run_end(sbi, si, c, lim) - c);
			req = new;
			new = NULL;
			created = true;
		}
		atomic_inc(&req->waiters);
		spin_unlock(&si->chunk_lock);

		/* One miss per chunk this reader found missing and waited for. */
		missed++;
		atomic64_inc(&sbi->stats.chunk_misses);
		if (created)
			s3cfs_fetch_submit(req);
		err = s3cfs_req_wait(req, deadline, timeout,
				     s3cfs_chunk_ready, &c);
		s3cfs_req_put(req);
		if (!err)
			continue;
		if (err == -ECANCELED && time_before(jiffies, deadline))
			continue;
		if (err == -ESTALE && !may_refresh) {
			WRITE_ONCE(si->refresh_pending, true);
			goto out;
		}
		if (err == -ESTALE && stale++ < 3) {
			err = s3cfs_inode_refresh(inode, gen);
			if (err)
				goto out;
			goto again;
		}
		if (err == -ETIMEDOUT || err == -ECANCELED) {
			spin_lock(&si->chunk_lock);
			si->failed_chunk = c;
			si->failed_at = jiffies ? : 1;
			spin_unlock(&si->chunk_lock);
			pr_warn_ratelimited("fetch of %pd timed out after %u ms\n",
					    READ_ONCE(si->lower.dentry),
					    READ_ONCE(sbi->opts.fetch_timeout_ms));
			err = -EIO;
		}
		goto out;
	}
	err = missed;
out:
	if (new)
		s3cfs_req_put(new);
	return err;
}

/**
 * s3cfs_inode_refresh() - the object changed in S3: follow it
 * @inode: upper inode of a regular file
 * @gen: the generation (@gen of the inode) the caller found stale: when
 *	another caller has rebound the inode since, there is nothing to do
 *
 * The daemon has replaced the lower file with one that carries the new
 * object's metadata (it never changes a file's ETag in place). Rebind the
 * upper inode to it, forget what we knew of the old one and bump the
 * generation so that readers drop page cache of the old version.
 *
 * Return: 0, -ESTALE if the object is gone, or another negative errno.
 */
int s3cfs_inode_refresh(struct inode *inode, int gen)
{
	struct s3cfs_sb_info *sbi = S3CFS_SB(inode->i_sb);
	struct s3cfs_inode_info *si = S3CFS_I(inode);
	struct dentry *parent, *lower, *old_dentry;
	struct file *file = NULL, *old_file = NULL;
	struct name_snapshot name;
	const struct cred *old_cred;
	unsigned long *bits;
	struct path path;
	u64 nr;
	int err;

	old_cred = override_creds(sbi->creds);
	down_write(&si->data_sem);
	WRITE_ONCE(si->refresh_pending, false);
	if (atomic_read(&si->gen) != gen) {
		err = 0;	/* rebound by another reader meanwhile */
		goto out;
	}
	old_dentry = si->lower.dentry;
	parent = dget_parent(old_dentry);
	take_dentry_name_snapshot(&name, old_dentry);
	lower = lookup_one_len_unlocked(name.name.name, parent, name.name.len);
	release_dentry_name_snapshot(&name);
	dput(parent);
	if (IS_ERR(lower)) {
		err = PTR_ERR(lower);
		goto out;
	}
	err = -ESTALE;
	if (d_is_negative(lower) || !d_is_reg(lower))
		goto out_dput;
	err = -EIO;
	if (d_inode(lower) == d_inode(old_dentry))
		goto out_dput;	/* daemon said "changed" but changed nothing */
	path.mnt = si->lower.mnt;
	path.dentry = lower;
	file = dentry_open(&path, O_RDONLY | O_DIRECT | O_LARGEFILE |
			   O_NOATIME, sbi->creds);
	if (IS_ERR(file)) {
		err = PTR_ERR(file);
		goto out_dput;
	}
	/*
	 * The new file's presence bitmap is built here, where the VFS holds
	 * none of its locks of our inode (SEEK_DATA takes the lower i_rwsem,
	 * see aops.c); without memory for it, the next read builds it.
	 */
	bits = s3cfs_scan_file(sbi, file, &nr);
	if (IS_ERR(bits))
		bits = NULL;
	old_file = si->lower_file;
	si->lower_file = file;
	WRITE_ONCE(si->lower.dentry, lower);
	lower = old_dentry;	/* dropped below */
	spin_lock(&si->chunk_lock);
	swap(bits, si->present);
	si->nr_chunks = si->present ? nr : 0;
	spin_unlock(&si->chunk_lock);
	kvfree(bits);
	s3cfs_inode_load_meta(inode);
	/* Pairs with the atomic_read() of readers in s3cfs_read_iter(). */
	atomic_inc(&si->gen);
	atomic64_inc(&sbi->stats.stale);
	err = 0;
	pr_debug("%pd changed in S3: cached data dropped\n", si->lower.dentry);
out_dput:
	dput(lower);
out:
	up_write(&si->data_sem);
	revert_creds(old_cred);
	if (old_file)
		fput(old_file);
	return err;
}

/**
 * s3cfs_refresh_pending() - rebind an inode that a read under the VFS's
 *	locks found changed in S3 (s3cfs_chunks_ensure(), @may_refresh false)
 * @inode: upper inode of a regular file, none of the VFS's locks held
 * @gen: the generation the failed read started with
 *
 * Return: 0 (rebound, now or by another reader, or nothing pending), or a
 * negative errno (-ESTALE: the object is gone).
 */
int s3cfs_refresh_pending(struct inode *inode, int gen)
{
	if (!READ_ONCE(S3CFS_I(inode)->refresh_pending))
		return 0;
	return s3cfs_inode_refresh(inode, gen);
}
