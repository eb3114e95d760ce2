// SPDX-License-Identifier: GPL-2.0
/*
 * s3cachefs: filling the upper page cache from the lower file.
 *
 * The upper inode owns the page cache. ->readahead and ->read_folio make
 * sure the chunks under the locked folios are present (fetching the missing
 * ones), then read the lower file with direct I/O straight into those
 * folios, as fs/cachefiles does for netfs: the data is cached once, in our
 * page cache, and a page cache hit never reaches this code.
 *
 * Both are called with our mapping's invalidate_lock held, and the lower
 * filesystem's direct read takes the lower inode's i_rwsem, which the
 * daemon holds while it writes the file from its own memory (and so may
 * take its mmap_lock: a page fault, or get_user_pages). To keep
 * invalidate_lock -> lower i_rwsem out of the lock graph, a read made
 * there is tried with IOCB_NOWAIT (a trylock of i_rwsem); when the lower
 * filesystem would block, the read is made again, blocking, from the
 * s3cfs_rd workqueue, which holds none of our locks (s3cfs_rd.again). That
 * workqueue is not s3cfs_ra's, whose items sleep until chunks land from S3:
 * a retry, which only waits for the lower filesystem, never queues behind
 * them.
 *
 * Unmount: work items of a mount are counted (sbi->nr_work) and unmount
 * waits for them after failing the mount's requests, before the inodes
 * are evicted; a readahead worker holds a reference on its inode, dropped
 * when it holds no folio lock any more (see s3cfs_ra_workfn()).
 */
#include "s3cachefs.h"
#include <linux/cred.h>
#include <linux/pagemap.h>
#include <linux/writeback.h>
#include <linux/uio.h>
#include <linux/workqueue.h>
#include <linux/moduleparam.h>

/* A read is retried this often when the data is invalidated under it. */
#define S3CFS_READ_TRIES	4
/*
 * Largest lower direct read issued by ->readahead: a window is split so
 * that its first folios are unlocked (and a waiting reader woken) when the
 * first piece lands, not when the whole window has.
 */
#define S3CFS_RA_PIECE		SZ_1M

/**
 * struct s3cfs_rd - an asynchronous lower read into locked upper folios
 * @iocb: the lower kiocb (its ki_filp holds a file reference)
 * @ref: one for the submitter, one for the completion: ext4 and xfs still
 *	look at the kiocb after queueing it, when it may have completed
 * @inode: upper inode (pinned by the locked folios until they are unlocked)
 * @pos: file position of the first folio
 * @end: end of the last folio
 * @nr: number of folios
 * @again: an IOCB_NOWAIT read that would have blocked: make it again,
 *	blocking, from s3cfs_rd_wq once the last reference is dropped
 * @list: on a &struct s3cfs_ra_wait list while its chunk is missing
 * @retry: the blocking read, on s3cfs_rd_wq (counted in sbi->nr_work)
 * @folios: the locked folios, in order, covering [@pos, @end)
 */
struct s3cfs_rd {
	struct kiocb iocb;
	refcount_t ref;
	struct inode *inode;
	loff_t pos;
	loff_t end;
	unsigned int nr;
	bool again;
	struct list_head list;
	struct work_struct retry;
	struct folio *folios[];
};

/**
 * struct s3cfs_ra_wait - the missing pieces of one readahead window
 * @work: runs on s3cfs_ra_wq (s3cfs_ra_sync_wq when a reader is blocked on
 *	it): waits for each piece's chunk, in file order (the order in which
 *	the window's FETCH lands them), then submits it
 * @inode: the upper inode, referenced (ihold) while queued or running
 * @rds: the pieces, &struct s3cfs_rd.list, their folios locked
 * @cred: the reader's credentials, the worker's while it runs: a FETCH it
 *	sends takes a request slot of the reader's user (max_pending_user)
 *
 * ->readahead must not wait for S3: the kernel calls it for the
 * asynchronous window too, in the reader's context, and a reader held
 * there until the next window has landed cannot copy the window it has
 * (a lag of two windows, which four cold readers sharing one S3 server
 * measured as 0.3x of raw GETs). The reader waits on a folio lock instead,
 * and only when it reaches a folio that has not landed.
 */
