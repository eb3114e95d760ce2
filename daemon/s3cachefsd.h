/* SPDX-License-Identifier: GPL-2.0 */
/*
 * s3cachefsd: the fill daemon of s3cachefs. One private header for all of
 * daemon/, prototypes grouped by the file that defines them.
 *
 * libs3c.a (the S3 client, shared with s3cachectl): log.c util.c path.c
 * creds.c s3.c xml.c fetch.c client.c. The daemon proper: main.c netlink.c ops.c
 * store.c.
 */
#ifndef S3CACHEFSD_H
#define S3CACHEFSD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <sys/types.h>

#include <curl/curl.h>

#include "uapi/s3cachefs.h"

#define S3D_VERSION	"0.1"

#define S3D_ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define S3D_MIN(a, b)		((a) < (b) ? (a) : (b))
#define S3D_MAX(a, b)		((a) > (b) ? (a) : (b))
#define s3d_container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))

/* Alignment of O_DIRECT buffers, offsets and lengths. */
#define S3D_DIO_ALIGN		4096U
/*
 * Largest piece of a FETCH held in memory before it is written out: with
 * 256 requests in flight, 256 x 128 KiB of body at most (t_memory bounds
 * the daemon's RSS); a direct write of 128 KiB costs NVMe little extra.
 */
#define S3D_PIECE_MAX		(128U << 10)
/* S3 keys are at most 1024 bytes. */
#define S3D_KEY_MAX		1024
/* Largest XML body (listing page or error) we accept. */
#define S3D_XML_MAX		(32U << 20)

/* ---- intrusive doubly linked list ---- */
struct s3d_list {
	struct s3d_list *next, *prev;
};

static inline void s3d_list_init(struct s3d_list *h)
{
	h->next = h->prev = h;
}

static inline bool s3d_list_empty(const struct s3d_list *h)
{
	return h->next == h;
}

static inline void s3d_list_add_tail(struct s3d_list *n, struct s3d_list *h)
{
	n->prev = h->prev;
	n->next = h;
	h->prev->next = n;
	h->prev = n;
}

static inline void s3d_list_add_before(struct s3d_list *n, struct s3d_list *pos)
{
	s3d_list_add_tail(n, pos);
}

static inline void s3d_list_del(struct s3d_list *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
	s3d_list_init(n);
}

/* ---- log.c ---- */
enum s3d_log_level {
	S3D_LOG_ERR,
	S3D_LOG_WARN,
	S3D_LOG_INFO,
	S3D_LOG_DEBUG,
};

