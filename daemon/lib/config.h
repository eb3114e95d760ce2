/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The configuration file, /etc/s3cachefs/s3cachefsd.conf (config.c).
 * Shared by s3cachefsd and s3cachectl (it is part of libs3c.a).
 */
#ifndef S3D_CONFIG_H
#define S3D_CONFIG_H

#include <stdbool.h>
#include <stdint.h>

#include "retry.h"
#include "s3.h"
#include "util.h"

#define S3D_CONF_DEFAULT	"/etc/s3cachefs/s3cachefsd.conf"
#define S3D_CONF_ENV		"S3CACHEFSD_CONFIG"

/**
 * struct s3d_cache_policy - a mount's cache limits
 * @limit: bytes of cached data at most; 0: unlimited
 * @min_free: bytes to keep free on the cache device; 0: none
 * @min_free_pct: or a percentage of it (takes precedence when set)
 */
struct s3d_cache_policy {
	uint64_t limit;
	uint64_t min_free;
	unsigned int min_free_pct;
};

int s3d_parse_min_free(const char *s, struct s3d_cache_policy *pol);

/* Seconds an EVICT waits for its ack before it is given up. */
#define S3D_EVICT_TIMEOUT_DEFAULT	30

/*
 * A LOOKUP of a name not in the cache GETs the first lookup_get_max bytes
 * of the object instead of a HEAD: an object that fits arrives whole and
 * needs no FETCH. 0: HEAD only.
 */
#define S3D_LOOKUP_GET_MAX_DEFAULT	(256U << 10)
#define S3D_LOOKUP_GET_MAX_MAX		(8U << 20)

/*
 * After a listing, its subdirectories (two levels down) are listed in the
 * background, list_ahead at a time per mount, so that a walk (find, du,
 * os.walk) finds them listed. 0: off.
 */
#define S3D_LIST_AHEAD_DEFAULT		4
#define S3D_LIST_AHEAD_MAX		64

/*
 * The second name new to the cache looked up in a directory within a
 * minute has the directory listed, if it fits in lookup_list_pages pages
 * (1000 keys each); lookups in it wait for that listing and need no
 * request of their own. 0: off.
 */
#define S3D_LOOKUP_LIST_PAGES_DEFAULT	4
#define S3D_LOOKUP_LIST_PAGES_MAX	100

/*
 * An UPLOAD of more than part_size bytes is a multipart upload with parts
 * of that size (at least S3's 5 MiB; more when the object would need over
 * 10 000 parts), upload_parallel parts in flight at most.
 */
#define S3D_PART_SIZE_MIN		(5U << 20)
#define S3D_PART_SIZE_DEFAULT		(16U << 20)
#define S3D_PART_SIZE_MAX		(1U << 30)
#define S3D_UPLOAD_PARALLEL_DEFAULT	4
#define S3D_UPLOAD_PARALLEL_MAX		64

/**
 * struct s3d_conf_s3 - where and how to reach S3, as one section says
 * @endpoint: "http[s]://host[:port]"; NULL: not set
 * @region: signing region; NULL: not set
 * @profile: credentials profile; NULL: not set
 * @ca_bundle: CA certificates file; NULL: not set
 * @path_style: 1 path, 0 virtual host, -1 not set
 * @anonymous: 1 unsigned requests, 0 signed, -1 not set
 * @allow_http: 1 an http:// endpoint is allowed, 0 refused, -1 not set
 *	(refused)
 */
struct s3d_conf_s3 {
	char *endpoint;
	char *region;
	char *profile;
	char *ca_bundle;
	int path_style;
	int anonymous;
	int allow_http;
};

/* The module's bound on upload_delay (seconds). */
#define S3D_UPLOAD_DELAY_MAX	3600

/**
 * struct s3d_mount_defaults - what a writable mount gets unless its own
 *	options say otherwise (the MOUNT answer's FLAGS, UPLOAD_DELAY)
 * @writeback: 1: write-back (close and fsync durable on the cache
 *	device), 0: not; -1: not set
 * @upload_delay: seconds; -1: not set
 */
struct s3d_mount_defaults {
	int writeback;
	int upload_delay;
};

/**
 * struct s3d_conf_bucket - a [bucket NAME] section
 * @next: the next section, in file order
 * @name: the bucket
 * @line: where the section starts (for messages)
 * @s3: its S3 settings (unset ones come from [global])
 * @max_concurrency: S3 requests in flight for this bucket at most; 0: no cap
 * @cache: cache limits of its mounts, where @has_cache_limit/@has_min_free
 * @mount: defaults of its writable mounts, where set
 */