struct s3cfs_ra_wait {
	struct work_struct work;
	struct inode *inode;
	struct list_head rds;
	const struct cred *cred;
};

static struct workqueue_struct *s3cfs_ra_wq;
/*
 * Workers of windows a reader is blocked on (see s3cfs_ra_sync_end()):
 * never queued behind the s3cfs_ra_wq workers of hundreds of readahead
 * windows, each asleep until its FETCH, served last by the daemon, lands.
 */
static struct workqueue_struct *s3cfs_ra_sync_wq;
static struct workqueue_struct *s3cfs_rd_wq;

/* A work item of @sbi is queued; s3cfs_aops_drain() waits for it. */
static void s3cfs_work_get(struct s3cfs_sb_info *sbi)
{
	atomic_inc(&sbi->nr_work);
}

/* The last access of a work item to @sbi. */
static void s3cfs_work_put(struct s3cfs_sb_info *sbi)
{
	/* wake_up_var() only hashes the address: @sbi may be freed now. */
	if (atomic_dec_and_test(&sbi->nr_work))
		wake_up_var(&sbi->nr_work);
}

/**
 * s3cfs_aops_drain() - wait until no work item of a mount is queued or runs
 * @sbi: the mount, being unmounted: its requests are flushed and it takes
 *	no new one, so a readahead worker fails what it still waits for
 */
void s3cfs_aops_drain(struct s3cfs_sb_info *sbi)
{
	wait_var_event(&sbi->nr_work, !atomic_read(&sbi->nr_work));
}

/* Tests only: limit s3cfs_ra_wq's concurrency, to show what waits behind it. */
static unsigned int ra_max_active;
module_param(ra_max_active, uint, 0444);
MODULE_PARM_DESC(ra_max_active, "Tests only: most s3cfs_ra work items run at once (default 0: the workqueue default)");

/**
 * s3cfs_fill_hold() - make [pos, pos + len) present and keep it present
 * @inode: upper inode
 * @pos: start
 * @len: length
 *
 * For every lower read: ->readahead, ->read_folio and O_DIRECT reads.
 * On success a lower read is counted in flight (s3cfs_chunks_hold()) until
 * s3cfs_chunks_unhold(), which an asynchronous read calls from its
 * completion: eviction waits for it before punching, so no hole is
 * punched under a read in flight.
 *
 * Return: 0 with the read counted, or a negative errno without it.
 */
int s3cfs_fill_hold(struct inode *inode, loff_t pos, size_t len)
{
	struct s3cfs_sb_info *sbi = S3CFS_SB(inode->i_sb);
	loff_t end = min_t(loff_t, pos + len, i_size_read(inode));
	int tries, ret;

	for (tries = 0; tries < S3CFS_READ_TRIES; tries++) {
		ret = s3cfs_chunks_ensure(inode, pos, len);
		if (ret < 0)
			return ret;
		if (s3cfs_chunks_hold(inode, pos, len)) {
			if (!ret && pos < end)
				atomic64_add(((end - 1) >> sbi->chunk_shift) -
					     (pos >> sbi->chunk_shift) + 1,
					     &sbi->stats.chunk_hits);
			return 0;
		}
		/* Evicted between the fetch and now. */
	}
	return -EIO;
}

/* Direct read of [pos, pos + len) of the lower file into our page cache. */
static ssize_t s3cfs_read_lower(struct inode *inode, loff_t pos, size_t len)
{
	struct s3cfs_sb_info *sbi = S3CFS_SB(inode->i_sb);
	struct s3cfs_inode_info *si = S3CFS_I(inode);
	const struct cred *old_cred;
	struct iov_iter iter;
	ssize_t ret;

	iov_iter_xarray(&iter, ITER_DEST, &inode->i_mapping->i_pages, pos, len);
	old_cred = override_creds(sbi->creds);
	ret = vfs_iter_read(si->lower_file, &iter, &pos, 0);
	revert_creds(old_cred);
	return ret;
}

/**
 * s3cfs_fill_range() - read [pos, pos + len) of the object into page cache
 * @inode: upper inode
 * @pos: start, page aligned
 * @len: length, a multiple of the page size
 *
 * The folios covering the range are locked by the caller. Synchronous:
 * ->read_folio and the fallback of ->readahead.
 *
 * Return: bytes read from the lower file (less than @len at EOF), or a
 * negative errno.
 */
