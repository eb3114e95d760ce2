// SPDX-License-Identifier: GPL-2.0
/*
 * s3cachefs: regular files.
 *
 * Reads go through the page cache of the upper inode (aops.c), O_DIRECT
 * reads past it (direct.c). The lower file is opened once per inode,
 * read-only with O_DIRECT, at first open.
 *
 * One open, one version: an upper inode is one object version (inode.c),
 * so an open file reads one version as long as it reads its own inode.
 * When the inode goes stale (the object changed in S3), an open that has
 * returned bytes of it (or mapped it) gets ESTALE from then on, as on NFS;
 * an open that has returned nothing yet is passed on to an open of the
 * name's new inode (struct s3cfs_file, @next) and reads the new version.
 * The choice is made under the open's lock, with no read of the old inode
 * in progress, so no open ever returns bytes of two versions:
 *
 *   CPU0 (read, same open)            CPU1 (read, same open)
 *   s3cfs_read_begin(): active++
 *                                     s3cfs_read_begin(): stale, but
 *                                       active: read the old inode too
 *   reads old bytes, used = true
 *                                     (fails or reads old bytes)
 *   next read: stale && used: ESTALE  next read: likewise
 */
#include "s3cachefs.h"
#include <linux/mm.h>
#include <linux/pagemap.h>
#include <linux/uio.h>
#include <linux/slab.h>
#include <linux/namei.h>

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
	int err;

	/* A changed object: the VFS looks the name up again and retries. */
	if (s3cfs_inode_stale(inode))
		return -EOPENSTALE;
	/* Listed, with no lower file yet (index.c): it gets one now. */
	if (s3cfs_inode_listed(inode)) {
		err = s3cfs_inode_adopt(file->f_path.dentry);
		if (err)
			return err == -ESTALE ? -EOPENSTALE : err;
	}
	err = generic_file_open(inode, file);
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
	if (err)
		return err;
	sf = kzalloc(sizeof(*sf), GFP_KERNEL);
	if (!sf)
		return -ENOMEM;
	if (file->f_mode & FMODE_WRITE) {
		err = s3cfs_open_write(inode, file->f_flags & O_TRUNC);
		if (err) {
			kfree(sf);
			return err;
		}
		/* A writer is bound to its inode: never passed on (read_begin). */
		sf->used = true;
	}
	/*
	 * A file this open created is uploaded at its close even when the
	 * open cannot write (O_CREAT|O_RDONLY: flock(1)'s lock files).
	 */
	sf->uploads = !!(file->f_mode & (FMODE_WRITE | FMODE_CREATED));
	spin_lock_init(&sf->lock);
	file->private_data = sf;
	/* O_DIRECT reads bypass our page cache (direct.c). */
	file->f_mode |= FMODE_CAN_ODIRECT;
	s3cfs_touch_lower(inode);
	return 0;
}

static int s3cfs_release(struct inode *inode, struct file *file)
{
	struct s3cfs_file *sf = file->private_data;

	/*
	 * The last reference went without an uploading ->flush (a mapping or
	 * another thread held the file at close): upload now; an error is
	 * logged, nobody is left to return it to.
	 */
	if (sf->uploads && s3cfs_inode_local(inode) && !sf->uploaded)
		s3cfs_upload(file, true);
	if (file->f_mode & FMODE_WRITE) {
		/* No upload to come that could use the file's stream. */
		if (atomic_dec_and_test(&S3CFS_I(inode)->nr_writers) &&
		    !test_bit(S3CFS_I_QUEUED, &S3CFS_I(inode)->flags))
			s3cfs_stream_drop(inode);
	}
	if (sf->next)
		fput(sf->next);
	kfree(sf);
	return 0;
}

/*
 * close(2) of the last reference to an open file description that was
 * opened for writing, or that created the file, uploads the file
 * (upload.c) and returns the upload's error: close-to-open, as on NFS. A
 * descriptor dup'ed and closed earlier (a shell redirection) uploads
 * nothing.
 */
static int s3cfs_flush(struct file *file, fl_owner_t id)
{
	struct s3cfs_file *sf = file->private_data;

	if (!sf->uploads || file_count(file) > 1)
		return 0;
	sf->uploaded = true;	/* tried: ->release does not try again */
	return s3cfs_upload(file, true);
}

