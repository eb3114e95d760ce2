// SPDX-License-Identifier: GPL-2.0
/*
 * s3cachefs: /sys/fs/s3cachefs/<MAJ:MIN>/, one directory per mount, named
 * after the mount's device number (`mountpoint -d /mnt` prints it).
 * Counters are read-only; the knobs are validated on write.
 */
#include "s3cachefs.h"
#include <linux/sysfs.h>
#include <linux/kstrtox.h>
#include <linux/backing-dev.h>

static struct kset *s3cfs_kset;

/**
 * struct s3cfs_sysfs_attr - a per-mount sysfs file
 * @attr: the sysfs attribute
 * @show: prints it
 * @store: sets it (knobs only)
 */
struct s3cfs_sysfs_attr {
	struct attribute attr;
	ssize_t (*show)(struct s3cfs_sb_info *sbi, char *buf);
	ssize_t (*store)(struct s3cfs_sb_info *sbi, const char *buf,
			 size_t len);
};

#define S3CFS_COUNTER(name)						\
static ssize_t name##_show(struct s3cfs_sb_info *sbi, char *buf)	\
{									\
	return sysfs_emit(buf, "%lld\n",				\
			  atomic64_read(&sbi->stats.name));		\
}									\
static struct s3cfs_sysfs_attr s3cfs_attr_##name = __ATTR_RO(name)

S3CFS_COUNTER(chunk_hits);
S3CFS_COUNTER(chunk_misses);
S3CFS_COUNTER(fetches);
S3CFS_COUNTER(fetch_bytes);
S3CFS_COUNTER(fetch_errors);
S3CFS_COUNTER(fetch_timeouts);
S3CFS_COUNTER(lookups);
S3CFS_COUNTER(lookups_indexed);
S3CFS_COUNTER(primed);
S3CFS_COUNTER(lists);
S3CFS_COUNTER(lists_streamed);
S3CFS_COUNTER(stale);
S3CFS_COUNTER(read_retries);
S3CFS_COUNTER(expired);
S3CFS_COUNTER(direct_bytes);
S3CFS_COUNTER(uploads);
S3CFS_COUNTER(upload_errors);
S3CFS_COUNTER(conflicts);
S3CFS_COUNTER(wb_acks);
S3CFS_COUNTER(wb_resumed);
S3CFS_COUNTER(stream_parts);
S3CFS_COUNTER(stream_uploads);

static ssize_t fetch_latency_show(struct s3cfs_sb_info *sbi, char *buf)
{
	int i, n = 0;

	for (i = 0; i < S3CFS_LAT_BUCKETS - 1; i++)
		n += sysfs_emit_at(buf, n, "<%ums %lld\n", 1U << i,
				   atomic64_read(&sbi->stats.latency[i]));
	n += sysfs_emit_at(buf, n, ">=%ums %lld\n", 1U << (i - 1),
			   atomic64_read(&sbi->stats.latency[i]));
	return n;
}

static struct s3cfs_sysfs_attr s3cfs_attr_fetch_latency = __ATTR_RO(fetch_latency);

static ssize_t bucket_show(struct s3cfs_sb_info *sbi, char *buf)
{
	return sysfs_emit(buf, "%s\n", sbi->bucket);
}

static struct s3cfs_sysfs_attr s3cfs_attr_bucket = __ATTR_RO(bucket);

static ssize_t pending_show(struct s3cfs_sb_info *sbi, char *buf)
{
	return sysfs_emit(buf, "%d\n", atomic_read(&sbi->nr_pending));
}

static struct s3cfs_sysfs_attr s3cfs_attr_pending = __ATTR_RO(pending);

/* Write-back: files owing an upload, uploads run, uploads failed. */
static ssize_t wb_queued_show(struct s3cfs_sb_info *sbi, char *buf)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(sbi->upq.nr));
}

static struct s3cfs_sysfs_attr s3cfs_attr_wb_queued = __ATTR_RO(wb_queued);

static ssize_t wb_queued_bytes_show(struct s3cfs_sb_info *sbi, char *buf)
{
	return sysfs_emit(buf, "%llu\n", READ_ONCE(sbi->upq.bytes));
}

static struct s3cfs_sysfs_attr s3cfs_attr_wb_queued_bytes =
	__ATTR_RO(wb_queued_bytes);

static ssize_t wb_oldest_s_show(struct s3cfs_sb_info *sbi, char *buf)
{
	return sysfs_emit(buf, "%lu\n", s3cfs_upq_oldest(sbi));
}

static struct s3cfs_sysfs_attr s3cfs_attr_wb_oldest_s = __ATTR_RO(wb_oldest_s);

static ssize_t wb_runs_show(struct s3cfs_sb_info *sbi, char *buf)
{
	return sysfs_emit(buf, "%llu\n", READ_ONCE(sbi->upq.runs));
}