static ssize_t s3cfs_fill_range(struct inode *inode, loff_t pos, size_t len)
{
	ssize_t ret;

	if (pos >= i_size_read(inode))
		return 0;
	ret = s3cfs_fill_hold(inode, pos, len);
	if (ret)
		return ret;
	ret = s3cfs_read_lower(inode, pos, len);
	s3cfs_chunks_unhold(inode);
	return ret;
}

/*
 * Zero what the lower read did not fill, and what is past the object's end
 * (the lower file can be longer: s3cfs_lower_size()), and finish the folio.
 */
static void s3cfs_folio_done(struct folio *folio, loff_t filled_to, int err)
{
	loff_t start = folio_pos(folio);
	size_t size = folio_size(folio);

	filled_to = min_t(loff_t, filled_to, i_size_read(folio->mapping->host));
	if (!err) {
		if (filled_to < start + (loff_t)size)
			folio_zero_segment(folio,
					   filled_to > start ? filled_to - start : 0,
					   size);
		folio_mark_uptodate(folio);
	}
	folio_unlock(folio);
}

/* Fill one locked folio synchronously and unlock it. */
static int s3cfs_fill_folio(struct inode *inode, struct folio *folio)
{
	loff_t pos = folio_pos(folio);
	size_t len = folio_size(folio);
	ssize_t ret;

	ret = s3cfs_fill_range(inode, pos, len);
	/*
	 * A short read below EOF means the lower file lost data under us:
	 * leave the folio !uptodate, the VFS reports the error. Not for a
	 * LOCAL file, whose lower file ends where its written back data
	 * ends: past that, below EOF, a hole (zeros).
	 */
	if (ret >= 0 && pos + ret < min_t(loff_t, pos + len, i_size_read(inode)) &&
	    !s3cfs_inode_local(inode))
		ret = -EIO;
	s3cfs_folio_done(folio, ret > 0 ? pos + ret : pos,
			 ret < 0 ? (int)ret : 0);
	return ret < 0 ? ret : 0;
}

/* Unlock the folios of a piece that could not be filled, and free it. */
static void s3cfs_rd_fail(struct s3cfs_rd *rd, int err)
{
	unsigned int i;

	for (i = 0; i < rd->nr; i++)
		s3cfs_folio_done(rd->folios[i], rd->pos, err);
	kfree(rd);
}

/*
 * The last reference: the lower read is over, or (@again) it would have
 * blocked and is made again, blocking, from the workqueue. Only now may
 * the kiocb be reused: the lower filesystem may look at it until its
 * submission returns.
 */
static void s3cfs_rd_put(struct s3cfs_rd *rd)
{
	if (refcount_dec_and_test(&rd->ref)) {
		fput(rd->iocb.ki_filp);
		if (rd->again) {
			/* The folios are still locked: the inode is there. */
			s3cfs_work_get(S3CFS_SB(rd->inode->i_sb));
			queue_work(s3cfs_rd_wq, &rd->retry);
		} else {
			kfree(rd);
		}
	}
}

/*
 * Completion of a lower read, usually in the block layer's completion
 * (interrupt) context: end the read's hold on its chunks first, while the
 * still locked folios pin the inode, then finish the folios. An IOCB_NOWAIT
 * read that would have blocked (-EAGAIN, or a short read below EOF: the
 * lower filesystem may stop a nowait read part way) changes nothing yet:
 * the hold stays and the folios locked for the blocking read.
 */
static void s3cfs_rd_done(struct kiocb *iocb, long ret)
{
	struct s3cfs_rd *rd = container_of(iocb, struct s3cfs_rd, iocb);
	struct inode *inode = rd->inode;
	loff_t filled_to = ret > 0 ? rd->pos + ret : rd->pos;
	int err = ret < 0 ? (int)ret : 0;
	unsigned int i;

	/* A blocking short read of a LOCAL file: its hole past the lower end. */
	if (!err && filled_to < min_t(loff_t, rd->end, i_size_read(inode)) &&
	    ((iocb->ki_flags & IOCB_NOWAIT) || !s3cfs_inode_local(inode)))
		err = -EIO;
	if (err && (iocb->ki_flags & IOCB_NOWAIT)) {
		atomic64_inc(&S3CFS_SB(inode->i_sb)->stats.read_retries);
		rd->again = true;
		s3cfs_rd_put(rd);	/* the last put queues the retry */
		return;
	}
	s3cfs_chunks_unhold(inode);
	for (i = 0; i < rd->nr; i++)
		s3cfs_folio_done(rd->folios[i], filled_to, err);
	s3cfs_rd_put(rd);
}

