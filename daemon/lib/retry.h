/* SPDX-License-Identifier: GPL-2.0 */
/*
 * retry.c: the retry policy (pure): back-off with full jitter, a retry
 * budget per S3 context, Retry-After, what counts as throttling and what is
 * worth another attempt.
 */
#ifndef S3D_RETRY_H
#define S3D_RETRY_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

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
bool s3d_retry_transient(long status, const char *code);

#endif /* S3D_RETRY_H */