struct s3d_conf_bucket {
	struct s3d_conf_bucket *next;
	char *name;
	unsigned int line;
	struct s3d_conf_s3 s3;
	unsigned int max_concurrency;
	bool has_cache_limit;
	bool has_min_free;
	struct s3d_cache_policy cache;
	struct s3d_mount_defaults mount;
};

/*
 * The fleet tier (daemon/tier.c): a second S3 bucket shared by many nodes,
 * read before the origin. Blocks of tier_block_kb KiB (a power of two).
 */
#define S3D_TIER_BLOCK_KB_MIN		256U
#define S3D_TIER_BLOCK_KB_DEFAULT	1024U
#define S3D_TIER_BLOCK_KB_MAX		16384U
#define S3D_TIER_CONNECT_MS_DEFAULT	1000U
#define S3D_TIER_CONNECT_MS_MIN		50U
#define S3D_TIER_CONNECT_MS_MAX		60000U
#define S3D_TIER_STALL_DEFAULT		1U
#define S3D_TIER_STALL_MAX		60U
#define S3D_TIER_BREAKER_DEFAULT	3U
#define S3D_TIER_BREAKER_MAX		1000U
#define S3D_TIER_QUEUE_DEFAULT		1024U
#define S3D_TIER_QUEUE_MAX		65536U
#define S3D_TIER_SECRET_MIN		16U
#define S3D_TIER_SECRET_MAX		4096U
/*
 * Leases (cross-node single flight): a node that lost one waits this long
 * at most, in all, for another node's blocks; a lease this old by the
 * tier's clock may be taken over. The wait stays well below the kernel's
 * fetch_timeout (60 s by default).
 */
#define S3D_TIER_LEASE_WAIT_MS_DEFAULT	3000U
#define S3D_TIER_LEASE_WAIT_MS_MIN	10U
#define S3D_TIER_LEASE_WAIT_MS_MAX	30000U
#define S3D_TIER_LEASE_TTL_DEFAULT	30U
#define S3D_TIER_LEASE_TTL_MIN		2U
#define S3D_TIER_LEASE_TTL_MAX		3600U

/**
 * struct s3d_conf_tier - the [global] tier_* keys
 * @bucket: tier_bucket: the tier's bucket, whose [bucket NAME] section
 *	says where it is; NULL: no tier
 * @line: where tier_bucket was set (for messages)
 * @block_kb: tier_block_kb; 0: not set
 * @put: tier_put: 1 blocks fetched from origin are put into the tier,
 *	0 this node only reads it; -1 not set (1)
 * @secret: tier_secret's key (read from the file it names, if a path);
 *	NULL: none
 * @secret_len: its length in bytes
 * @connect_ms: tier_connect_timeout_ms; 0: not set
 * @stall_s: tier_stall_timeout (seconds without a byte); 0: not set
 * @breaker: tier_breaker_failures (failures in a row open it); 0: not set
 * @queue: tier_put_queue (blocks waiting to be put, at most); 0: not set
 * @lease: tier_lease: 1 cross-node single flight, 0 none; -1 not set (1)
 * @lease_wait_ms: tier_lease_wait_ms (a lost lease's wait, in all, at
 *	most); 0: not set
 * @lease_ttl_s: tier_lease_ttl (seconds by the tier's clock after which a
 *	lease may be taken over); 0: not set
 */
struct s3d_conf_tier {
	char *bucket;
	unsigned int line;
	unsigned int block_kb;
	int put;
	char *secret;
	size_t secret_len;
	unsigned int connect_ms;
	unsigned int stall_s;
	unsigned int breaker;
	unsigned int queue;
	int lease;
	unsigned int lease_wait_ms;
	unsigned int lease_ttl_s;
};

/*
 * Numbers of [global] with a flag each (--retry-attempts N, ...): the
 * retry policy (struct s3d_retry_policy), the least transfer rate, ...
 * In struct s3d_conf a tune is set where @tune_set says so; those whose
 * least value is 1 also read 0 as not set (the default applies).
 */