/*
 * Start the direct read of [rd->pos, rd->end) of the lower file into the
 * folios and return without waiting for it, as fs/cachefiles does: the
 * reader that triggered an asynchronous readahead window goes on copying
 * the previous window while this one is read from NVMe. @nowait: the
 * caller holds our invalidate_lock (see the top of this file).
 */
static void s3cfs_rd_submit(struct s3cfs_rd *rd, bool nowait)
{
	struct inode *inode = rd->inode;
	struct s3cfs_sb_info *sbi = S3CFS_SB(inode->i_sb);
	struct file *lower = S3CFS_I(inode)->lower_file;
	const struct cred *old_cred;
	struct iov_iter iter;
	ssize_t ret;

	init_sync_kiocb(&rd->iocb, get_file(lower));
	rd->iocb.ki_pos = rd->pos;
	rd->iocb.ki_flags |= IOCB_DIRECT | (nowait ? IOCB_NOWAIT : 0);
	rd->iocb.ki_complete = s3cfs_rd_done;
	rd->again = false;
	refcount_set(&rd->ref, 2);
	if (nowait && s3cfs_fault("rd_eagain")) {
		s3cfs_rd_done(&rd->iocb, -EAGAIN);
		s3cfs_rd_put(rd);
		return;
	}
	iov_iter_xarray(&iter, ITER_DEST, &inode->i_mapping->i_pages, rd->pos,
			rd->end - rd->pos);
	old_cred = override_creds(sbi->creds);
	ret = vfs_iocb_iter_read(lower, &rd->iocb, &iter);
	revert_creds(old_cred);
	if (ret != -EIOCBQUEUED)	/* done (or failed) synchronously */
		s3cfs_rd_done(&rd->iocb, ret);
	s3cfs_rd_put(rd);
}

/* The blocking read of a piece whose IOCB_NOWAIT read would have blocked. */
static void s3cfs_rd_retry_workfn(struct work_struct *work)
{
	struct s3cfs_rd *rd = container_of(work, struct s3cfs_rd, retry);
	struct s3cfs_sb_info *sbi = S3CFS_SB(rd->inode->i_sb);

	s3cfs_rd_submit(rd, false);
	s3cfs_work_put(sbi);
}

/* A piece of @nr folios at @pos, or NULL. */
static struct s3cfs_rd *s3cfs_rd_alloc(struct inode *inode, loff_t pos,
				       unsigned int nr)
{
	struct s3cfs_rd *rd;

	rd = kmalloc(struct_size(rd, folios, nr), GFP_NOFS | __GFP_NOWARN);
	if (rd) {
		rd->inode = inode;
		rd->pos = pos;
		rd->nr = 0;
		INIT_WORK(&rd->retry, s3cfs_rd_retry_workfn);
	}
	return rd;
}

/*
 * Fill the missing pieces of a window as their chunks land. After the
 * first failure the rest fail too (a piece's folios are unlocked without
 * being uptodate; ->read_folio retries and reports the error).
 *
 * The worker's inode reference is dropped last, when every piece is either
 * failed (folios unlocked) or handed to the lower filesystem (folios
 * unlocked by the completion, which needs nothing from us): an iput() that
 * evicts the inode waits for those folios, and must never wait for one
 * this worker still holds.
 */
static void s3cfs_ra_workfn(struct work_struct *work)
{
	struct s3cfs_ra_wait *w = container_of(work, struct s3cfs_ra_wait,
					       work);
	struct inode *inode = w->inode;
	struct s3cfs_sb_info *sbi = S3CFS_SB(inode->i_sb);
	struct s3cfs_rd *rd, *tmp;
	const struct cred *old_cred;
	int err = 0;

	s3cfs_fault("ra_work");
	old_cred = override_creds(w->cred);
	list_for_each_entry_safe(rd, tmp, &w->rds, list) {
		list_del(&rd->list);
		if (!err)
			err = s3cfs_fill_hold(rd->inode, rd->pos,
					      rd->end - rd->pos);
		if (err)
			s3cfs_rd_fail(rd, err);
		else
			s3cfs_rd_submit(rd, false);	/* none of our locks held */
	}
	revert_creds(old_cred);
	put_cred(w->cred);
	kfree(w);
	iput(inode);
	s3cfs_work_put(sbi);
}

