// SPDX-License-Identifier: GPL-2.0
/*
 * The configuration file (default /etc/s3cachefs/s3cachefsd.conf):
 *
 *   [global]                     daemon-wide defaults
 *   endpoint = https://s3.eu-west-1.amazonaws.com
 *   max_inflight = 128
 *
 *   [bucket training-data]       one bucket's overrides
 *   endpoint = https://rgw.lan:7480
 *   addressing = path
 *   max_concurrency = 32
 *
 * libinih splits the lines into name and value (whitespace, ';' comments,
 * a BOM). Everything that decides whether the file is valid is done here,
 * line by line, so that every bad line is reported as FILE:LINE and a
 * file is applied only when it has none: libinih reports only its first
 * error, and cannot tell us the line of a key or of a section heading
 * (Debian builds it without INI_HANDLER_LINENO), so our reader, which
 * hands it the file a line at a time, keeps the line number and checks
 * section headings and lines without a value itself.
 *
 * Precedence, highest first: a [bucket NAME] section, the command line,
 * [global], the environment ($AWS_REGION, $AWS_CA_BUNDLE ...), built-in
 * defaults. The command line overrides [global] only: a bucket section is
 * the more specific statement.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <sys/stat.h>

#include <ini.h>

#include "base.h"
#include "config.h"
#include "creds.h"
#include "listguard.h"
#include "log.h"
#include "path.h"
#include "retry.h"
#include "s3.h"
#include "util.h"
#include "xfer.h"

enum sec { SEC_NONE, SEC_GLOBAL, SEC_BUCKET, SEC_BAD };

enum key {
	K_ENDPOINT,
	K_REGION,
	K_ADDRESSING,
	K_PROFILE,
	K_CA_BUNDLE,
	K_ANONYMOUS,
	K_ALLOW_HTTP,
	K_MAX_INFLIGHT,
	K_MAX_CONCURRENCY,
	K_CACHE_LIMIT,
	K_MIN_FREE,
	K_LOG_LEVEL,
	K_METRICS,
	K_STALL_TIMEOUT,
	K_WRITEBACK,
	K_UPLOAD_DELAY,
	K_TIER_BUCKET,
	K_TIER_BLOCK_KB,
	K_TIER_PUT,
	K_TIER_SECRET,
	K_TIER_CONNECT_MS,
	K_TIER_STALL,
	K_TIER_BREAKER,
	K_TIER_QUEUE,
	K_TIER_LEASE,
	K_TIER_LEASE_WAIT,
	K_TIER_LEASE_TTL,
	K_TUNE,				/* S3D_TUNE_NR keys from here */
	K_NR = K_TUNE + S3D_TUNE_NR,
};

#define G	(1U << SEC_GLOBAL)
#define B	(1U << SEC_BUCKET)

static const struct {
	const char *name;
	unsigned int where;	/* sections it may appear in */
} keys[K_NR] = {
	[K_ENDPOINT] = { "endpoint", G | B },
	[K_REGION] = { "region", G | B },
	[K_ADDRESSING] = { "addressing", G | B },
	[K_PROFILE] = { "profile", G | B },
	[K_CA_BUNDLE] = { "ca_bundle", G | B },
	[K_ANONYMOUS] = { "anonymous", G | B },
	[K_ALLOW_HTTP] = { "allow_http", G | B },
	[K_MAX_INFLIGHT] = { "max_inflight", G },
	[K_MAX_CONCURRENCY] = { "max_concurrency", B },
	[K_CACHE_LIMIT] = { "cache_limit", G | B },
	[K_MIN_FREE] = { "min_free", G | B },
	[K_LOG_LEVEL] = { "log_level", G },
	[K_METRICS] = { "metrics", G },
	[K_STALL_TIMEOUT] = { "stall_timeout", G },
	[K_WRITEBACK] = { "writeback", G | B },
	[K_UPLOAD_DELAY] = { "upload_delay", G | B },
	[K_TIER_BUCKET] = { "tier_bucket", G },
	[K_TIER_BLOCK_KB] = { "tier_block_kb", G },
	[K_TIER_PUT] = { "tier_put", G },
	[K_TIER_SECRET] = { "tier_secret", G },
	[K_TIER_CONNECT_MS] = { "tier_connect_timeout_ms", G },
	[K_TIER_STALL] = { "tier_stall_timeout", G },
	[K_TIER_BREAKER] = { "tier_breaker_failures", G },
	[K_TIER_QUEUE] = { "tier_put_queue", G },
	[K_TIER_LEASE] = { "tier_lease", G },
	[K_TIER_LEASE_WAIT] = { "tier_lease_wait_ms", G },
	[K_TIER_LEASE_TTL] = { "tier_lease_ttl", G },
	[K_TUNE + S3D_TUNE_RETRY_ATTEMPTS] = { "retry_attempts", G },
	[K_TUNE + S3D_TUNE_RETRY_MAX_TIME] = { "retry_max_time", G },
	[K_TUNE + S3D_TUNE_RETRY_BASE_MS] = { "retry_base_ms", G },
	[K_TUNE + S3D_TUNE_RETRY_MAX_DELAY_MS] = { "retry_max_delay_ms", G },
	[K_TUNE + S3D_TUNE_RETRY_BUDGET] = { "retry_budget", G },
	[K_TUNE + S3D_TUNE_MIN_RATE] = { "min_rate", G },
	[K_TUNE + S3D_TUNE_EVICT_TIMEOUT] = { "evict_timeout", G },
	[K_TUNE + S3D_TUNE_LOOKUP_GET_MAX] = { "lookup_get_max", G },
	[K_TUNE + S3D_TUNE_LIST_AHEAD] = { "list_ahead", G },
	[K_TUNE + S3D_TUNE_LOOKUP_LIST_PAGES] = { "lookup_list_pages", G },
	[K_TUNE + S3D_TUNE_PART_SIZE] = { "part_size", G },
	[K_TUNE + S3D_TUNE_UPLOAD_PARALLEL] = { "upload_parallel", G },
	[K_TUNE + S3D_TUNE_REQUIRE_CONDITIONS] = { "require_conditions", G },
	[K_TUNE + S3D_TUNE_LIST_MAX_PAGES] = { "list_max_pages", G },
};

