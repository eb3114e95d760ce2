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

/* 6.12: <asm/unaligned.h> became <linux/unaligned.h>. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 12, 0)
#include <linux/unaligned.h>
#else
#include <asm/unaligned.h>
#endif

/* 6.3: struct user_namespace * became struct mnt_idmap * in inode ops. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
#define S3CFS_IDMAP_ARG		struct mnt_idmap *idmap
#define S3CFS_IDMAP_NOP		(&nop_mnt_idmap)
#else
#define S3CFS_IDMAP_ARG		struct user_namespace *idmap
#define S3CFS_IDMAP_NOP		(&init_user_ns)
#endif

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

static inline struct timespec64 s3cfs_inode_get_mtime(struct inode *inode)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 7, 0)
	return inode_get_mtime(inode);
#else
	return inode->i_mtime;
#endif
}

#endif /* _S3CFS_COMPAT_H */
