// SPDX-License-Identifier: GPL-2.0
/*
 * s3cachefs: mount options and the mount source.
 *
 *   mount -t s3cachefs -o cache=DIR[,chunk=1M][,uid=,gid=,file_mode=,
 *         dir_mode=][,fetch_timeout=S][,meta_ttl=S][,readahead=KiB]
 *         [,writable[,allow_delete][,dirty_ratio=PCT]
 *         [,writeback|nowriteback[,upload_delay=S][,writeback_max=MiB]]]
 *         [,posix_meta | ,[no]dir_index]
 *         BUCKET[:PREFIX] MOUNTPOINT
 *
 * writable: files may be created, written and uploaded (upload.c),
 * directories made (dirops.c). allow_delete: what deletes an object that
 * is in S3 (unlink, rmdir, the source of a rename) is allowed too.
 * Without it the mount is read-only whatever mount(8) asks for, so an
 * existing fstab line never starts writing to a bucket. dirty_ratio: the
 * share (percent) of the system's dirty page threshold this mount's
 * written-but-not-written-back pages may take; writers past it wait
 * while writeback drains them to the cache device (a strict limit, as
 * fuse has). writeback: close and fsync return once the file is durable
 * on the cache device, and it is uploaded upload_delay seconds after its
 * last close (upqueue.c); without it they return once S3 has it. A
 * writable mount that says neither writeback nor nowriteback (nor
 * upload_delay=) gets the daemon's configuration of the bucket.
 * writeback_max: MiB of acknowledged files not uploaded yet past which a
 * close or fsync waits for uploads (default: half the cache filesystem). posix_meta:
 * each object's mode, owner and mtime are s3fs-fuse's x-amz-meta-*
 * headers (a HEAD per object at its first lookup), symlinks are
 * objects, and chmod, chown and utimes change the headers in S3.
 * dir_index (read-only mounts without posix_meta; default: the module's
 * dir_index, nodir_index turns it off): a listing leaves an index of the
 * directory instead of a cache file per object (index.c), with a daemon
 * that can (protocol 9; an older one lists as before).
 *
 * file_mode= and dir_mode= take permission bits and the sticky bit, never
 * set-user-ID or set-group-ID (S3CFS_PERM_MASK).
 *
 * Defaults for the knobs come from module parameters. Bad options fail the
 * mount with a message in the fs_context log (dmesg with mount(2)).
 */
#include "s3cachefs.h"
#include <linux/fs_parser.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/ctype.h>
#include <linux/log2.h>
#include <linux/backing-dev.h>
#include <linux/moduleparam.h>

static unsigned int fetch_timeout = 60;
module_param(fetch_timeout, uint, 0644);
MODULE_PARM_DESC(fetch_timeout, "Default seconds a read waits for the daemon (60)");

static unsigned int meta_ttl = 60;
module_param(meta_ttl, uint, 0644);
MODULE_PARM_DESC(meta_ttl, "Default seconds listings and lookups are trusted (60)");

static unsigned int readahead_kb = 8192;
module_param(readahead_kb, uint, 0644);
MODULE_PARM_DESC(readahead_kb, "Default readahead window in KiB (8192)");

static unsigned int dirty_ratio = 10;
module_param(dirty_ratio, uint, 0644);
MODULE_PARM_DESC(dirty_ratio, "Default percent of the dirty threshold a writable mount may hold (10)");

static unsigned int upload_delay = 5;
module_param(upload_delay, uint, 0644);
MODULE_PARM_DESC(upload_delay, "Default seconds a write-back mount waits after a close before uploading (5)");

static bool dir_index = true;
module_param(dir_index, bool, 0644);
MODULE_PARM_DESC(dir_index, "Default for read-only mounts without posix_meta: listings leave directory indexes (Y)");

#define S3CFS_TIMEOUT_MAX	3600		/* s */
#define S3CFS_TTL_MAX		(30 * 86400)	/* s; in ms it must fit a u32 */
#define S3CFS_RA_MAX		(1U << 20)	/* KiB */