/* Position of the next folio readahead_folio() will hand out. */
static loff_t s3cfs_ra_next(struct readahead_control *rac)
{
	return readahead_pos(rac) + readahead_batch_length(rac);
}

/*
 * End of the part of a readahead window a reader is blocked on: the
 * FETCHes from there on are readahead (S3CFS_PRIO_ASYNC), which the daemon
 * serves after what readers wait for. The VFS does not say which kind of
 * window this is, but its file_ra_state does, in 6.1 and 6.12 alike: an
 * asynchronous window (the reader hit the PG_readahead mark ahead of it)
 * starts at ra->start and is async_size == size long; a synchronous one
 * (the reader's page is missing) starts with the size - async_size pages
 * the reader asked for; a file's state before its first window is all
 * zeroes, so posix_fadvise(WILLNEED) of a file not read yet is async too.
 * Anything else (readahead off or FMODE_RANDOM: the reader's own pages,
 * forced; a partial window) counts as blocked.
 */
static loff_t s3cfs_ra_sync_end(struct readahead_control *rac)
{
	struct file_ra_state *ra = rac->ra;
	loff_t end = readahead_pos(rac) + readahead_length(rac);

	if (!ra || !ra->ra_pages || !rac->file ||
	    (rac->file->f_mode & FMODE_RANDOM) ||
	    readahead_index(rac) != ra->start || ra->async_size > ra->size)
		return end;
	return min_t(loff_t, end, readahead_pos(rac) +
		     ((loff_t)(ra->size - ra->async_size) << PAGE_SHIFT));
}

/*
 * Fetches for every missing chunk of the window go out at once (beyond it
 * only a sequential reader's stream run, one GET whose chunks land in the
 * order the reader wants them: s3cfs_chunks_prefetch()); then the window
 * is read in pieces of uniform presence, at most S3CFS_RA_PIECE each:
 * present pieces are submitted at once, missing pieces (at most one chunk
 * each) go to a worker that submits each as soon as its chunk lands
 * (struct s3cfs_ra_wait). Nothing here waits for S3: a reader of a
 * present chunk never waits for a missing one after it, and the
 * asynchronous window costs the reader nothing.
 */
static void s3cfs_readahead(struct readahead_control *rac)
{
	struct inode *inode = rac->mapping->host;
	struct s3cfs_sb_info *sbi = S3CFS_SB(inode->i_sb);
	loff_t pos = readahead_pos(rac);
	loff_t end = pos + readahead_length(rac);
	loff_t sync_end = s3cfs_ra_sync_end(rac);
	struct s3cfs_ra_wait *w = NULL;
	struct s3cfs_rd *rd;
	struct folio *folio;
	bool missing, blocked = false;
	loff_t lim;
	int err;

	s3cfs_chunks_prefetch(inode, pos, end - pos, sync_end);
	while (pos < end) {
		lim = min_t(loff_t, s3cfs_chunks_segment(inode, pos, end),
			    pos + S3CFS_RA_PIECE);
		/* A missing piece ends with its chunk: it lands on its own. */
		missing = !s3cfs_chunks_present(inode, pos, 1);
		if (missing)
			lim = min_t(loff_t, lim,
				    round_down(pos, sbi->opts.chunk_size) +
				    sbi->opts.chunk_size);
		rd = s3cfs_rd_alloc(inode, pos, S3CFS_RA_PIECE >> PAGE_SHIFT);
		if (!rd) {
			/* No memory: one folio at a time, synchronously. */
			while (s3cfs_ra_next(rac) < lim &&
			       (folio = readahead_folio(rac)))
				if (s3cfs_fill_folio(inode, folio))
					return;	/* read_folio reports */
			pos = s3cfs_ra_next(rac);
			continue;
		}
		/* Whole folios: a large one may reach past lim. */
		while (s3cfs_ra_next(rac) < lim &&
		       (folio = readahead_folio(rac)))
			rd->folios[rd->nr++] = folio;
		rd->end = s3cfs_ra_next(rac);
		if (!rd->nr) {
			kfree(rd);
			break;
		}
		pos = rd->end;
		if (missing && !w) {
			w = kmalloc(sizeof(*w), GFP_NOFS | __GFP_NOWARN);
			if (w) {
				INIT_WORK(&w->work, s3cfs_ra_workfn);
				INIT_LIST_HEAD(&w->rds);
				w->cred = get_current_cred();
			}
		}
		if (missing && w) {
			list_add_tail(&rd->list, &w->rds);
			blocked |= rd->pos < sync_end;
			continue;
		}
		/* Present (or no memory for the worker: wait here). */
		err = s3cfs_fill_hold(inode, rd->pos, rd->end - rd->pos);
		if (err) {
			s3cfs_rd_fail(rd, err);
			break;	/* the rest is dropped; read_folio reports */
		}
		s3cfs_rd_submit(rd, true);
	}
	if (w) {
		/* The folios are locked and the caller's file pins the inode. */
		ihold(inode);
		w->inode = inode;
		s3cfs_work_get(sbi);
		queue_work(blocked ? s3cfs_ra_sync_wq : s3cfs_ra_wq, &w->work);
	}
}

