/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tierlease.c: the fleet tier's leases (one node fetches a stripe from
 * origin, the others wait for its blocks), their requests and this node's
 * memory of them. Private to the tier: tier.c is its one caller, and it
 * reaches tier.c back only through the hooks it is given
 * (tests/host/layering.py checks both). The leases' names and state
 * machine are tierblk.c's.
 */
#ifndef S3D_TIERLEASE_H
#define S3D_TIERLEASE_H

#include <stdbool.h>
#include <stdint.h>

#include "ctx.h"
#include "lib/config.h"
#include "lib/xfer.h"
#include "tierfetch.h"

/**
 * struct s3d_tierlease_hooks - how the leases reach the rest of the tier
 * @usable: the tier is configured and not switched off
 * @closed: the breaker is closed
 * @puts_paused: puts wait for a full tier (a pause over is ended)
 * @setup: make @x a tier request: one attempt, the short timeouts, the
 *	tier's counters, class @prio
 * @status: a lease request's answer: its HTTP status, or 0 when it got
 *	none that counts (the failure told the breaker, or a full tier
 *	paused the puts)
 * @read_next: the FETCH asks the tier for block t->next (a poll)
 * @read_end: the tier's part of the FETCH ends: origin sends the rest
 * @written: a claim was answered: the FETCH's written blocks of that
 *	stripe may be put now
 */
struct s3d_tierlease_hooks {
	bool (*usable)(void);
	bool (*closed)(void);
	bool (*puts_paused)(void);
	void (*setup)(struct s3d_xfer *x, int prio);
	long (*status)(struct s3d_xfer *x);
	void (*read_next)(struct s3d_tier_fetch *t);
	void (*read_end)(struct s3d_tier_fetch *t);
	void (*written)(struct s3d_tier_fetch *t);
};

/**
 * struct s3d_tierlease_conf - the tier as tier_sync() set it up
 * @hooks: how the leases reach the rest of the tier (kept past a clear:
 *	its parked FETCHes and claims still use them)
 * @gen: the configuration's generation (a probe's answer must match it)
 * @bucket: the tier's bucket (tier.c's, until the next s3d_tierlease_clear())
 * @ctx: its context (likewise)
 * @put: this node puts what origin sends (tier_put)
 * @connect_ms: tier_connect_timeout_ms: the longest wait for the probe
 * @tier: the tier's configuration (tier_lease, tier_lease_wait_ms,
 *	tier_lease_ttl)
 */
struct s3d_tierlease_conf {
	const struct s3d_tierlease_hooks *hooks;
	unsigned int gen;
	const char *bucket;
	struct s3d_ctx *ctx;
	bool put;
	unsigned int connect_ms;
	const struct s3d_conf_tier *tier;
};

/* Whose is the lease of the stripe of a block, as this node knows? */
enum s3d_tierlease_held {
	S3D_TIERLEASE_HELD_NO,		/* another node's, or nobody's */
	S3D_TIERLEASE_HELD_YES,		/* this node's */
	S3D_TIERLEASE_HELD_ASKED,	/* claimed, not answered yet */
};

void s3d_tierlease_clear(void);
void s3d_tierlease_set(const struct s3d_tierlease_conf *c);
void s3d_tierlease_probe(void);
void s3d_tierlease_fetch_init(struct s3d_tier_fetch *t);
void s3d_tierlease_miss(struct s3d_tier_fetch *t);
bool s3d_tierlease_polled(const struct s3d_tier_fetch *t);
void s3d_tierlease_read_end(struct s3d_tier_fetch *t);
enum s3d_tierlease_held s3d_tierlease_held(struct s3d_tier_fetch *t,
					   uint64_t index);
void s3d_tierlease_fetch_end(struct s3d_tier_fetch *t);

#endif /* S3D_TIERLEASE_H */
