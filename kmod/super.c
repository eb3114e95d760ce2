// SPDX-License-Identifier: GPL-2.0
/*
 * s3cachefs: superblock, mount and unmount, module init and exit.
 */
#include "s3cachefs.h"
#include <linux/module.h>
#include <linux/fs_parser.h>
#include <linux/namei.h>
#include <linux/statfs.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/backing-dev.h>
#include <linux/magic.h>
#include <linux/idr.h>
#include <linux/log2.h>

#ifndef XFS_SUPER_MAGIC
#define XFS_SUPER_MAGIC	0x58465342
#endif

/* Live mounts, announced to every daemon that registers. */
static LIST_HEAD(s3cfs_mounts);
/*
 * Cache directories in use (struct s3cfs_sb_info @cache_link), under
 * s3cfs_mounts_mutex: one cache directory, one mount (s3cfs_claim_cache).
 */
static LIST_HEAD(s3cfs_caches);
static DEFINE_MUTEX(s3cfs_mounts_mutex);
static DEFINE_IDA(s3cfs_mount_ida);

void s3cfs_mounts_lock(void)
{
	mutex_lock(&s3cfs_mounts_mutex);
}

void s3cfs_mounts_unlock(void)
{
	mutex_unlock(&s3cfs_mounts_mutex);
}

/**
 * s3cfs_for_each_mount() - call @fn for every live mount, mounts locked
 * @fn: the function; a non-zero return stops the walk
 * @arg: passed to @fn
 *
 * Return: the first non-zero return of @fn, or 0.
 */
int s3cfs_for_each_mount(int (*fn)(struct s3cfs_sb_info *sbi, void *arg),
			 void *arg)
{
	struct s3cfs_sb_info *sbi;
	int err;

	lockdep_assert_held(&s3cfs_mounts_mutex);
	list_for_each_entry(sbi, &s3cfs_mounts, mounts_link) {
		err = fn(sbi, arg);
		if (err)
			return err;
	}
	return 0;
}

/**
 * s3cfs_get_mount() - find a live mount by id and pin it
 * @mount_id: the protocol's mount id
 *
 * Return: the mount with an active superblock reference, or NULL.
 */
struct s3cfs_sb_info *s3cfs_get_mount(u32 mount_id)
{
	struct s3cfs_sb_info *sbi, *found = NULL;

	s3cfs_mounts_lock();
	list_for_each_entry(sbi, &s3cfs_mounts, mounts_link) {
		if (sbi->mount_id == mount_id &&
		    atomic_inc_not_zero(&sbi->sb->s_active)) {
			found = sbi;
			break;
		}
	}
	s3cfs_mounts_unlock();
	return found;
}

/**
 * s3cfs_put_mount() - drop the reference of s3cfs_get_mount()
 * @sbi: the mount
 */
void s3cfs_put_mount(struct s3cfs_sb_info *sbi)
{
	deactivate_super(sbi->sb);
}

static int s3cfs_statfs(struct dentry *dentry, struct kstatfs *buf)
{
	struct s3cfs_sb_info *sbi = S3CFS_SB(dentry->d_sb);
	int err = vfs_statfs(&sbi->lower_root, buf);

	buf->f_type = S3CFS_MAGIC;
	buf->f_namelen = NAME_MAX;
	return err;
}

static int s3cfs_show_options(struct seq_file *m, struct dentry *root)
{
	struct s3cfs_sb_info *sbi = S3CFS_SB(root->d_sb);
	struct s3cfs_mount_opts *o = &sbi->opts;

	seq_show_option(m, "cache", sbi->cache_path);
	seq_printf(m, ",chunk=%uk", o->chunk_size >> 10);
	seq_printf(m, ",uid=%u,gid=%u", from_kuid_munged(&init_user_ns, o->uid),
		   from_kgid_munged(&init_user_ns, o->gid));
	seq_printf(m, ",file_mode=%o,dir_mode=%o", o->file_mode, o->dir_mode);
	seq_printf(m, ",fetch_timeout=%u,meta_ttl=%u,readahead=%u",
		   READ_ONCE(o->fetch_timeout_ms) / 1000,
		   READ_ONCE(o->meta_ttl_ms) / 1000,
		   READ_ONCE(o->readahead_kb));
	if (o->writable)
		seq_puts(m, ",writable");
	if (o->allow_delete)
		seq_puts(m, ",allow_delete");
	if (o->writable)
		seq_printf(m, ",dirty_ratio=%u", READ_ONCE(o->dirty_ratio));
	if (o->writeback)
		seq_printf(m, ",writeback,upload_delay=%u,writeback_max=%u",
			   READ_ONCE(o->upload_delay),
			   READ_ONCE(o->writeback_max_mb));
	if (o->posix_meta)
		seq_puts(m, ",posix_meta");
	if (o->dir_index)
		seq_puts(m, ",dir_index");
	return 0;
}