enum s3cfs_param {
	Opt_cache,
	Opt_chunk,
	Opt_uid,
	Opt_gid,
	Opt_file_mode,
	Opt_dir_mode,
	Opt_fetch_timeout,
	Opt_meta_ttl,
	Opt_readahead,
	Opt_writable,
	Opt_allow_delete,
	Opt_posix_meta,
	Opt_dir_index,
	Opt_dirty_ratio,
	Opt_writeback,
	Opt_upload_delay,
	Opt_writeback_max,
};

const struct fs_parameter_spec s3cfs_fs_parameters[] = {
	fsparam_string("cache", Opt_cache),
	fsparam_string("chunk", Opt_chunk),
	fsparam_u32("uid", Opt_uid),
	fsparam_u32("gid", Opt_gid),
	fsparam_u32oct("file_mode", Opt_file_mode),
	fsparam_u32oct("dir_mode", Opt_dir_mode),
	fsparam_u32("fetch_timeout", Opt_fetch_timeout),
	fsparam_u32("meta_ttl", Opt_meta_ttl),
	fsparam_u32("readahead", Opt_readahead),
	fsparam_flag("writable", Opt_writable),
	fsparam_flag("allow_delete", Opt_allow_delete),
	fsparam_flag("posix_meta", Opt_posix_meta),
	fsparam_flag_no("dir_index", Opt_dir_index),
	fsparam_u32("dirty_ratio", Opt_dirty_ratio),
	fsparam_flag_no("writeback", Opt_writeback),
	fsparam_u32("upload_delay", Opt_upload_delay),
	fsparam_u32("writeback_max", Opt_writeback_max),
	{}
};

/**
 * struct s3cfs_fs_ctx - mount options being parsed (fc->fs_private)
 * @opts: the options
 * @set: bitmask of the options given (BIT(Opt_*))
 */
struct s3cfs_fs_ctx {
	struct s3cfs_mount_opts opts;
	unsigned long set;
};

static int s3cfs_parse_param(struct fs_context *fc, struct fs_parameter *param)
{
	struct s3cfs_fs_ctx *ctx = fc->fs_private;
	struct s3cfs_mount_opts *o = &ctx->opts;
	struct fs_parse_result result;
	unsigned long long chunk;
	char *end;
	int opt;

	opt = fs_parse(fc, s3cfs_fs_parameters, param, &result);
	if (opt < 0)
		return opt;
	ctx->set |= BIT(opt);

	switch (opt) {
	case Opt_cache:
		if (!*param->string)
			return invalfc(fc, "cache= needs a directory");
		kfree(o->cache);
		o->cache = param->string;
		param->string = NULL;
		break;
	case Opt_chunk:
		chunk = memparse(param->string, &end);
		if (*end || !is_power_of_2(chunk) || chunk < S3CFS_CHUNK_MIN ||
		    chunk > S3CFS_CHUNK_MAX || chunk < PAGE_SIZE)
			return invalfc(fc, "chunk=%s: must be a power of two from 64K to 64M",
				       param->string);
		o->chunk_size = chunk;
		break;
	case Opt_uid:
		o->uid = make_kuid(current_user_ns(), result.uint_32);
		if (!uid_valid(o->uid))
			return invalfc(fc, "uid=%u: not a valid uid", result.uint_32);
		break;
	case Opt_gid:
		o->gid = make_kgid(current_user_ns(), result.uint_32);
		if (!gid_valid(o->gid))
			return invalfc(fc, "gid=%u: not a valid gid", result.uint_32);
		break;
	case Opt_file_mode:
	case Opt_dir_mode:
		if (result.uint_32 & ~07777)
			return invalfc(fc, "%s=%o: only permission bits allowed",
				       param->key, result.uint_32);
		/* Everyone's files would be setuid programs of uid=. */
		if (result.uint_32 & ~S3CFS_PERM_MASK)
			return invalfc(fc, "%s=%o: set-user-ID and set-group-ID are not allowed",
				       param->key, result.uint_32);
		if (opt == Opt_file_mode)
			o->file_mode = result.uint_32;
		else
			o->dir_mode = result.uint_32;
		break;
	case Opt_fetch_timeout:
		if (!result.uint_32 || result.uint_32 > S3CFS_TIMEOUT_MAX)
			return invalfc(fc, "fetch_timeout=%u: must be 1..%u seconds",
				       result.uint_32, S3CFS_TIMEOUT_MAX);
		o->fetch_timeout_ms = result.uint_32 * MSEC_PER_SEC;
		break;
	case Opt_meta_ttl:
		if (result.uint_32 > S3CFS_TTL_MAX)
			return invalfc(fc, "meta_ttl=%u: at most %u seconds",
				       result.uint_32, S3CFS_TTL_MAX);
		o->meta_ttl_ms = result.uint_32 * MSEC_PER_SEC;
		break;
	case Opt_writable:
		o->writable = true;
		break;
	case Opt_allow_delete:
		o->allow_delete = true;
		break;
	case Opt_posix_meta:
		o->posix_meta = true;
		break;
	case Opt_dir_index:
		o->dir_index = !result.negated;
		break;
	case Opt_readahead:
		if (result.uint_32 > S3CFS_RA_MAX)
			return invalfc(fc, "readahead=%u: at most %u KiB",
				       result.uint_32, S3CFS_RA_MAX);
		o->readahead_kb = result.uint_32;
		break;
	case Opt_dirty_ratio:
		if (!result.uint_32 || result.uint_32 > 100)
			return invalfc(fc, "dirty_ratio=%u: a percent from 1 to 100",
				       result.uint_32);
		o->dirty_ratio = result.uint_32;
		break;
	case Opt_writeback:
		o->writeback = !result.negated;
		break;
	case Opt_upload_delay:
		if (result.uint_32 > S3CFS_TIMEOUT_MAX)
			return invalfc(fc, "upload_delay=%u: at most %u seconds",
				       result.uint_32, S3CFS_TIMEOUT_MAX);
		o->upload_delay = result.uint_32;
		break;
	case Opt_writeback_max:
		if (!result.uint_32)
			return invalfc(fc, "writeback_max=0: at least 1 MiB");
		o->writeback_max_mb = result.uint_32;
		break;
	}
	return 0;
}