enum s3d_tune {
	S3D_TUNE_RETRY_ATTEMPTS,
	S3D_TUNE_RETRY_MAX_TIME,
	S3D_TUNE_RETRY_BASE_MS,
	S3D_TUNE_RETRY_MAX_DELAY_MS,
	S3D_TUNE_RETRY_BUDGET,
	S3D_TUNE_MIN_RATE,
	S3D_TUNE_EVICT_TIMEOUT,
	S3D_TUNE_LOOKUP_GET_MAX,
	S3D_TUNE_LIST_AHEAD,
	S3D_TUNE_LOOKUP_LIST_PAGES,
	S3D_TUNE_PART_SIZE,
	S3D_TUNE_UPLOAD_PARALLEL,
	S3D_TUNE_REQUIRE_CONDITIONS,
	S3D_TUNE_LIST_MAX_PAGES,
	S3D_TUNE_NR,
};

/* A tunable's key, flag (without "--"), bounds and default. */
struct s3d_tune_info {
	const char *key;
	const char *flag;
	unsigned int min, max, def;
};

extern const struct s3d_tune_info s3d_tunes[S3D_TUNE_NR];

/**
 * struct s3d_conf - a whole configuration: the file's, with the command
 *	line's settings laid over its [global] section
 * @file: the file read, or NULL (none)
 * @global: daemon-wide S3 defaults
 * @max_inflight: S3 requests in flight at most (all buckets); 0: not set
 * @stall_timeout: seconds below min_rate before a transfer is retried;
 *	0: not set (S3D_STALL_DEFAULT)
 * @tune: enum s3d_tune settings; 0: not set
 * @tune_set: which of @tune were set (s3d_conf_tune())
 * @has_cache_limit: @cache.limit was set
 * @has_min_free: @cache.min_free/min_free_pct were set
 * @cache: default cache limits of a mount
 * @log_level: S3D_LOG_*, or -1: not set
 * @metrics: metrics listen address, or NULL: not set
 * @mount: defaults of writable mounts, where set
 * @buckets: the [bucket NAME] sections, in file order
 * @tier: the fleet tier's keys
 */
struct s3d_conf {
	char *file;
	struct s3d_conf_s3 global;
	unsigned int max_inflight;
	unsigned int stall_timeout;
	unsigned int tune[S3D_TUNE_NR];
	bool tune_set[S3D_TUNE_NR];
	bool has_cache_limit;
	bool has_min_free;
	struct s3d_cache_policy cache;
	int log_level;
	char *metrics;
	struct s3d_mount_defaults mount;
	struct s3d_conf_bucket *buckets;
	struct s3d_conf_tier tier;
};

void s3d_conf_init(struct s3d_conf *c);
void s3d_conf_free(struct s3d_conf *c);
const char *s3d_conf_path(const char *opt, bool *must_exist);
int s3d_conf_load(const char *file, bool must_exist, struct s3d_conf **out,
		  struct s3d_buf *errs);
int s3d_conf_override(struct s3d_conf *c, const struct s3d_conf *cli);
int s3d_conf_check_http(const struct s3d_conf *c, struct s3d_buf *errs);
const struct s3d_conf_bucket *s3d_conf_bucket(const struct s3d_conf *c,
					      const char *bucket);
void s3d_conf_settings(const struct s3d_conf *c, const char *bucket,
		       struct s3d_conf_s3 *out);
void s3d_conf_cache_policy(const struct s3d_conf *c, const char *bucket,
			   struct s3d_cache_policy *out);
void s3d_conf_mount_defaults(const struct s3d_conf *c, const char *bucket,
			     struct s3d_mount_defaults *out);
int s3d_conf_s3_client(const struct s3d_conf *c, const char *bucket,
		       struct s3d_s3 *s3);
int s3d_conf_s3_init(const struct s3d_conf *c, const char *bucket,
		     struct s3d_s3 *s3);
int s3d_conf_s3_open(const struct s3d_conf *c, const char *bucket,
		     const struct s3d_conf_s3 *over, struct s3d_s3 *s3,
		     char *why, size_t whylen);
int s3d_conf_parse_log_level(const char *s);
int s3d_conf_parse_stall_timeout(const char *v, unsigned int *out);
int s3d_conf_parse_tune(enum s3d_tune t, const char *v, unsigned int *out);
unsigned int s3d_conf_tune(const struct s3d_conf *c, enum s3d_tune t);
void s3d_conf_retry_policy(const struct s3d_conf *c,
			   struct s3d_retry_policy *p);

#endif /* S3D_CONFIG_H */
