// SPDX-License-Identifier: GPL-2.0
/*
 * s3cachefs: writeback of LOCAL files to their lower file.
 *
 * Each dirty folio is written, up to EOF, to the lower file through its
 * writable open (buffered: the lower filesystem gathers and allocates),
 * with the folio locked, so a write into it waits and is not lost. A
 * failed write leaves the folio dirty and sets the mapping's error, which
 * the next fsync or close (the upload) reports.
 *
 * While the daemon reads the lower file for an upload (upload.c holds
 * wb_sem), nothing is written to it: background writeback skips the file
 * (its folios stay dirty, counted as skipped so the flusher comes back
 * later), integrity writeback (sync(2)) waits for the upload. Only a
 * mapped write can dirty a folio then; write(2) waits for i_rwsem.
 */
#include "s3cachefs.h"
#include <linux/pagemap.h>
#include <linux/writeback.h>
#include <linux/uio.h>
#include <linux/bvec.h>

static int s3cfs_writepage(S3CFS_WRITEPAGE_ARG, struct writeback_control *wbc,
			   void *data)
{
	struct folio *f = S3CFS_WRITEPAGE_FOLIO;
	struct inode *inode = f->mapping->host;
	struct file *lower = data;
	loff_t pos = folio_pos(f), isize = i_size_read(inode);
	struct bio_vec bv;
	struct iov_iter iter;
	size_t len;
	ssize_t n;
	int err = 0;

	if (pos >= isize) {
		/* Past EOF (a truncate raced us): nothing to keep. */
		folio_unlock(f);
		return 0;
	}
	len = min_t(loff_t, folio_size(f), isize - pos);
	bv.bv_page = folio_page(f, 0);
	bv.bv_len = len;
	bv.bv_offset = 0;
	folio_start_writeback(f);
	iov_iter_bvec(&iter, ITER_SOURCE, &bv, 1, len);
	file_start_write(lower);
	n = vfs_iter_write(lower, &iter, &pos, 0);
	file_end_write(lower);
	if (n != len) {
		err = n < 0 ? n : -EIO;
		s3cfs_pr_d(pr_warn_ratelimited, lower->f_path.dentry,
			   "writing back %*pE at %lld: %d\n", folio_pos(f), err);
		mapping_set_error(f->mapping, err);
		folio_redirty_for_writepage(wbc, f);
	}
	folio_end_writeback(f);
	folio_unlock(f);
	return err;
}

/**
 * s3cfs_writepages() - ->writepages: dirty folios to the lower file
 * @mapping: the upper inode's mapping
 * @wbc: what to write
 *
 * Return: 0 or a negative errno.
 */
int s3cfs_writepages(struct address_space *mapping,
		     struct writeback_control *wbc)
{
	struct s3cfs_sb_info *sbi = S3CFS_SB(mapping->host->i_sb);
	struct s3cfs_inode_info *si = S3CFS_I(mapping->host);
	const struct cred *old_cred;
	struct file *lower;
	int err;

	/* Set before the first write_begin, stable until eviction. */
	lower = READ_ONCE(si->lower_wfile);
	if (WARN_ON_ONCE(!lower))
		return -EIO;
	if (wbc->sync_mode == WB_SYNC_ALL) {
		down_read(&si->wb_sem);
	} else if (!down_read_trylock(&si->wb_sem)) {
		wbc->pages_skipped++;
		return 0;
	}
	/* What a write-back close acknowledged is about to change. */
	if (mapping_tagged(mapping, PAGECACHE_TAG_DIRTY)) {
		err = s3cfs_upq_changing(mapping->host);
		if (err)
			goto out;
	}
	old_cred = override_creds(sbi->creds);
	err = write_cache_pages(mapping, wbc, s3cfs_writepage, lower);
	revert_creds(old_cred);
out:
	up_read(&si->wb_sem);
	return err;
}