/**
 * s3cfs_parse_source() - split the mount source into bucket and prefix
 * @fc: the fs_context, fc->source is "BUCKET[:PREFIX]" or "s3://BUCKET[/PREFIX]"
 * @bucket: set to a kmalloc'ed bucket name
 * @prefix: set to a kmalloc'ed prefix, "" or ending in '/'
 *
 * Return: 0 or -EINVAL (logged).
 */
int s3cfs_parse_source(struct fs_context *fc, char **bucket, char **prefix)
{
	const char *src = fc->source, *sep, *p;
	size_t blen, plen;
	char *b, *pre;

	if (!src || !*src)
		return invalfc(fc, "no source: mount BUCKET[:PREFIX] on the mountpoint");
	if (!strncasecmp(src, "s3://", 5)) {
		src += 5;
		sep = strchr(src, '/');
	} else {
		sep = strchr(src, ':');
	}
	blen = sep ? sep - src : strlen(src);
	if (blen < 1 || blen > S3CFS_BUCKET_MAX)
		return invalfc(fc, "bucket name must be 1..%d characters", S3CFS_BUCKET_MAX);
	for (p = src; p < src + blen; p++)
		if (!isalnum(*p) && *p != '-' && *p != '.' && *p != '_')
			return invalfc(fc, "bad character '%c' in bucket name", *p);

	p = sep ? sep + 1 : "";
	while (*p == '/')
		p++;
	plen = strlen(p);
	if (plen > S3CFS_PREFIX_MAX - 1)
		return invalfc(fc, "prefix longer than %d bytes", S3CFS_PREFIX_MAX - 1);
	/* Each prefix component becomes a path: refuse what cannot be one. */
	if (strstr(p, "//") || !strcmp(p, ".") || !strcmp(p, "..") ||
	    !strncmp(p, "./", 2) || !strncmp(p, "../", 3) ||
	    strstr(p, "/./") || strstr(p, "/../") ||
	    (plen >= 2 && !strcmp(p + plen - 2, "/.")) ||
	    (plen >= 3 && !strcmp(p + plen - 3, "/..")))
		return invalfc(fc, "prefix '%s' has empty, '.' or '..' components", p);

	b = kmemdup_nul(src, blen, GFP_KERNEL);
	pre = kzalloc(plen + 2, GFP_KERNEL);
	if (!b || !pre) {
		kfree(b);
		kfree(pre);
		return -ENOMEM;
	}
	memcpy(pre, p, plen);
	if (plen && pre[plen - 1] != '/')
		pre[plen] = '/';
	*bucket = b;
	*prefix = pre;
	return 0;
}

