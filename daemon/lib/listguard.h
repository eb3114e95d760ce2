/* SPDX-License-Identifier: GPL-2.0 */
/*
 * listguard.c: what the pages of one listing must do together: move on.
 * A server that repeats a continuation token, sends pages that do not
 * advance through the key space, empty pages without end, or more pages
 * than a directory can sensibly hold, ends the listing with an error
 * instead of holding it (and the daemon) for ever.
 */
#ifndef S3D_LISTGUARD_H
#define S3D_LISTGUARD_H

#include <stddef.h>
#include <stdint.h>

#include "xml.h"

/* Pages of one listing at most (1000 entries each): list_max_pages. */
#define S3D_LIST_PAGES_DEFAULT	100000
#define S3D_LIST_PAGES_MAX	1000000
/* Truncated pages with no usable entry in a row at most. */
#define S3D_LIST_EMPTY_MAX	100

/**
 * struct s3d_list_guard - the pages of one listing so far
 * @max_pages: the bound on pages
 * @pages: pages checked
 * @empty_run: truncated pages in a row without a usable entry
 * @last: the greatest key or common prefix so far (byte order), or NULL
 * @tokens: hashes of the continuation tokens received (open addressing;
 *	0 marks a free slot)
 * @ntokens: how many
 * @cap: slots in @tokens (a power of two, or 0)
 */
struct s3d_list_guard {
	unsigned int max_pages;
	unsigned int pages;
	unsigned int empty_run;
	char *last;
	uint64_t *tokens;
	size_t ntokens;
	size_t cap;
};

void s3d_list_guard_init(struct s3d_list_guard *g, unsigned int max_pages);
int s3d_list_guard_page(struct s3d_list_guard *g,
			const struct s3d_list_page *pg, char *why,
			size_t whylen);
void s3d_list_guard_free(struct s3d_list_guard *g);

#endif /* S3D_LISTGUARD_H */
