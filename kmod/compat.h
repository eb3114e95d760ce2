/* SPDX-License-Identifier: GPL-2.0 */
/*
 * s3cachefs: shims for the kernel versions we build against (6.1 .. 6.12).
 * Each shim names the version that changed the interface.
 */
#ifndef _S3CFS_COMPAT_H
#define _S3CFS_COMPAT_H

#include <linux/version.h>
#include <linux/fs.h>
#include <linux/splice.h>
#include <linux/pagemap.h>

/* 6.12: <asm/unaligned.h> became <linux/unaligned.h>. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 12, 0)
#include <linux/unaligned.h>
#else
#include <asm/unaligned.h>
#endif
/* 6.3: the file lock declarations moved to <linux/filelock.h>. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
#include <linux/filelock.h>
#endif

/* 6.3: struct user_namespace * became struct mnt_idmap * in inode ops. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
#define S3CFS_IDMAP_ARG		struct mnt_idmap *idmap
#define S3CFS_IDMAP_NOP		(&nop_mnt_idmap)
#else
#define S3CFS_IDMAP_ARG		struct user_namespace *idmap
#define S3CFS_IDMAP_NOP		(&init_user_ns)
#endif

/*
 * A reference to @f unless its last one is gone already (it is then being
 * released); dropping one that is not the last. f_count is an
 * atomic_long_t up to 6.12 (6.13 made it a file_ref_t: not supported).
 */
static inline bool s3cfs_get_file_not_zero(struct file *f)
{
	return atomic_long_inc_not_zero(&f->f_count);
}

static inline bool s3cfs_put_file_not_last(struct file *f)
{
	return atomic_long_add_unless(&f->f_count, -1, 1);
}

/* 6.6: generic_fillattr() takes the request mask. */
static inline void s3cfs_fillattr(struct inode *inode, u32 request_mask,
				  struct kstat *stat)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 6, 0)
	generic_fillattr(S3CFS_IDMAP_NOP, request_mask, inode, stat);
#else
	generic_fillattr(S3CFS_IDMAP_NOP, inode, stat);
#endif
}

/*
 * 6.5: generic_file_splice_read() was replaced by filemap_splice_read(),
 * and vfs_splice_read() was exported.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 5, 0)
#define s3cfs_splice_read	filemap_splice_read
#define s3cfs_vfs_splice_read	vfs_splice_read
#else
#define s3cfs_splice_read	generic_file_splice_read
static inline ssize_t s3cfs_vfs_splice_read(struct file *in, loff_t *ppos,
					    struct pipe_inode_info *pipe,
					    size_t len, unsigned int flags)
{
	return in->f_op->splice_read(in, ppos, pipe, len, flags);
}
#endif

/* 6.6/6.7: inode timestamps moved behind accessors. */
static inline void s3cfs_inode_set_times(struct inode *inode,
					 struct timespec64 ts)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 7, 0)
	inode_set_mtime_to_ts(inode, ts);
	inode_set_atime_to_ts(inode, ts);
	inode_set_ctime_to_ts(inode, ts);
#elif LINUX_VERSION_CODE >= KERNEL_VERSION(6, 6, 0)
	inode->i_mtime = ts;
	inode->i_atime = ts;
	inode_set_ctime_to_ts(inode, ts);
#else
	inode->i_mtime = ts;
	inode->i_atime = ts;
	inode->i_ctime = ts;
#endif
}

/* mtime and ctime now (a directory's entries, a file's size changed). */
static inline void s3cfs_inode_touch(struct inode *inode)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 7, 0)
	inode_set_mtime_to_ts(inode, inode_set_ctime_current(inode));
#elif LINUX_VERSION_CODE >= KERNEL_VERSION(6, 6, 0)
	inode->i_mtime = inode_set_ctime_current(inode);
#else
	inode->i_mtime = current_time(inode);
	inode->i_ctime = inode->i_mtime;
#endif
}