const struct s3d_tune_info s3d_tunes[S3D_TUNE_NR] = {
	[S3D_TUNE_RETRY_ATTEMPTS] = { "retry_attempts", "retry-attempts",
		1, 100, S3D_RETRY_ATTEMPTS_DEFAULT },
	[S3D_TUNE_RETRY_MAX_TIME] = { "retry_max_time", "retry-max-time",
		1, 3600, S3D_RETRY_MAX_TIME_DEFAULT },
	[S3D_TUNE_RETRY_BASE_MS] = { "retry_base_ms", "retry-base-ms",
		1, 60000, S3D_RETRY_BASE_MS_DEFAULT },
	[S3D_TUNE_RETRY_MAX_DELAY_MS] = { "retry_max_delay_ms",
		"retry-max-delay-ms", 1, 600000, S3D_RETRY_MAX_DELAY_MS_DEFAULT },
	[S3D_TUNE_RETRY_BUDGET] = { "retry_budget", "retry-budget",
		1, 1000000, S3D_RETRY_BUDGET_DEFAULT },
	[S3D_TUNE_MIN_RATE] = { "min_rate", "min-rate",
		1, 1U << 30, S3D_MIN_RATE_DEFAULT },
	[S3D_TUNE_EVICT_TIMEOUT] = { "evict_timeout", "evict-timeout",
		1, 3600, S3D_EVICT_TIMEOUT_DEFAULT },
	[S3D_TUNE_LOOKUP_GET_MAX] = { "lookup_get_max", "lookup-get-max",
		0, S3D_LOOKUP_GET_MAX_MAX, S3D_LOOKUP_GET_MAX_DEFAULT },
	[S3D_TUNE_LIST_AHEAD] = { "list_ahead", "list-ahead",
		0, S3D_LIST_AHEAD_MAX, S3D_LIST_AHEAD_DEFAULT },
	[S3D_TUNE_LOOKUP_LIST_PAGES] = { "lookup_list_pages",
		"lookup-list-pages", 0, S3D_LOOKUP_LIST_PAGES_MAX,
		S3D_LOOKUP_LIST_PAGES_DEFAULT },
	[S3D_TUNE_PART_SIZE] = { "part_size", "part-size",
		S3D_PART_SIZE_MIN, S3D_PART_SIZE_MAX, S3D_PART_SIZE_DEFAULT },
	[S3D_TUNE_UPLOAD_PARALLEL] = { "upload_parallel", "upload-parallel",
		1, S3D_UPLOAD_PARALLEL_MAX, S3D_UPLOAD_PARALLEL_DEFAULT },
	[S3D_TUNE_REQUIRE_CONDITIONS] = { "require_conditions",
		"require-conditions", 0, 1, 0 },
	[S3D_TUNE_LIST_MAX_PAGES] = { "list_max_pages", "list-max-pages",
		1, S3D_LIST_PAGES_MAX, S3D_LIST_PAGES_DEFAULT },
};

/**
 * s3d_conf_parse_tune() - a tunable's value
 * @t: which
 * @v: decimal, within its bounds (s3d_tunes)
 * @out: set on success
 *
 * Return: 0, or -EINVAL.
 */
int s3d_conf_parse_tune(enum s3d_tune t, const char *v, unsigned int *out)
{
	uint64_t n;

	if (s3d_parse_u64(v, &n) || n < s3d_tunes[t].min ||
	    n > s3d_tunes[t].max)
		return -EINVAL;
	*out = (unsigned int)n;
	return 0;
}

/* @t's value in @c, or its default where @c does not set it. */
unsigned int s3d_conf_tune(const struct s3d_conf *c, enum s3d_tune t)
{
	if (c->tune_set[t] || c->tune[t])
		return c->tune[t];
	return s3d_tunes[t].def;
}

/**
 * s3d_conf_retry_policy() - the retry policy @c asks for
 * @c: the configuration
 * @p: filled; unset fields 0 (s3d_engine_set_retry() defaults them)
 */
void s3d_conf_retry_policy(const struct s3d_conf *c,
			   struct s3d_retry_policy *p)
{
	p->attempts = c->tune[S3D_TUNE_RETRY_ATTEMPTS];
	p->max_time_s = c->tune[S3D_TUNE_RETRY_MAX_TIME];
	p->base_ms = c->tune[S3D_TUNE_RETRY_BASE_MS];
	p->max_delay_ms = c->tune[S3D_TUNE_RETRY_MAX_DELAY_MS];
	p->budget = c->tune[S3D_TUNE_RETRY_BUDGET];
}

/* Requests in flight: the same bounds as --max-inflight. */
#define INFLIGHT_MAX	4096

struct parse {
	const char *file;
	FILE *f;
	char *buf;		/* getline()'s */
	size_t cap;
	unsigned int lineno;	/* of the line last handed to libinih */
	struct s3d_conf *conf;
	struct s3d_buf *errs;
	unsigned int nerr;
	enum sec sec;
	struct s3d_conf_bucket *bucket;	/* the current [bucket NAME] */
	unsigned int global_line;	/* where [global] was, or 0 */
	unsigned int key_line[K_NR];	/* keys of this section: their line */
};

