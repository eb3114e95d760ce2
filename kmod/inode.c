// SPDX-License-Identifier: GPL-2.0
/*
 * s3cachefs: upper inodes, each standing on one lower inode (a listed
 * inode, index.c, only from its first open on).
 *
 * Upper inodes are hashed by their lower inode, set once in ->set and never
 * changed, so one lower file has exactly one upper inode (and one page
 * cache), and an upper inode holds one object version for its whole life:
 * the daemon never changes a lower file's ETag in place, a changed object
 * gets a new lower file and so a new upper inode from the next lookup. The
 * old inode is marked stale (s3cfs_inode_set_stale()); it is dropped at its
 * last reference. Attributes come from the lower file and the daemon's
 * xattr on it (S3CFS_XATTR_META; in an older cache, one xattr each): size =
 * the object's size (not the lower i_size, which can be longer), mtime =
 * the object's Last-Modified, owner and mode from the mount options (with
 * posix_meta, from the object's x-amz-meta-* headers where it has them:
 * posix.c; such an object can be a symlink: symlink.c).
 */
#include "s3cachefs.h"
#include <linux/slab.h>
#include <linux/kstrtox.h>
#include <linux/namei.h>
#include <linux/pagemap.h>

static struct kmem_cache *s3cfs_inode_cachep;

struct inode *s3cfs_alloc_inode(struct super_block *sb)
{
	struct s3cfs_inode_info *si;

	si = alloc_inode_sb(sb, s3cfs_inode_cachep, GFP_KERNEL);
	if (!si)
		return NULL;
	si->lower_inode = NULL;
	si->lower.dentry = NULL;
	si->lower.mnt = NULL;
	si->flags = 0;
	si->lower_file = NULL;
	si->present = NULL;
	atomic_set(&si->reads, 0);
	si->nr_chunks = 0;
	si->etag[0] = '\0';
	si->listed_at = 0;
	si->touched_at = 0;
	si->failed_chunk = 0;
	si->failed_at = 0;
	si->sq_pos = 0;
	si->sq_next = 0;
	si->sq_end = 0;
	si->sq_run = 0;
	si->lower_wfile = NULL;
	atomic_set(&si->nr_writers, 0);
	si->res_start = 0;
	si->res_end = 0;
	INIT_LIST_HEAD(&si->fetches);
	s3cfs_upq_init_inode(si);
	s3cfs_stream_init_inode(si);
	return &si->vfs_inode;
}

void s3cfs_free_inode(struct inode *inode)
{
	kmem_cache_free(s3cfs_inode_cachep, S3CFS_I(inode));
}

void s3cfs_evict_inode(struct inode *inode)
{
	struct s3cfs_inode_info *si = S3CFS_I(inode);

	s3cfs_stream_evict(inode);
	truncate_inode_pages_final(&inode->i_data);
	clear_inode(inode);
	WARN_ON_ONCE(!list_empty(&si->fetches));
	if (si->lower_file)
		fput(si->lower_file);
	si->lower_file = NULL;
	if (si->lower_wfile)
		fput(si->lower_wfile);
	si->lower_wfile = NULL;
	s3cfs_chunks_free(si);
	path_put(&si->lower);
}

static void s3cfs_inode_once(void *obj)
{
	struct s3cfs_inode_info *si = obj;

	inode_init_once(&si->vfs_inode);
	init_rwsem(&si->data_sem);
	init_rwsem(&si->wb_sem);
	spin_lock_init(&si->chunk_lock);
	init_waitqueue_head(&si->reads_wq);
}

int s3cfs_inode_cache_init(void)
{
	s3cfs_inode_cachep = kmem_cache_create("s3cfs_inode",
					       sizeof(struct s3cfs_inode_info),
					       0, SLAB_RECLAIM_ACCOUNT |
					       SLAB_ACCOUNT,
					       s3cfs_inode_once);
	return s3cfs_inode_cachep ? 0 : -ENOMEM;
}

void s3cfs_inode_cache_exit(void)
{
	/* Inodes are freed after an RCU grace period. */
	rcu_barrier();
	kmem_cache_destroy(s3cfs_inode_cachep);
}

/*
 * Attributes of a new inode from its lower inode and the daemon's xattrs.
 * Called with the mounter's credentials.
 */