/*
 * Called with invalidate_lock held (and the folio locked): wait here for
 * the chunk, then read it like a readahead piece, without blocking on the
 * lower inode. The folio is unlocked when the read completes; the VFS
 * waits for that. Without memory for the piece, read synchronously.
 */
static int s3cfs_read_folio(struct file *file, struct folio *folio)
{
	struct inode *inode = folio->mapping->host;
	loff_t pos = folio_pos(folio);
	struct s3cfs_rd *rd;
	int err;

	if (pos >= i_size_read(inode))
		return s3cfs_fill_folio(inode, folio);	/* zeroes, no read */
	rd = s3cfs_rd_alloc(inode, pos, 1);
	if (!rd)
		return s3cfs_fill_folio(inode, folio);
	rd->folios[rd->nr++] = folio;
	rd->end = pos + folio_size(folio);
	err = s3cfs_fill_hold(inode, pos, folio_size(folio));
	if (err) {
		s3cfs_rd_fail(rd, err);
		return err;
	}
	s3cfs_rd_submit(rd, true);
	return 0;
}

int __init s3cfs_aops_init(void)
{
	/* Unbound: each item sleeps until its chunks land from S3. */
	s3cfs_ra_wq = alloc_workqueue("s3cfs_ra", WQ_UNBOUND,
				      min(ra_max_active, WQ_MAX_ACTIVE));
	if (!s3cfs_ra_wq)
		return -ENOMEM;
	s3cfs_ra_sync_wq = alloc_workqueue("s3cfs_ra_sync",
					   WQ_UNBOUND | WQ_HIGHPRI, 0);
	if (!s3cfs_ra_sync_wq)
		goto fail_ra;
	/* Blocking lower reads only, never a wait for S3 (see the top). */
	s3cfs_rd_wq = alloc_workqueue("s3cfs_rd", WQ_UNBOUND, 0);
	if (!s3cfs_rd_wq)
		goto fail_sync;
	return 0;
fail_sync:
	destroy_workqueue(s3cfs_ra_sync_wq);
fail_ra:
	destroy_workqueue(s3cfs_ra_wq);
	return -ENOMEM;
}

void s3cfs_aops_exit(void)
{
	destroy_workqueue(s3cfs_rd_wq);
	destroy_workqueue(s3cfs_ra_sync_wq);
	destroy_workqueue(s3cfs_ra_wq);
}

const struct address_space_operations s3cfs_aops = {
	.read_folio	= s3cfs_read_folio,
	.readahead	= s3cfs_readahead,
	/* Writable mounts, LOCAL files only (write.c, wback.c). */
	.write_begin	= s3cfs_write_begin,
	.write_end	= s3cfs_write_end,
	.writepages	= s3cfs_writepages,
	.dirty_folio	= filemap_dirty_folio,
	.migrate_folio	= filemap_migrate_folio,
};