static int s3cfs_get_tree(struct fs_context *fc)
{
	struct s3cfs_fs_ctx *ctx = fc->fs_private;

	if (ctx->opts.allow_delete && !ctx->opts.writable)
		return invalfc(fc, "allow_delete needs writable");
	if (ctx->opts.writeback && !ctx->opts.writable)
		return invalfc(fc, "writeback needs writable");
	if ((ctx->set & BIT(Opt_dir_index)) && ctx->opts.dir_index &&
	    (ctx->opts.writable || ctx->opts.posix_meta))
		return invalfc(fc, "dir_index is for read-only mounts without posix_meta");
	return get_tree_nodev(fc, s3cfs_fill_super);
}

/*
 * mount(8) passes the current options back on remount: the fixed ones are
 * fine as long as they keep their values.
 */
static bool s3cfs_fixed_opts_changed(struct s3cfs_fs_ctx *ctx,
				     struct s3cfs_sb_info *sbi)
{
	struct s3cfs_mount_opts *n = &ctx->opts, *o = &sbi->opts;

	return ((ctx->set & BIT(Opt_cache)) &&
		strcmp(n->cache, o->cache) && strcmp(n->cache, sbi->cache_path)) ||
	       ((ctx->set & BIT(Opt_chunk)) && n->chunk_size != o->chunk_size) ||
	       ((ctx->set & BIT(Opt_uid)) && !uid_eq(n->uid, o->uid)) ||
	       ((ctx->set & BIT(Opt_gid)) && !gid_eq(n->gid, o->gid)) ||
	       ((ctx->set & BIT(Opt_file_mode)) && n->file_mode != o->file_mode) ||
	       ((ctx->set & BIT(Opt_dir_mode)) && n->dir_mode != o->dir_mode) ||
	       ((ctx->set & BIT(Opt_writable)) && !o->writable) ||
	       ((ctx->set & BIT(Opt_allow_delete)) && !o->allow_delete) ||
	       ((ctx->set & BIT(Opt_posix_meta)) && !o->posix_meta) ||
	       ((ctx->set & BIT(Opt_dir_index)) && n->dir_index != o->dir_index) ||
	       ((ctx->set & BIT(Opt_writeback)) && n->writeback != o->writeback);
}

/* Remount may change the knobs, nothing that shapes the cache. */
static int s3cfs_reconfigure(struct fs_context *fc)
{
	struct s3cfs_fs_ctx *ctx = fc->fs_private;
	struct s3cfs_sb_info *sbi = S3CFS_SB(fc->root->d_sb);

	if (s3cfs_fixed_opts_changed(ctx, sbi))
		return invalfc(fc, "remount can change only fetch_timeout, meta_ttl, readahead, dirty_ratio, upload_delay, writeback_max");
	if ((fc->sb_flags_mask & SB_RDONLY) && !(fc->sb_flags & SB_RDONLY) &&
	    !sbi->opts.writable) {
		errorfc(fc, "s3cachefs is read-only without the writable option");
		return -EROFS;
	}
	if (ctx->set & BIT(Opt_fetch_timeout))
		WRITE_ONCE(sbi->opts.fetch_timeout_ms, ctx->opts.fetch_timeout_ms);
	if (ctx->set & BIT(Opt_meta_ttl))
		WRITE_ONCE(sbi->opts.meta_ttl_ms, ctx->opts.meta_ttl_ms);
	if (ctx->set & BIT(Opt_readahead)) {
		WRITE_ONCE(sbi->opts.readahead_kb, ctx->opts.readahead_kb);
		sbi->sb->s_bdi->ra_pages = ctx->opts.readahead_kb >> (PAGE_SHIFT - 10);
	}
	if (ctx->set & BIT(Opt_upload_delay))
		WRITE_ONCE(sbi->opts.upload_delay, ctx->opts.upload_delay);
	if (ctx->set & BIT(Opt_writeback_max)) {
		WRITE_ONCE(sbi->opts.writeback_max_mb,
			   ctx->opts.writeback_max_mb);
		wake_up_all(&sbi->upq.wq);
	}
	if (ctx->set & BIT(Opt_dirty_ratio)) {
		int err = bdi_set_max_ratio(sbi->sb->s_bdi,
					    ctx->opts.dirty_ratio);

		if (err)
			return invalfc(fc, "dirty_ratio=%u: refused by the writeback code (%d)",
				       ctx->opts.dirty_ratio, err);
		WRITE_ONCE(sbi->opts.dirty_ratio, ctx->opts.dirty_ratio);
	}
	return 0;
}