static void s3cfs_inode_load_meta(struct inode *inode)
{
	struct s3cfs_inode_info *si = S3CFS_I(inode);
	struct dentry *lower = si->lower.dentry;
	struct inode *linode = d_inode(lower);
	struct timespec64 ts = s3cfs_inode_get_mtime(linode);
	struct s3cfs_meta *m;
	char buf[24];
	s64 secs;
	int err;

	m = kmalloc(sizeof(*m), GFP_KERNEL);
	err = m ? s3cfs_meta_get(lower, m) : -ENOMEM;
	if (err != -ENODATA) {
		/* Unreadable: no ETag (the daemon renews the file). */
		if (!err) {
			ts.tv_sec = m->mtime;
			ts.tv_nsec = 0;
		}
		s3cfs_inode_set_times(inode, ts);
		if (S_ISREG(linode->i_mode)) {
			strscpy(si->etag, err ? "" : m->etag, sizeof(si->etag));
			i_size_write(inode, err ? i_size_read(linode) : m->size);
		}
		/*
		 * Written here and not uploaded (yet): its content is the
		 * lower file's, and so is its size.
		 */
		if (!err && (m->flags & S3CFS_META_LOCAL) &&
		    S_ISREG(linode->i_mode)) {
			set_bit(S3CFS_I_LOCAL, &si->flags);
			set_bit(S3CFS_I_DIRTY, &si->flags);
			i_size_write(inode, i_size_read(linode));
		}
		kfree(m);
		return;
	}
	kfree(m);
	/* An older cache: one xattr each. */
	if (s3cfs_get_xattr(lower, S3CFS_XATTR_MTIME, buf, sizeof(buf)) > 0 &&
	    !kstrtos64(buf, 10, &secs)) {
		ts.tv_sec = secs;
		ts.tv_nsec = 0;
	}
	s3cfs_inode_set_times(inode, ts);
	if (S_ISREG(linode->i_mode)) {
		if (s3cfs_get_xattr(lower, S3CFS_XATTR_ETAG, si->etag,
				    sizeof(si->etag)) < 0)
			si->etag[0] = '\0';
		i_size_write(inode, s3cfs_lower_size(lower));
	}
}

/*
 * iget5 test and set: the key is set under the inode hash lock before the
 * inode is hashed, so the test never sees an inode without one (I_NEW
 * inodes included) and never a key that changes. A listed inode (index.c)
 * is hashed only when it takes its lower file.
 */
int s3cfs_inode_test(struct inode *inode, void *lower)
{
	return S3CFS_I(inode)->lower_inode == lower;
}

int s3cfs_inode_set(struct inode *inode, void *lower)
{
	WRITE_ONCE(S3CFS_I(inode)->lower_inode, lower);
	return 0;
}

/**
 * s3cfs_inode_set_stale() - the object changed or vanished in S3
 * @inode: upper inode whose version is no longer the object's
 *
 * Safe in any context (under the VFS's locks of @inode too). From now on
 * opens of @inode fail with -EOPENSTALE (the VFS looks the name up again,
 * which finds the new version), its dentries fail revalidation, fetches for
 * it are not sent, and open files that have returned bytes of it get
 * ESTALE (file.c). What is cached of it stays valid: it is all one version.
 */
void s3cfs_inode_set_stale(struct inode *inode)
{
	if (!test_and_set_bit(S3CFS_I_STALE, &S3CFS_I(inode)->flags))
		atomic64_inc(&S3CFS_SB(inode->i_sb)->stats.stale);
}

/**
 * s3cfs_inode_stale() - has @inode's object changed in S3?
 * @inode: upper inode
 *
 * Return: true once s3cfs_inode_set_stale() was called.
 */
bool s3cfs_inode_stale(struct inode *inode)
{
	return test_bit(S3CFS_I_STALE, &S3CFS_I(inode)->flags);
}

/**
 * s3cfs_inode_local() - does @inode hold bytes written here?
 * @inode: upper inode
 *
 * Return: true while the lower file is LOCAL (S3CFS_I_LOCAL).
 */
bool s3cfs_inode_local(struct inode *inode)
{
	return test_bit(S3CFS_I_LOCAL, &S3CFS_I(inode)->flags);
}

/**
 * s3cfs_drop_inode() - ->drop_inode: keep an unused inode cached?
 * @inode: upper inode losing its last reference
 *
 * A stale inode goes at once: no lookup can find it again, and it pins
 * its old lower file, whose blocks are freed only when it is closed.
 *
 * Return: non-zero to evict @inode now.
 */
int s3cfs_drop_inode(struct inode *inode)
{
	return generic_drop_inode(inode) || s3cfs_inode_stale(inode);
}

/**
 * s3cfs_iget() - the upper inode for a lower dentry
 * @sb: our superblock
 * @lower: a positive lower dentry (directory or regular file)
 *
 * Return: a referenced inode, or ERR_PTR(-EIO) for a lower entry that is
 * neither a directory nor a regular file, or ERR_PTR(-ENOMEM).
 */