/*
 * S3 cannot take part of an object: any fsync of a file with changes
 * uploads all of it (upload.c).
 */
static int s3cfs_fsync(struct file *file, loff_t start, loff_t end,
		       int datasync)
{
	int err = s3cfs_upload(file, false);

	return err ?: file_check_and_advance_wb_err(file);
}

/*
 * An open of the object's current version under @file's name: the name
 * is looked up again (our ->d_revalidate fails for the stale inode, so
 * the lookup finds the new lower file).
 */
static struct file *s3cfs_open_next(struct file *file)
{
	struct inode *inode = file_inode(file);
	struct dentry *parent, *dentry;
	struct name_snapshot name;
	struct file *next;
	struct path path;

	parent = dget_parent(file->f_path.dentry);
	take_dentry_name_snapshot(&name, file->f_path.dentry);
	dentry = lookup_one_len_unlocked(name.name.name, parent,
					 name.name.len);
	release_dentry_name_snapshot(&name);
	dput(parent);
	if (IS_ERR(dentry))
		return ERR_CAST(dentry);
	/* Gone from S3, or the daemon replaced nothing: no newer version. */
	if (d_really_is_negative(dentry) || d_inode(dentry) == inode ||
	    !d_is_reg(dentry)) {
		dput(dentry);
		return ERR_PTR(-ESTALE);
	}
	path.mnt = file->f_path.mnt;
	path.dentry = dentry;
	next = dentry_open(&path, file->f_flags & ~(O_CREAT | O_EXCL | O_TRUNC),
			   file->f_cred);
	dput(dentry);
	return next;
}

/**
 * s3cfs_read_begin() - decide what a read of an open file reads
 * @file: the open file
 * @may_lookup: the caller holds no lock that forbids a name lookup (mmap
 *	holds mmap_lock, which readdir takes under the directory's i_rwsem)
 *
 * Return: NULL to read @file's own inode (then call s3cfs_read_end()), a
 * referenced open of the object's newer version to read instead, or
 * ERR_PTR(-ESTALE) when @file has returned bytes of a version that is gone
 * (or, without @may_lookup, when the newer version has not been opened).
 */
static struct file *s3cfs_read_begin(struct file *file, bool may_lookup)
{
	struct s3cfs_file *sf = file->private_data;
	struct file *next = NULL, *cand;

	for (;;) {
		spin_lock(&sf->lock);
		if (sf->next) {
			next = get_file(sf->next);
		} else if (!s3cfs_inode_stale(file_inode(file)) || sf->active) {
			sf->active++;
		} else if (sf->used || !may_lookup) {
			next = ERR_PTR(-ESTALE);
		} else {
			spin_unlock(&sf->lock);
			cand = s3cfs_open_next(file);
			if (IS_ERR(cand))
				return cand;
			spin_lock(&sf->lock);
			if (!sf->next && !sf->used && !sf->active) {
				sf->next = cand;
				cand = NULL;
			}
			spin_unlock(&sf->lock);
			if (cand)
				fput(cand);
			continue;	/* look again */
		}
		spin_unlock(&sf->lock);
		return next;
	}
}

/* A read of @file's own inode is over; @ret > 0: it returned bytes. */
static void s3cfs_read_end(struct file *file, ssize_t ret)
{
	struct s3cfs_file *sf = file->private_data;

	spin_lock(&sf->lock);
	sf->active--;
	if (ret > 0)
		sf->used = true;
	spin_unlock(&sf->lock);
}

/*
 * A read that failed because the inode went stale under it returned
 * nothing: unless the open has returned bytes before, it reads the new
 * version (s3cfs_read_begin() decides).
 */
static bool s3cfs_read_again(struct file *file, ssize_t ret)
{
	return ret < 0 && ret != -EINTR && s3cfs_inode_stale(file_inode(file));
}

