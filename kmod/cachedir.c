// SPDX-License-Identifier: GPL-2.0
/*
 * s3cachefs: the cache directory belongs to its mount, and to nobody else.
 *
 * Claiming. The daemon makes each listed lower directory hold exactly what
 * S3 lists, and removes the rest, recursively, as root: a directory that
 * holds someone's files must never become a cache. A mount takes a
 * directory only if it is empty (the lower filesystem's lost+found apart,
 * and a .s3cachefs that a first mount left before it wrote the marker) or
 * already is a cache (S3CFS_FORMAT_FILE), as mkfs and overlayfs refuse
 * what is in use; anything else is refused with the name found.
 *
 * Private. At every mount the root is made 0700 and owned by root (the
 * daemon makes files 0600 and directories 0700 below it). So no other user
 * can open a cache file: not to read an object's bytes past the mount's
 * own permissions, and not to flock() it, which would hold up the
 * daemon's fills and replacements (they take the lock with LOCK_NB and
 * fail) and the kernel's open for write (flock needs only a read-only
 * descriptor). Lower files reach user space no other way: our files have
 * their own page cache and locks, and lower I/O runs with the mounter's
 * credentials.
 *
 * Tied. The daemon opens the cache by the path it is sent, at the MOUNT
 * and again at every announcement after a restart. The root carries
 * S3CFS_XATTR_TOKEN, random bytes written at each mount and sent with
 * MOUNT (protocol 10); the daemon opens the path without following
 * symlinks and serves the mount only from a directory that carries them.
 * Whoever owns a directory above the cache cannot swap in another one
 * (through a symlink or a rename) for the daemon to prune and fill:
 * setting a trusted.* xattr takes CAP_SYS_ADMIN.
 */
#include "s3cachefs.h"
#include <linux/fs_context.h>
#include <linux/mount.h>
#include <linux/namei.h>
#include <linux/random.h>
#include <linux/string.h>
#include <linux/xattr.h>

/* Mode of the cache root (and of the directories the daemon makes). */
#define S3CFS_CACHE_MODE	0700

struct s3cfs_cache_names {
	struct dir_context ctx;
	char other[NAME_MAX + 1];	/* the first name that is not ours */
	bool found;
};

static bool s3cfs_name_is(const char *name, int namelen, const char *what)
{
	return namelen == strlen(what) && !memcmp(name, what, namelen);
}

static bool s3cfs_cache_fill(struct dir_context *ctx, const char *name,
			     int namelen, loff_t off, u64 ino,
			     unsigned int type)
{
	struct s3cfs_cache_names *n = container_of(ctx,
						   struct s3cfs_cache_names,
						   ctx);
	bool dir = type == DT_DIR || type == DT_UNKNOWN;

	if (s3cfs_name_is(name, namelen, ".") ||
	    s3cfs_name_is(name, namelen, ".."))
		return true;
	if (dir && (s3cfs_name_is(name, namelen, S3CFS_LOST_FOUND) ||
		    s3cfs_name_is(name, namelen, S3CFS_META_DIR)))
		return true;
	n->found = true;
	namelen = min(namelen, NAME_MAX);
	memcpy(n->other, name, namelen);
	n->other[namelen] = '\0';
	return false;
}

/* Does the cache root carry the format marker (a regular file)? */
static bool s3cfs_cache_marked(struct dentry *root)
{
	const char *file = kbasename(S3CFS_FORMAT_FILE);
	struct dentry *meta, *fmt;
	bool marked = false;

	meta = lookup_one_len_unlocked(S3CFS_META_DIR, root,
				       strlen(S3CFS_META_DIR));
	if (IS_ERR(meta))
		return false;
	if (d_is_dir(meta)) {
		fmt = lookup_one_len_unlocked(file, meta, strlen(file));
		if (!IS_ERR(fmt)) {
			marked = d_is_reg(fmt);
			dput(fmt);
		}
	}
	dput(meta);
	return marked;
}

/* A directory that is not a cache yet must be empty. */
static int s3cfs_cache_check_empty(struct fs_context *fc,
				   struct s3cfs_sb_info *sbi)
{
	struct s3cfs_cache_names n = { .ctx.actor = s3cfs_cache_fill };
	struct file *dir;
	int err;

