// SPDX-License-Identifier: GPL-2.0
/*
 * s3cachefs: writing LOCAL files (writable mounts).
 *
 * Writes go into the upper page cache, as on any local filesystem; the
 * flusher (and close, fsync) writes dirty folios to the lower file
 * (wback.c), which is the file's whole content while it is LOCAL; close
 * and fsync upload it (upload.c). A folio that a write covers only in
 * part is first filled from the lower file (zeros past its end). Every
 * change happens under the upper i_rwsem, which the upload holds too, so
 * an upload sends exactly what was written before it began. (A queued
 * upload of write-back mode sends under wb_sem alone: a write goes on
 * into the page cache; a truncate or a fallocate, which change the lower
 * file, wait for its answer.)
 *
 * Space is reserved in the lower file (fallocate) before a write(2) puts
 * anything in the page cache, so a full cache device is ENOSPC to the
 * writer, not a folio that can never be written back; "full" leaves the
 * blocks the lower filesystem keeps for root (statfs's f_bavail). Mapped
 * writes dirty folios in ->page_mkwrite without i_rwsem and without a
 * reservation (it would take the lower i_rwsem under mmap_lock): a file
 * meant for mapped writes is fallocate'd first, or its ENOSPC comes at
 * msync/close.
 *
 * Lock order: upper i_rwsem -> folio lock -> lower i_rwsem; mmap_lock ->
 * folio lock. None of this runs under our invalidate_lock, which the read
 * path holds while it reads the lower file without ever waiting for its
 * i_rwsem (aops.c).
 */
#include "s3cachefs.h"
#include <linux/pagemap.h>
#include <linux/uio.h>
#include <linux/bvec.h>
#include <linux/namei.h>
#include <linux/falloc.h>
#include <linux/mm.h>
#include <linux/statfs.h>

/*
 * Make @inode ready for writing, i_rwsem held: its lower file open for
 * writing (once per inode) and, for an object's file, the file made LOCAL
 * (local.c); @trunc: what it holds is about to go (nothing is fetched).
 * Return: 0 or a negative errno (-EOPENSTALE: the object changed).
 */
static int s3cfs_make_writable(struct inode *inode, bool trunc)
{
	struct s3cfs_sb_info *sbi = S3CFS_SB(inode->i_sb);
	struct s3cfs_inode_info *si = S3CFS_I(inode);
	struct file *lower;
	int err = 0;

	if (!sbi->opts.writable)
		return -EROFS;
	down_write(&si->data_sem);
	if (!si->lower_wfile) {
		lower = dentry_open(&si->lower, O_RDWR | O_LARGEFILE | O_NOATIME,
				    sbi->creds);
		if (IS_ERR(lower))
			err = PTR_ERR(lower);
		else
			si->lower_wfile = lower;
	}
	up_write(&si->data_sem);
	if (err || s3cfs_inode_local(inode))
		return err;
	/* The daemon must know to leave a LOCAL file alone (local.c). */
	if (s3cfs_daemon_version() < 4) {
		s3cfs_pr_d(pr_info_ratelimited, si->lower.dentry,
			   "%*pE: s3cachefsd is too old to change objects (protocol %u, needs 4)\n",
			   s3cfs_daemon_version());
		return -EPERM;
	}
	return s3cfs_local_begin(inode, trunc);
}

/**
 * s3cfs_open_write() - an open for writing of @inode
 * @inode: upper inode of a regular file
 * @trunc: the open truncates (O_TRUNC)
 *
 * A file created here is LOCAL already; an object's file is made LOCAL
 * (local.c). Opens the lower file for writing once per inode.
 *
 * Return: 0 (counted in @nr_writers) or a negative errno (-EOPENSTALE:
 * the VFS opens the name again).
 */
int s3cfs_open_write(struct inode *inode, bool trunc)
{
	int err;

	/* The commit (upload.c) clears LOCAL under i_rwsem when no writer is left. */
	inode_lock(inode);
	err = s3cfs_make_writable(inode, trunc);
	if (!err)
		atomic_inc(&S3CFS_I(inode)->nr_writers);
	inode_unlock(inode);
	return err;
}

/*
 * Make @folio of a LOCAL file uptodate from the lower file before a write
 * covers part of it: the lower bytes, zeros past the lower file's end.
 */
