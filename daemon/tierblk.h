/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tierblk.c: the fleet tier's pure parts: block names, block arithmetic,
 * the metadata a block carries and its validation, the breaker's state
 * machine, the leases' names and state machine, and the tier's counters.
 * No I/O: tier.c and tierlease.c do that.
 */
#ifndef S3D_TIERBLK_H
#define S3D_TIERBLK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/s3.h"
#include "lib/xfer.h"

/*
 * The format of names and metadata. It is forever: any change to what is
 * hashed, named or stored is a new version (a new name for every block).
 */
#define S3D_TIER_FORMAT		1
#define S3D_TIER_PREFIX		"s3cachefs/v1/"
#define S3D_TIER_HEX		64	/* a SHA-256 in hex */
#define S3D_TIER_KEY_MAX	160

/**
 * struct s3d_tier_obj - the object version a block belongs to
 * @source: hex SHA-256 of the origin (endpoint, bucket)
 * @object: hex SHA-256 of the version (source, key, ETag, size)
 * @etag: the ETag, normalised (no W/, no quotes)
 * @size: the object's size
 * @block: the block size in bytes (a power of two)
 */
struct s3d_tier_obj {
	char source[S3D_TIER_HEX + 1];
	char object[S3D_TIER_HEX + 1];
	char etag[S3D_ETAG_MAX + 1];
	uint64_t size;
	uint32_t block;
};

int s3d_tier_obj_init(struct s3d_tier_obj *o, const char *endpoint,
		      const char *bucket, const char *key, const char *etag,
		      uint64_t size, uint32_t block);
int s3d_tier_block_key(const struct s3d_tier_obj *o, uint64_t index,
		       char *out, size_t len);
uint64_t s3d_tier_nblocks(const struct s3d_tier_obj *o);
void s3d_tier_block_span(const struct s3d_tier_obj *o, uint64_t index,
			 uint64_t *off, uint64_t *len);
bool s3d_tier_whole_blocks_of(const struct s3d_tier_obj *o, uint64_t start,
			      uint64_t end, uint64_t *first, uint64_t *last);
bool s3d_tier_blocks_of(const struct s3d_tier_obj *o, uint64_t start,
			uint64_t end, uint64_t *first, uint64_t *last);

/* Metadata fields, in the order they are signed (x-amz-meta-s3cfs-*). */
enum s3d_tier_field {
	S3D_TF_FORMAT,
	S3D_TF_SOURCE,
	S3D_TF_OBJECT,
	S3D_TF_ETAG,
	S3D_TF_SIZE,
	S3D_TF_OFFSET,
	S3D_TF_LENGTH,
	S3D_TF_SHA256,
	S3D_TF_HMAC,
	S3D_TF_NR,
};

#define S3D_TIER_META_VAL	(S3D_ETAG_MAX + 1)

/* A block's metadata, as strings (what is sent, or what came back). */
struct s3d_tier_meta {
	char v[S3D_TF_NR][S3D_TIER_META_VAL];
};

extern const char *const s3d_tier_field_hdr[S3D_TF_NR];

void s3d_tier_sha256_hex(const void *p, size_t n, char hex[S3D_TIER_HEX + 1]);
int s3d_tier_meta_build(const struct s3d_tier_obj *o, uint64_t index,
			const char sha[S3D_TIER_HEX + 1], const void *secret,
			size_t secret_len, struct s3d_tier_meta *m);
size_t s3d_tier_meta_kv(const struct s3d_tier_meta *m, struct s3d_kv *kv);
void s3d_tier_meta_parse(const char *hdrs, size_t len,
			 struct s3d_tier_meta *m);

/* Why a block from the tier was not used (invalid_total{reason}). */
enum s3d_tier_bad {
	S3D_TIER_OK,
	S3D_TIER_BAD_STATUS,	/* not a 200 (a 206 included) */
	S3D_TIER_BAD_LENGTH,	/* body or Content-Length not the block's */
	S3D_TIER_BAD_FORMAT,
	S3D_TIER_BAD_SOURCE,
	S3D_TIER_BAD_OBJECT,
	S3D_TIER_BAD_ETAG,
	S3D_TIER_BAD_SIZE,
	S3D_TIER_BAD_OFFSET,
	S3D_TIER_BAD_META_LENGTH,
	S3D_TIER_BAD_HMAC,	/* tier_secret set: missing or wrong */
	S3D_TIER_BAD_CHECKSUM,	/* the body's SHA-256 is not the stored one */
	S3D_TIER_BAD_NR,
};

