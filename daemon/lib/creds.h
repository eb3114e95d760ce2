/* SPDX-License-Identifier: GPL-2.0 */
/*
 * AWS credentials (creds.c, creds_http.c, creds_async.c, creds_watch.c):
 * the standard provider chain, resolved synchronously or on the event loop,
 * and the refresh of temporary credentials on the event loop.
 */
#ifndef S3D_CREDS_H
#define S3D_CREDS_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

struct s3d_creds_provider;
struct s3d_creds_watcher;
struct s3d_creds_req;

/**
 * struct s3d_creds - one set of AWS credentials
 * @access_key: key id
 * @secret_key: secret (wiped when freed)
 * @token: session token or NULL (wiped when freed)
 * @source: which provider supplied them, for logs ("environment", ...)
 * @expires: when temporary credentials stop working; 0: never
 * @provider: the provider that supplied them; a refresh asks it again
 * @watcher: refresh state while s3d_creds_watch() is in force, else NULL
 *
 * The daemon is single threaded: a refresh swaps the three strings between
 * two events, so a request signed in ->prepare() always sees a whole set.
 */
struct s3d_creds {
	char *access_key;
	char *secret_key;
	char *token;
	const char *source;
	time_t expires;
	const struct s3d_creds_provider *provider;
	struct s3d_creds_watcher *watcher;
};

/**
 * struct s3d_creds_stats - refresh counters (all watched credentials)
 * @refreshes: refreshes that brought new credentials
 * @refresh_failures: refresh attempts that failed (each is retried)
 * @last_refresh: wall-clock time of the last successful refresh, 0: none
 */
struct s3d_creds_stats {
	uint64_t refreshes;
	uint64_t refresh_failures;
	time_t last_refresh;
};

extern struct s3d_creds_stats s3d_creds_stats;

/* Refresh this long before expiry, or a tenth of the lifetime if less. */
#define S3D_CREDS_REFRESH_MARGIN_S	300
/* Never refresh sooner than this (expired or nearly expired credentials). */
#define S3D_CREDS_REFRESH_MIN_MS	1000
/* Back-off after a failed refresh: doubles from the first, up to the max. */
#define S3D_CREDS_RETRY_FIRST_MS	1000
#define S3D_CREDS_RETRY_MAX_MS		(300 * 1000)
/*
 * A context whose credentials failed to resolve (daemon: ctx.c): no new
 * attempt for this long, doubling from the first to the max; its requests
 * fail at once meanwhile.
 */
#define S3D_CREDS_FAIL_FIRST_MS		1000
#define S3D_CREDS_FAIL_MAX_MS		(60 * 1000)

int s3d_creds_resolve(struct s3d_creds *c, const char *profile);
int s3d_creds_resolve_why(struct s3d_creds *c, const char *profile,
			  char *why, size_t whylen);
int s3d_creds_load(struct s3d_creds *c);
void s3d_creds_clear(struct s3d_creds *c);
int s3d_creds_from_env(struct s3d_creds *c);
int s3d_creds_from_profile(struct s3d_creds *c, const char *file,
			   const char *profile);

int s3d_creds_parse_sts(const char *xml, size_t len, struct s3d_creds *c,
			char *why, size_t whylen);
int s3d_creds_parse_json(const char *json, size_t len, struct s3d_creds *c,
			 char *why, size_t whylen);

/* A resolution on the loop is over: 0 or -errno, and what providers said. */
typedef void (*s3d_creds_cb)(void *arg, int err, const char *why);

struct s3d_creds_req *s3d_creds_resolve_async(struct s3d_creds *c,
					      const char *profile,
					      s3d_creds_cb done, void *arg,
					      int *err, char *why,
					      size_t whylen);
void s3d_creds_resolve_cancel(struct s3d_creds_req *r);
int s3d_creds_copy(struct s3d_creds *dst, const struct s3d_creds *src);

int s3d_creds_watch(struct s3d_creds *c, const char *profile);
void s3d_creds_unwatch(struct s3d_creds *c);
uint64_t s3d_creds_refresh_ms(time_t now, time_t expires);

#endif /* S3D_CREDS_H */
