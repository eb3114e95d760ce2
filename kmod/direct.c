// SPDX-License-Identifier: GPL-2.0
/*
 * s3cachefs: O_DIRECT reads.
 *
 * A read of a file opened with O_DIRECT bypasses our page cache: the
 * chunks under it are made present (fetched from S3 if missing), then the
 * lower file, which is opened with O_DIRECT too (file.c), is read straight
 * into the caller's buffer. The lower filesystem checks the alignment of
 * each piece; the whole request is checked here first, against the same
 * rule (the lower device's logical block size), so that an unaligned read
 * fails with EINVAL as on ext4 without fetching anything.
 *
 * A read is made in pieces of at most S3CFS_DIO_PIECE, each held present
 * (s3cfs_chunks_hold()) for its lower read only, so a large read does not
 * need the whole range in the cache at once. A reader that continues where
 * its last read ended gets the same window read ahead as a buffered reader
 * (readahead_kb), fetched into the cache while it copies.
 */
#include "s3cachefs.h"
#include <linux/blkdev.h>
#include <linux/uio.h>

/* Largest lower read made for one piece of an O_DIRECT read. */
#define S3CFS_DIO_PIECE		SZ_4M

/**
 * s3cfs_dio_aligned() - may direct I/O at @pos into or from @iter go to
 *	the lower file, as the lower filesystem requires?
 * @si: the inode
 * @pos: file position
 * @iter: the caller's buffer
 *
 * Return: true if both are aligned to the lower device's logical block
 * size (the filesystem's block size without a device).
 */
bool s3cfs_dio_aligned(struct s3cfs_inode_info *si, loff_t pos,
		       const struct iov_iter *iter)
{
	struct super_block *lsb = si->lower.dentry->d_sb;
	unsigned int align = lsb->s_bdev ?
		bdev_logical_block_size(lsb->s_bdev) : lsb->s_blocksize;

	return !((pos | iov_iter_alignment(iter)) & (align - 1));
}

/* Pages of the caller's buffer looked up at a time by s3cfs_dio_fault_in(). */
#define S3CFS_DIO_PROBE		16

/*
 * Fault in the first @len bytes of the caller's buffer @to, as
 * fault_in_iov_iter_writeable() does (and returns: the bytes that could
 * not be). Pages already there are only looked up, with
 * get_user_pages_fast(), as the lower read does; the other faults each
 * page, present or not, under mmap_lock, which cost a warm 1 MiB
 * O_DIRECT read as much CPU as the lower read itself.
 */
static size_t s3cfs_dio_fault_in(const struct iov_iter *to, size_t len)
{
	struct page *pages[S3CFS_DIO_PROBE];
	struct iov_iter it = *to;
	size_t start;
	ssize_t n;
	int i;

	if (!user_backed_iter(to))
		return fault_in_iov_iter_writeable(to, len);
	while (len) {
		n = iov_iter_get_pages2(&it, pages, len, ARRAY_SIZE(pages),
					&start);
		if (n <= 0)
			break;
		for (i = 0; i < DIV_ROUND_UP(start + n, PAGE_SIZE); i++)
			put_page(pages[i]);
		len -= n;
	}
	return len;
}

/*
 * Read [@pos, @pos + @len) of the lower file into @to, the chunks held
 * present. Return: bytes read (short at the lower file's end), or a
 * negative errno (-EAGAIN for IOCB_NOWAIT when it would block).
 */
static ssize_t s3cfs_dio_piece(struct kiocb *iocb, struct inode *inode,
			       struct iov_iter *to, loff_t pos, size_t len)
{
	struct s3cfs_sb_info *sbi = S3CFS_SB(inode->i_sb);
	struct s3cfs_inode_info *si = S3CFS_I(inode);
	bool nowait = iocb->ki_flags & IOCB_NOWAIT;
	const struct cred *old_cred;
	struct kiocb lower_iocb;
	size_t count;
	ssize_t ret;

	if (nowait) {
		if (!s3cfs_chunks_hold(inode, pos, len))
			return -EAGAIN;
	} else {
		/*
		 * Fault the buffer in before the hold: a buffer mapped from
		 * a file of ours would otherwise fault under our hold.
		 */
		if (s3cfs_dio_fault_in(to, len) == len)
			return -EFAULT;
		ret = s3cfs_fill_hold(inode, pos, len);
		if (ret < 0)
			return ret;
	}