const char *s3d_tier_bad_name(enum s3d_tier_bad b);
enum s3d_tier_bad s3d_tier_check(const struct s3d_tier_obj *o,
				 uint64_t index, long status,
				 int64_t content_length,
				 const struct s3d_tier_meta *got,
				 const void *body, size_t n,
				 const void *secret, size_t secret_len);

/*
 * The breaker: after @threshold failures in a row it opens (everything
 * goes to origin); once @until_ms is past, one probe may go (half open):
 * its success closes it, its failure opens it again for twice as long.
 */
enum s3d_tier_bstate {
	S3D_TIER_CLOSED,
	S3D_TIER_OPEN,
	S3D_TIER_HALF_OPEN,
};

#define S3D_TIER_BACKOFF_MIN_MS	1000U
#define S3D_TIER_BACKOFF_MAX_MS	60000U

struct s3d_tier_breaker {
	enum s3d_tier_bstate state;
	unsigned int threshold;
	unsigned int fails;
	uint64_t until_ms;
	uint64_t backoff_ms;
};

void s3d_tier_breaker_init(struct s3d_tier_breaker *b, unsigned int threshold);
bool s3d_tier_breaker_allow(struct s3d_tier_breaker *b, uint64_t now_ms);
bool s3d_tier_breaker_ok(struct s3d_tier_breaker *b);
bool s3d_tier_breaker_fail(struct s3d_tier_breaker *b, uint64_t now_ms);

/*
 * Leases: cross-node single flight. One small object per stripe of an
 * object version, S3D_TIER_STRIPE bytes (one block where blocks are
 * larger), named beside its blocks:
 *
 *   s3cachefs/v1/<source:16>/<object:64>/<block KiB>k/lease/<stripe>
 *
 * Its metadata says which blocks its holder fetches from origin
 * ("FIRST-LAST", whole blocks only) and who that is (host and pid, for
 * people). Its body is the holder and 16 random bytes, so that its ETag
 * names this one write: a takeover (If-Match the ETag seen) can replace
 * only the lease it saw, never one another node has just taken.
 */
#define S3D_TIER_STRIPE		(8U << 20)
#define S3D_TIER_LEASE_BLOCKS	"x-amz-meta-s3cfs-lease-blocks"
#define S3D_TIER_LEASE_HOLDER	"x-amz-meta-s3cfs-lease-holder"
/* A waiting node polls for a block after this long, doubling to MAX. */
#define S3D_TIER_POLL_MIN_MS	25U
#define S3D_TIER_POLL_MAX_MS	400U
/* HEADs of one stripe's lease at most (it changes hands meanwhile). */
#define S3D_TIER_LEASE_LOOKS	3U
/* A lease's body at most: its holder, 16 random bytes in hex. */
#define S3D_TIER_LEASE_BODY	160U

uint64_t s3d_tier_stripe_of(const struct s3d_tier_obj *o, uint64_t index);
bool s3d_tier_stripe_blocks(const struct s3d_tier_obj *o, uint64_t stripe,
			    uint64_t *first, uint64_t *last);
int s3d_tier_lease_key(const struct s3d_tier_obj *o, uint64_t stripe,
		       char *out, size_t len);
int s3d_tier_lease_range(const char *v, uint64_t *first, uint64_t *last);
void s3d_tier_lease_blocks(const struct s3d_tier_obj *o, uint64_t stripe,
			   const char *v, uint64_t *first, uint64_t *last);