static int s3cfs_show_devname(struct seq_file *m, struct dentry *root)
{
	struct s3cfs_sb_info *sbi = S3CFS_SB(root->d_sb);

	seq_escape(m, sbi->bucket, " \t\n\\");
	if (*sbi->prefix) {
		seq_putc(m, ':');
		seq_escape(m, sbi->prefix, " \t\n\\");
	}
	return 0;
}

static const struct super_operations s3cfs_sops = {
	.alloc_inode	= s3cfs_alloc_inode,
	.free_inode	= s3cfs_free_inode,
	.drop_inode	= s3cfs_drop_inode,
	.evict_inode	= s3cfs_evict_inode,
	.statfs		= s3cfs_statfs,
	.show_options	= s3cfs_show_options,
	.show_devname	= s3cfs_show_devname,
};

static void s3cfs_free_sbi(struct s3cfs_sb_info *sbi)
{
	if (!list_empty(&sbi->cache_link)) {
		s3cfs_mounts_lock();
		list_del(&sbi->cache_link);
		s3cfs_mounts_unlock();
	}
	if (sbi->creds)
		put_cred(sbi->creds);
	path_put(&sbi->lower_root);
	if (sbi->mount_id)
		ida_free(&s3cfs_mount_ida, sbi->mount_id);
	kfree(sbi->opts.cache);
	kfree(sbi->cache_path);
	kfree(sbi->bucket);
	kfree(sbi->prefix);
	kfree(sbi);
}

/* The cache directory: ext4 or xfs, and not stacked too deep. */
static int s3cfs_open_cache(struct fs_context *fc, struct s3cfs_sb_info *sbi)
{
	struct super_block *lsb;
	char *buf, *p;
	int err;

	err = kern_path(sbi->opts.cache, LOOKUP_FOLLOW | LOOKUP_DIRECTORY,
			&sbi->lower_root);
	if (err)
		return invalfc(fc, "cache=%s: cannot open directory (%d)",
			       sbi->opts.cache, err);
	lsb = sbi->lower_root.mnt->mnt_sb;
	if (lsb->s_magic != EXT4_SUPER_MAGIC && lsb->s_magic != XFS_SUPER_MAGIC)
		return invalfc(fc, "cache=%s is on %s: the cache must be on ext4 or xfs",
			       sbi->opts.cache, lsb->s_type->name);
	if (sb_rdonly(lsb) || __mnt_is_readonly(sbi->lower_root.mnt))
		return invalfc(fc, "cache=%s is on a read-only filesystem",
			       sbi->opts.cache);

	buf = __getname();
	if (!buf)
		return -ENOMEM;
	p = d_path(&sbi->lower_root, buf, PATH_MAX);
	if (!IS_ERR(p))
		sbi->cache_path = kstrdup(p, GFP_KERNEL);
	__putname(buf);
	if (IS_ERR(p))
		return PTR_ERR(p);
	return sbi->cache_path ? 0 : -ENOMEM;
}

/* Is one of the directories @a, @b inside the other (or the same)? */
static bool s3cfs_paths_overlap(const struct path *a, const struct path *b)
{
	/* The dentries: bind mounts of one directory; the paths: mounts on top. */
	return is_subdir(a->dentry, b->dentry) ||
	       is_subdir(b->dentry, a->dentry) ||
	       path_is_under(a, b) || path_is_under(b, a);
}

/*
 * One cache directory, one mount. Each mount believes it alone changes its
 * cache: it punches what the daemon evicts and trusts its presence bitmaps,
 * and a LIST prunes every name S3 did not list. A second mount of the same
 * directory, or of one inside it or around it (either order), would punch
 * chunks under the other's readers or delete its files, so it is refused,
 * as overlayfs refuses an upper or work directory in use. The claim lasts
 * until the superblock is freed (s3cfs_free_sbi()).
 */