struct inode *s3cfs_iget(struct super_block *sb, struct dentry *lower)
{
	struct s3cfs_sb_info *sbi = S3CFS_SB(sb);
	struct inode *linode = d_inode(lower);
	struct s3cfs_inode_info *si;
	struct inode *inode;

	if (!S_ISDIR(linode->i_mode) && !S_ISREG(linode->i_mode))
		return ERR_PTR(-EIO);
	inode = iget5_locked(sb, (unsigned long)linode, s3cfs_inode_test,
			     s3cfs_inode_set, linode);
	if (!inode)
		return ERR_PTR(-ENOMEM);
	if (!(inode->i_state & I_NEW)) {
		s3cfs_posix_refresh(inode);
		return inode;
	}

	si = S3CFS_I(inode);
	si->lower.dentry = dget(lower);
	si->lower.mnt = mntget(sbi->lower_root.mnt);
	inode->i_ino = linode->i_ino;
	inode->i_uid = sbi->opts.uid;
	inode->i_gid = sbi->opts.gid;
	if (S_ISDIR(linode->i_mode)) {
		inode->i_mode = S_IFDIR | (sbi->opts.dir_mode & S3CFS_PERM_MASK);
		inode->i_op = &s3cfs_dir_iops;
		inode->i_fop = &s3cfs_dir_fops;
		set_nlink(inode, 2);
		s3cfs_inode_load_meta(inode);
		s3cfs_posix_load(inode, lower);
		unlock_new_inode(inode);
		return inode;
	}
	inode->i_mode = S_IFREG | (sbi->opts.file_mode & S3CFS_PERM_MASK);
	inode->i_mapping->a_ops = &s3cfs_aops;
	set_nlink(inode, 1);
	s3cfs_inode_load_meta(inode);
	if (s3cfs_posix_load(inode, lower) == S_IFLNK) {
		/* The target is the object's bytes, read by page_get_link(). */
		inode->i_mode = S_IFLNK | 0777;
		inode->i_op = &s3cfs_symlink_iops;
		inode_nohighmem(inode);
	} else {
		inode->i_op = &s3cfs_file_iops;
		inode->i_fop = &s3cfs_file_fops;
		/*
		 * Large folios: fewer, bigger page cache entries per MiB read,
		 * so readahead, the copy to user space and the lower direct
		 * reads all work in bigger pieces (as xfs and afs do).
		 */
		mapping_set_large_folios(inode->i_mapping);
	}
	unlock_new_inode(inode);
	return inode;
}

/**
 * s3cfs_inode_path() - path of an upper dentry relative to the mount root
 * @dentry: the dentry
 * @bufp: set to a __getname() buffer the caller must __putname()
 * @pathp: set to the path inside @bufp, without a leading '/' ("" = root)
 *
 * Return: 0 or a negative errno (nothing to free then).
 */
int s3cfs_inode_path(struct dentry *dentry, char **bufp, char **pathp)
{
	char *buf = __getname();
	char *p;

	if (!buf)
		return -ENOMEM;
	p = dentry_path_raw(dentry, buf, PATH_MAX);
	if (IS_ERR(p)) {
		__putname(buf);
		return PTR_ERR(p);
	}
	while (*p == '/')
		p++;
	*bufp = buf;
	*pathp = p;
	return 0;
}

/**
 * s3cfs_key_check() - does a new name's key fit in S3?
 * @parent: the upper directory the name goes in
 * @name: the name
 * @dir: the name is a directory (its marker's key ends in '/')
 *
 * S3 keys are at most S3CFS_KEY_MAX bytes: the mount's prefix, the
 * parent's path, '/', the name. Checked where a name is made (create,
 * mkdir, symlink, the destination of a rename), so a file S3 can never
 * take is refused at once rather than at its close.
 *
 * Return: 0, -ENAMETOOLONG, or -ENOMEM.
 */
int s3cfs_key_check(struct dentry *parent, const struct qstr *name, bool dir)
{
	struct s3cfs_sb_info *sbi = S3CFS_SB(parent->d_sb);
	char *buf, *path;
	size_t len;
	int err;

	if (name->len > NAME_MAX)
		return -ENAMETOOLONG;
	err = s3cfs_inode_path(parent, &buf, &path);
	if (err)
		return err;
	len = strlen(sbi->prefix) + strlen(path) + (*path ? 1 : 0) +
	      name->len + (dir ? 1 : 0);
	__putname(buf);
	return len > S3CFS_KEY_MAX ? -ENAMETOOLONG : 0;
}