/* What became of a FETCH's lease (leases_total{outcome}). */
enum s3d_tier_lease_out {
	S3D_TIER_LEASE_WON,		/* created: this node fetches */
	S3D_TIER_LEASE_TAKEN_OVER,	/* stale by the tier's clock: taken */
	S3D_TIER_LEASE_OWN,		/* this node's already */
	S3D_TIER_LEASE_LOST_TIER,	/* another's: its blocks came */
	S3D_TIER_LEASE_LOST_ORIGIN,	/* another's: waited, then origin */
	S3D_TIER_LEASE_FAILED,		/* the lease request failed: origin */
	S3D_TIER_LEASE_UNSUPPORTED,	/* the tier ignores If-None-Match */
	S3D_TIER_LEASE_CLAIM_LOST,	/* a later stripe claimed: another's */
	S3D_TIER_LEASE_NR,
};

extern const char *const s3d_tier_lease_name[S3D_TIER_LEASE_NR];

/* What a FETCH knows of a stripe's lease before asking the tier. */
enum s3d_tier_lease_mode {
	S3D_TIER_LM_ON,			/* leases in use: ask */
	S3D_TIER_LM_OFF,		/* not now (configured off, breaker,
					 * puts paused, no probe answer) */
	S3D_TIER_LM_UNSUPPORTED,	/* the probe said the tier ignores it */
	S3D_TIER_LM_OWN,		/* this node holds it */
	S3D_TIER_LM_WAITED,		/* this node waited it out already */
};

/* What tierlease.c does next for a FETCH's lease. */
enum s3d_tier_lease_act {
	S3D_TIER_LA_CREATE,	/* PUT the lease, If-None-Match: * */
	S3D_TIER_LA_LOOK,	/* HEAD it: whose, how old, which blocks */
	S3D_TIER_LA_TAKE,	/* PUT it, If-Match its ETag: it is stale */
	S3D_TIER_LA_POLL,	/* GET the block again after the delay */
	S3D_TIER_LA_ORIGIN,	/* the tier's part ends: origin sends the rest */
};

enum s3d_tier_lease_state {
	S3D_TIER_LS_NONE,	/* no lease asked for */
	S3D_TIER_LS_CREATE,	/* its create is out */
	S3D_TIER_LS_LOOK,	/* its HEAD is out */
	S3D_TIER_LS_TAKE,	/* its takeover is out */
	S3D_TIER_LS_HELD,	/* ours: origin sends the rest */
	S3D_TIER_LS_WAIT,	/* another node's: its blocks are polled for */
	S3D_TIER_LS_DONE,	/* none: origin sends the rest */
};

/**
 * struct s3d_tier_lease_seen - a lease as a HEAD found it
 * @status: the HEAD's HTTP status; 0: no answer
 * @date: the tier's clock (Date), seconds since the epoch; 0: not said
 * @modified: when the lease was written (Last-Modified); 0: not said
 * @first: the first block its holder fetches
 * @last: the last one (the stripe's, where the lease does not say)
 */
struct s3d_tier_lease_seen {
	long status;
	int64_t date;
	int64_t modified;
	uint64_t first, last;
};

/**
 * struct s3d_tier_lease - one FETCH's lease, stripe by stripe
 * @state: enum s3d_tier_lease_state
 * @stripe: the stripe it is about
 * @first: WAIT: the first block the holder fetches
 * @last: WAIT: its last one
 * @looks: HEADs of this stripe's lease
 * @wait_ms: the FETCH may spend this long in all on other nodes' leases,
 *	their requests and polls (tier_lease_wait_ms)
 * @waited_ms: time spent so far, not counting a wait under way
 * @waiting: a lease request or a wait is under way ...
 * @since_ms: ... since then
 * @poll_ms: the next poll's delay
 * @ttl_s: a lease this old by the tier's clock is stale (tier_lease_ttl)
 * @gave_up: the last wait ended without the blocks (remember the lease)
 * @count: outcomes are counted there, [S3D_TIER_LEASE_NR]
 */
struct s3d_tier_lease {
	enum s3d_tier_lease_state state;
	uint64_t stripe;
	uint64_t first, last;
	unsigned int looks;
	uint32_t wait_ms;
	uint64_t waited_ms;
	bool waiting;
	uint64_t since_ms;
	uint32_t poll_ms;
	unsigned int ttl_s;
	bool gave_up;
	uint64_t *count;
};

void s3d_tier_lease_init(struct s3d_tier_lease *l, uint32_t wait_ms,
			 unsigned int ttl_s, uint64_t *count);