	count = iov_iter_count(to);
	iov_iter_truncate(to, len);
	init_sync_kiocb(&lower_iocb, si->lower_file);
	lower_iocb.ki_pos = pos;
	lower_iocb.ki_flags |= iocb->ki_flags & IOCB_NOWAIT;
	old_cred = override_creds(sbi->creds);
	ret = vfs_iocb_iter_read(si->lower_file, &lower_iocb, to);
	revert_creds(old_cred);
	iov_iter_reexpand(to, count - len + iov_iter_count(to));
	s3cfs_chunks_unhold(inode);
	return ret;
}

/**
 * s3cfs_direct_read() - an O_DIRECT read of the inode's own version
 * @iocb: the caller's kiocb (IOCB_DIRECT), ki_pos advanced by what is read
 * @to: the caller's buffer
 *
 * Return: bytes read (0 at or past the object's end), or a negative errno:
 * -EINVAL for a position, buffer or length the lower filesystem cannot
 * read directly, -EAGAIN under IOCB_NOWAIT when a chunk is missing, the
 * errors of s3cfs_chunks_ensure(), -EIO when the lower file is shorter than
 * the object.
 */
ssize_t s3cfs_direct_read(struct kiocb *iocb, struct iov_iter *to)
{
	struct file *file = iocb->ki_filp;
	struct inode *inode = file_inode(file);
	struct s3cfs_sb_info *sbi = S3CFS_SB(inode->i_sb);
	struct s3cfs_inode_info *si = S3CFS_I(inode);
	struct s3cfs_file *sf = file->private_data;
	loff_t pos = iocb->ki_pos, isize = i_size_read(inode), want, end;
	size_t count = iov_iter_count(to), done = 0, len;
	bool was_local = s3cfs_inode_local(inode);
	unsigned int ra_kb;
	ssize_t ret = 0;

	if (!count)
		return 0;
	if (!s3cfs_dio_aligned(si, pos, to))
		return -EINVAL;
	if (pos >= isize)
		return 0;
	want = min_t(loff_t, pos + count, isize);
	/*
	 * Written here: what the page cache holds goes to the lower file
	 * first (a writeback error is left for the writer's fsync to see).
	 */
	if (s3cfs_inode_local(inode)) {
		ret = filemap_fdatawrite_range(inode->i_mapping, pos, want - 1);
		if (!ret)
			ret = filemap_fdatawait_range_keep_errors(inode->i_mapping,
								  pos, want - 1);
		if (ret)
			return ret;
	}

	/*
	 * A stream: fetch this read (the reader waits for it) and the window
	 * after it (readahead) at once.
	 */
	ra_kb = READ_ONCE(sbi->opts.readahead_kb);
	if (ra_kb && pos == READ_ONCE(sf->dio_next) &&
	    !(iocb->ki_flags & IOCB_NOWAIT))
		s3cfs_chunks_prefetch(inode, pos,
				      want - pos + ((u64)ra_kb << 10), want);

	while (pos < want) {
		/* Pieces end on chunk boundaries, which are aligned. */
		end = min_t(loff_t, round_down(pos, S3CFS_DIO_PIECE) +
			    S3CFS_DIO_PIECE, pos + iov_iter_count(to));
		len = end - pos;
		ret = s3cfs_dio_piece(iocb, inode, to, pos, len);
		if (ret < 0)
			break;
		/*
		 * Made LOCAL meanwhile (local.c), perhaps emptied by an
		 * O_TRUNC: this piece may have read a hole, and the size the
		 * read began with is not the file's. What came before it is.
		 */
		if (!was_local && s3cfs_inode_local(inode)) {
			iov_iter_revert(to, ret);
			ret = 0;
			break;
		}
		if (!ret && s3cfs_inode_local(inode)) {
			/* Past the written back end of a LOCAL file: a hole. */
			ret = iov_iter_zero(want - pos, to);
			pos += ret;
			done += ret;
			break;
		}
		if (!ret) {	/* the lower file ends before the object */
			ret = -EIO;
			break;
		}
		/* The lower file may run past the object's end: not ours. */
		if (pos + ret > isize) {
			iov_iter_revert(to, pos + ret - isize);
			ret = isize - pos;
		}
		pos += ret;
		done += ret;
		if ((size_t)ret < len) {
			/* Short below the object's end: the lower lost data. */
			if (pos < want && s3cfs_inode_local(inode)) {
				ret = iov_iter_zero(want - pos, to);
				pos += ret;
				done += ret;
			} else if (pos < want) {
				ret = -EIO;
			}
			break;
		}
	}
	if (done) {
		iocb->ki_pos = pos;
		WRITE_ONCE(sf->dio_next, pos);
		atomic64_add(done, &sbi->stats.direct_bytes);
		return done;
	}
	return ret;
}