	dir = dentry_open(&sbi->lower_root, O_RDONLY | O_DIRECTORY,
			  sbi->creds);
	if (IS_ERR(dir))
		return invalfc(fc, "cache=%s: cannot read the directory (%ld)",
			       sbi->cache_path, PTR_ERR(dir));
	err = iterate_dir(dir, &n.ctx);
	fput(dir);
	if (err)
		return invalfc(fc, "cache=%s: cannot read the directory (%d)",
			       sbi->cache_path, err);
	if (!n.found)
		return 0;
	errorfc(fc,
		"cache=%s is not empty (it holds \"%s\") and is not an s3cachefs cache (no %s): refused, the daemon would delete what the bucket does not list. Give an empty directory, for s3cachefs only",
		sbi->cache_path, n.other, S3CFS_FORMAT_FILE);
	return -ENOTEMPTY;
}

/* The root: owned by root, 0700. */
static int s3cfs_cache_make_private(struct fs_context *fc,
				    struct s3cfs_sb_info *sbi, bool marked)
{
	struct dentry *root = sbi->lower_root.dentry;
	struct inode *inode = d_inode(root);
	struct iattr attr = {
		.ia_valid = ATTR_MODE | ATTR_UID | ATTR_GID | ATTR_CTIME,
		.ia_mode = S_IFDIR | S3CFS_CACHE_MODE,
		.ia_vfsuid = VFSUIDT_INIT(GLOBAL_ROOT_UID),
		.ia_vfsgid = VFSGIDT_INIT(GLOBAL_ROOT_GID),
	};
	umode_t mode;
	kuid_t uid;
	int err = 0;

	inode_lock(inode);
	mode = inode->i_mode & 07777;
	uid = inode->i_uid;
	if (mode != S3CFS_CACHE_MODE || !uid_eq(uid, GLOBAL_ROOT_UID))
		err = notify_change(S3CFS_IDMAP_NOP, root, &attr, NULL);
	inode_unlock(inode);
	if (err)
		return invalfc(fc, "cache=%s: cannot make it private (owner root, mode 0700): %d",
			       sbi->cache_path, err);
	if (marked && (mode != S3CFS_CACHE_MODE || !uid_eq(uid, GLOBAL_ROOT_UID)))
		pr_info("cache %s made private: mode %04o owner %u -> mode 0700 owner 0 (a cache directory is for s3cachefs only)\n",
			sbi->cache_path, mode, from_kuid(&init_user_ns, uid));
	return 0;
}

/**
 * s3cfs_cache_adopt() - make the cache directory this mount's
 * @fc: the mount's context, for messages
 * @sbi: the mount, its cache directory open and claimed against other
 *	mounts (s3cfs_claim_cache()), its credentials set
 *
 * Refuses a directory that is neither empty nor a cache, makes the root
 * private, and writes the mount's token (sbi->token) on it.
 *
 * Return: 0, -ENOTEMPTY (not ours; the message says what it holds) or
 * another negative errno.
 */
int s3cfs_cache_adopt(struct fs_context *fc, struct s3cfs_sb_info *sbi)
{
	struct dentry *root = sbi->lower_root.dentry;
	const struct cred *old_cred;
	bool marked;
	int err;

	err = mnt_want_write(sbi->lower_root.mnt);
	if (err)
		return invalfc(fc, "cache=%s: cannot write to it (%d)",
			       sbi->cache_path, err);
	old_cred = override_creds(sbi->creds);
	marked = s3cfs_cache_marked(root);
	err = marked ? 0 : s3cfs_cache_check_empty(fc, sbi);
	if (!err)
		err = s3cfs_cache_make_private(fc, sbi, marked);
	if (!err) {
		get_random_bytes(sbi->token, sizeof(sbi->token));
		err = vfs_setxattr(S3CFS_IDMAP_NOP, root, S3CFS_XATTR_TOKEN,
				   sbi->token, sizeof(sbi->token), 0);
		if (err)
			errorfc(fc, "cache=%s: cannot set %s on it: %d",
				sbi->cache_path, S3CFS_XATTR_TOKEN, err);
	}
	revert_creds(old_cred);
	mnt_drop_write(sbi->lower_root.mnt);
	return err;
}