static int s3cfs_claim_cache(struct fs_context *fc, struct s3cfs_sb_info *sbi)
{
	struct s3cfs_sb_info *other;
	int err = 0;

	s3cfs_mounts_lock();
	list_for_each_entry(other, &s3cfs_caches, cache_link) {
		if (!s3cfs_paths_overlap(&sbi->lower_root, &other->lower_root))
			continue;
		err = -EBUSY;
		errorfc(fc,
			"cache=%s is in use: the mount of %s%s%s has cache %s (a cache directory, or one inside another, serves one mount)",
			sbi->cache_path, other->bucket, *other->prefix ? ":" : "",
			other->prefix, other->cache_path);
		break;
	}
	if (!err)
		list_add_tail(&sbi->cache_link, &s3cfs_caches);
	s3cfs_mounts_unlock();
	return err;
}

/*
 * The daemon's configuration of the bucket (version 7) for what the
 * options of a writable mount do not say; whether it leaves directory
 * indexes (version 9).
 */
static void s3cfs_mount_defaults(struct s3cfs_sb_info *sbi,
				 const struct s3cfs_req *req)
{
	struct s3cfs_mount_opts *o = &sbi->opts;

	/* A daemon before version 9 lists into the lower directory. */
	if (o->dir_index && (req->reply_flags & S3CFS_MOUNT_INDEX))
		sbi->index = true;
	if (!o->writable)
		return;
	if (!o->writeback_given && (req->reply_flags & S3CFS_MOUNT_WRITEBACK))
		o->writeback = true;
	if (!o->upload_delay_given && req->reply_upload_delay >= 0)
		o->upload_delay = req->reply_upload_delay;
}

/*
 * Tell the daemon about the mount; it checks the cache's format marker,
 * and answers with the bucket's defaults.
 */
static int s3cfs_register_mount(struct fs_context *fc,
				struct s3cfs_sb_info *sbi)
{
	struct s3cfs_req *req;
	int err;

	if (!s3cfs_daemon_present()) {
		errorfc(fc, "s3cachefsd is not running");
		return -ENOTCONN;
	}
	if (sbi->opts.writable && s3cfs_daemon_version() < 3) {
		errorfc(fc, "writable: s3cachefsd is too old (protocol %u, writes need 3)",
			s3cfs_daemon_version());
		return -EPROTONOSUPPORT;
	}
	if (sbi->opts.posix_meta && s3cfs_daemon_version() < 5) {
		errorfc(fc, "posix_meta: s3cachefsd is too old (protocol %u, needs 5)",
			s3cfs_daemon_version());
		return -EPROTONOSUPPORT;
	}
	req = s3cfs_req_alloc(sbi, S3CFS_CMD_MOUNT);
	if (!req)
		return -ENOMEM;
	err = s3cfs_upcall_req(req);
	if (!err)
		s3cfs_mount_defaults(sbi, req);
	s3cfs_req_put(req);
	switch (err) {
	case 0:
		return 0;
	case -EXDEV:
		errorfc(fc, "cache=%s belongs to another bucket or prefix (see %s/%s)",
			sbi->cache_path, sbi->cache_path, S3CFS_FORMAT_FILE);
		return err;
	case -ENOTEMPTY:
		errorfc(fc,
			"cache=%s is not empty and is not an s3cachefs cache: refused by s3cachefsd (give an empty directory, for s3cachefs only)",
			sbi->cache_path);
		return err;
	case -ESTALE:
	case -ELOOP:
		errorfc(fc,
			"s3cachefsd opened another directory at %s than the one mounted (%s): refused",
			sbi->cache_path, err == -ELOOP ? "a symlink on the way" :
			"it lacks the mount's token");
		return err;
	case -ENOENT:
		errorfc(fc, "bucket %s does not exist", sbi->bucket);
		return err;
	case -EACCES:
		errorfc(fc, "bucket %s: access denied, or no credentials for it (see s3cachefsd's log)",
			sbi->bucket);
		return err;
	case -EIO:
		errorfc(fc, "s3cachefsd did not answer the mount request");
		return err;
	default:
		errorfc(fc, "s3cachefsd refused the mount (%d)", err);
		return err;
	}
}