static void s3cfs_free_fc(struct fs_context *fc)
{
	struct s3cfs_fs_ctx *ctx = fc->fs_private;

	if (ctx)
		kfree(ctx->opts.cache);
	kfree(ctx);
}

static const struct fs_context_operations s3cfs_context_ops = {
	.parse_param	= s3cfs_parse_param,
	.get_tree	= s3cfs_get_tree,
	.reconfigure	= s3cfs_reconfigure,
	.free		= s3cfs_free_fc,
};

/**
 * s3cfs_init_fs_context() - start a mount or remount
 * @fc: the fs_context
 *
 * Return: 0 or -ENOMEM.
 */
int s3cfs_init_fs_context(struct fs_context *fc)
{
	struct s3cfs_fs_ctx *ctx = kzalloc(sizeof(*ctx), GFP_KERNEL);

	if (!ctx)
		return -ENOMEM;
	ctx->opts.chunk_size = S3CFS_CHUNK_DEFAULT;
	ctx->opts.uid = current_fsuid();
	ctx->opts.gid = current_fsgid();
	ctx->opts.file_mode = 0444;
	ctx->opts.dir_mode = 0555;
	ctx->opts.fetch_timeout_ms = clamp(READ_ONCE(fetch_timeout), 1U,
					   (unsigned int)S3CFS_TIMEOUT_MAX) * MSEC_PER_SEC;
	ctx->opts.meta_ttl_ms = min_t(unsigned int, READ_ONCE(meta_ttl),
				      S3CFS_TTL_MAX) * MSEC_PER_SEC;
	ctx->opts.readahead_kb = min(READ_ONCE(readahead_kb), S3CFS_RA_MAX);
	ctx->opts.dirty_ratio = clamp(READ_ONCE(dirty_ratio), 1U, 100U);
	ctx->opts.upload_delay = min_t(unsigned int, READ_ONCE(upload_delay),
				       S3CFS_TIMEOUT_MAX);
	fc->fs_private = ctx;
	fc->ops = &s3cfs_context_ops;
	return 0;
}

/**
 * s3cfs_take_opts() - move the parsed options into a new superblock
 * @fc: the fs_context
 * @opts: where to put them; the cache string changes owner
 */
void s3cfs_take_opts(struct fs_context *fc, struct s3cfs_mount_opts *opts)
{
	struct s3cfs_fs_ctx *ctx = fc->fs_private;

	*opts = ctx->opts;
	ctx->opts.cache = NULL;
	/* What the daemon's defaults for the bucket may not override. */
	opts->writeback_given = ctx->set & BIT(Opt_writeback);
	opts->upload_delay_given = ctx->set & BIT(Opt_upload_delay);
	/* Indexes by default (the module's dir_index) where a mount can have them. */
	if (!(ctx->set & BIT(Opt_dir_index)))
		opts->dir_index = READ_ONCE(dir_index) && !opts->writable &&
				  !opts->posix_meta;
	/* A writable mount's files and directories are writable by default. */
	if (opts->writable && !(ctx->set & BIT(Opt_file_mode)))
		opts->file_mode = 0644;
	if (opts->writable && !(ctx->set & BIT(Opt_dir_mode)))
		opts->dir_mode = 0755;
}