/* 6.8: a dentry's children moved from a list to an hlist. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 8, 0)
#define s3cfs_for_each_child(child, parent) \
	hlist_for_each_entry(child, &(parent)->d_children, d_sib)
#else
#define s3cfs_for_each_child(child, parent) \
	list_for_each_entry(child, &(parent)->d_subdirs, d_child)
#endif

#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 7, 0)
#define s3cfs_inode_get_mtime(inode)	inode_get_mtime(inode)
#define s3cfs_inode_get_atime(inode)	inode_get_atime(inode)
#else
#define s3cfs_inode_get_mtime(inode)	((inode)->i_mtime)
#define s3cfs_inode_get_atime(inode)	((inode)->i_atime)
#endif

/* 6.3: writepage_t takes a folio. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
#define S3CFS_WRITEPAGE_ARG	struct folio *folio
#define S3CFS_WRITEPAGE_FOLIO	(folio)
#else
#define S3CFS_WRITEPAGE_ARG	struct page *page
#define S3CFS_WRITEPAGE_FOLIO	page_folio(page)
#endif

/* 6.12: ->write_begin and ->write_end take a folio, not a page. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 12, 0)
#define S3CFS_WB_FOLIO		struct folio
#define s3cfs_wb_to_folio(p)	(p)
#define s3cfs_folio_to_wb(f)	(f)
#else
#define S3CFS_WB_FOLIO		struct page
#define s3cfs_wb_to_folio(p)	page_folio(p)
#define s3cfs_folio_to_wb(f)	(&(f)->page)
#endif

/*
 * The locked folio a ->write_begin writes into at @pos, and in *@wb what
 * ->write_begin hands back (6.12: the folio; before: the page at @pos,
 * which generic_perform_write() copies into). Return: it or ERR_PTR.
 */
static inline struct folio *s3cfs_write_begin_folio(struct address_space *mapping,
						    loff_t pos,
						    S3CFS_WB_FOLIO **wb)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 12, 0)
	struct folio *folio = __filemap_get_folio(mapping, pos >> PAGE_SHIFT,
						  FGP_WRITEBEGIN,
						  mapping_gfp_mask(mapping));

	if (!IS_ERR(folio))
		*wb = folio;
	return folio;
#else
	struct page *page = grab_cache_page_write_begin(mapping,
							pos >> PAGE_SHIFT);

	if (!page)
		return ERR_PTR(-ENOMEM);
	*wb = page;
	return page_folio(page);
#endif
}

/*
 * 6.4: filemap_lock_folio() returns ERR_PTR(-ENOENT) for a folio not in
 * the page cache, where it returned NULL. Return: the folio, locked and
 * referenced, or NULL.
 */
static inline struct folio *s3cfs_lock_folio(struct address_space *mapping,
					     pgoff_t index)
{
	struct folio *folio = filemap_lock_folio(mapping, index);

#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 4, 0)
	if (IS_ERR(folio))
		return NULL;
#endif
	return folio;
}

/* 6.4: vfs_tmpfile_open() became kernel_tmpfile_open(). */
static inline struct file *s3cfs_tmpfile_open(const struct path *parent,
					      umode_t mode, int open_flag,
					      const struct cred *cred)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 4, 0)
	return kernel_tmpfile_open(S3CFS_IDMAP_NOP, parent, mode, open_flag,
				   cred);
#else
	return vfs_tmpfile_open(S3CFS_IDMAP_NOP, parent, mode, open_flag, cred);
#endif
}

/* 6.3: struct renamedata names the mounts' idmaps. */
static inline int s3cfs_vfs_rename_flags(struct inode *old_dir,
					 struct dentry *old,
					 struct inode *new_dir,
					 struct dentry *new, unsigned int flags)
{
	struct renamedata rd = {
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
		.old_mnt_idmap = S3CFS_IDMAP_NOP,
		.new_mnt_idmap = S3CFS_IDMAP_NOP,
#else
		.old_mnt_userns = S3CFS_IDMAP_NOP,
		.new_mnt_userns = S3CFS_IDMAP_NOP,
#endif
		.old_dir = old_dir,
		.old_dentry = old,
		.new_dir = new_dir,
		.new_dentry = new,
		.flags = flags,
	};

	return vfs_rename(&rd);
}

static inline int s3cfs_vfs_rename(struct inode *old_dir, struct dentry *old,
				   struct inode *new_dir, struct dentry *new)
{
	return s3cfs_vfs_rename_flags(old_dir, old, new_dir, new, 0);
}

/*
 * A whole-file lock (flock(2)) taken by the kernel on a lower file. 6.9
 * moved struct file_lock's common fields into file_lock_core.
 */
static inline int s3cfs_flock_file(struct file *file, unsigned char type)
{
	struct file_lock fl;

	locks_init_lock(&fl);
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 9, 0)
	fl.c.flc_flags = FL_FLOCK;
	fl.c.flc_type = type;
	fl.c.flc_file = file;
	fl.c.flc_owner = file;
	fl.c.flc_pid = current->tgid;
#else
	fl.fl_flags = FL_FLOCK;
	fl.fl_type = type;
	fl.fl_file = file;
	fl.fl_owner = file;
	fl.fl_pid = current->tgid;
#endif
	fl.fl_end = OFFSET_MAX;
	return locks_lock_file_wait(file, &fl);
}

#endif /* _S3CFS_COMPAT_H */