extern int s3d_log_level;
void s3d_log_to_syslog(const char *ident);
void s3d_log(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
bool s3d_log_once(const char *key);
void s3d_log_once_reset(void);

#define s3d_err(...)	s3d_log(S3D_LOG_ERR, __VA_ARGS__)
#define s3d_warn(...)	s3d_log(S3D_LOG_WARN, __VA_ARGS__)
#define s3d_info(...)	s3d_log(S3D_LOG_INFO, __VA_ARGS__)
#define s3d_dbg(...)						\
	do {							\
		if (s3d_log_level >= S3D_LOG_DEBUG)		\
			s3d_log(S3D_LOG_DEBUG, __VA_ARGS__);	\
	} while (0)

/* ---- util.c ---- */

/*
 * A growable byte buffer, always NUL terminated. Allocation failure is
 * sticky (@err), so a sequence of appends is checked once at the end.
 */
struct s3d_buf {
	char *p;
	size_t len;
	size_t cap;
	size_t max;	/* 0: unbounded; else appends beyond it fail */
	int err;	/* 0 or -ENOMEM/-E2BIG from the first failed append */
};

void s3d_buf_init(struct s3d_buf *b, size_t max);
void s3d_buf_free(struct s3d_buf *b);
void s3d_buf_reset(struct s3d_buf *b);
void s3d_buf_add(struct s3d_buf *b, const void *data, size_t n);
void s3d_buf_adds(struct s3d_buf *b, const char *s);
void s3d_buf_addc(struct s3d_buf *b, char c);
void s3d_buf_addf(struct s3d_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
const char *s3d_buf_str(const struct s3d_buf *b);
char *s3d_buf_steal(struct s3d_buf *b);

/* A set of strings with an int value each (names seen in a listing). */
struct s3d_strset_ent;
struct s3d_strset {
	struct s3d_strset_ent **tab;
	size_t nbuckets;
	size_t count;
};

void s3d_strset_init(struct s3d_strset *s);
void s3d_strset_free(struct s3d_strset *s);
int s3d_strset_put(struct s3d_strset *s, const char *key, int val);
bool s3d_strset_get(const struct s3d_strset *s, const char *key, int *val);

uint64_t s3d_now_ms(void);
int s3d_parse_u64(const char *s, uint64_t *out);
int s3d_parse_iso8601(const char *s, time_t *out);
int s3d_parse_size(const char *s, uint64_t *out);
struct s3d_cache_policy;
int s3d_parse_min_free(const char *s, struct s3d_cache_policy *pol);
void s3d_hex(const unsigned char *in, size_t n, char *out);
bool s3d_etag_eq(const char *a, const char *b);
void s3d_escape(const char *s, char *out, size_t outlen);
size_t s3d_escape_mem(const char *s, size_t n, char *out, size_t outlen,
		      bool backslash);

/* ---- path.c ---- */
bool s3d_name_valid(const char *name, size_t len, bool at_root);
bool s3d_path_valid(const char *path);
char *s3d_key_of(const char *prefix, const char *path, const char *name);
char *s3d_list_prefix(const char *prefix, const char *path);
const char *s3d_list_name(const char *lp, const char *key, bool common,
			  size_t *len);
bool s3d_prefix_valid(const char *prefix);
bool s3d_bucket_valid(const char *bucket);

/* ---- creds.c, creds_http.c, creds_watch.c ---- */
#include "creds.h"

/* ---- s3.c ---- */
struct s3d_kv {
	const char *name;
	const char *value;
};

/* Input to SigV4 (tests drive it directly with the AWS test-suite vectors). */
struct s3d_sigv4_in {
	const char *method;
	const char *uri;		/* canonical URI: already encoded */
	const struct s3d_kv *query;	/* raw (not encoded) names/values */
	size_t nquery;
	const struct s3d_kv *headers;	/* as sent, host and x-amz-date included */
	size_t nheaders;
	const char *payload_hash;	/* hex SHA-256 or "UNSIGNED-PAYLOAD" */
	const char *amz_date;		/* YYYYMMDD'T'HHMMSS'Z' */
	const char *region;
	const char *service;
	const char *access_key;
	const char *secret_key;
};

struct s3d_sigv4_out {
	struct s3d_buf creq;		/* canonical request */
	struct s3d_buf sts;		/* string to sign */
	char signature[65];
	struct s3d_buf auth;		/* Authorization header value */
	struct s3d_buf query;		/* canonical query string */
};

int s3d_sigv4(const struct s3d_sigv4_in *in, struct s3d_sigv4_out *out);
void s3d_sigv4_out_free(struct s3d_sigv4_out *out);
void s3d_uri_encode(struct s3d_buf *b, const char *s, size_t n,
		    bool encode_slash);
void s3d_sha256_hex(const void *data, size_t n, char out[65]);
void s3d_amz_date(time_t t, char out[17]);
int s3d_signing_key(const char *secret, const char *date, const char *region,
		    const char *service, unsigned char key[32]);

/* Where and how to reach S3. */
struct s3d_s3 {
	char *scheme;		/* "http" or "https" */
	char *authority;	/* host[:port], lower case */
	char *region;
	int path_style;		/* 1 path style, 0 virtual host */
	bool aws;		/* endpoint is an AWS one */
	bool anonymous;		/* send unsigned requests */
	char *ca_bundle;	/* CA file for TLS; NULL: the loop's */
	struct s3d_creds creds;
};

#define S3D_HDR_MAX	12
struct s3d_http_req {
	const char *method;
	char *url;
	const char *ca_bundle;		/* the s3d_s3's, or NULL */
	char *headers[S3D_HDR_MAX];	/* "Name: value" */
	size_t nheaders;
};

int s3d_s3_init(struct s3d_s3 *s3, const char *endpoint, const char *region,
		int path_style, bool anonymous);
void s3d_s3_fini(struct s3d_s3 *s3);
int s3d_endpoint_check(const char *endpoint, const char **why);
int s3d_s3_build(const struct s3d_s3 *s3, const char *method,
		 const char *bucket, const char *key,
		 const struct s3d_kv *query, size_t nquery,
		 const struct s3d_kv *hdrs, size_t nhdrs, time_t now,
		 struct s3d_http_req *out);
void s3d_http_req_free(struct s3d_http_req *r);
int s3d_s3_errno(long status, const char *code);

/* ---- xml.c ---- */
struct s3d_obj {
	char *key;
	char *etag;
	uint64_t size;
	time_t mtime;
};

struct s3d_list_page {
	bool truncated;
	char *next_token;
	struct s3d_obj *objs;
	size_t nobjs;
	char **prefixes;
	size_t nprefixes;
	size_t nskipped;	/* entries left out: unusable (logged) */
};

struct s3d_s3error {
	char code[64];
	char message[256];
	char request_id[128];
};

int s3d_xml_parse_list(const char *xml, size_t len, struct s3d_list_page *pg,
		       char *why, size_t whylen);
void s3d_list_page_free(struct s3d_list_page *pg);
int s3d_xml_parse_error(const char *xml, size_t len, struct s3d_s3error *e);

/* ---- retry.c: the retry policy (pure) ---- */
/**
 * struct s3d_retry_policy - how transient failures are retried
 * @attempts: attempts per request at most, the first included
 * @max_time_s: no retry starts later than this after the request's first
 *	attempt (or its last progress: a piece of a FETCH written)
 * @base_ms: back-off base (throttling answers: five times it)
 * @max_delay_ms: back-off cap
 * @budget: retry tokens per S3 context (struct s3d_retry_budget)
 */
struct s3d_retry_policy {
	unsigned int attempts;
	unsigned int max_time_s;
	unsigned int base_ms;
	unsigned int max_delay_ms;
	unsigned int budget;
};

#define S3D_RETRY_ATTEMPTS_DEFAULT	10
#define S3D_RETRY_MAX_TIME_DEFAULT	35
#define S3D_RETRY_BASE_MS_DEFAULT	200
#define S3D_RETRY_MAX_DELAY_MS_DEFAULT	10000
#define S3D_RETRY_BUDGET_DEFAULT	500
#define S3D_RETRY_COST			5
#define S3D_RETRY_COST_TIMEOUT		10

/* A token bucket of retries (SDK "retry quota"); see retry.c. */
struct s3d_retry_budget {
	unsigned int tokens;
	unsigned int capacity;
};

unsigned int s3d_retry_backoff(const struct s3d_retry_policy *p, int attempt,
			       bool throttled, uint32_t rnd);
void s3d_retry_budget_init(struct s3d_retry_budget *b, unsigned int capacity);
bool s3d_retry_budget_has(const struct s3d_retry_budget *b, unsigned int cost);
bool s3d_retry_budget_take(struct s3d_retry_budget *b, unsigned int cost);
void s3d_retry_budget_success(struct s3d_retry_budget *b, unsigned int spent);
long s3d_retry_after_ms(const char *v, time_t now);
bool s3d_retry_throttled(long status, const char *code);

/* ---- prio.c: the order waiting transfers start in ---- */
/**
 * enum s3d_prio - priority classes of S3 transfers, most urgent first
 * @S3D_PRIO_META: LOOKUP, LIST, the HEAD of a stale FETCH: an `ls` or a
 *	`stat` waits for it
 * @S3D_PRIO_SYNC: a FETCH a reader is blocked on (S3CFS_PRIO_SYNC, or a
 *	kernel that does not say)
 * @S3D_PRIO_ASYNC: readahead and prefetch (S3CFS_PRIO_ASYNC)
 * @S3D_PRIO_NR: number of classes
 */
enum s3d_prio {
	S3D_PRIO_META,
	S3D_PRIO_SYNC,
	S3D_PRIO_ASYNC,
	S3D_PRIO_NR,
};

/* A class passed over this many times in a row while it waits goes next. */
#define S3D_PRIO_PASS	8

/* A queue per class, FIFO within each (see prio.c). */
struct s3d_pq {
	struct s3d_list q[S3D_PRIO_NR];
	unsigned int n[S3D_PRIO_NR];
	unsigned int passed[S3D_PRIO_NR];	/* starts it was passed over */
};

const char *s3d_prio_name(int prio);
void s3d_pq_init(struct s3d_pq *pq);
void s3d_pq_add(struct s3d_pq *pq, struct s3d_list *node, int prio,
		bool front);
void s3d_pq_del(struct s3d_pq *pq, struct s3d_list *node, int prio);
struct s3d_list *s3d_pq_pop(struct s3d_pq *pq, int *prio);
bool s3d_pq_empty(const struct s3d_pq *pq);
unsigned int s3d_pq_count(const struct s3d_pq *pq, int prio);

/* ---- fetch.c: the event loop and the S3 transfer engine ---- */
struct s3d_timer {
	struct s3d_list node;
	uint64_t due_ms;
	bool armed;
	void (*fn)(struct s3d_timer *t);
};

struct s3d_watch {
	int fd;
	bool dead;
	void (*cb)(struct s3d_watch *w, uint32_t events);
	struct s3d_list node;	/* on the dead list until freed */
};

struct s3d_xfer;

/**
 * struct s3d_xfer_ops - what an operation does with its S3 request
 * @prepare: build @x->req for the next attempt (called each attempt, so the
 *	signature date is fresh and ranges can resume). 0 or -errno.
 * @body: sink for a 2xx response body; NULL collects it in @x->resp.
 *	Returns the bytes taken; anything else aborts the transfer.
 * @done: the attempt is over (see @x->cres, @x->status, @x->err). Return
 *	S3D_XFER_RETRY to ask for another attempt (only while @x->can_retry),
 *	0 when finished; the engine never touches @x after that.
 * @throttled: optional; the server answered "slow down" (503 SlowDown,
 *	429, ...): called before the retry is planned (ops.c lowers the
 *	bucket's concurrency for a while)
 * @ended: optional; an attempt that @prepare began is over, before the
 *	engine plans a retry or calls @done: release what only an attempt
 *	in flight needs (a FETCH's buffer and cache file), so that waiting
 *	transfers, backing off or queued, hold none of it
 */
struct s3d_xfer_ops {
	int (*prepare)(struct s3d_xfer *x);
	size_t (*body)(struct s3d_xfer *x, const char *p, size_t n);
	int (*done)(struct s3d_xfer *x);
	void (*throttled)(struct s3d_xfer *x);
	void (*ended)(struct s3d_xfer *x);
};

#define S3D_XFER_RETRY	1

struct s3d_xfer {
	const struct s3d_xfer_ops *ops;
	const char *what;		/* "GET", "HEAD", "LIST": for logs */
	const char *key;		/* for logs */
	int prio;			/* enum s3d_prio; fixed while queued */
	struct s3d_http_req req;

	/* Outcome of the last attempt. */
	CURLcode cres;
	char errbuf[CURL_ERROR_SIZE];
	long status;
	char etag[S3CFS_ETAG_MAX + 1];
	bool has_etag;
	int64_t content_length;
	int64_t range_start;		/* Content-Range: first byte, or -1 */
	int64_t range_end;		/* ... last byte, or -1 */
	int64_t range_total;		/* ... object size, or -1 ("*") */
	time_t last_modified;
	char request_id[128];
	struct s3d_buf resp;		/* body (XML) or error body */
	uint64_t body_bytes;
	int err;			/* set by a body sink: -errno */
	int attempt;			/* 1-based */
	bool can_retry;			/* done() may return S3D_XFER_RETRY */
	bool throttled;			/* the answer was a "slow down" */
	long retry_after_ms;		/* Retry-After, or -1 */

	/* Retries: struct s3d_retry_policy, retry.c. */
	uint64_t window_ms;		/* first attempt or last progress */
	unsigned int spent;		/* retry tokens taken */
	struct s3d_retry_budget *budget;	/* NULL: the loop's own */

	/* Per-bucket admission ahead of the engine (ops.c, s3d_ctx_submit). */
	struct s3d_ctx *ctx;		/* NULL: submitted straight */
	const struct s3d_xfer_ops *ctx_ops;	/* the caller's; ->ops wraps */
	struct s3d_list ctx_node;	/* on ctx->waiting, by ->prio */
	bool ctx_waiting;		/* waits for a slot of @ctx */
	bool ctx_slot;			/* holds a slot of @ctx */

	/* Engine private. */
	int op;				/* enum s3d_op, from @what */
	CURL *easy;
	struct curl_slist *hl;
	struct s3d_list node;
	struct s3d_timer backoff;
	bool queued;
};

/* What the engine counts per operation (metrics.c exposes it). */
enum s3d_op {
	S3D_OP_GET,
	S3D_OP_HEAD,
	S3D_OP_LIST,
	S3D_OP_OTHER,
	S3D_OP_NR,
};

/* Upper bounds (seconds) of the latency histogram buckets; +Inf follows. */
#define S3D_LAT_NR	16
extern const double s3d_lat_bounds[S3D_LAT_NR];

/*
 * @status: attempts by the HTTP status answered (100..599); index 0:
 *	attempts that got no (valid) status: connect/TLS errors, timeouts
 * @lat: attempts by duration, per bucket (not cumulative); [S3D_LAT_NR]
 *	is the +Inf overflow
 */
struct s3d_op_stats {
	uint64_t status[600];
	uint64_t bytes_in;
	uint64_t retries;
	uint64_t failures;
	uint64_t lat[S3D_LAT_NR + 1];
	uint64_t lat_sum_us;
};

struct s3d_stats {
	uint64_t requests;
	uint64_t retries;
	uint64_t failures;
	uint64_t bytes_in;
	struct s3d_op_stats op[S3D_OP_NR];
};

extern struct s3d_stats s3d_stats;

/*
 * A transfer that moves fewer than S3D_MIN_RATE_DEFAULT bytes/s (min_rate)
 * for this long is dropped and retried.
 */
#define S3D_STALL_DEFAULT	20
#define S3D_STALL_MIN		1
#define S3D_STALL_MAX		3600
#define S3D_MIN_RATE_DEFAULT	1024

int s3d_loop_init(unsigned int max_inflight, const char *ca_bundle);
void s3d_loop_set_stall_timeout(unsigned int seconds);
void s3d_loop_set_min_rate(unsigned int bytes_per_s);
void s3d_loop_set_retry(const struct s3d_retry_policy *p);
const struct s3d_retry_policy *s3d_loop_retry(void);
void s3d_xfer_progress(struct s3d_xfer *x);
void s3d_loop_fini(void);
int s3d_loop_watch(struct s3d_watch *w, int fd, uint32_t events,
		   void (*cb)(struct s3d_watch *w, uint32_t events));
void s3d_loop_unwatch(struct s3d_watch *w);
int s3d_loop_modify(struct s3d_watch *w, uint32_t events);
void s3d_loop_unwatch_free(struct s3d_watch *w);
unsigned int s3d_loop_inflight(void);
unsigned int s3d_loop_queued(void);
const char *s3d_op_name(int op);
int s3d_loop_run(bool (*until)(void *arg), void *arg);
void s3d_loop_stop(void);
void s3d_timer_arm(struct s3d_timer *t, uint64_t delay_ms);
void s3d_timer_cancel(struct s3d_timer *t);
void s3d_xfer_init(struct s3d_xfer *x, const struct s3d_xfer_ops *ops,
		   const char *what, const char *key);
void s3d_xfer_submit(struct s3d_xfer *x);
void s3d_xfer_release(struct s3d_xfer *x);
int s3d_xfer_errno(struct s3d_xfer *x, const char *bucket);
bool s3d_xfer_ok(const struct s3d_xfer *x);

/* ---- curlm.c: a libcurl multi handle driven by the loop ---- */
/**
 * struct s3d_curlm - a libcurl multi handle whose transfers run on the loop
 * @multi: where the owner adds its easy handles
 * @name: for log lines
 * @done: called from the loop as each transfer finishes; the owner removes
 *	it from @multi
 * @timer: libcurl's timeout
 */
struct s3d_curlm {
	CURLM *multi;
	const char *name;
	void (*done)(struct s3d_curlm *m, CURL *easy, CURLcode result);
	struct s3d_timer timer;
};

int s3d_curlm_init(struct s3d_curlm *m, const char *name,
		   void (*done)(struct s3d_curlm *m, CURL *easy,
				CURLcode result));
void s3d_curlm_fini(struct s3d_curlm *m);

/* ---- client.c: synchronous S3 calls (--selftest, s3cachectl) ---- */
struct s3d_obj_info {
	long status;
	char etag[S3CFS_ETAG_MAX + 1];
	int64_t size;		/* Content-Length */
	time_t mtime;
	uint64_t bytes;		/* body bytes received */
};

/* Why a call failed: status 0 and no code for a transport error. */
struct s3d_call_err {
	long status;
	char code[64];
	char message[CURL_ERROR_SIZE + 256];
	char request_id[128];
};

int s3d_call_list(struct s3d_s3 *s3, const char *bucket, const char *prefix,
		  const char *delimiter,
		  int (*page)(void *arg, const struct s3d_list_page *pg),
		  void *arg, struct s3d_call_err *ce);
int s3d_call_head(struct s3d_s3 *s3, const char *bucket, const char *key,
		  struct s3d_obj_info *info, struct s3d_call_err *ce);
int s3d_call_get(struct s3d_s3 *s3, const char *bucket, const char *key,
		 const char *range,
		 size_t (*sink)(void *arg, const char *p, size_t n), void *arg,
		 struct s3d_obj_info *info, struct s3d_call_err *ce);

/* ---- store.c: all cache directory I/O ---- */
struct s3d_meta {
	const char *etag;
	uint64_t size;
	time_t mtime;
};

int s3d_store_open_root(const char *dir, int *rootfd);
int s3d_store_check_format(int rootfd, const char *bucket, const char *prefix);
int s3d_store_open_dir(int rootfd, const char *path, bool create, int *dirfd);
int s3d_store_open_file(int rootfd, const char *path, int flags, int *fd);
int s3d_store_ensure_dir(int dirfd, const char *name, bool replace);
int s3d_store_ensure_file(int dirfd, const char *name,
			  const struct s3d_meta *m, bool replace_dir);
int s3d_store_replace_file(int dirfd, const char *name,
			   const struct s3d_meta *m);
int s3d_store_remove(int dirfd, const char *name);
int s3d_store_prune(int dirfd, bool at_root,
		    bool (*keep)(const char *name, void *arg), void *arg);
int s3d_store_set_listed(int dirfd, time_t when);
int s3d_store_get_etag(int fd, char *buf, size_t len);
int s3d_store_get_size(int fd, uint64_t *size);
int s3d_meta_encode(const struct s3d_meta *m, bool raw, uint8_t *buf);
int s3d_meta_decode(const uint8_t *v, size_t n, char *etag, uint64_t *size,
		    int64_t *mtime);

/* ---- ops.c: the mounts and the handling of kernel requests ---- */
struct s3d_s3;
struct s3d_conf;
struct s3d_ctx;

/**
 * struct s3d_req - one request from the kernel (or from --selftest)
 * @reply: called exactly once with 0 or -errno; owns freeing @r after.
 * @progress: if set, sends a progress report (STATUS -EINPROGRESS) for a
 *	request still in progress; @r stays ours. Called after each listing
 *	page, each whole chunk of a FETCH written, and every S3D_PROGRESS_MS
 *	while bytes move for it (or while it waits for its first attempt, for
 *	a slot): never for a request whose S3 transfer is stuck or backing
 *	off, so the kernel's fetch_timeout bounds those.
 */
struct s3d_req {
	int cmd;
	uint64_t id;
	uint32_t mount_id;
	char *path;
	char *name;
	char *etag;
	uint64_t off;
	uint64_t len;
	uint64_t done;		/* FETCH: [off, off + done) is written */
	uint32_t prio;		/* FETCH: enum s3cfs_prio (absent: SYNC) */
	/* MOUNT */
	char *bucket;
	char *prefix;
	char *cache_dir;
	uint32_t chunk;
	void (*reply)(struct s3d_req *r, int status);
	void (*progress)(struct s3d_req *r);
	void *priv;
	/* ops.c private */
	uint64_t reported_ms;		/* start or last progress report */
	bool moved;			/* body bytes arrived since then */
	bool started;			/* its first S3 attempt has begun */
	struct s3d_list active;		/* on the in-progress list */
	struct s3d_req *riders;		/* identical requests answered with it */
	struct s3d_req *rider_next;
};

/*
 * The kernel restarts a request's wait (fetch_timeout) on each progress
 * report: report a pending request that moved bytes (or has not started
 * yet) when this long has passed since its start or its last report
 * (checked every S3D_PROGRESS_TICK_MS), so while bytes move two reports
 * are never more than 4 s apart.
 */
#define S3D_PROGRESS_MS		3000
#define S3D_PROGRESS_TICK_MS	1000

int s3d_ops_init(const struct s3d_conf *c);
int s3d_ops_set_conf(const struct s3d_conf *c);
void s3d_ops_fini(void);
struct s3d_ctx *s3d_ctx_get(const char *bucket, int *err);
void s3d_ctx_put(struct s3d_ctx *c);
int s3d_ctx_wait(struct s3d_ctx *c);
struct s3d_s3 *s3d_ctx_s3(struct s3d_ctx *c);
unsigned int s3d_ctx_inflight(const struct s3d_ctx *c);
void s3d_ctx_submit(struct s3d_ctx *c, struct s3d_xfer *x);
void s3d_ctx_release(struct s3d_xfer *x);
void s3d_req_handle(struct s3d_req *r);
void s3d_req_free(struct s3d_req *r);
unsigned int s3d_ops_pending(void);

/* ---- evict.c: cache usage and eviction ---- */
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
/* Seconds an EVICT waits for its ack before it is given up. */
#define S3D_EVICT_TIMEOUT_DEFAULT	30
extern uint64_t s3d_evict_timeout_ms;
/* How EVICTs go out and are given up (netlink.c; tests replace them). */
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

/* ---- netlink.c ---- */
struct nlmsghdr;
struct nl_msg;

int s3d_nl_init(void);
void s3d_nl_fini(void);
int s3d_nl_parse_req(struct nlmsghdr *nlh, struct s3d_req **out);
struct nl_msg *s3d_nl_build_reply(const struct s3d_req *r, int status,
				  int family);
struct nl_msg *s3d_nl_build_evict(uint32_t mount_id, const char *path,
				  uint64_t off, uint64_t len, int family);
int s3d_nl_evict(uint32_t mount_id, const char *path, uint64_t len,
		 void (*done)(void *arg, int err), void *arg);
bool s3d_nl_evict_cancel(void (*done)(void *arg, int err), void *arg);

#endif /* S3CACHEFSD_H */