/**
 * s3cfs_fill_super() - set up a new mount
 * @sb: the new superblock
 * @fc: the fs_context with the parsed options
 *
 * Return: 0 or a negative errno (with a message in the fs_context log).
 */
int s3cfs_fill_super(struct super_block *sb, struct fs_context *fc)
{
	struct s3cfs_sb_info *sbi;
	struct inode *root;
	int err, id;

	sbi = kzalloc(sizeof(*sbi), GFP_KERNEL);
	if (!sbi)
		return -ENOMEM;
	sbi->sb = sb;
	INIT_LIST_HEAD(&sbi->mounts_link);
	INIT_LIST_HEAD(&sbi->cache_link);
	init_completion(&sbi->kobj_unregister);
	s3cfs_upcall_init_mount(sbi);
	s3cfs_upq_init_mount(sbi);
	s3cfs_take_opts(fc, &sbi->opts);
	sb->s_fs_info = sbi;

	err = -EINVAL;
	if (!sbi->opts.cache) {
		errorfc(fc, "cache=DIR is required");
		goto out;
	}
	err = s3cfs_parse_source(fc, &sbi->bucket, &sbi->prefix);
	if (err)
		goto out;
	err = s3cfs_open_cache(fc, sbi);
	if (err)
		goto out;
	err = s3cfs_claim_cache(fc, sbi);
	if (err)
		goto out;
	sbi->chunk_shift = ilog2(sbi->opts.chunk_size);
	err = -ENOMEM;
	sbi->creds = prepare_creds();
	if (!sbi->creds)
		goto out;
	/* Empty or a cache already; made private; tied to this mount. */
	err = s3cfs_cache_adopt(fc, sbi);
	if (err)
		goto out;
	id = ida_alloc_min(&s3cfs_mount_ida, 1, GFP_KERNEL);
	if (id < 0) {
		err = id;
		goto out;
	}
	sbi->mount_id = id;

	sb->s_stack_depth = sbi->lower_root.mnt->mnt_sb->s_stack_depth + 1;
	err = -EINVAL;
	if (sb->s_stack_depth > FILESYSTEM_MAX_STACK_DEPTH) {
		errorfc(fc, "cache=%s: filesystems stacked too deep", sbi->cache_path);
		goto out;
	}
	sb->s_magic = S3CFS_MAGIC;
	sb->s_op = &s3cfs_sops;
	sb->s_d_op = &s3cfs_dops;
	/*
	 * What a file written here may grow to: what S3 takes as one object,
	 * and the cache filesystem as one file (ext4 with 1 KiB blocks: 4
	 * TiB). A truncate, write or fallocate past it is EFBIG before it
	 * changes anything.
	 */
	sb->s_maxbytes = MAX_LFS_FILESIZE;
	if (sbi->opts.writable)
		sb->s_maxbytes = min_t(loff_t, S3CFS_OBJECT_MAX,
				       sbi->lower_root.mnt->mnt_sb->s_maxbytes);
	sb->s_time_gran = 1;
	sb->s_flags |= SB_NOATIME | SB_NODIRATIME;
	if (!sbi->opts.writable)
		sb->s_flags |= SB_RDONLY;
	err = super_setup_bdi(sb);
	if (err)
		goto out;
	sb->s_bdi->ra_pages = sbi->opts.readahead_kb >> (PAGE_SHIFT - 10);
	sb->s_bdi->io_pages = sb->s_bdi->ra_pages;
	/*
	 * A writer's dirty pages are held to this mount's share of the dirty
	 * threshold even while the system as a whole is under it, so one
	 * big checkpoint does not fill memory with pages for the cache
	 * device: the writer waits in balance_dirty_pages() instead.
	 */
	if (sbi->opts.writable) {
		sb->s_bdi->capabilities |= BDI_CAP_STRICTLIMIT;
		err = bdi_set_max_ratio(sb->s_bdi, sbi->opts.dirty_ratio);
		if (err)
			goto out;
	}

	root = s3cfs_iget(sb, sbi->lower_root.dentry);
	if (IS_ERR(root)) {
		err = PTR_ERR(root);
		goto out;
	}
	sb->s_root = d_make_root(root);
	err = -ENOMEM;
	if (!sb->s_root)
		goto out;

	s3cfs_mounts_lock();
	list_add_tail(&sbi->mounts_link, &s3cfs_mounts);
	s3cfs_mounts_unlock();
	err = s3cfs_register_mount(fc, sbi);
	if (err)
		goto out;
	err = s3cfs_sysfs_add(sbi);
	if (err)
		goto out;
	if (sbi->opts.writeback) {
		err = s3cfs_upq_start(sbi);
		if (err)
			goto out;
	}
	pr_info("mounted %s:%s on cache %s (mount %u, chunk %u KiB)\n",
		sbi->bucket, sbi->prefix, sbi->cache_path, sbi->mount_id,
		sbi->opts.chunk_size >> 10);
	return 0;
out:
	/* s3cfs_kill_sb() frees what was set up. */
	return err;
}