bool s3d_tier_lease_stale(const struct s3d_tier_lease_seen *s,
			  unsigned int ttl_s);
enum s3d_tier_lease_act s3d_tier_lease_miss(struct s3d_tier_lease *l,
					    uint64_t stripe, uint64_t index,
					    enum s3d_tier_lease_mode mode,
					    uint64_t now_ms,
					    uint32_t *delay_ms);
enum s3d_tier_lease_act s3d_tier_lease_created(struct s3d_tier_lease *l,
					       long status, uint64_t now_ms);
enum s3d_tier_lease_act s3d_tier_lease_looked(struct s3d_tier_lease *l,
					      const struct s3d_tier_lease_seen *s,
					      uint64_t index, uint64_t now_ms,
					      uint32_t *delay_ms);
enum s3d_tier_lease_act s3d_tier_lease_taken(struct s3d_tier_lease *l,
					     long status, uint64_t now_ms);
void s3d_tier_lease_served(struct s3d_tier_lease *l, uint64_t now_ms);
void s3d_tier_lease_end(struct s3d_tier_lease *l, bool whole,
			uint64_t now_ms);

/* Why a tier request failed (errors_total{reason}). */
enum s3d_tier_err {
	S3D_TIER_ERR_CONNECT,	/* refused, unreachable, no name */
	S3D_TIER_ERR_TIMEOUT,	/* connect or first byte or stall */
	S3D_TIER_ERR_SERVER,	/* 5xx, 429 */
	S3D_TIER_ERR_AUTH,	/* 401, 403: the tier is switched off */
	S3D_TIER_ERR_OTHER,	/* another status, a transport error */
	S3D_TIER_ERR_NR,
};

/* What became of a block to put (puts_total{outcome}). */
enum s3d_tier_put {
	S3D_TIER_PUT_STORED,	/* created */
	S3D_TIER_PUT_EXISTS,	/* 412: another node was first */
	S3D_TIER_PUT_HEALED,	/* replaced an invalid block */
	S3D_TIER_PUT_DROPPED,	/* queue full, or changed in the cache file */
	S3D_TIER_PUT_FAILED,	/* the PUT failed */
	S3D_TIER_PUT_NR,
};

extern const char *const s3d_tier_err_name[S3D_TIER_ERR_NR];
extern const char *const s3d_tier_put_name[S3D_TIER_PUT_NR];

/**
 * struct s3d_tier_stats - the tier's counters (metrics.c shows them)
 * @on: 1 while a tier is configured and not switched off
 * @hits: blocks read from the tier and used
 * @hit_bytes: their bytes
 * @misses: blocks the tier did not have (404)
 * @skipped: FETCHes sent to origin without asking (breaker open)
 * @invalid: blocks refused, by reason
 * @errors: failed tier requests, by reason
 * @puts: blocks to put, by outcome
 * @breaker: enum s3d_tier_bstate now
 * @breaker_opens: times it opened
 * @queued: blocks waiting to be put now
 * @puts_paused: 1 while puts wait because the tier said it is full
 * @leases: FETCHes' leases, by outcome
 * @lease_polls: tier GETs of a block another node's lease promised
 * @lease_support: what the probe said of conditional PUTs: 0 not known
 *	(no leases yet), 1 honoured (leases on), 2 ignored (no leases)
 * @req: the tier's S3 requests (the engine counts them here, not with
 *	the origin's)
 */
struct s3d_tier_stats {
	uint64_t on;
	uint64_t hits;
	uint64_t hit_bytes;
	uint64_t misses;
	uint64_t skipped;
	uint64_t invalid[S3D_TIER_BAD_NR];
	uint64_t errors[S3D_TIER_ERR_NR];
	uint64_t puts[S3D_TIER_PUT_NR];
	uint64_t breaker;
	uint64_t breaker_opens;
	uint64_t queued;
	uint64_t puts_paused;
	uint64_t leases[S3D_TIER_LEASE_NR];
	uint64_t lease_polls;
	uint64_t lease_support;
	struct s3d_stats req;
};

extern struct s3d_tier_stats s3d_tier_stats;

#endif /* S3D_TIERBLK_H */