static void bad(struct parse *p, unsigned int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* One message, "FILE:LINE: what", for each bad line. */
static void bad(struct parse *p, unsigned int line, const char *fmt, ...)
{
	va_list ap;
	char msg[512];

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	s3d_buf_addf(p->errs, "%s:%u: %s\n", p->file, line, msg);
	p->nerr++;
}

static void conf_s3_init(struct s3d_conf_s3 *s)
{
	memset(s, 0, sizeof(*s));
	s->path_style = -1;
	s->anonymous = -1;
	s->allow_http = -1;
}

static void conf_s3_free(struct s3d_conf_s3 *s)
{
	free(s->endpoint);
	free(s->region);
	free(s->profile);
	free(s->ca_bundle);
	conf_s3_init(s);
}

/* An empty configuration: nothing set. */
void s3d_conf_init(struct s3d_conf *c)
{
	memset(c, 0, sizeof(*c));
	conf_s3_init(&c->global);
	c->tier.put = -1;
	c->tier.lease = -1;
	c->log_level = -1;
	c->mount.writeback = -1;
	c->mount.upload_delay = -1;
}

void s3d_conf_free(struct s3d_conf *c)
{
	if (!c)
		return;
	while (c->buckets) {
		struct s3d_conf_bucket *b = c->buckets;

		c->buckets = b->next;
		conf_s3_free(&b->s3);
		free(b->name);
		free(b);
	}
	conf_s3_free(&c->global);
	free(c->tier.bucket);
	if (c->tier.secret)
		explicit_bzero(c->tier.secret, c->tier.secret_len);
	free(c->tier.secret);
	free(c->file);
	free(c->metrics);
	free(c);
}

/**
 * s3d_conf_path() - which file to read
 * @opt: --config's value, or NULL
 * @must_exist: set: true when the file was asked for (--config or
 *	$S3CACHEFSD_CONFIG), so that its absence is an error
 *
 * Return: the path.
 */
const char *s3d_conf_path(const char *opt, bool *must_exist)
{
	const char *env = getenv(S3D_CONF_ENV);

	*must_exist = true;
	if (opt)
		return opt;
	if (env && *env)
		return env;
	*must_exist = false;
	return S3D_CONF_DEFAULT;
}

/* ---- values ---- */

static int parse_bool(const char *v)
{
	static const char *const yes[] = { "true", "yes", "on", "1" };
	static const char *const no[] = { "false", "no", "off", "0" };
	size_t i;

	for (i = 0; i < S3D_ARRAY_SIZE(yes); i++) {
		if (!strcasecmp(v, yes[i]))
			return 1;
		if (!strcasecmp(v, no[i]))
			return 0;
	}
	return -1;
}

/**
 * s3d_conf_parse_stall_timeout() - seconds without a byte before a
 *	transfer is given up (and retried)
 * @v: decimal seconds, S3D_STALL_MIN..S3D_STALL_MAX
 * @out: set on success
 *
 * Return: 0, or -EINVAL.
 */
int s3d_conf_parse_stall_timeout(const char *v, unsigned int *out)
{
	uint64_t n;

	if (s3d_parse_u64(v, &n) || n < S3D_STALL_MIN || n > S3D_STALL_MAX)
		return -EINVAL;
	*out = (unsigned int)n;
	return 0;
}

/**
 * s3d_conf_parse_log_level() - "err", "warn", "info" or "debug"
 * @s: the text
 *
 * Return: S3D_LOG_*, or -EINVAL.
 */
int s3d_conf_parse_log_level(const char *s)
{
	static const char *const names[] = {
		[S3D_LOG_ERR] = "err",
		[S3D_LOG_WARN] = "warn",
		[S3D_LOG_INFO] = "info",
		[S3D_LOG_DEBUG] = "debug",
	};
	size_t i;

	for (i = 0; i < S3D_ARRAY_SIZE(names); i++)
		if (!strcmp(s, names[i]))
			return (int)i;
	if (!strcmp(s, "error"))
		return S3D_LOG_ERR;
	if (!strcmp(s, "warning"))
		return S3D_LOG_WARN;
	return -EINVAL;
}

static bool region_valid(const char *v)
{
	size_t n = strspn(v, "abcdefghijklmnopqrstuvwxyz0123456789-");

	return n && n <= 64 && !v[n];
}

/* Profile names are free-form in ~/.aws/config, but never hold blanks. */
static bool profile_valid(const char *v)
{
	const unsigned char *c;

	for (c = (const unsigned char *)v; *c; c++)
		if (*c <= ' ' || *c == '[' || *c == ']' || *c == 0x7f)
			return false;
	return c - (const unsigned char *)v <= 128;
}

/* HOST:PORT, [V6]:PORT, or PORT (as --metrics takes them). */
static bool address_valid(const char *v)
{
	const char *colon = strrchr(v, ':');
	const char *port = colon ? colon + 1 : v;
	char *end;
	unsigned long n;

	if (colon && v[0] == '[' && colon[-1] != ']')
		return false;
	if (colon && v[0] != '[' && memchr(v, ':', (size_t)(colon - v)))
		return false;	/* bare IPv6: needs brackets */
	if (*port < '0' || *port > '9')
		return false;
	errno = 0;
	n = strtoul(port, &end, 10);
	return !errno && !*end && n >= 1 && n <= 65535;
}

static int set_str(char **dst, const char *v)
{
	char *n = strdup(v);

	if (!n)
		return -ENOMEM;
	free(*dst);
	*dst = n;
	return 0;
}

static int parse_count(const char *v, unsigned int *out)
{
	uint64_t n;

	if (s3d_parse_u64(v, &n) || n < 1 || n > INFLIGHT_MAX)
		return -EINVAL;
	*out = (unsigned int)n;
	return 0;
}

static int parse_range(const char *v, unsigned int lo, unsigned int hi,
		       unsigned int *out)
{
	uint64_t n;

	if (s3d_parse_u64(v, &n) || n < lo || n > hi)
		return -EINVAL;
	*out = (unsigned int)n;
	return 0;
}

/*
 * tier_secret: the key itself, or an absolute path to a file holding it
 * (its first line), which must be readable by its owner only: the key
 * is what stops another writer of the tier bucket poisoning this fleet.
 */
static int set_tier_secret(struct parse *p, const char *v)
{
	struct s3d_conf_tier *t = &p->conf->tier;
	char buf[S3D_TIER_SECRET_MAX + 2];
	unsigned int line = p->lineno;
	struct stat st;
	size_t n;
	FILE *f;

	if (v[0] != '/') {
		n = strlen(v);
		if (n < S3D_TIER_SECRET_MIN || n > S3D_TIER_SECRET_MAX) {
			bad(p, line, "tier_secret: want %u..%u bytes, or the absolute path of a file holding them",
			    S3D_TIER_SECRET_MIN, S3D_TIER_SECRET_MAX);
			return 0;
		}
		memcpy(buf, v, n);
	} else {
		f = fopen(v, "re");
		if (!f) {
			bad(p, line, "tier_secret '%s': %s", v, strerror(errno));
			return 0;
		}
		if (fstat(fileno(f), &st) || (st.st_mode & 077)) {
			fclose(f);
			bad(p, line, "tier_secret '%s': the file may be read by others (chmod 600 it)",
			    v);
			return 0;
		}
		if (!fgets(buf, sizeof(buf), f))
			buf[0] = '\0';
		fclose(f);
		n = strcspn(buf, "\r\n");
		if (n < S3D_TIER_SECRET_MIN || n > S3D_TIER_SECRET_MAX) {
			explicit_bzero(buf, sizeof(buf));
			bad(p, line, "tier_secret '%s': want %u..%u bytes on its first line",
			    v, S3D_TIER_SECRET_MIN, S3D_TIER_SECRET_MAX);
			return 0;
		}
	}
	t->secret = malloc(n);
	if (!t->secret) {
		explicit_bzero(buf, sizeof(buf));
		return -ENOMEM;
	}
	memcpy(t->secret, buf, n);
	t->secret_len = n;
	explicit_bzero(buf, sizeof(buf));
	return 0;
}

/* The [global] tier_* keys (see struct s3d_conf_tier). */
static int set_tier_key(struct parse *p, enum key k, const char *v)
{
	struct s3d_conf_tier *t = &p->conf->tier;
	unsigned int line = p->lineno;
	int n;

	switch (k) {
	case K_TIER_BUCKET:
		if (!s3d_bucket_valid(v)) {
			bad(p, line, "tier_bucket '%s': not a valid bucket name", v);
			return 0;
		}
		t->line = line;
		return set_str(&t->bucket, v);
	case K_TIER_BLOCK_KB:
		if (parse_range(v, S3D_TIER_BLOCK_KB_MIN, S3D_TIER_BLOCK_KB_MAX,
				&t->block_kb) || (t->block_kb & (t->block_kb - 1))) {
			t->block_kb = 0;
			bad(p, line, "tier_block_kb '%s': want a power of two, %u..%u",
			    v, S3D_TIER_BLOCK_KB_MIN, S3D_TIER_BLOCK_KB_MAX);
		}
		return 0;
	case K_TIER_PUT:
		n = parse_bool(v);
		if (n < 0)
			bad(p, line, "tier_put '%s': want true or false", v);
		else
			t->put = n;
		return 0;
	case K_TIER_SECRET:
		return set_tier_secret(p, v);
	case K_TIER_CONNECT_MS:
		if (parse_range(v, S3D_TIER_CONNECT_MS_MIN,
				S3D_TIER_CONNECT_MS_MAX, &t->connect_ms))
			bad(p, line, "tier_connect_timeout_ms '%s': want %u..%u",
			    v, S3D_TIER_CONNECT_MS_MIN, S3D_TIER_CONNECT_MS_MAX);
		return 0;
	case K_TIER_STALL:
		if (parse_range(v, 1, S3D_TIER_STALL_MAX, &t->stall_s))
			bad(p, line, "tier_stall_timeout '%s': want seconds, 1..%u",
			    v, S3D_TIER_STALL_MAX);
		return 0;
	case K_TIER_BREAKER:
		if (parse_range(v, 1, S3D_TIER_BREAKER_MAX, &t->breaker))
			bad(p, line, "tier_breaker_failures '%s': want 1..%u",
			    v, S3D_TIER_BREAKER_MAX);
		return 0;
	case K_TIER_QUEUE:
		if (parse_range(v, 1, S3D_TIER_QUEUE_MAX, &t->queue))
			bad(p, line, "tier_put_queue '%s': want 1..%u", v,
			    S3D_TIER_QUEUE_MAX);
		return 0;
	case K_TIER_LEASE:
		n = parse_bool(v);
		if (n < 0)
			bad(p, line, "tier_lease '%s': want true or false", v);
		else
			t->lease = n;
		return 0;
	case K_TIER_LEASE_WAIT:
		if (parse_range(v, S3D_TIER_LEASE_WAIT_MS_MIN,
				S3D_TIER_LEASE_WAIT_MS_MAX, &t->lease_wait_ms))
			bad(p, line, "tier_lease_wait_ms '%s': want milliseconds, %u..%u",
			    v, S3D_TIER_LEASE_WAIT_MS_MIN,
			    S3D_TIER_LEASE_WAIT_MS_MAX);
		return 0;
	case K_TIER_LEASE_TTL:
		if (parse_range(v, S3D_TIER_LEASE_TTL_MIN,
				S3D_TIER_LEASE_TTL_MAX, &t->lease_ttl_s))
			bad(p, line, "tier_lease_ttl '%s': want seconds, %u..%u",
			    v, S3D_TIER_LEASE_TTL_MIN, S3D_TIER_LEASE_TTL_MAX);
		return 0;
	default:
		return 0;
	}
}

/* Set key @k of the current section from @v; a bad value is reported. */
static int set_key(struct parse *p, enum key k, const char *name,
		   const char *v)
{
	struct s3d_conf_bucket *b = p->sec == SEC_BUCKET ? p->bucket : NULL;
	struct s3d_conf_s3 *s3 = b ? &b->s3 : &p->conf->global;
	struct s3d_cache_policy *pol = b ? &b->cache : &p->conf->cache;
	unsigned int line = p->lineno;
	const char *why;
	int n;

	if (k >= K_TUNE && k < K_TUNE + S3D_TUNE_NR) {
		const struct s3d_tune_info *t = &s3d_tunes[k - K_TUNE];

		if (s3d_conf_parse_tune(k - K_TUNE, v,
					&p->conf->tune[k - K_TUNE]))
			bad(p, line, "%s '%s': want %u..%u", t->key, v, t->min,
			    t->max);
		else
			p->conf->tune_set[k - K_TUNE] = true;
		return 0;
	}
	switch (k) {
	case K_ENDPOINT:
		if (s3d_endpoint_check(v, &why)) {
			bad(p, line, "endpoint '%s': %s", v, why);
			return 0;
		}
		return set_str(&s3->endpoint, v);
	case K_REGION:
		if (!region_valid(v)) {
			bad(p, line, "region '%s': want lower-case letters, digits and '-' (e.g. eu-west-1)",
			    v);
			return 0;
		}
		return set_str(&s3->region, v);
	case K_ADDRESSING:
		if (!strcmp(v, "path"))
			s3->path_style = 1;
		else if (!strcmp(v, "virtual-host"))
			s3->path_style = 0;
		else
			bad(p, line, "addressing '%s': want virtual-host or path",
			    v);
		return 0;
	case K_PROFILE:
		if (!profile_valid(v)) {
			bad(p, line, "profile '%s': not a profile name", v);
			return 0;
		}
		return set_str(&s3->profile, v);
	case K_CA_BUNDLE:
		if (v[0] != '/') {
			bad(p, line, "ca_bundle '%s': want an absolute path", v);
			return 0;
		}
		if (access(v, R_OK)) {
			bad(p, line, "ca_bundle '%s': %s", v, strerror(errno));
			return 0;
		}
		return set_str(&s3->ca_bundle, v);
	case K_ANONYMOUS:
		n = parse_bool(v);
		if (n < 0)
			bad(p, line, "anonymous '%s': want true or false", v);
		else
			s3->anonymous = n;
		return 0;
	case K_ALLOW_HTTP:
		n = parse_bool(v);
		if (n < 0)
			bad(p, line, "allow_http '%s': want true or false", v);
		else
			s3->allow_http = n;
		return 0;
	case K_MAX_INFLIGHT:
		if (parse_count(v, &p->conf->max_inflight))
			bad(p, line, "max_inflight '%s': want 1..%u", v,
			    INFLIGHT_MAX);
		return 0;
	case K_MAX_CONCURRENCY:
		if (parse_count(v, &b->max_concurrency))
			bad(p, line, "max_concurrency '%s': want 1..%u", v,
			    INFLIGHT_MAX);
		return 0;
	case K_CACHE_LIMIT:
		if (s3d_parse_size(v, &pol->limit))
			bad(p, line, "cache_limit '%s': want a size (bytes, or K/M/G/T, e.g. 50G)",
			    v);
		else if (b)
			b->has_cache_limit = true;
		else
			p->conf->has_cache_limit = true;
		return 0;
	case K_MIN_FREE:
		if (s3d_parse_min_free(v, pol))
			bad(p, line, "min_free '%s': want a size or a percentage below 100 (e.g. 10G, 5%%)",
			    v);
		else if (b)
			b->has_min_free = true;
		else
			p->conf->has_min_free = true;
		return 0;
	case K_LOG_LEVEL:
		n = s3d_conf_parse_log_level(v);
		if (n < 0)
			bad(p, line, "log_level '%s': want err, warn, info or debug",
			    v);
		else
			p->conf->log_level = n;
		return 0;
	case K_METRICS:
		if (!address_valid(v)) {
			bad(p, line, "metrics '%s': want HOST:PORT, [V6]:PORT or PORT (e.g. 127.0.0.1:9464)",
			    v);
			return 0;
		}
		return set_str(&p->conf->metrics, v);
	case K_STALL_TIMEOUT:
		if (s3d_conf_parse_stall_timeout(v, &p->conf->stall_timeout))
			bad(p, line, "stall_timeout '%s': want seconds, %u..%u",
			    v, S3D_STALL_MIN, S3D_STALL_MAX);
		return 0;
	case K_WRITEBACK:
		n = parse_bool(v);
		if (n < 0)
			bad(p, line, "writeback '%s': want true or false", v);
		else
			(b ? &b->mount : &p->conf->mount)->writeback = n;
		return 0;
	case K_UPLOAD_DELAY: {
		uint64_t d;

		if (s3d_parse_u64(v, &d) || d > S3D_UPLOAD_DELAY_MAX)
			bad(p, line, "upload_delay '%s': want seconds, 0..%u",
			    v, S3D_UPLOAD_DELAY_MAX);
		else
			(b ? &b->mount : &p->conf->mount)->upload_delay = (int)d;
		return 0;
	}
	case K_TIER_BUCKET:
	case K_TIER_BLOCK_KB:
	case K_TIER_PUT:
	case K_TIER_SECRET:
	case K_TIER_CONNECT_MS:
	case K_TIER_STALL:
	case K_TIER_BREAKER:
	case K_TIER_QUEUE:
	case K_TIER_LEASE:
	case K_TIER_LEASE_WAIT:
	case K_TIER_LEASE_TTL:
		return set_tier_key(p, k, v);
	default:
		break;
	}
	(void)name;
	return 0;
}

static const char *sec_name(const struct parse *p)
{
	return p->sec == SEC_GLOBAL ? "[global]" : "this [bucket] section";
}

/* libinih: one NAME = VALUE line (of the line p->lineno). */
static int on_value(void *user, const char *section, const char *name,
		    const char *value)
{
	struct parse *p = user;
	unsigned int k;

	(void)section;		/* ours is p->sec: libinih's has no line */
	if (p->sec == SEC_BAD)
		return 1;	/* the heading was reported */
	if (p->sec == SEC_NONE) {
		bad(p, p->lineno, "'%s' outside a section: put it under [global] or [bucket NAME]",
		    name);
		return 1;
	}
	for (k = 0; k < K_NR; k++)
		if (!strcmp(name, keys[k].name))
			break;
	if (k == K_NR) {
		bad(p, p->lineno, "unknown key '%s'", name);
		return 1;
	}
	if (!(keys[k].where & (1U << p->sec))) {
		bad(p, p->lineno, "'%s' is not allowed in %s (it belongs in %s)",
		    name, sec_name(p),
		    keys[k].where & G ? "[global]" : "[bucket NAME]");
		return 1;
	}
	if (p->key_line[k]) {
		bad(p, p->lineno, "duplicate key '%s' (first set on line %u)",
		    name, p->key_line[k]);
		return 1;
	}
	p->key_line[k] = p->lineno;
	if (!*value) {
		bad(p, p->lineno, "'%s' has no value", name);
		return 1;
	}
	if (set_key(p, (enum key)k, name, value))
		p->errs->err = -ENOMEM;
	return 1;
}

/* "[global]" or "[bucket NAME]" (blanks inside trimmed), at @line. */
static void on_section(struct parse *p, const char *text, size_t len)
{
	struct s3d_conf_bucket *b, **tail;
	char name[256];
	size_t n;

	memset(p->key_line, 0, sizeof(p->key_line));
	p->sec = SEC_BAD;
	while (len && (*text == ' ' || *text == '\t')) {
		text++;
		len--;
	}
	while (len && (text[len - 1] == ' ' || text[len - 1] == '\t'))
		len--;
	if (len == 6 && !memcmp(text, "global", 6)) {
		if (p->global_line) {
			bad(p, p->lineno, "duplicate section [global] (first on line %u)",
			    p->global_line);
			return;
		}
		p->global_line = p->lineno;
		p->sec = SEC_GLOBAL;
		return;
	}
	if (len < 7 || memcmp(text, "bucket", 6) ||
	    (text[6] != ' ' && text[6] != '\t')) {
		bad(p, p->lineno, "unknown section [%.*s]: want [global] or [bucket NAME]",
		    (int)S3D_MIN(len, (size_t)64), text);
		return;
	}
	text += 7;
	len -= 7;
	while (len && (*text == ' ' || *text == '\t')) {
		text++;
		len--;
	}
	n = S3D_MIN(len, sizeof(name) - 1);
	memcpy(name, text, n);
	name[n] = '\0';
	if (n != len || !s3d_bucket_valid(name)) {
		bad(p, p->lineno, "[bucket %.*s]: not a valid bucket name",
		    (int)S3D_MIN(len, (size_t)64), text);
		return;
	}
	for (tail = &p->conf->buckets; *tail; tail = &(*tail)->next) {
		if (!strcmp((*tail)->name, name)) {
			bad(p, p->lineno, "duplicate section [bucket %s] (first on line %u)",
			    name, (*tail)->line);
			return;
		}
	}
	b = calloc(1, sizeof(*b));
	if (!b || !(b->name = strdup(name))) {
		free(b);
		p->errs->err = -ENOMEM;
		return;
	}
	conf_s3_init(&b->s3);
	b->mount.writeback = -1;
	b->mount.upload_delay = -1;
	b->line = p->lineno;
	*tail = b;
	p->bucket = b;
	p->sec = SEC_BUCKET;
}

/*
 * libinih's reader: the next whole line. Headings and lines that are not
 * NAME = VALUE are dealt with here (libinih would report only the first
 * bad one); libinih gets a blank line in their place.
 */
static char *next_line(char *str, int num, void *stream)
{
	struct parse *p = stream;
	ssize_t n = getline(&p->buf, &p->cap, p->f);
	const char *s;
	size_t len;

	if (n < 0)
		return NULL;
	p->lineno++;
	len = (size_t)n;
	while (len && (p->buf[len - 1] == '\n' || p->buf[len - 1] == '\r'))
		len--;
	p->buf[len] = '\0';
	s = p->buf + strspn(p->buf, " \t");
	if (p->lineno == 1 && !strncmp(s, "\xef\xbb\xbf", 3))
		s += 3;
	if (!*s || *s == '#' || *s == ';')
		goto blank;
	if ((int)len + 2 > num) {
		bad(p, p->lineno, "line too long (%zu bytes; at most %d)", len,
		    num - 2);
		goto blank;
	}
	if (*s == '[') {
		const char *end = strchr(s, ']');
		const char *rest = end ? end + 1 + strspn(end + 1, " \t") : NULL;

		if (!end || (*rest && *rest != '#' && *rest != ';')) {
			bad(p, p->lineno, "bad section heading: want [global] or [bucket NAME]");
			p->sec = SEC_BAD;
		} else {
			on_section(p, s + 1, (size_t)(end - s - 1));
		}
		goto blank;
	}
	if (!strpbrk(s, "=:")) {
		bad(p, p->lineno, "expected NAME = VALUE");
		goto blank;
	}
	if (strpbrk(s, "=:") == s) {
		bad(p, p->lineno, "a value without a name");
		goto blank;
	}
	memcpy(str, p->buf, len);
	str[len] = '\n';
	str[len + 1] = '\0';
	return str;
blank:
	/* An empty line keeps libinih's count of lines with ours. */
	str[0] = '\n';
	str[1] = '\0';
	return str;
}

/**
 * s3d_conf_load() - read and check a configuration file
 * @file: its path
 * @must_exist: false: a missing file is an empty configuration
 * @out: set to the configuration on success (free with s3d_conf_free())
 * @errs: gets one line "FILE:LINE: what" per bad line (or "FILE: what")
 *
 * Return: 0, -EINVAL (@errs says why), -ENOENT and other -errno (the file
 * cannot be read; in @errs too), -ENOMEM.
 */
int s3d_conf_load(const char *file, bool must_exist, struct s3d_conf **out,
		  struct s3d_buf *errs)
{
	struct parse p = { .file = file, .errs = errs };
	int rc, err = 0;

	*out = NULL;
	p.conf = malloc(sizeof(*p.conf));
	if (!p.conf)
		return -ENOMEM;
	s3d_conf_init(p.conf);
	p.f = fopen(file, "re");
	if (!p.f) {
		err = -errno;
		if (err == -ENOENT && !must_exist) {
			*out = p.conf;
			return 0;
		}
		s3d_buf_addf(errs, "%s: %s\n", file, strerror(-err));
		s3d_conf_free(p.conf);
		return err;
	}
	p.conf->file = strdup(file);
	if (!p.conf->file)
		err = -ENOMEM;

	/* Not Python's configparser: no continuation lines, ';' comments. */
	ini_allow_multiline = false;
	ini_allow_inline_comments = true;
	ini_allow_no_value = false;
	ini_stop_on_first_error = false;
	rc = err ? 0 : ini_parse_stream(next_line, &p, on_value, &p);
	if (rc == -2)
		err = -ENOMEM;
	else if (rc > 0 && !p.nerr)
		bad(&p, (unsigned int)rc, "syntax error");
	if (!err && ferror(p.f)) {
		err = -EIO;
		s3d_buf_addf(errs, "%s: read error\n", file);
	}
	fclose(p.f);
	free(p.buf);
	/* The tier's endpoint, region, ... are its own section's. */
	if (!err && p.conf->tier.bucket &&
	    !s3d_conf_bucket(p.conf, p.conf->tier.bucket))
		bad(&p, p.conf->tier.line, "tier_bucket '%s': no [bucket %s] section says where it is",
		    p.conf->tier.bucket, p.conf->tier.bucket);
	if (!err && errs->err)
		err = errs->err;
	if (!err && p.nerr)
		err = -EINVAL;
	if (err) {
		s3d_conf_free(p.conf);
		return err;
	}
	*out = p.conf;
	return 0;
}

static int dup_over(char **dst, const char *src)
{
	char *n;

	if (!src)
		return 0;
	n = strdup(src);
	if (!n)
		return -ENOMEM;
	free(*dst);
	*dst = n;
	return 0;
}

/**
 * s3d_conf_override() - lay the command line's settings over [global]
 * @c: the configuration
 * @cli: what the command line set (unset fields as s3d_conf_init() left them)
 *
 * Return: 0 or -ENOMEM.
 */
int s3d_conf_override(struct s3d_conf *c, const struct s3d_conf *cli)
{
	const struct s3d_conf_s3 *s = &cli->global;
	int err, n;

	err = dup_over(&c->global.endpoint, s->endpoint);
	err = err ?: dup_over(&c->global.region, s->region);
	err = err ?: dup_over(&c->global.profile, s->profile);
	err = err ?: dup_over(&c->global.ca_bundle, s->ca_bundle);
	err = err ?: dup_over(&c->metrics, cli->metrics);
	if (err)
		return err;
	if (s->path_style >= 0)
		c->global.path_style = s->path_style;
	if (s->anonymous >= 0)
		c->global.anonymous = s->anonymous;
	if (s->allow_http >= 0)
		c->global.allow_http = s->allow_http;
	if (cli->max_inflight)
		c->max_inflight = cli->max_inflight;
	if (cli->log_level >= 0)
		c->log_level = cli->log_level;
	if (cli->stall_timeout)
		c->stall_timeout = cli->stall_timeout;
	for (n = 0; n < S3D_TUNE_NR; n++) {
		if (cli->tune_set[n] || cli->tune[n]) {
			c->tune[n] = cli->tune[n];
			c->tune_set[n] = true;
		}
	}
	if (cli->has_cache_limit) {
		c->cache.limit = cli->cache.limit;
		c->has_cache_limit = true;
	}
	if (cli->has_min_free) {
		c->cache.min_free = cli->cache.min_free;
		c->cache.min_free_pct = cli->cache.min_free_pct;
		c->has_min_free = true;
	}
	return 0;
}

/* Is @endpoint plain http (scheme compared as the parser takes it)? */
static bool plain_http(const char *endpoint)
{
	return endpoint && !strncmp(endpoint, "http://", 7);
}

/**
 * s3d_conf_check_http() - every section's http:// endpoint is allowed?
 * @c: the configuration, the command line laid over it
 * @errs: a line per section whose endpoint is plain http without
 *	allow_http ("FILE:LINE: ..."; [global]'s without a line)
 *
 * What s3d_conf_s3_client() refuses when a bucket's context is made, told
 * at start (and by --check-config) for every section at once.
 *
 * Return: 0, or -EINVAL if any was found.
 */
int s3d_conf_check_http(const struct s3d_conf *c, struct s3d_buf *errs)
{
	const struct s3d_conf_bucket *b;
	const char *file = c->file ?: "command line";
	struct s3d_conf_s3 set;
	int err = 0;

	s3d_conf_settings(c, NULL, &set);
	if (plain_http(set.endpoint) && set.allow_http <= 0) {
		s3d_buf_addf(errs, "%s: [global]: endpoint %s is plain http: refused without allow_http = true (or --allow-http)\n",
			     file, set.endpoint);
		err = -EINVAL;
	}
	for (b = c->buckets; b; b = b->next) {
		s3d_conf_settings(c, b->name, &set);
		if (!plain_http(set.endpoint) || set.allow_http > 0)
			continue;
		s3d_buf_addf(errs, "%s:%u: [bucket %s]: endpoint %s is plain http: refused without allow_http = true\n",
			     file, b->line, b->name, set.endpoint);
		err = -EINVAL;
	}
	return err;
}

/* The [bucket NAME] section of @bucket, or NULL. */
const struct s3d_conf_bucket *s3d_conf_bucket(const struct s3d_conf *c,
					      const char *bucket)
{
	const struct s3d_conf_bucket *b;

	for (b = bucket ? c->buckets : NULL; b; b = b->next)
		if (!strcmp(b->name, bucket))
			return b;
	return NULL;
}

/**
 * s3d_conf_settings() - the S3 settings that apply to @bucket
 * @c: the configuration
 * @bucket: the bucket, or NULL for [global]'s alone
 * @out: filled; its strings belong to @c
 */
void s3d_conf_settings(const struct s3d_conf *c, const char *bucket,
		       struct s3d_conf_s3 *out)
{
	const struct s3d_conf_bucket *b = s3d_conf_bucket(c, bucket);
	const struct s3d_conf_s3 *g = &c->global, *s = b ? &b->s3 : g;

	out->endpoint = s->endpoint ?: g->endpoint;
	out->region = s->region ?: g->region;
	out->profile = s->profile ?: g->profile;
	out->ca_bundle = s->ca_bundle ?: g->ca_bundle;
	out->path_style = s->path_style >= 0 ? s->path_style : g->path_style;
	out->anonymous = s->anonymous >= 0 ? s->anonymous : g->anonymous;
	out->allow_http = s->allow_http >= 0 ? s->allow_http : g->allow_http;
}

/**
 * s3d_conf_cache_policy() - the cache limits of a new mount of @bucket
 * @c: the configuration
 * @bucket: the bucket
 * @out: its section's limits, else [global]'s (or the command line's),
 *	else none
 */
void s3d_conf_cache_policy(const struct s3d_conf *c, const char *bucket,
			   struct s3d_cache_policy *out)
{
	const struct s3d_conf_bucket *b = s3d_conf_bucket(c, bucket);

	memset(out, 0, sizeof(*out));
	if (b && b->has_cache_limit)
		out->limit = b->cache.limit;
	else if (c->has_cache_limit)
		out->limit = c->cache.limit;
	if (b && b->has_min_free) {
		out->min_free = b->cache.min_free;
		out->min_free_pct = b->cache.min_free_pct;
	} else if (c->has_min_free) {
		out->min_free = c->cache.min_free;
		out->min_free_pct = c->cache.min_free_pct;
	}
}

/**
 * s3d_conf_mount_defaults() - what a new writable mount of @bucket gets
 *	unless its options say otherwise
 * @c: the configuration
 * @bucket: the bucket
 * @out: each setting from its section, else [global], else -1 (not set)
 */
void s3d_conf_mount_defaults(const struct s3d_conf *c, const char *bucket,
			     struct s3d_mount_defaults *out)
{
	const struct s3d_conf_bucket *b = s3d_conf_bucket(c, bucket);

	*out = c->mount;
	if (b && b->mount.writeback >= 0)
		out->writeback = b->mount.writeback;
	if (b && b->mount.upload_delay >= 0)
		out->upload_delay = b->mount.upload_delay;
}

/* s3d_conf_s3_open() up to the credentials: @set gets the settings used. */
static int conf_s3_setup(const struct s3d_conf *c, const char *bucket,
			 const struct s3d_conf_s3 *over, struct s3d_s3 *s3,
			 char *why, size_t whylen, struct s3d_conf_s3 *set)
{
	int err;

	if (why && whylen)
		why[0] = '\0';
	s3d_conf_settings(c, bucket, set);
	if (over) {
		set->endpoint = over->endpoint ?: set->endpoint;
		set->region = over->region ?: set->region;
		set->profile = over->profile ?: set->profile;
		set->ca_bundle = over->ca_bundle ?: set->ca_bundle;
		if (over->path_style >= 0)
			set->path_style = over->path_style;
		if (over->anonymous >= 0)
			set->anonymous = over->anonymous;
		if (over->allow_http >= 0)
			set->allow_http = over->allow_http;
	}
	err = s3d_s3_init(s3, set->endpoint, set->region, set->path_style,
			  set->anonymous > 0);
	if (err) {
		if (why && whylen)
			snprintf(why, whylen, "bad endpoint or region (%s)",
				 strerror(-err));
		return err;
	}
	/*
	 * Requests are signed UNSIGNED-PAYLOAD: over plain http anyone on the
	 * path reads the bytes and can change them (and the answers' ETags
	 * and listings) unseen. Only where the section says so.
	 */
	if (!strcmp(s3->scheme, "http")) {
		const char *what = bucket && s3d_conf_bucket(c, bucket) ?
				   bucket : "[global]";

		if (set->allow_http <= 0) {
			s3d_err("%s: endpoint http://%s refused: plain http lets anyone on the path read and change objects (requests are signed UNSIGNED-PAYLOAD); use https, or set allow_http = true in the section (--allow-http)",
				what, s3->authority);
			if (why && whylen)
				snprintf(why, whylen, "plain http endpoint http://%s refused: use https, or allow_http = true (--allow-http)",
					 s3->authority);
			s3d_s3_fini(s3);
			return -EPERM;
		}
		s3d_warn("%s: endpoint http://%s is plain http (allow_http): anyone on the path can read and change what is read and written",
			 what, s3->authority);
	}
	if (set->ca_bundle) {
		s3->ca_bundle = strdup(set->ca_bundle);
		if (!s3->ca_bundle) {
			if (why && whylen)
				snprintf(why, whylen, "%s", strerror(ENOMEM));
			s3d_s3_fini(s3);
			return -ENOMEM;
		}
	}
	return 0;
}

/**
 * s3d_conf_s3_client() - s3d_conf_s3_init() without the credentials
 * @c: the configuration
 * @bucket: the bucket, or NULL for [global]'s settings
 * @s3: zeroed; filled, no credentials (free with s3d_s3_fini())
 *
 * For the daemon, which resolves them on the event loop (creds_async.c).
 *
 * Return: 0, -EINVAL (unusable endpoint), -EPERM (plain http, not
 * allowed), -ENOMEM.
 */
int s3d_conf_s3_client(const struct s3d_conf *c, const char *bucket,
		       struct s3d_s3 *s3)
{
	struct s3d_conf_s3 set;

	return conf_s3_setup(c, bucket, NULL, s3, NULL, 0, &set);
}

/**
 * s3d_conf_s3_open() - an S3 client set up for @bucket, with overrides
 * @c: the configuration
 * @bucket: the bucket, or NULL for [global]'s settings
 * @over: settings that win over the file's, even a bucket section's
 *	(s3cachectl's flags), or NULL; unset fields as s3d_conf_init() leaves
 *	them
 * @s3: zeroed; filled, credentials loaded unless anonymous (free with
 *	s3d_s3_fini())
 * @why: on failure, what went wrong, for the user; for -ENOENT, what
 *	each provider said ("environment: ...; IMDS: ..."); may be NULL
 * @whylen: its size
 *
 * Credentials come from the whole chain (creds.c); a profile the
 * settings name is asked for by name, so that the environment's keys do
 * not stand in for it. Anonymous settings load none.
 *
 * Return: 0, -EINVAL (unusable endpoint), -EPERM (plain http, not
 * allowed), -ENOENT (no provider has
 * credentials), another -errno (a provider is configured but failed);
 * logged.
 */
int s3d_conf_s3_open(const struct s3d_conf *c, const char *bucket,
		     const struct s3d_conf_s3 *over, struct s3d_s3 *s3,
		     char *why, size_t whylen)
{
	const char *what = bucket ? bucket : "[global]";
	char said[1024] = "";
	struct s3d_conf_s3 set;
	int err;

	err = conf_s3_setup(c, bucket, over, s3, why, whylen, &set);
	if (err)
		return err;
	if (s3->anonymous)
		return 0;
	err = s3d_creds_resolve_why(&s3->creds, set.profile, said,
				    sizeof(said));
	/* The chain has logged what each provider said. */
	if (err == -ENOENT && set.profile)
		s3d_err("%s: no AWS credentials found for profile '%s'", what,
			set.profile);
	else if (err == -ENOENT)
		s3d_err("%s: no AWS credentials found; configure a provider, or set anonymous = true for a public bucket",
			what);
	else if (err)
		s3d_err("%s: cannot load AWS credentials (%s)", what,
			strerror(-err));
	if (err == -ENOENT && why && whylen)
		snprintf(why, whylen, "%s", said);
	else if (err && why && whylen)
		snprintf(why, whylen, "cannot load AWS credentials: %s",
			 said[0] ? said : strerror(-err));
	if (err)
		goto fail;
	s3d_info("%s: credentials from the %s (key id %s%s)", what,
		 s3->creds.source, s3->creds.access_key,
		 s3->creds.token ? ", session token" : "");
	return 0;
fail:
	s3d_s3_fini(s3);
	return err;
}

/**
 * s3d_conf_s3_init() - an S3 client set up for @bucket, as configured
 * @c: the configuration
 * @bucket: the bucket, or NULL for [global]'s settings
 * @s3: zeroed; filled (free with s3d_s3_fini())
 *
 * Return: as s3d_conf_s3_open().
 */
int s3d_conf_s3_init(const struct s3d_conf *c, const char *bucket,
		     struct s3d_s3 *s3)
{
	return s3d_conf_s3_open(c, bucket, NULL, s3, NULL, 0);
}

/**
 * s3d_parse_min_free() - "10%" or a size
 * @s: the text
 * @pol: sets min_free or min_free_pct
 *
 * Return: 0 or -EINVAL/-ERANGE.
 */
int s3d_parse_min_free(const char *s, struct s3d_cache_policy *pol)
{
	size_t n = strlen(s);
	uint64_t v;
	char tmp[32];

	if (n && s[n - 1] == '%') {
		if (n >= sizeof(tmp))
			return -EINVAL;
		memcpy(tmp, s, n - 1);
		tmp[n - 1] = '\0';
		if (s3d_parse_u64(tmp, &v) || v > 99)
			return -EINVAL;
		pol->min_free_pct = (unsigned int)v;
		pol->min_free = 0;
		return 0;
	}
	pol->min_free_pct = 0;
	return s3d_parse_size(s, &pol->min_free);
}
