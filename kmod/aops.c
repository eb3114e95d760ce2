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
 * How many chunks past this read to fetch ahead: a readahead window or a
 * read that continues the previous chunk looks sequential; a single page
 * with nothing cached before it looks random and gets nothing extra.
 */
static unsigned int s3cfs_fetch_ahead(struct inode *inode, loff_t pos,
				      size_t len)
{
	struct s3cfs_sb_info *sbi = S3CFS_SB(inode->i_sb);
	u64 window = (u64)READ_ONCE(sbi->opts.readahead_kb) << 10;

	if (len <= PAGE_SIZE)
		return 0;
	return max_t(u64, window >> sbi->chunk_shift, 1);
}

/**
 * s3cfs_fill_range() - read [pos, pos + len) of the object into page cache
 * @inode: upper inode
 * @pos: start, page aligned
 * @len: length, a multiple of the page size
 * @ahead: chunks past the range to prefetch
 *
 * The folios covering the range are locked by the caller.
 *
 * Return: bytes read from the lower file (less than @len at EOF), or a
 * negative errno.
 */
static ssize_t s3cfs_fill_range(struct inode *inode, loff_t pos, size_t len,
				unsigned int ahead)
{
	struct s3cfs_sb_info *sbi = S3CFS_SB(inode->i_sb);
	struct s3cfs_inode_info *si = S3CFS_I(inode);
	loff_t size = i_size_read(inode);
	ssize_t ret;
	int tries;

	if (pos >= size)
		return 0;
	for (tries = 0; tries < S3CFS_READ_TRIES; tries++) {
		ret = s3cfs_chunks_ensure(inode, pos, len, ahead);
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

static void s3cfs_readahead(struct readahead_control *rac)
{
	struct inode *inode = rac->mapping->host;
	loff_t pos = readahead_pos(rac);
	size_t len = readahead_length(rac);
	struct folio *folio;
	loff_t filled_to;
	ssize_t ret;

	ret = s3cfs_fill_range(inode, pos, len,
			       s3cfs_fetch_ahead(inode, pos, len));
	filled_to = ret > 0 ? pos + ret : pos;
	/*
	 * A short read below EOF means the lower file lost data under us:
	 * leave those folios !uptodate so read_folio retries and reports.
	 */
	if (ret >= 0 && filled_to < min_t(loff_t, pos + len, i_size_read(inode)))
		ret = -EIO;
	while ((folio = readahead_folio(rac)))
		s3cfs_folio_done(folio, filled_to, ret < 0 ? (int)ret : 0);
}

static int s3cfs_read_folio(struct file *file, struct folio *folio)
{
	struct inode *inode = folio->mapping->host;
	loff_t pos = folio_pos(folio);
	size_t len = folio_size(folio);
	ssize_t ret;

	ret = s3cfs_fill_range(inode, pos, len, 0);
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
