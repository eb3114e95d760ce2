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
#include <linux/sched/signal.h>
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
/*
 * Longest stream run. A sequential reader's chunks are fetched ahead of
 * its windows in runs of one GET each, growing from 2 x S3CFS_RUN_MAX to
 * this, the next sent when the reader's range comes within half a run of
 * the last one's end: a GET per window paid the server's cost per request
 * once every S3CFS_RUN_MAX and held a cold reader below the rate of one
 * streaming GET. Short enough that a reader who stops early leaves little
 * fetched for nothing.
 */
#define S3CFS_STREAM_MAX	(64ULL << 20)

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
		s3cfs_pr_d(pr_warn_ratelimited, lower->f_path.dentry,
			   "%*pE: %lld bytes is %llu chunks of %u KiB, more than the %llu a file may have\n",
				    size, *nr,
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
 * s3cfs_chunks_cached() - bytes of a file the cache holds (S3CFS_IOC_STATE)
 * @inode: upper inode of a regular file that is open
 *
 * The data in its lower file, up to its size: what an unprivileged user
 * cannot read in the private cache directory.
 *
 * Return: the bytes, or a negative errno.
 */
s64 s3cfs_chunks_cached(struct inode *inode)
{
	struct s3cfs_inode_info *si = S3CFS_I(inode);
	loff_t end = i_size_read(inode), pos = 0, data, hole;
	s64 sum = 0;

	down_read(&si->data_sem);
	if (!si->lower_file) {
		sum = -EIO;
		goto out;
	}
	while (pos < end) {
		cond_resched();
		data = vfs_llseek(si->lower_file, pos, SEEK_DATA);
		if (data == -ENXIO || (data >= 0 && data >= end))
			break;
		if (data < 0) {
			sum = data;
			goto out;
		}
		hole = vfs_llseek(si->lower_file, data, SEEK_HOLE);
		if (hole < 0) {
			sum = hole;
			goto out;
		}
		if (hole <= data)
			break;
		sum += min(hole, end) - data;
		pos = hole;
	}
out:
	up_read(&si->data_sem);
	return sum;
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

/* Are all chunks of [pos, pos + len) below EOF present? @hold: count a read. */
static bool s3cfs_check_present(struct inode *inode, loff_t pos, size_t len,
				bool hold)
{
	struct s3cfs_sb_info *sbi = S3CFS_SB(inode->i_sb);
	struct s3cfs_inode_info *si = S3CFS_I(inode);
	loff_t end = min_t(loff_t, pos + len, i_size_read(inode));
	bool ret = true;

	spin_lock(&si->chunk_lock);
	/* All of a LOCAL file is in its lower file (holes are zeros). */
	if (pos < end && !s3cfs_inode_local(inode))
		ret = s3cfs_range_present(si, pos >> sbi->chunk_shift,
					  ((u64)(end - 1) >> sbi->chunk_shift) + 1);
	if (ret && hold)
		atomic_inc(&si->reads);
	spin_unlock(&si->chunk_lock);
	return ret;
}

/**
 * s3cfs_chunks_present() - are all chunks of a byte range present?
 * @inode: upper inode
 * @pos: start of the range
 * @len: length of the range
 *
 * A hint: an eviction may take them away at once. A read of them must use
 * s3cfs_chunks_hold().
 *
 * Return: true if every chunk overlapping [pos, pos + len) below EOF is
 * present in the lower file.
 */
bool s3cfs_chunks_present(struct inode *inode, loff_t pos, size_t len)
{
	return s3cfs_check_present(inode, pos, len, false);
}

/**
 * s3cfs_chunks_hold() - keep a byte range present for a lower read
 * @inode: upper inode
 * @pos: start of the range
 * @len: length of the range
 *
 * If every chunk of the range is present, counts a read in flight: an
 * EVICT that clears presence bits after this waits for the count to drop
 * (s3cfs_chunks_drain()) before it punches, so no hole is punched under a
 * read that found its chunks present. Any context but interrupt.
 *
 * Return: true, and the read counted (release it with
 * s3cfs_chunks_unhold()), or false if a chunk is missing.
 */
bool s3cfs_chunks_hold(struct inode *inode, loff_t pos, size_t len)
{
	return s3cfs_check_present(inode, pos, len, true);
}

/**
 * s3cfs_chunks_unhold() - a lower read counted by s3cfs_chunks_hold() is over
 * @inode: upper inode (pinned by the caller, e.g. by locked folios)
 *
 * Any context, the lower read's completion (interrupt) included.
 */
void s3cfs_chunks_unhold(struct inode *inode)
{
	struct s3cfs_inode_info *si = S3CFS_I(inode);

	if (atomic_dec_and_test(&si->reads))
		wake_up_all(&si->reads_wq);
}

/**
 * s3cfs_chunks_drain() - wait until no lower read is in flight
 * @inode: upper inode whose presence bits for the range to punch were
 *	cleared (under chunk_lock), so that no new read can be counted for it
 */
void s3cfs_chunks_drain(struct inode *inode)
{
	struct s3cfs_inode_info *si = S3CFS_I(inode);

	wait_event(si->reads_wq, !atomic_read(&si->reads));
}

/**
 * s3cfs_chunks_fetched() - the daemon says a FETCH is done: check it
 * @req: the FETCH request
 *
 * Trust, but verify: the chunks count as present only if the lower extent
 * map shows them as data.
 *
 * Return: 0, -ECANCELED if the inode has no presence bitmap covering the
 * range (the reader looks again), -ESTALE if the range is missing because
 * the lower file was replaced, or -EIO if the daemon claimed a fetch it
 * did not write.
 */
int s3cfs_chunks_fetched(struct s3cfs_req *req)
{
	struct s3cfs_sb_info *sbi = req->sbi;
	struct s3cfs_inode_info *si = S3CFS_I(req->inode);
	u64 c1 = req->first_chunk + req->nr_chunks;
	int err;

	/* Made LOCAL since (local.c): nothing is missing, nothing to check. */
	if (s3cfs_inode_local(req->inode))
		return 0;
	down_read(&si->data_sem);
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
	/*
	 * The daemon fills the file at the inode's name: one that is no
	 * longer this inode's lower file (renewed meanwhile) got the data,
	 * and nothing will ever fill this one. Its openers move on to the
	 * name's new inode (file.c), as for a changed object.
	 */
	if (err && !file_inode(si->lower_file)->i_nlink)
		err = -ESTALE;
	else if (err)
		pr_warn_ratelimited("daemon reported %*pE [%llu, +%llu) fetched but it is not in the cache\n",
				    s3cfs_esclen(req->path), req->path, req->offset, req->length);
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
	if (si->lower_file) {
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

/*
 * Was @req sent for another version than the inode's now? A FETCH in
 * flight when a LOCAL file was committed (upload.c) asked for the ETag
 * the file was based on: its -ESTALE says nothing of the new one.
 */
static bool s3cfs_fetch_outdated(struct s3cfs_inode_info *si,
				 struct s3cfs_req *req)
{
	bool outdated;

	spin_lock(&si->chunk_lock);
	outdated = strcmp(req->etag, si->etag) != 0;
	spin_unlock(&si->chunk_lock);
	return outdated;
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

/* Chunks in @bytes, at least one. */
static u64 s3cfs_run_chunks(struct s3cfs_sb_info *sbi, u64 bytes)
{
	return max_t(u64, bytes >> sbi->chunk_shift, 1);
}

/*
 * End of the run of missing, not in-flight chunks starting at @c, at most
 * @cap chunks long.
 */
static u64 s3cfs_run_end(struct s3cfs_inode_info *si, u64 c, u64 limit,
			 u64 cap)
	__must_hold(&si->chunk_lock)
{
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
	struct s3cfs_req *req;
	struct dentry *dentry;
	char *buf, *path;
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
	req->etag = s3cfs_inode_etag(inode);
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

/* @nowait: prefetch, which skips a FETCH when no request slot is free. */
static int s3cfs_fetch_submit(struct s3cfs_req *req, bool nowait)
{
	struct s3cfs_sb_info *sbi = req->sbi;
	int err;

	err = s3cfs_req_submit(req, nowait);
	if (err)
		s3cfs_req_complete(req, err);
	else
		atomic64_inc(&sbi->stats.fetches);
	return err;
}

/*
 * Where a prefetch of [@pos, @end) of a file of @size bytes ends, and the
 * longest run it sends past what a reader waits for (*@cap chunks): past
 * @end, to the end of the next stream run, when it continues the last
 * prefetch of a sequential reader and its window has come within half a
 * run of the last run's end. A window of half S3CFS_STREAM_MAX or more
 * (readahead=) is left as it is: its runs of S3CFS_RUN_MAX go out in
 * parallel. readahead=0 turns streams off too.
 */
static loff_t s3cfs_stream_extend(struct s3cfs_sb_info *sbi,
				  struct s3cfs_inode_info *si, loff_t pos,
				  loff_t end, loff_t size, u64 *cap)
	__must_hold(&si->chunk_lock)
{
	bool seq = pos > si->sq_pos && pos <= si->sq_next &&
		   end - pos < (loff_t)(S3CFS_STREAM_MAX / 2) &&
		   READ_ONCE(sbi->opts.readahead_kb);
	u64 run;

	*cap = s3cfs_run_chunks(sbi, S3CFS_RUN_MAX);
	si->sq_pos = pos;
	si->sq_next = end;
	if (!seq) {
		si->sq_run = 0;
		si->sq_end = 0;
		return end;
	}
	if (si->sq_run && si->sq_end >= end + (loff_t)(si->sq_run / 2))
		return end;
	run = clamp_t(u64, 2 * si->sq_run, 2 * S3CFS_RUN_MAX, S3CFS_STREAM_MAX);
	si->sq_run = run;
	si->sq_end = min_t(loff_t, max(pos, si->sq_end) + run, size);
	/* A run that starts inside a chunk ends inside one too. */
	*cap = s3cfs_run_chunks(sbi, run) + 1;
	return max(end, si->sq_end);
}

/**
 * s3cfs_chunks_prefetch() - start fetching what is missing, without waiting
 * @inode: upper inode of an open regular file
 * @pos: start of the range
 * @len: length of the range
 * @sync_end: a reader is blocked on [@pos, @sync_end): a run that starts
 *	there is sent S3CFS_PRIO_SYNC, the rest S3CFS_PRIO_ASYNC (the daemon
 *	serves readahead after what readers wait for)
 *
 * Sends one FETCH per run of missing chunks that no one is fetching yet,
 * so that all the runs of a readahead window are in flight together; for
 * a sequential reader, the next stream run too (s3cfs_stream_extend()).
 * Never waits for a request slot: without one the rest is left to the
 * readers, which fetch what they find missing.
 */
void s3cfs_chunks_prefetch(struct inode *inode, loff_t pos, u64 len,
			   loff_t sync_end)
{
	struct s3cfs_sb_info *sbi = S3CFS_SB(inode->i_sb);
	struct s3cfs_inode_info *si = S3CFS_I(inode);
	loff_t size = i_size_read(inode);
	loff_t end = min_t(loff_t, pos + len, size);
	struct s3cfs_req *req = NULL;
	u64 c, limit, e, cap;
	bool sync;
	int err;

	if (pos >= end || !s3cfs_daemon_present() || s3cfs_inode_stale(inode) ||
	    s3cfs_inode_local(inode))
		return;
	spin_lock(&si->chunk_lock);
	end = s3cfs_stream_extend(sbi, si, pos, end, size, &cap);
	spin_unlock(&si->chunk_lock);
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
		/* What a reader waits for goes in runs as short as ever. */
		sync = (loff_t)(c << sbi->chunk_shift) < sync_end;
		e = s3cfs_run_end(si, c, limit, sync ?
				  s3cfs_run_chunks(sbi, S3CFS_RUN_MAX) : cap);
		s3cfs_fetch_arm(sbi, si, req, c, e - c);
		if (!sync)
			req->prio = S3CFS_PRIO_ASYNC;
		spin_unlock(&si->chunk_lock);
		err = s3cfs_fetch_submit(req, true);
		s3cfs_req_put(req);
		req = NULL;
		if (err)
			break;
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
	if (si->present && c < si->nr_chunks && !s3cfs_inode_local(inode)) {
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
 *
 * Sends one FETCH per run of adjacent missing chunks that no other reader
 * is fetching already (S3CFS_PRIO_SYNC: the caller waits for it), and
 * waits (killable, at most the fetch timeout) for all the chunks of the
 * range, each as soon as it lands (a progress report of its FETCH or the
 * answer). Does not hold data_sem while waiting.
 *
 * When the object changed in S3 (the daemon answers -ESTALE), the inode is
 * marked stale and nothing more is fetched for it: its version is gone.
 *
 * Return: the number of missing chunks this reader waited for (0: all present),
 * or -EIO (timeout or daemon error), -EINTR, -ESTALE, -ENOMEM.
 */
int s3cfs_chunks_ensure(struct inode *inode, loff_t pos, size_t len)
{
	struct s3cfs_sb_info *sbi = S3CFS_SB(inode->i_sb);
	struct s3cfs_inode_info *si = S3CFS_I(inode);
	unsigned long timeout =
		msecs_to_jiffies(READ_ONCE(sbi->opts.fetch_timeout_ms));
	unsigned long deadline = jiffies + timeout;
	struct s3cfs_req *new = NULL, *req;
	int err = 0, missed = 0;
	u64 c0, c1, c, lim;
	bool created;
	loff_t end;

	end = min_t(loff_t, pos + len, i_size_read(inode));
	if (pos >= end || s3cfs_inode_local(inode))
		goto out;
	c0 = pos >> sbi->chunk_shift;
	c1 = ((u64)(end - 1) >> sbi->chunk_shift) + 1;
	for (;;) {
		created = false;
		/* Made LOCAL meanwhile (local.c): all of it is in the lower file. */
		if (s3cfs_inode_local(inode))
			break;
		spin_lock(&si->chunk_lock);
		if (!si->present) {
			/* Built by every open (and never dropped). */
			spin_unlock(&si->chunk_lock);
			err = -EIO;
			goto out;
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
			if (s3cfs_inode_stale(inode)) {
				spin_unlock(&si->chunk_lock);
				err = -ESTALE;
				goto out;
			}
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
			s3cfs_fetch_arm(sbi, si, new, c,
					s3cfs_run_end(si, c, lim,
						      s3cfs_run_chunks(sbi, S3CFS_RUN_MAX)) - c);
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
			s3cfs_fetch_submit(req, false);
		err = s3cfs_req_wait(req, deadline, timeout,
				     s3cfs_chunk_ready, &c);
		if (err == -ESTALE && s3cfs_fetch_outdated(si, req))
			err = -ECANCELED;	/* not this inode's version now */
		s3cfs_req_put(req);
		if (!err)
			continue;
		/* Made LOCAL meanwhile: what it fetched does not matter. */
		if (s3cfs_inode_local(inode)) {
			err = 0;
			break;
		}
		if (err == -ECANCELED && time_before(jiffies, deadline))
			continue;
		/* The daemon would not write: the file was being made LOCAL. */
		if (err == -EAGAIN && time_before(jiffies, deadline)) {
			if (schedule_timeout_killable(msecs_to_jiffies(5)) &&
			    fatal_signal_pending(current)) {
				err = -EINTR;
				goto out;
			}
			continue;
		}
		if (err == -EAGAIN)
			err = -ETIMEDOUT;
		if (err == -ESTALE) {
			s3cfs_inode_set_stale(inode);
			goto out;
		}
		if (err == -ETIMEDOUT || err == -ECANCELED) {
			spin_lock(&si->chunk_lock);
			si->failed_chunk = c;
			si->failed_at = jiffies ? : 1;
			spin_unlock(&si->chunk_lock);
			s3cfs_pr_d(pr_warn_ratelimited, si->lower.dentry,
				   "fetch of %*pE timed out after %u ms\n",
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