/**
 * s3cfs_kill_sb() - unmount
 * @sb: the superblock
 *
 * In this order: fail what is pending for this mount and refuse anything
 * new (requests hold inode references); wait for the mount's readahead
 * workers, which then fail what they still wait for and drop their inode
 * references; evict the inodes; wait for NOWAIT retries that reads still in
 * flight during eviction queued; tell the daemon. A worker that asked for
 * a chunk after the flush used to queue a FETCH with an inode reference on
 * a mount about to be freed:
 *
 *   CPU0 (umount)                     CPU1 (s3cfs_ra_workfn)
 *   s3cfs_upcall_flush()
 *     dying = true (table lock)
 *                                     s3cfs_chunks_ensure()
 *                                       s3cfs_req_submit()
 *                                         sees dying (table lock): -EIO
 *                                     fails its folios, iput()
 *   s3cfs_aops_drain() returns
 *   kill_anon_super(): evicts inodes
 */
void s3cfs_kill_sb(struct super_block *sb)
{
	struct s3cfs_sb_info *sbi = S3CFS_SB(sb);

	if (sbi) {
		/* Write-back: upload what is queued while requests still go. */
		s3cfs_upq_drain(sbi);
		s3cfs_mounts_lock();
		list_del_init(&sbi->mounts_link);
		s3cfs_mounts_unlock();
		s3cfs_upcall_flush(sbi);
		s3cfs_fault("umount_flushed");
		s3cfs_aops_drain(sbi);
		s3cfs_sysfs_del(sbi);
	}
	kill_anon_super(sb);
	if (sbi) {
		s3cfs_aops_drain(sbi);
		if (sbi->mount_id && sb->s_root)
			s3cfs_upcall_umount(sbi);
		s3cfs_free_sbi(sbi);
	}
}

struct file_system_type s3cfs_fs_type = {
	.owner			= THIS_MODULE,
	.name			= "s3cachefs",
	.init_fs_context	= s3cfs_init_fs_context,
	.parameters		= s3cfs_fs_parameters,
	.kill_sb		= s3cfs_kill_sb,
};
MODULE_ALIAS_FS("s3cachefs");

static int __init s3cfs_init(void)
{
	int err;

	err = s3cfs_inode_cache_init();
	if (err)
		return err;
	err = s3cfs_aops_init();
	if (err)
		goto out_inode_cache;
	err = s3cfs_sysfs_init();
	if (err)
		goto out_aops;
	err = s3cfs_netlink_init();
	if (err)
		goto out_sysfs;
	err = register_filesystem(&s3cfs_fs_type);
	if (err)
		goto out_netlink;
	pr_info("loaded (protocol %d)\n", S3CFS_GENL_VERSION);
	return 0;

out_netlink:
	s3cfs_netlink_exit();
out_sysfs:
	s3cfs_sysfs_exit();
out_aops:
	s3cfs_aops_exit();
out_inode_cache:
	s3cfs_inode_cache_exit();
	return err;
}

static void __exit s3cfs_exit(void)
{
	unregister_filesystem(&s3cfs_fs_type);
	s3cfs_netlink_exit();
	s3cfs_upcall_exit();
	s3cfs_sysfs_exit();
	s3cfs_aops_exit();
	s3cfs_inode_cache_exit();
}

module_init(s3cfs_init);
module_exit(s3cfs_exit);
MODULE_DESCRIPTION("s3cachefs: S3 bucket cached on local NVMe");
MODULE_AUTHOR("The s3cachefs authors");
MODULE_LICENSE("GPL");
MODULE_VERSION(S3CFS_VERSION);