static int s3cfs_fill_for_write(struct inode *inode, struct folio *folio)
{
	struct s3cfs_inode_info *si = S3CFS_I(inode);
	loff_t pos = folio_pos(folio);
	size_t len = folio_size(folio);
	struct bio_vec bv = {
		.bv_page = folio_page(folio, 0),
		.bv_len = len,
		.bv_offset = 0,
	};
	struct iov_iter iter;
	ssize_t n = 0;

	if (pos < i_size_read(inode)) {
		iov_iter_bvec(&iter, ITER_DEST, &bv, 1, len);
		n = vfs_iter_read(si->lower_wfile, &iter, &pos, 0);
		if (n < 0)
			return n;
	}
	if (n < len)
		folio_zero_range(folio, n, len - n);
	folio_mark_uptodate(folio);
	return 0;
}

/*
 * The bytes of @inode's page cache in [@from, @to), where @from is (or
 * was) its size and @to a size it grows to, made zeros. A store through a
 * shared mapping can land past EOF in the folio that holds EOF (a mapping
 * covers whole pages, and nothing stops it there): those bytes are not
 * the file's and must not become the file's when it grows, neither read
 * nor written back, and so never uploaded. No other folio can hold such
 * bytes: a mapping reaches no page past EOF (SIGBUS), and a truncate
 * drops them.
 *
 * Every growth of i_size calls it twice: before the size changes, so no
 * reader sees those bytes, and after, for a store that raced in between
 * (a store that lands before the size changes lands past EOF: its bytes
 * may be dropped; one after it faults nothing and is kept). The kernel
 * does the second half since 6.11 (pagecache_isize_extended()), but only
 * for dirty folios and a block size below the page size; 6.1 does
 * neither. Called with i_rwsem held.
 */
static void s3cfs_zero_past_eof(struct inode *inode, loff_t from, loff_t to)
{
	struct folio *folio;
	loff_t pos;
	size_t start, end;

	if (from >= to)
		return;
	folio = s3cfs_lock_folio(inode->i_mapping, from >> PAGE_SHIFT);
	if (!folio)
		return;
	pos = folio_pos(folio);
	/* Not uptodate: read from the lower file, which has zeros there. */
	if (folio_test_uptodate(folio) && from >= pos &&
	    from < pos + folio_size(folio)) {
		start = from - pos;
		end = min_t(loff_t, to - pos, folio_size(folio));
		folio_wait_stable(folio);
		folio_zero_range(folio, start, end - start);
	}
	folio_unlock(folio);
	folio_put(folio);
}

/* ->write_begin: lock the folio under @pos, filled unless written whole. */
int s3cfs_write_begin(struct file *file, struct address_space *mapping,
		      loff_t pos, unsigned int len, S3CFS_WB_FOLIO **foliop,
		      void **fsdata)
{
	struct inode *inode = mapping->host;
	struct folio *folio;
	int err;

	folio = s3cfs_write_begin_folio(mapping, pos, foliop);
	if (IS_ERR(folio))
		return PTR_ERR(folio);
	if (folio_test_uptodate(folio) ||
	    (offset_in_folio(folio, pos) == 0 && len >= folio_size(folio)))
		return 0;
	err = s3cfs_fill_for_write(inode, folio);
	if (err) {
		folio_unlock(folio);
		folio_put(folio);
	}
	return err;
}

/* ->write_end: @copied bytes went in; dirty the folio, grow the file. */
int s3cfs_write_end(struct file *file, struct address_space *mapping,
		    loff_t pos, unsigned int len, unsigned int copied,
		    S3CFS_WB_FOLIO *wb, void *fsdata)
{
	struct folio *folio = s3cfs_wb_to_folio(wb);
	struct inode *inode = mapping->host;

	if (!folio_test_uptodate(folio)) {
		/* Not filled (a whole-folio write): a short copy is redone. */
		if (copied < len) {
			copied = 0;
			goto out;
		}
		folio_mark_uptodate(folio);
	}
	if (pos + copied > i_size_read(inode))
		i_size_write(inode, pos + copied);
	if (copied) {
		folio_mark_dirty(folio);
		set_bit(S3CFS_I_DIRTY, &S3CFS_I(inode)->flags);
	}
out:
	folio_unlock(folio);
	folio_put(folio);
	return copied;
}

/* Reservations grow by this much past a write, trimmed at the upload. */
#define S3CFS_RESERVE_STEP	SZ_1M

/**
 * s3cfs_reserve_forget() - nothing is known reserved in the lower file
 * @si: the inode, whose lower blocks were freed (or may be from now on)
 */
void s3cfs_reserve_forget(struct s3cfs_inode_info *si)
{
	si->res_start = 0;
	si->res_end = 0;
}

