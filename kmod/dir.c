// SPDX-License-Identifier: GPL-2.0
/*
 * s3cachefs: reading directories.
 *
 * A directory is listed by the daemon into the lower directory (LIST) when
 * its listing is older than meta_ttl, at the start of a readdir; then the
 * lower directory is iterated and passed up, minus the names we hide. With
 * no daemon registered, the lower directory is served as it is, as lookups
 * serve the entries already in the cache: a readdir does not wait out the
 * fetch timeout for a daemon that is not there.
 */
#include "s3cachefs.h"
#include <linux/namei.h>

/**
 * struct s3cfs_dir_ctx - iterating the lower directory for an upper readdir
 * @ctx: what the lower filesystem fills
 * @caller: the upper readdir's context
 * @in_root: the directory is the mount's root
 * @posix: a posix_meta mount: a file may be a symlink (posix.c)
 */
struct s3cfs_dir_ctx {
	struct dir_context ctx;
	struct dir_context *caller;
	bool in_root;
	bool posix;
};

static bool s3cfs_filldir(struct dir_context *ctx, const char *name,
			  int namelen, loff_t offset, u64 ino,
			  unsigned int d_type)
{
	struct s3cfs_dir_ctx *dc = container_of(ctx, struct s3cfs_dir_ctx, ctx);

	if (s3cfs_name_hidden(dc->in_root, name, namelen))
		return true;
	if (d_type != DT_DIR && d_type != DT_REG && d_type != DT_UNKNOWN)
		return true;
	/* Which files are symlinks only their lookup says (find -type l). */
	if (dc->posix && d_type == DT_REG)
		d_type = DT_UNKNOWN;
	return dc->caller->actor(dc->caller, name, namelen, offset, ino,
				 d_type);
}

/* Make the lower directory match S3 if its listing is stale. */
static int s3cfs_dir_list(struct file *file)
{
	struct inode *dir = file_inode(file);
	struct s3cfs_sb_info *sbi = S3CFS_SB(dir->i_sb);
	struct s3cfs_inode_info *si = S3CFS_I(dir);
	const struct cred *old_cred;
	char *buf, *path;
	bool fresh;
	int err;

	old_cred = override_creds(sbi->creds);
	fresh = s3cfs_dir_listed_fresh(dir);
	revert_creds(old_cred);
	if (fresh)
		return 0;
	if (!s3cfs_daemon_present()) {
		pr_debug("listing %pd from the cache: no daemon\n",
			 file->f_path.dentry);
		return 0;
	}

	err = s3cfs_inode_path(file->f_path.dentry, &buf, &path);
	if (err)
		return err;
	atomic64_inc(&sbi->stats.lists);
	err = s3cfs_upcall(sbi, S3CFS_CMD_LIST, path, NULL);
	__putname(buf);
	if (!err)
		WRITE_ONCE(si->listed_at, jiffies ? : 1);
	return err;
}

static int s3cfs_iterate(struct file *file, struct dir_context *ctx)
{
	struct inode *dir = file_inode(file);
	struct s3cfs_sb_info *sbi = S3CFS_SB(dir->i_sb);
	struct file *lower = file->private_data;
	struct s3cfs_dir_ctx dc = {
		.ctx.actor = s3cfs_filldir,
		.caller = ctx,
		.in_root = IS_ROOT(file->f_path.dentry),
		.posix = S3CFS_SB(file_inode(file)->i_sb)->opts.posix_meta,
	};
	const struct cred *old_cred;
	int err;

	if (ctx->pos == 0) {
		err = s3cfs_dir_list(file);
		if (err) {
			pr_warn_ratelimited("listing %pd failed (%d)\n",
					    file->f_path.dentry, err);
			return err;
		}
	}
	lower->f_pos = ctx->pos;
	old_cred = override_creds(sbi->creds);
	err = iterate_dir(lower, &dc.ctx);
	revert_creds(old_cred);
	ctx->pos = lower->f_pos;
	return err;
}

static int s3cfs_dir_open(struct inode *inode, struct file *file)
{
	struct s3cfs_sb_info *sbi = S3CFS_SB(inode->i_sb);
	struct file *lower;

	lower = dentry_open(&S3CFS_I(inode)->lower, O_RDONLY | O_DIRECTORY |
			    O_NOATIME, sbi->creds);
	if (IS_ERR(lower))
		return PTR_ERR(lower);
	file->private_data = lower;
	return 0;
}

static int s3cfs_dir_release(struct inode *inode, struct file *file)
{
	fput(file->private_data);
	return 0;
}

/* Positions are the lower filesystem's (ext4 htree hashes, xfs offsets). */
static loff_t s3cfs_dir_llseek(struct file *file, loff_t offset, int whence)
{
	struct file *lower = file->private_data;
	loff_t ret;

	ret = vfs_llseek(lower, offset, whence);
	if (ret >= 0)
		file->f_pos = ret;
	return ret;
}

const struct file_operations s3cfs_dir_fops = {
	.open		= s3cfs_dir_open,
	.release	= s3cfs_dir_release,
	.iterate_shared	= s3cfs_iterate,
	.llseek		= s3cfs_dir_llseek,
	.read		= generic_read_dir,
};