static ssize_t s3cfs_read_iter(struct kiocb *iocb, struct iov_iter *to)
{
	struct file *file = iocb->ki_filp;
	struct file *next;
	int tries = 0;
	ssize_t ret;

	/*
	 * A file read from the page cache fetches nothing: record the use.
	 * Only for read(2) into user memory: splice (a pipe iterator before
	 * 6.5) and ->mmap run under the pipe's lock or mmap_lock, taken after
	 * sb_writers and i_rwsem elsewhere; those readers count at open.
	 */
	if (user_backed_iter(to) && !(iocb->ki_flags & IOCB_NOWAIT))
		s3cfs_touch_lower(file_inode(file));
again:
	next = s3cfs_read_begin(file, true);
	if (IS_ERR(next))
		return PTR_ERR(next);
	if (next) {
		ret = -EAGAIN;
		if (!(iocb->ki_flags & IOCB_NOWAIT))
			ret = vfs_iter_read(next, to, &iocb->ki_pos, 0);
		fput(next);
		return ret;
	}
	if (iocb->ki_flags & IOCB_DIRECT)
		ret = s3cfs_direct_read(iocb, to);
	else
		ret = generic_file_read_iter(iocb, to);
	s3cfs_read_end(file, ret);
	if (s3cfs_read_again(file, ret) && !tries++)
		goto again;
	return ret;
}

/*
 * 6.5+ splices from the page cache without ->read_iter: the same rules as
 * s3cfs_read_iter(). Before 6.5 s3cfs_splice_read() goes through
 * s3cfs_read_iter(), whose own begin/end nest inside these.
 */
static ssize_t s3cfs_file_splice_read(struct file *in, loff_t *ppos,
				      struct pipe_inode_info *pipe, size_t len,
				      unsigned int flags)
{
	struct file *next;
	int tries = 0;
	ssize_t ret;

again:
	next = s3cfs_read_begin(in, true);
	if (IS_ERR(next))
		return PTR_ERR(next);
	if (next) {
		ret = s3cfs_vfs_splice_read(next, ppos, pipe, len, flags);
		fput(next);
		return ret;
	}
	ret = s3cfs_splice_read(in, ppos, pipe, len, flags);
	s3cfs_read_end(in, ret);
	if (s3cfs_read_again(in, ret) && !tries++)
		goto again;
	return ret;
}

/*
 * A mapping shows the inode's pages as they are: mapping counts as having
 * returned bytes. A stale inode is mapped only by an open that has
 * returned nothing and was passed on to the newer version by a read: that
 * is mapped instead. A fault that needs data the stale inode cannot fetch
 * gets SIGBUS. A shared mapping that may be written (the file is open for
 * writing, so LOCAL until the mapping's file is released) dirties folios
 * through ->page_mkwrite (write.c); the upload at the release or msync
 * sends them.
 */
static int s3cfs_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct file *next = s3cfs_read_begin(file, true);
	int err;

	if (IS_ERR(next))
		return PTR_ERR(next);
	if (next) {
		err = -ENODEV;
		if (next->f_op->mmap) {
			vma_set_file(vma, next);
			err = next->f_op->mmap(next, vma);
		}
		fput(next);
		return err;
	}
	if ((vma->vm_flags & (VM_SHARED | VM_MAYWRITE)) ==
	    (VM_SHARED | VM_MAYWRITE)) {
		err = -ESTALE;
		if (s3cfs_inode_local(file_inode(file))) {
			file_accessed(file);
			vma->vm_ops = &s3cfs_write_vm_ops;
			err = 0;
		}
	} else {
		err = generic_file_readonly_mmap(file, vma);
	}
	s3cfs_read_end(file, err ? err : 1);
	return err;
}

const struct file_operations s3cfs_file_fops = {
	.open		= s3cfs_open,
	.release	= s3cfs_release,
	.llseek		= generic_file_llseek,
	.read_iter	= s3cfs_read_iter,
	.write_iter	= s3cfs_write_iter,
	.flush		= s3cfs_flush,
	.fsync		= s3cfs_fsync,
	.mmap		= s3cfs_mmap,
	.fallocate	= s3cfs_fallocate,
	.splice_read	= s3cfs_file_splice_read,
	/* splice(2), sendfile(2), copy_file_range(2) within the mount. */
	.splice_write	= iter_file_splice_write,
	.unlocked_ioctl	= s3cfs_ioctl,
};