/* fallocate(@mode) of the lower file of LOCAL @inode, as the mounter. */
static int s3cfs_lower_fallocate(struct inode *inode, int mode, loff_t pos,
				 loff_t len)
{
	const struct cred *old_cred;
	int err;

	/* Only a reservation leaves the content as it was. */
	if (mode != FALLOC_FL_KEEP_SIZE) {
		err = s3cfs_upq_changing(inode);
		if (err)
			return err;
	}
	old_cred = override_creds(S3CFS_SB(inode->i_sb)->creds);
	err = vfs_fallocate(S3CFS_I(inode)->lower_wfile, mode, pos, len);
	revert_creds(old_cred);
	return err;
}

/*
 * Room for @bytes more on the cache filesystem, leaving the blocks it keeps
 * for root: the lower writes run with the mounter's credentials, which may
 * take them, and a cache on the root filesystem must not fill it for the
 * system. Return: 0, -ENOSPC, or the statfs's error.
 */
static int s3cfs_lower_room(struct inode *inode, u64 bytes)
{
	struct kstatfs st;
	int err = vfs_statfs(&S3CFS_I(inode)->lower, &st);

	if (err)
		return err;
	return (u64)st.f_bavail * st.f_bsize < bytes ? -ENOSPC : 0;
}

/*
 * Reserve lower blocks under [@pos, @pos + @len) of LOCAL @inode before a
 * write puts it in the page cache. A write that continues the last
 * reservation reserves up to a step past its end (a sequential writer
 * calls fallocate once per step, not per write). Called with i_rwsem.
 * Return: 0 or a negative errno (-ENOSPC: the cache device is full).
 */
static int s3cfs_reserve(struct inode *inode, loff_t pos, size_t len)
{
	struct s3cfs_inode_info *si = S3CFS_I(inode);
	loff_t start = round_down(pos, PAGE_SIZE);
	loff_t end = round_up(pos + len, PAGE_SIZE);
	int err;

	if (start >= si->res_start && end <= si->res_end)
		return 0;
	if (start >= si->res_start && start <= si->res_end &&
	    si->res_end > si->res_start)
		start = si->res_end;
	else
		si->res_start = start;
	end = round_up(end, S3CFS_RESERVE_STEP);
	err = s3cfs_lower_room(inode, end - start) ?:
	      s3cfs_lower_fallocate(inode, FALLOC_FL_KEEP_SIZE, start,
				    end - start);
	if (err == -ENOSPC && end > round_up(pos + len, PAGE_SIZE)) {
		/* No room for the step: the write's own blocks may fit. */
		end = round_up(pos + len, PAGE_SIZE);
		err = s3cfs_lower_room(inode, end - start) ?:
		      s3cfs_lower_fallocate(inode, FALLOC_FL_KEEP_SIZE, start,
					    end - start);
	}
	if (err) {
		s3cfs_reserve_forget(si);
		/* Lower filesystems without fallocate: no reservation. */
		return err == -EOPNOTSUPP ? 0 : err;
	}
	si->res_end = end;
	return 0;
}

/**
 * s3cfs_write_iter() - ->write_iter of a LOCAL file
 * @iocb: the write
 * @from: the data
 *
 * Buffered, O_DIRECT included: an O_DIRECT write (aligned as the lower
 * filesystem requires, EINVAL otherwise, as on ext4) is written to the
 * lower file before it returns, and reads see it at once either way.
 *
 * Return: bytes written or a negative errno.
 */
ssize_t s3cfs_write_iter(struct kiocb *iocb, struct iov_iter *from)
{
	struct file *file = iocb->ki_filp;
	struct inode *inode = file_inode(file);
	bool direct = iocb->ki_flags & IOCB_DIRECT;
	loff_t pos, old_size;
	ssize_t ret;
	int err;

	inode_lock(inode);
	/* Committed under us cannot happen (we are a writer); a conflict can. */
	ret = -ESTALE;
	if (!s3cfs_inode_local(inode) || s3cfs_inode_stale(inode))
		goto out;
	ret = generic_write_checks(iocb, from);
	if (ret <= 0)
		goto out;
	ret = -EINVAL;
	if (direct && !s3cfs_dio_aligned(S3CFS_I(inode), iocb->ki_pos, from))
		goto out;
	ret = s3cfs_reserve(inode, iocb->ki_pos, iov_iter_count(from));
	if (ret)
		goto out;
	ret = file_update_time(file);
	if (ret)
		goto out;
	pos = iocb->ki_pos;
	old_size = i_size_read(inode);
	/* A gap between EOF and the write: zeros, whatever a mapping stored. */
	s3cfs_zero_past_eof(inode, old_size, pos);
	iocb->ki_flags &= ~IOCB_DIRECT;
	/* Advances ki_pos (6.1 stable has it too, backported from 6.4). */
	ret = generic_perform_write(iocb, from);
	if (direct)
		iocb->ki_flags |= IOCB_DIRECT;
	if (ret > 0)
		s3cfs_zero_past_eof(inode, old_size, pos);
	if (ret > 0 && direct) {
		err = filemap_write_and_wait_range(inode->i_mapping, pos,
						   pos + ret - 1);
		if (err)
			ret = err;
	}
	if (ret > 0)
		s3cfs_stream_wrote(inode, pos, ret, old_size);
out:
	inode_unlock(inode);
	if (ret > 0)
		ret = generic_write_sync(iocb, ret);
	return ret;
}

