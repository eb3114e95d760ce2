/* SPDX-License-Identifier: GPL-2.0 */
/*
 * util.c: growable buffers, a string set, clocks, parsers of numbers, sizes
 * and dates, hex, ETag comparison and escaping for logs.
 */
#ifndef S3D_UTIL_H
#define S3D_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

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

/*
 * Hand the heap's free pages back to the kernel (glibc keeps what was
 * freed for later allocations): after a big transient structure is gone.
 */
void s3d_heap_release(void);

void s3d_uri_encode(struct s3d_buf *b, const char *s, size_t n,
		    bool encode_slash);
bool s3d_str_eq(const char *a, const char *b);
int s3d_hexval(char c);
uint64_t s3d_hash_str(const char *s);
uint64_t s3d_now_ms(void);
int s3d_parse_u64(const char *s, uint64_t *out);
int s3d_parse_iso8601(const char *s, time_t *out);
int s3d_parse_size(const char *s, uint64_t *out);
void s3d_hex(const unsigned char *in, size_t n, char *out);
bool s3d_etag_eq(const char *a, const char *b);
bool s3d_etag_ok(const char *etag, size_t n);
void s3d_etag_bare(const char *etag, char *out, size_t n);
void s3d_escape(const char *s, char *out, size_t outlen);
size_t s3d_escape_mem(const char *s, size_t n, char *out, size_t outlen,
		      bool backslash);

#endif /* S3D_UTIL_H */
