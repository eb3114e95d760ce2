/* SPDX-License-Identifier: GPL-2.0 */
/*
 * evict.c: cache usage and eviction, per mount.
 */
#ifndef S3D_EVICT_H
#define S3D_EVICT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/config.h"

/* One cached file, as eviction sees it. */
struct s3d_evict_file {
	char *path;		/* relative to the cache root */
	uint64_t bytes;		/* allocated (st_blocks * 512) */
	uint64_t size;		/* st_size */
	int64_t atime_ns;	/* LRU clock */
	uint64_t fetched_ms;	/* last FETCH into it (ties) */
	bool busy;		/* skip (tests) */
};

/* A chosen file, and the caller's index of it. */
struct s3d_evict_pick {
	struct s3d_evict_file f;	/* f.path: our copy */
	size_t idx;
};

/* Choosing the files to evict, one at a time (evict.c). */
struct s3d_evict_sel {
	struct s3d_evict_pick *v;	/* a heap: the newest chosen first */
	size_t n, cap;
	uint64_t bytes;			/* held by the chosen files */
	uint64_t need;
};

struct s3d_evict_stats {
	uint64_t evictions;
	uint64_t bytes;
	uint64_t busy;
	uint64_t failures;
	uint64_t timeouts;	/* EVICTs given up: no ack in time */
	uint64_t lost;		/* ... given up: the ack was lost (ENOBUFS) */
	uint64_t nospace;	/* writes that found the device full */
	uint64_t passes;
	uint64_t slices;	/* turns of the loop passes took */
	uint64_t slice_ms_max;	/* the longest one */
};

struct s3d_cache;
extern struct s3d_cache_policy s3d_cache_default;
extern struct s3d_evict_stats s3d_evict_stats;
extern const struct s3d_cache_policy *(*s3d_cache_policy_hook)(const char *bucket);
extern uint64_t s3d_evict_timeout_ms;
/* How EVICTs go out and are given up (main.c sets netlink.c's; tests fakes). */
extern int (*s3d_evict_send)(uint32_t mount_id, const char *path, uint64_t len,
			     void (*done)(void *arg, int err), void *arg);
extern bool (*s3d_evict_cancel)(void (*done)(void *arg, int err), void *arg);

const struct s3d_cache_policy *s3d_cache_policy_for(const char *bucket);

void s3d_evict_sel_init(struct s3d_evict_sel *s, uint64_t need);
int s3d_evict_sel_add(struct s3d_evict_sel *s, const struct s3d_evict_file *f,
		      size_t idx);
size_t s3d_evict_sel_finish(struct s3d_evict_sel *s);
void s3d_evict_sel_free(struct s3d_evict_sel *s);
size_t s3d_evict_choose(const struct s3d_evict_file *files, size_t n,
			uint64_t need, size_t *out);
uint64_t s3d_evict_need(const struct s3d_cache_policy *pol, uint64_t used,
			uint64_t avail, uint64_t total, bool start);
bool s3d_evict_inodes_short(const struct s3d_cache_policy *pol,
			    uint64_t favail, uint64_t files, uint64_t total);
struct s3d_cache *s3d_cache_open(uint32_t mount_id, int rootfd,
				 const struct s3d_cache_policy *pol);
void s3d_cache_close(struct s3d_cache *c);
bool s3d_cache_scanning(const struct s3d_cache *c);
void s3d_cache_fetching(struct s3d_cache *c, uint64_t len);
void s3d_cache_fetched(struct s3d_cache *c, const char *path);
void s3d_cache_nospace(struct s3d_cache *c, uint64_t len);
void s3d_cache_recheck_all(void);
void s3d_cache_usage(const struct s3d_cache *c, uint64_t *used,
		     uint64_t *limit);
void s3d_cache_foreach(void (*fn)(void *arg, uint32_t mount_id,
				  const struct s3d_cache *c), void *arg);

#endif /* S3D_EVICT_H */