/**
 * s3cfs_truncate_lower() - set the size of a LOCAL file's lower file
 * @inode: upper inode (LOCAL)
 * @size: the new size
 *
 * Return: 0 or a negative errno.
 */
int s3cfs_truncate_lower(struct inode *inode, loff_t size)
{
	struct s3cfs_sb_info *sbi = S3CFS_SB(inode->i_sb);
	const struct cred *old_cred;
	int err;

	err = s3cfs_upq_changing(inode);
	if (err)
		return err;
	old_cred = override_creds(sbi->creds);
	err = vfs_truncate(&S3CFS_I(inode)->lower, size);
	revert_creds(old_cred);
	return err;
}

/*
 * truncate(2) of LOCAL @inode to @size (not its size; setattr_prepare()
 * checked it against s_maxbytes). Growing, the lower file grows first:
 * its failure (ENOSPC, the lower filesystem's EFBIG, a write-back record
 * that cannot be dropped) leaves the size as it was. Shrinking, the page
 * cache past @size goes first (nothing is written back there after the
 * lower truncate); a lower truncate that fails then leaves the new size,
 * and the next upload truncates the lower file again
 * (s3cfs_upload_prepare()). Called with i_rwsem held.
 */
static int s3cfs_setsize(struct inode *inode, loff_t size)
{
	struct s3cfs_inode_info *si = S3CFS_I(inode);
	loff_t old = i_size_read(inode);
	int err;

	inode_dio_wait(inode);
	if (size > old) {
		s3cfs_zero_past_eof(inode, old, size);
		/* Outside invalidate_lock: see the lock order above. */
		err = s3cfs_truncate_lower(inode, size);
		if (err)
			return err;
		truncate_setsize(inode, size);
		s3cfs_zero_past_eof(inode, old, size);
		s3cfs_reserve_forget(si);
	} else {
		/* The record goes first: nothing below may fail for it. */
		err = s3cfs_upq_changing(inode);
		if (err)
			return err;
		truncate_setsize(inode, size);
		s3cfs_reserve_forget(si);
		err = s3cfs_truncate_lower(inode, size);
	}
	set_bit(S3CFS_I_DIRTY, &si->flags);
	return err;
}

/**
 * s3cfs_attr_changes_ids() - does @attr change @inode's mode or owner?
 * @inode: the inode
 * @attr: a setattr request
 *
 * Return: true if it asks for permission bits, a uid or a gid other than
 * the inode's (asking for what it has changes nothing).
 */
bool s3cfs_attr_changes_ids(struct inode *inode, const struct iattr *attr)
{
	return ((attr->ia_valid & ATTR_MODE) &&
		(attr->ia_mode & S_IALLUGO) != (inode->i_mode & S_IALLUGO)) ||
	       ((attr->ia_valid & ATTR_UID) &&
		!vfsuid_eq_kuid(attr->ia_vfsuid, inode->i_uid)) ||
	       ((attr->ia_valid & ATTR_GID) &&
		!vfsgid_eq_kgid(attr->ia_vfsgid, inode->i_gid));
}

/*
 * truncate(2) of a regular file, i_rwsem held: an open for writing, the
 * truncate and the close in one call. The file is made LOCAL as an open
 * would (an object's bytes below the new size fetched first), and with no
 * writer left to close it, it goes to S3 (in write-back mode: is
 * acknowledged) before the call returns; the error is the upload's, as
 * close's, and what failed stays here as after a failed close.
 */
