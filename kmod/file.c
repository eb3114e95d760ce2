// SPDX-License-Identifier: GPL-2.0
/*
 * s3cachefs: regular files.
 *
 * Reads go through the page cache of the upper inode (aops.c). The lower
 * file is opened once per inode, read-only with O_DIRECT, at first open.
 */
#include "s3cachefs.h"
#include <linux/mm.h>
#include <linux/pagemap.h>
#include <linux/uio.h>
#include <linux/slab.h>

/* A read that saw the object change under it is redone this often. */
#define S3CFS_STALE_RETRIES	3

/**
 * s3cfs_open_lower() - open the lower file of a regular file, once
 * @inode: upper inode
 *
 * Return: 0 or a negative errno.
 */
int s3cfs_open_lower(struct inode *inode)
{
	struct s3cfs_sb_info *sbi = S3CFS_SB(inode->i_sb);
	struct s3cfs_inode_info *si = S3CFS_I(inode);
	struct file *lower;
	int err = 0;

	down_read(&si->data_sem);
	lower = si->lower_file;
	up_read(&si->data_sem);
	if (lower)
		return 0;

	down_write(&si->data_sem);
	if (!si->lower_file) {
		lower = dentry_open(&si->lower, O_RDONLY | O_DIRECT |
				    O_LARGEFILE | O_NOATIME, sbi->creds);
		if (IS_ERR(lower))
			err = PTR_ERR(lower);
		else
			si->lower_file = lower;
	}
	up_write(&si->data_sem);
	return err;
}

static int s3cfs_open(struct inode *inode, struct file *file)
{
	struct s3cfs_file *sf;
	int err = generic_file_open(inode, file);

	if (err)
		return err;
	err = s3cfs_open_lower(inode);
	if (err)
		return err;
	/*
	 * The presence bitmap comes from SEEK_DATA/SEEK_HOLE on the lower
	 * file, which take its i_rwsem: build it here, where we hold no lock
	 * of ours, rather than in ->readahead under invalidate_lock (aops.c).
	 */
	err = s3cfs_chunks_load(inode);
	/* A change a page fault found (and could not follow): follow it. */
	if (!err)
		err = s3cfs_refresh_pending(inode,
					    atomic_read(&S3CFS_I(inode)->gen));
	if (err)
		return err;
	sf = kzalloc(sizeof(*sf), GFP_KERNEL);
	if (!sf)
		return -ENOMEM;
	sf->gen = atomic_read(&S3CFS_I(inode)->gen);
	file->private_data = sf;
	s3cfs_touch_lower(inode);
	return 0;
}

static int s3cfs_release(struct inode *inode, struct file *file)
{
	kfree(file->private_data);
	return 0;
}

/* Pages cached before generation @gen are of an old version: drop them. */
static void s3cfs_drop_old_pages(struct inode *inode, int gen)
{
	struct s3cfs_inode_info *si = S3CFS_I(inode);

	if (gen != READ_ONCE(si->seen_gen)) {
		invalidate_inode_pages2(inode->i_mapping);
		WRITE_ONCE(si->seen_gen, gen);
	}
}

/*
 * When the object changed in S3 (s3cfs_inode_refresh() bumped the
 * generation), pages of the old version may still be cached: drop them and
 * redo a read that overlapped the change, so that one read never returns
 * bytes of two versions. An open file that has already returned bytes of
 * the old version gets ESTALE from then on (as NFS does), rather than
 * carrying on with the new version's bytes; a new open reads the new one.
 */
static ssize_t s3cfs_read_iter(struct kiocb *iocb, struct iov_iter *to)
{
	struct inode *inode = file_inode(iocb->ki_filp);
	struct s3cfs_file *sf = iocb->ki_filp->private_data;
	struct s3cfs_inode_info *si = S3CFS_I(inode);
	loff_t pos = iocb->ki_pos;
	int tries, gen;
	ssize_t ret;

	for (tries = 0; ; tries++) {
		gen = atomic_read(&si->gen);
		if (gen != READ_ONCE(sf->gen)) {
			if (READ_ONCE(sf->used))
				return -ESTALE;
			WRITE_ONCE(sf->gen, gen);
		}
		s3cfs_drop_old_pages(inode, gen);
		ret = generic_file_read_iter(iocb, to);
		if (ret == -ESTALE) {
			/* Changed, found under the VFS's locks: rebind here. */
			int err = s3cfs_refresh_pending(inode, gen);

			if (err)
				return err;
		}
		if (atomic_read(&si->gen) == gen) {
			if (ret > 0)
				WRITE_ONCE(sf->used, true);
			return ret;
		}
		if (tries >= S3CFS_STALE_RETRIES)
			return -ESTALE;
		if (ret > 0)
			iov_iter_revert(to, ret);
		iocb->ki_pos = pos;
	}
}

/*
 * 6.5+ splices from the page cache without ->read_iter: follow a change
 * found by ->readahead/->read_folio here too, and drop the old version's
 * pages (as s3cfs_read_iter() does). Before 6.5 this goes through
 * s3cfs_read_iter(), which has done both already.
 */
static ssize_t s3cfs_file_splice_read(struct file *in, loff_t *ppos,
				      struct pipe_inode_info *pipe, size_t len,
				      unsigned int flags)
{
	struct inode *inode = file_inode(in);
	struct s3cfs_inode_info *si = S3CFS_I(inode);
	int tries, gen, err;
	ssize_t ret;

	for (tries = 0; ; tries++) {
		gen = atomic_read(&si->gen);
		s3cfs_drop_old_pages(inode, gen);
		ret = s3cfs_splice_read(in, ppos, pipe, len, flags);
		if (ret != -ESTALE || tries >= S3CFS_STALE_RETRIES)
			return ret;
		err = s3cfs_refresh_pending(inode, gen);
		if (err)
			return err;
		if (atomic_read(&si->gen) == gen)
			return ret;
	}
}

const struct file_operations s3cfs_file_fops = {
	.open		= s3cfs_open,
	.release	= s3cfs_release,
	.llseek		= generic_file_llseek,
	.read_iter	= s3cfs_read_iter,
	.mmap		= generic_file_readonly_mmap,
	.splice_read	= s3cfs_file_splice_read,
};
