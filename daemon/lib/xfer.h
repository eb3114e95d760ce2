/* SPDX-License-Identifier: GPL-2.0 */
/*
 * xfer.c: the S3 transfer engine on the event loop (loop.c): requests as
 * libcurl transfers (curlm.c), at most max_inflight at a time, the rest
 * queued by priority class (prio.c), transient failures retried by the
 * policy of retry.c, every attempt counted.
 */
#ifndef S3D_XFER_H
#define S3D_XFER_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include <curl/curl.h>

#include "base.h"
#include "loop.h"
#include "posix.h"
#include "retry.h"
#include "s3.h"
#include "util.h"

struct s3d_xfer;

/**
 * struct s3d_xfer_ops - what an operation does with its S3 request
 * @prepare: build @x->req (and set @x->src, for a body) for the next
 *	attempt (called each attempt, so the signature date is fresh and
 *	ranges can resume). 0 or -errno.
 * @headers: optional; the final response's headers are in (@x->status,
 *	@x->etag, lengths, Content-Range): return false to end the attempt
 *	before its body (@done then sees @x->cres CURLE_WRITE_ERROR)
 * @body: sink for a 2xx response body; NULL collects it in @x->resp.
 *	Returns the bytes taken; anything else aborts the transfer.
 * @done: the attempt is over (see @x->cres, @x->status, @x->err). Return
 *	S3D_XFER_RETRY to ask for another attempt (only while @x->can_retry),
 *	0 when finished; the engine never touches @x after that.
 * @throttled: optional; the server answered "slow down" (503 SlowDown,
 *	429, ...): called before the retry is planned (the daemon lowers the
 *	bucket's concurrency for a while)
 * @ended: optional; an attempt that @prepare began is over, before the
 *	engine plans a retry or calls @done: release what only an attempt
 *	in flight needs (a FETCH's buffer and cache file), so that waiting
 *	transfers, backing off or queued, hold none of it
 */
struct s3d_xfer_ops {
	int (*prepare)(struct s3d_xfer *x);
	bool (*headers)(struct s3d_xfer *x);
	size_t (*body)(struct s3d_xfer *x, const char *p, size_t n);
	int (*done)(struct s3d_xfer *x);
	void (*throttled)(struct s3d_xfer *x);
	void (*ended)(struct s3d_xfer *x);
};

#define S3D_XFER_RETRY	1

/**
 * struct s3d_xfer_src - the body a request sends
 * @fd: PUT: the file it is read from (pread(), so every attempt and every
 *	rewind of libcurl's reads it again from @off); -1: none (@len 0, or
 *	@mem)
 * @off: PUT: where in @fd the body starts
 * @mem: POST, or a PUT without @fd: the body in memory (the caller's,
 *	alive until ->done()); NULL with @len 0: an empty body
 * @len: the body's length in bytes (Content-Length)
 * @pos: engine private: bytes handed to libcurl in this attempt
 *
 * A GET, HEAD or DELETE sends none (@fd -1, @mem NULL, @len 0: what
 * s3d_xfer_init() leaves).
 */
struct s3d_xfer_src {
	int fd;
	uint64_t off;
	const char *mem;
	uint64_t len;
	uint64_t pos;
};

struct s3d_xfer {
	const struct s3d_xfer_ops *ops;
	const char *what;		/* "GET", "HEAD", "LIST": for logs */
	const char *key;		/* for logs */
	int prio;			/* enum s3d_prio; fixed while queued */
	bool probe;			/* a 404 is an answer (lookups) */
	bool trickle;			/* its answer may trickle (keep-alive
					 * spaces): stalled only when no byte
					 * came for S3D_TRICKLE_STALLS stall
					 * times, not below min_rate */
	bool expect;			/* a PUT sends Expect: 100-continue */
	bool once;			/* one attempt, never retried (a miss
					 * is cheaper than a wait) */
	unsigned int connect_ms;	/* connect timeout; 0: the engine's */
	unsigned int stall_s;		/* stall timeout; 0: the engine's */
	struct s3d_stats *stats;	/* counted there; NULL: s3d_stats */
	struct s3d_buf *hdrs;		/* the caller's, or NULL: every header
					 * of the final response, appended as
					 * "name\0value\0" */
	struct s3d_http_req req;
	struct s3d_xfer_src src;	/* the request's body, if any */

	/* Outcome of the last attempt. */
	CURLcode cres;
	char errbuf[CURL_ERROR_SIZE];
	long status;
	char etag[S3D_ETAG_MAX + 1];
	bool has_etag;
	int64_t content_length;
	int64_t range_start;		/* Content-Range: first byte, or -1 */
	int64_t range_end;		/* ... last byte, or -1 */
	int64_t range_total;		/* ... object size, or -1 ("*") */
	time_t last_modified;
	struct s3d_posix_hdrs posix;	/* x-amz-meta-mode, -uid, -gid, -mtime */
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

	/*
	 * An admission layer's, ahead of the engine (the daemon's per-bucket
	 * caps): the engine never looks at them.
	 */
	void *gate;			/* the gate holding it; NULL: none */
	const struct s3d_xfer_ops *gate_ops;	/* the caller's; ->ops wraps */
	struct s3d_list gate_node;	/* waiting at the gate, by ->prio */
	bool gate_waiting;		/* waits for a slot of @gate */
	bool gate_slot;			/* holds a slot of @gate */

	/* Engine private. */
	int op;				/* enum s3d_op, from @what */
	CURL *easy;
	struct curl_slist *hl;
	struct s3d_list node;
	struct s3d_timer backoff;
	bool queued;
};

/*
 * An attempt of @x is with the server: dropping it now does not undo it
 * (S3 may still act on a request it received whole, a part included).
 */
static inline bool s3d_xfer_sent(const struct s3d_xfer *x)
{
	return x->easy != NULL;
}

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
#define S3D_TRICKLE_STALLS	6

int s3d_engine_init(unsigned int max_inflight, const char *ca_bundle);
void s3d_engine_set_stall_timeout(unsigned int seconds);
void s3d_engine_set_min_rate(unsigned int bytes_per_s);
void s3d_engine_set_retry(const struct s3d_retry_policy *p);
const struct s3d_retry_policy *s3d_engine_retry(void);
void s3d_xfer_progress(struct s3d_xfer *x);
void s3d_engine_fini(void);
unsigned int s3d_engine_inflight(void);
unsigned int s3d_engine_queued(void);
const char *s3d_op_name(int op);
void s3d_xfer_init(struct s3d_xfer *x, const struct s3d_xfer_ops *ops,
		   const char *what, const char *key);
void s3d_xfer_submit(struct s3d_xfer *x);
void s3d_xfer_release(struct s3d_xfer *x);
int s3d_xfer_errno(struct s3d_xfer *x, const char *bucket);
bool s3d_xfer_ok(const struct s3d_xfer *x);

#endif /* S3D_XFER_H */