static struct s3cfs_sysfs_attr s3cfs_attr_wb_runs = __ATTR_RO(wb_runs);

static ssize_t wb_errors_show(struct s3cfs_sb_info *sbi, char *buf)
{
	return sysfs_emit(buf, "%lld\n", atomic64_read(&sbi->upq.errors));
}

static struct s3cfs_sysfs_attr s3cfs_attr_wb_errors = __ATTR_RO(wb_errors);

static ssize_t prefix_show(struct s3cfs_sb_info *sbi, char *buf)
{
	return sysfs_emit(buf, "%s\n", sbi->prefix);
}

static struct s3cfs_sysfs_attr s3cfs_attr_prefix = __ATTR_RO(prefix);

static ssize_t cache_dir_show(struct s3cfs_sb_info *sbi, char *buf)
{
	return sysfs_emit(buf, "%s\n", sbi->cache_path);
}

static struct s3cfs_sysfs_attr s3cfs_attr_cache_dir = __ATTR_RO(cache_dir);

static ssize_t chunk_size_show(struct s3cfs_sb_info *sbi, char *buf)
{
	return sysfs_emit(buf, "%u\n", sbi->opts.chunk_size);
}

static struct s3cfs_sysfs_attr s3cfs_attr_chunk_size = __ATTR_RO(chunk_size);

static ssize_t mount_id_show(struct s3cfs_sb_info *sbi, char *buf)
{
	return sysfs_emit(buf, "%u\n", sbi->mount_id);
}

static struct s3cfs_sysfs_attr s3cfs_attr_mount_id = __ATTR_RO(mount_id);

/* The mount's backing_dev_info: its /sys/class/bdi/ entry (max_ratio). */
static ssize_t bdi_show(struct s3cfs_sb_info *sbi, char *buf)
{
	return sysfs_emit(buf, "%s\n", bdi_dev_name(sbi->sb->s_bdi));
}

static struct s3cfs_sysfs_attr s3cfs_attr_bdi = __ATTR_RO(bdi);

static ssize_t s3cfs_store_uint(const char *buf, size_t len, unsigned int min,
				unsigned int max, unsigned int *val)
{
	unsigned int v;
	int err = kstrtouint(buf, 0, &v);

	if (err)
		return err;
	if (v < min || v > max)
		return -ERANGE;
	WRITE_ONCE(*val, v);
	return len;
}

static ssize_t fetch_timeout_ms_show(struct s3cfs_sb_info *sbi, char *buf)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(sbi->opts.fetch_timeout_ms));
}

static ssize_t fetch_timeout_ms_store(struct s3cfs_sb_info *sbi,
				      const char *buf, size_t len)
{
	return s3cfs_store_uint(buf, len, 100, 3600 * MSEC_PER_SEC,
				&sbi->opts.fetch_timeout_ms);
}

static struct s3cfs_sysfs_attr s3cfs_attr_fetch_timeout_ms = __ATTR_RW(fetch_timeout_ms);

static ssize_t meta_ttl_ms_show(struct s3cfs_sb_info *sbi, char *buf)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(sbi->opts.meta_ttl_ms));
}

static ssize_t meta_ttl_ms_store(struct s3cfs_sb_info *sbi, const char *buf,
				 size_t len)
{
	return s3cfs_store_uint(buf, len, 0, 30U * 86400 * 1000,
				&sbi->opts.meta_ttl_ms);
}

static struct s3cfs_sysfs_attr s3cfs_attr_meta_ttl_ms = __ATTR_RW(meta_ttl_ms);

static ssize_t readahead_kb_show(struct s3cfs_sb_info *sbi, char *buf)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(sbi->opts.readahead_kb));
}

static ssize_t readahead_kb_store(struct s3cfs_sb_info *sbi, const char *buf,
				  size_t len)
{
	ssize_t ret = s3cfs_store_uint(buf, len, 0, 1U << 20,
				       &sbi->opts.readahead_kb);

	if (ret > 0)
		sbi->sb->s_bdi->ra_pages =
			READ_ONCE(sbi->opts.readahead_kb) >> (PAGE_SHIFT - 10);
	return ret;
}

static struct s3cfs_sysfs_attr s3cfs_attr_readahead_kb = __ATTR_RW(readahead_kb);