static int s3cfs_truncate_path(struct dentry *dentry, struct iattr *attr)
{
	struct inode *inode = d_inode(dentry);
	int err;

	err = s3cfs_make_writable(inode, attr->ia_size == 0);
	if (err == -EOPENSTALE)
		err = -ESTALE;	/* the object changed: no open to retry */
	if (err)
		return err;
	if (s3cfs_inode_stale(inode))
		return -ESTALE;
	err = s3cfs_setsize(inode, attr->ia_size);
	if (err)
		return err;
	setattr_copy(S3CFS_IDMAP_NOP, inode, attr);
	if (atomic_read(&S3CFS_I(inode)->nr_writers))
		return 0;	/* their close sends it */
	return s3cfs_upload_truncated(inode, dentry);
}

/*
 * s3cfs_setattr() - ->setattr: size and times of LOCAL files, directories' times
 * @dentry: the file
 * @attr: what to change
 *
 * Owners and modes come from the mount options and are not changed
 * (EPERM), nor is anything of a file that is not LOCAL but its size by
 * truncate(2) (s3cfs_truncate_path()); on a posix_meta
 * mount, a file's or symlink's are its object's (s3cfs_posix_setattr()).
 * A size that changes without times given (truncate(2)) sets mtime and
 * ctime, as ftruncate(2) does. A request for
 * the mode, owner or size a file already has changes nothing and
 * succeeds, whatever the file (cp -p, Python's shutil.copymode and
 * scripts set what is already so). Called with i_rwsem held.
 *
 * Return: 0 or a negative errno.
 */
int s3cfs_setattr(S3CFS_IDMAP_ARG, struct dentry *dentry, struct iattr *attr)
{
	struct inode *inode = d_inode(dentry);
	int err;

	err = setattr_prepare(S3CFS_IDMAP_NOP, dentry, attr);
	if (err)
		return err;
	/* A queued upload sent meanwhile: its answer first. */
	s3cfs_upq_settle(inode);
	if ((attr->ia_valid & ATTR_SIZE) && attr->ia_size == i_size_read(inode))
		attr->ia_valid &= ~ATTR_SIZE;
	/* truncate(2) passes no times: a size that changes sets them. */
	if ((attr->ia_valid & (ATTR_SIZE | ATTR_MTIME)) == ATTR_SIZE) {
		attr->ia_mtime = current_time(inode);
		attr->ia_ctime = attr->ia_mtime;
		attr->ia_valid |= ATTR_MTIME | ATTR_CTIME;
	}
	/*
	 * A truncate, or attributes set by hand (the stream's upload was
	 * created with the old ones).
	 */
	if (S_ISREG(inode->i_mode) &&
	    (attr->ia_valid & (ATTR_SIZE | ATTR_MTIME | ATTR_MODE | ATTR_UID |
			       ATTR_GID)))
		s3cfs_stream_break(inode);
	/* Modes, owners and mtimes kept in S3 (posix.c); symlinks' too. */
	if (S3CFS_SB(inode->i_sb)->opts.posix_meta &&
	    (S_ISREG(inode->i_mode) || S_ISLNK(inode->i_mode)) &&
	    !(attr->ia_valid & ATTR_SIZE))
		return s3cfs_posix_setattr(dentry, attr);
	if (s3cfs_attr_changes_ids(inode, attr)) {
		/* A directory's modes and owners on its marker (posix.c). */
		if (S3CFS_SB(inode->i_sb)->opts.posix_meta &&
		    S_ISDIR(inode->i_mode))
			return s3cfs_posix_dir_setattr(dentry, attr);
		return -EPERM;
	}
	attr->ia_valid &= ~(ATTR_MODE | ATTR_UID | ATTR_GID);
	if (S_ISDIR(inode->i_mode)) {
		/* S3 has no directory times: ours are this node's, as shown. */
		setattr_copy(S3CFS_IDMAP_NOP, inode, attr);
		return 0;
	}
	if (!(attr->ia_valid & (ATTR_SIZE | ATTR_ATIME | ATTR_MTIME)))
		return 0;	/* nothing changes (ctime stays S3's) */
	if ((attr->ia_valid & (ATTR_SIZE | ATTR_FILE)) == ATTR_SIZE)
		return s3cfs_truncate_path(dentry, attr);
	if (!s3cfs_inode_local(inode))
		return -EPERM;
	if (s3cfs_inode_stale(inode))
		return -ESTALE;
	if (attr->ia_valid & ATTR_SIZE) {
		err = s3cfs_setsize(inode, attr->ia_size);
		if (err)
			return err;
	}
	setattr_copy(S3CFS_IDMAP_NOP, inode, attr);
	return 0;
}

