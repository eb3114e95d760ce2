// SPDX-License-Identifier: GPL-2.0
/*
 * s3cachefs: filling the upper page cache from the lower file.
 *
 * The upper inode owns the page cache. ->readahead and ->read_folio make
 * sure the chunks under the locked folios are present (fetching the missing
 * ones), then read the lower file with direct I/O straight into those
 * folios, as fs/cachefiles does for netfs: the data is cached once, in our
 * page cache, and a page cache hit never reaches this code.
 */
#include "s3cachefs.h"
#include <linux/pagemap.h>
#include <linux/uio.h>

/* A read is retried this often when the data is invalidated under it. */
#define S3CFS_READ_TRIES	4

/* Direct read of [pos, pos + len) of the lower file into our page cache. */
static ssize_t s3cfs_read_lower(struct inode *inode, loff_t pos, size_t len)
	__must_hold(&S3CFS_I(inode)->data_sem)
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

/*
 * How far past this readahead to start fetching: a window of more than one
 * page is the kernel's readahead for a sequential reader, which will want
 * the next window too; a single page looks random and gets nothing extra.
 */
static u64 s3cfs_fetch_ahead(struct inode *inode, size_t len)
{
	struct s3cfs_sb_info *sbi = S3CFS_SB(inode->i_sb);

	if (len <= PAGE_SIZE)
		return 0;
	return max_t(u64, (u64)READ_ONCE(sbi->opts.readahead_kb) << 10,
		     sbi->opts.chunk_size);
}

/**
 * s3cfs_fill_range() - read [pos, pos + len) of the object into page cache
 * @inode: upper inode
 * @pos: start, page aligned
 * @len: length, a multiple of the page size
 *
 * The folios covering the range are locked by the caller.
 *
 * Return: bytes read from the lower file (less than @len at EOF), or a
 * negative errno.
 */
static ssize_t s3cfs_fill_range(struct inode *inode, loff_t pos, size_t len)
{
	struct s3cfs_sb_info *sbi = S3CFS_SB(inode->i_sb);
	struct s3cfs_inode_info *si = S3CFS_I(inode);
	loff_t size = i_size_read(inode);
	ssize_t ret;
	int tries;

	if (pos >= size)
		return 0;
	for (tries = 0; tries < S3CFS_READ_TRIES; tries++) {
		ret = s3cfs_chunks_ensure(inode, pos, len);
		if (ret < 0)
			return ret;
		down_read(&si->data_sem);
		if (!s3cfs_chunks_present(inode, pos, len)) {
			/* Invalidated between the fetch and now. */
			up_read(&si->data_sem);
			continue;
		}
		if (!ret)
			atomic64_add(((min_t(loff_t, pos + len, size) - 1) >>
				      sbi->chunk_shift) -
				     (pos >> sbi->chunk_shift) + 1,
				     &sbi->stats.chunk_hits);
		ret = s3cfs_read_lower(inode, pos, len);
		up_read(&si->data_sem);
		return ret;
	}
	return -EIO;
}

/* Zero what the lower read did not fill (past EOF) and finish the folio. */
static void s3cfs_folio_done(struct folio *folio, loff_t filled_to, int err)
{
	loff_t start = folio_pos(folio);
	size_t size = folio_size(folio);

	if (!err) {
		if (filled_to < start + (loff_t)size)
			folio_zero_segment(folio,
					   filled_to > start ? filled_to - start : 0,
					   size);
		folio_mark_uptodate(folio);
	}
	folio_unlock(folio);
}

/* Position of the next folio readahead_folio() will hand out. */
static loff_t s3cfs_ra_next(struct readahead_control *rac)
{
	return readahead_pos(rac) + readahead_batch_length(rac);
}

/*
 * Fetches for every missing chunk of the window (and the next one, for a
 * sequential reader) go out at once; then the window is filled stretch by
 * stretch, present chunks first where they come first, each stretch's
 * folios unlocked as soon as it is read, so that a reader of a present
 * chunk does not wait for a missing one after it.
 */
static void s3cfs_readahead(struct readahead_control *rac)
{
	struct inode *inode = rac->mapping->host;
	loff_t pos = readahead_pos(rac);
	loff_t end = pos + readahead_length(rac);
	loff_t size = i_size_read(inode);
	struct folio *folio;
	loff_t seg, filled_to;
	ssize_t ret;

	s3cfs_chunks_prefetch(inode, pos, end - pos +
			      s3cfs_fetch_ahead(inode, end - pos));
	while (pos < end) {
		seg = s3cfs_chunks_segment(inode, pos, end);
		ret = s3cfs_fill_range(inode, pos, seg - pos);
		filled_to = ret > 0 ? pos + ret : pos;
		/*
		 * A short read below EOF means the lower file lost data under
		 * us: leave those folios !uptodate; read_folio retries them.
		 */
		if (ret >= 0 && filled_to < min(seg, size))
			ret = -EIO;
		while (s3cfs_ra_next(rac) < seg &&
		       (folio = readahead_folio(rac)))
			s3cfs_folio_done(folio, filled_to,
					 ret < 0 ? (int)ret : 0);
		pos = s3cfs_ra_next(rac);
		if (ret < 0)
			break;	/* the rest is dropped; read_folio reports */
	}
}

static int s3cfs_read_folio(struct file *file, struct folio *folio)
{
	struct inode *inode = folio->mapping->host;
	loff_t pos = folio_pos(folio);
	size_t len = folio_size(folio);
	ssize_t ret;

	ret = s3cfs_fill_range(inode, pos, len);
	if (ret >= 0 && pos + ret < min_t(loff_t, pos + len, i_size_read(inode)))
		ret = -EIO;
	s3cfs_folio_done(folio, ret > 0 ? pos + ret : pos,
			 ret < 0 ? (int)ret : 0);
	return ret < 0 ? ret : 0;
}

const struct address_space_operations s3cfs_aops = {
	.read_folio	= s3cfs_read_folio,
	.readahead	= s3cfs_readahead,
};