static struct attribute *s3cfs_sb_attrs[] = {
	&s3cfs_attr_chunk_hits.attr,
	&s3cfs_attr_chunk_misses.attr,
	&s3cfs_attr_fetches.attr,
	&s3cfs_attr_fetch_bytes.attr,
	&s3cfs_attr_fetch_errors.attr,
	&s3cfs_attr_fetch_timeouts.attr,
	&s3cfs_attr_lookups.attr,
	&s3cfs_attr_lookups_indexed.attr,
	&s3cfs_attr_primed.attr,
	&s3cfs_attr_lists.attr,
	&s3cfs_attr_lists_streamed.attr,
	&s3cfs_attr_stale.attr,
	&s3cfs_attr_read_retries.attr,
	&s3cfs_attr_expired.attr,
	&s3cfs_attr_direct_bytes.attr,
	&s3cfs_attr_uploads.attr,
	&s3cfs_attr_upload_errors.attr,
	&s3cfs_attr_conflicts.attr,
	&s3cfs_attr_wb_acks.attr,
	&s3cfs_attr_wb_resumed.attr,
	&s3cfs_attr_stream_parts.attr,
	&s3cfs_attr_stream_uploads.attr,
	&s3cfs_attr_wb_queued.attr,
	&s3cfs_attr_wb_queued_bytes.attr,
	&s3cfs_attr_wb_oldest_s.attr,
	&s3cfs_attr_wb_runs.attr,
	&s3cfs_attr_wb_errors.attr,
	&s3cfs_attr_fetch_latency.attr,
	&s3cfs_attr_pending.attr,
	&s3cfs_attr_bucket.attr,
	&s3cfs_attr_prefix.attr,
	&s3cfs_attr_cache_dir.attr,
	&s3cfs_attr_chunk_size.attr,
	&s3cfs_attr_mount_id.attr,
	&s3cfs_attr_bdi.attr,
	&s3cfs_attr_fetch_timeout_ms.attr,
	&s3cfs_attr_meta_ttl_ms.attr,
	&s3cfs_attr_readahead_kb.attr,
	NULL,
};
ATTRIBUTE_GROUPS(s3cfs_sb);

static ssize_t s3cfs_attr_show(struct kobject *kobj, struct attribute *attr,
			       char *buf)
{
	struct s3cfs_sb_info *sbi = container_of(kobj, struct s3cfs_sb_info, kobj);
	struct s3cfs_sysfs_attr *a = container_of(attr, struct s3cfs_sysfs_attr, attr);

	return a->show ? a->show(sbi, buf) : -EIO;
}

static ssize_t s3cfs_attr_store(struct kobject *kobj, struct attribute *attr,
				const char *buf, size_t len)
{
	struct s3cfs_sb_info *sbi = container_of(kobj, struct s3cfs_sb_info, kobj);
	struct s3cfs_sysfs_attr *a = container_of(attr, struct s3cfs_sysfs_attr, attr);

	return a->store ? a->store(sbi, buf, len) : -EIO;
}

static const struct sysfs_ops s3cfs_sysfs_ops = {
	.show	= s3cfs_attr_show,
	.store	= s3cfs_attr_store,
};

static void s3cfs_sb_release(struct kobject *kobj)
{
	struct s3cfs_sb_info *sbi = container_of(kobj, struct s3cfs_sb_info, kobj);

	complete(&sbi->kobj_unregister);
}

static const struct kobj_type s3cfs_sb_ktype = {
	.default_groups	= s3cfs_sb_groups,
	.sysfs_ops	= &s3cfs_sysfs_ops,
	.release	= s3cfs_sb_release,
};

/**
 * s3cfs_sysfs_add() - create /sys/fs/s3cachefs/<MAJ:MIN>/
 * @sbi: the mount
 *
 * Return: 0 or a negative errno.
 */
int s3cfs_sysfs_add(struct s3cfs_sb_info *sbi)
{
	dev_t dev = sbi->sb->s_dev;
	int err;

	sbi->kobj.kset = s3cfs_kset;
	err = kobject_init_and_add(&sbi->kobj, &s3cfs_sb_ktype, NULL, "%u:%u",
				   MAJOR(dev), MINOR(dev));
	if (err) {
		kobject_put(&sbi->kobj);
		wait_for_completion(&sbi->kobj_unregister);
		return err;
	}
	sbi->kobj_added = true;
	return 0;
}

/**
 * s3cfs_sysfs_del() - remove a mount's sysfs directory and wait for it
 * @sbi: the mount
 */
void s3cfs_sysfs_del(struct s3cfs_sb_info *sbi)
{
	if (!sbi->kobj_added)
		return;
	kobject_del(&sbi->kobj);
	kobject_put(&sbi->kobj);
	wait_for_completion(&sbi->kobj_unregister);
	sbi->kobj_added = false;
}

/**
 * s3cfs_sysfs_init() - create /sys/fs/s3cachefs
 *
 * Return: 0 or -ENOMEM.
 */
int s3cfs_sysfs_init(void)
{
	s3cfs_kset = kset_create_and_add("s3cachefs", NULL, fs_kobj);
	return s3cfs_kset ? 0 : -ENOMEM;
}

/**
 * s3cfs_sysfs_exit() - remove /sys/fs/s3cachefs
 */
void s3cfs_sysfs_exit(void)
{
	kset_unregister(s3cfs_kset);
}