/**
 * s3cfs_fallocate() - ->fallocate of a LOCAL file
 * @file: open for writing
 * @mode: 0 or FALLOC_FL_KEEP_SIZE (reserve, and grow unless KEEP_SIZE),
 *	FALLOC_FL_PUNCH_HOLE or FALLOC_FL_ZERO_RANGE (zeros; with KEEP_SIZE)
 * @offset: start of the range
 * @len: its length
 *
 * The lower file does the work; the page cache is written back over the
 * range first and dropped after, so no folio written before the call
 * lands on the new zeros. Collapsing and inserting ranges would move
 * bytes S3 has as they are: EOPNOTSUPP.
 *
 * Return: 0 or a negative errno.
 */
long s3cfs_fallocate(struct file *file, int mode, loff_t offset, loff_t len)
{
	struct inode *inode = file_inode(file);
	struct s3cfs_inode_info *si = S3CFS_I(inode);
	bool zeroes = mode & (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE);
	loff_t end = offset + len, old;
	bool grows;
	long err;

	if (mode & ~(FALLOC_FL_KEEP_SIZE | FALLOC_FL_PUNCH_HOLE |
		     FALLOC_FL_ZERO_RANGE))
		return -EOPNOTSUPP;
	inode_lock(inode);
	/* A queued upload sent meanwhile: its answer first. */
	s3cfs_upq_settle(inode);
	err = -ESTALE;
	if (!s3cfs_inode_local(inode) || s3cfs_inode_stale(inode))
		goto out;
	inode_dio_wait(inode);
	old = i_size_read(inode);
	grows = !(mode & FALLOC_FL_KEEP_SIZE) && end > old;
	if (zeroes || grows)
		s3cfs_stream_break(inode);
	if (zeroes) {
		err = filemap_write_and_wait_range(inode->i_mapping, offset,
						   end - 1);
		if (err)
			goto out;
		s3cfs_reserve_forget(si);
	}
	/* Zeros past EOF whatever a mapping stored there (s3cfs_setsize()). */
	if (grows)
		s3cfs_zero_past_eof(inode, old, end);
	/*
	 * A failure leaves the size as it was (the lower file may have grown:
	 * the upload truncates it to the file's size).
	 */
	err = s3cfs_lower_fallocate(inode, mode, offset, len);
	if (err)
		goto out;
	if (zeroes)
		truncate_pagecache_range(inode, offset, end - 1);
	if (grows) {
		truncate_setsize(inode, end);
		s3cfs_zero_past_eof(inode, old, end);
	} else if (!zeroes) {
		goto out;	/* only reserved: the content is the same */
	}
	err = file_update_time(file);
	set_bit(S3CFS_I_DIRTY, &si->flags);
out:
	inode_unlock(inode);
	return err;
}

/*
 * A mapped write to a folio of a LOCAL file: dirty it (and the file) for
 * writeback and the next upload. A file that is no longer ours to write
 * (a conflict made it stale) gets SIGBUS, as write(2) gets ESTALE.
 */
static vm_fault_t s3cfs_page_mkwrite(struct vm_fault *vmf)
{
	struct file *file = vmf->vma->vm_file;
	struct inode *inode = file_inode(file);
	struct folio *folio = page_folio(vmf->page);
	vm_fault_t ret = VM_FAULT_LOCKED;

	sb_start_pagefault(inode->i_sb);
	file_update_time(file);
	folio_lock(folio);
	if (folio->mapping != inode->i_mapping ||
	    folio_pos(folio) >= i_size_read(inode)) {
		/* Truncated meanwhile: the fault is retried. */
		folio_unlock(folio);
		ret = VM_FAULT_NOPAGE;
		goto out;
	}
	if (!s3cfs_inode_local(inode) || s3cfs_inode_stale(inode)) {
		folio_unlock(folio);
		ret = VM_FAULT_SIGBUS;
		goto out;
	}
	folio_mark_dirty(folio);
	set_bit(S3CFS_I_DIRTY, &S3CFS_I(inode)->flags);
	s3cfs_stream_break(inode);
	folio_wait_stable(folio);
out:
	sb_end_pagefault(inode->i_sb);
	return ret;
}

/* Shared writable mappings of LOCAL files (file.c decides). */
const struct vm_operations_struct s3cfs_write_vm_ops = {
	.fault		= filemap_fault,
	.map_pages	= filemap_map_pages,
	.page_mkwrite	= s3cfs_page_mkwrite,
};