/**
 * s3cfs_path_dup() - s3cfs_inode_path() as a string of its own
 * @dentry: the dentry (may be negative)
 *
 * Return: the path, kmalloc'ed, or NULL without memory.
 */
char *s3cfs_path_dup(struct dentry *dentry)
{
	char *buf, *path, *copy;

	if (s3cfs_inode_path(dentry, &buf, &path))
		return NULL;
	copy = kstrdup(path, GFP_KERNEL);
	__putname(buf);
	return copy;
}

/**
 * s3cfs_inode_etag() - a copy of the ETag of the version @inode stands for
 * @inode: upper inode of a regular file
 *
 * A commit (upload.c), a rename's retag and rebase (local.c) change it,
 * under chunk_lock.
 *
 * Return: the ETag, kmalloc'ed, or NULL without memory.
 */
char *s3cfs_inode_etag(struct inode *inode)
{
	struct s3cfs_inode_info *si = S3CFS_I(inode);
	char *etag = kmalloc(S3CFS_ETAG_MAX + 1, GFP_KERNEL);

	if (etag) {
		spin_lock(&si->chunk_lock);
		strscpy(etag, si->etag, S3CFS_ETAG_MAX + 1);
		spin_unlock(&si->chunk_lock);
	}
	return etag;
}

/**
 * s3cfs_inode_set_etag() - @inode stands for version @etag now
 * @inode: upper inode of a regular file
 * @etag: the ETag (may be the inode's own)
 */
void s3cfs_inode_set_etag(struct inode *inode, const char *etag)
{
	struct s3cfs_inode_info *si = S3CFS_I(inode);

	if (etag == si->etag)
		return;
	spin_lock(&si->chunk_lock);
	strscpy(si->etag, etag, sizeof(si->etag));
	spin_unlock(&si->chunk_lock);
}

/* The cache's own directories at its root, never shown. */
static unsigned int s3cfs_root_hidden_dirs(struct dentry *root)
{
	static const char *const names[] = { S3CFS_META_DIR, S3CFS_LOST_FOUND };
	struct dentry *lroot = S3CFS_I(d_inode(root))->lower.dentry;
	const struct cred *old_cred;
	struct dentry *d;
	unsigned int i, n = 0;

	old_cred = override_creds(S3CFS_SB(root->d_sb)->creds);
	for (i = 0; i < ARRAY_SIZE(names); i++) {
		d = lookup_one_len_unlocked(names[i], lroot, strlen(names[i]));
		if (IS_ERR(d))
			continue;
		n += d_is_dir(d);
		dput(d);
	}
	revert_creds(old_cred);
	return n;
}

/*
 * A directory's link count: two and one per subdirectory this cache
 * holds, as the lower directory counts them (one: too many to count).
 */
static unsigned int s3cfs_dir_nlink(struct dentry *dentry, struct inode *linode)
{
	unsigned int n = READ_ONCE(linode->i_nlink);

	if (n > 2 && IS_ROOT(dentry))
		n -= min(n - 2, s3cfs_root_hidden_dirs(dentry));
	return n;
}

static int s3cfs_getattr(S3CFS_IDMAP_ARG, const struct path *path,
			 struct kstat *stat, u32 request_mask,
			 unsigned int flags)
{
	struct inode *inode = d_inode(path->dentry);
	struct inode *linode = READ_ONCE(S3CFS_I(inode)->lower_inode);

	s3cfs_fillattr(inode, request_mask, stat);
	if (S_ISDIR(inode->i_mode) && linode)
		stat->nlink = s3cfs_dir_nlink(path->dentry, linode);
	/* st_blocks: what is cached on NVMe, as du(1) should show. */
	stat->blocks = linode ? linode->i_blocks : 0;
	stat->blksize = 1U << S3CFS_SB(inode->i_sb)->chunk_shift;
	return 0;
}

const struct inode_operations s3cfs_file_iops = {
	.getattr	= s3cfs_getattr,
	.setattr	= s3cfs_setattr,
};

const struct inode_operations s3cfs_dir_iops = {
	.lookup		= s3cfs_lookup,
	.create		= s3cfs_create,
	.mkdir		= s3cfs_mkdir,
	.rmdir		= s3cfs_rmdir,
	.unlink		= s3cfs_unlink,
	.rename		= s3cfs_rename,
	.symlink	= s3cfs_symlink,
	.getattr	= s3cfs_getattr,
	.setattr	= s3cfs_setattr,
};
