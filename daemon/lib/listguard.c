// SPDX-License-Identifier: GPL-2.0
/*
 * The pages of one ListObjectsV2 listing, checked together. S3 returns a
 * listing's entries (keys and common prefixes) in ascending byte order
 * (UTF-8 binary) across its pages, and each NextContinuationToken leads
 * further on; so a page whose entries are all at or before the entries of
 * the pages before it, a token seen before in the same listing, a long
 * run of empty truncated pages or more pages than the bound all mean the
 * listing will not end: it fails (the caller logs why), bounded.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "listguard.h"
#include "util.h"
#include "xml.h"

/**
 * s3d_list_guard_init() - start the checks of one listing
 * @g: the guard (free with s3d_list_guard_free())
 * @max_pages: pages at most; 0: S3D_LIST_PAGES_DEFAULT
 */
void s3d_list_guard_init(struct s3d_list_guard *g, unsigned int max_pages)
{
	memset(g, 0, sizeof(*g));
	g->max_pages = max_pages ?: S3D_LIST_PAGES_DEFAULT;
}

void s3d_list_guard_free(struct s3d_list_guard *g)
{
	free(g->last);
	free(g->tokens);
	memset(g, 0, sizeof(*g));
}

/* The token's hash, never 0 (a free slot). */
static uint64_t token_hash(const char *token)
{
	return s3d_hash_str(token) | 1;
}

/* Add @h; false if it was there already. -ENOMEM as *err. */
static bool token_add(struct s3d_list_guard *g, uint64_t h, int *err)
{
	size_t i;

	if (2 * (g->ntokens + 1) > g->cap) {
		size_t cap = g->cap ? 2 * g->cap : 64, j;
		uint64_t *t = calloc(cap, sizeof(*t));

		if (!t) {
			*err = -ENOMEM;
			return true;
		}
		for (j = 0; j < g->cap; j++) {
			if (!g->tokens[j])
				continue;
			for (i = g->tokens[j] & (cap - 1); t[i];
			     i = (i + 1) & (cap - 1))
				;
			t[i] = g->tokens[j];
		}
		free(g->tokens);
		g->tokens = t;
		g->cap = cap;
	}
	for (i = h & (g->cap - 1); g->tokens[i]; i = (i + 1) & (g->cap - 1))
		if (g->tokens[i] == h)
			return false;
	g->tokens[i] = h;
	g->ntokens++;
	return true;
}

/* The page's greatest entry, or NULL if it has none. */
static const char *page_max(const struct s3d_list_page *pg)
{
	const char *m = NULL;
	size_t i;

	for (i = 0; i < pg->nobjs; i++)
		if (!m || strcmp(pg->objs[i].key, m) > 0)
			m = pg->objs[i].key;
	for (i = 0; i < pg->nprefixes; i++)
		if (!m || strcmp(pg->prefixes[i], m) > 0)
			m = pg->prefixes[i];
	return m;
}

/**
 * s3d_list_guard_page() - check the next page of the listing
 * @g: the listing's guard
 * @pg: the page, parsed (s3d_xml_parse_list() said 0)
 * @why: on failure, why, for the log (entries escaped)
 * @whylen: its size
 *
 * Return: 0 (go on), -EINVAL (the listing does not move on: a repeated
 * continuation token, a page that goes back, too many empty pages in a
 * row), -EFBIG (more than @g->max_pages pages), -ENOMEM.
 */
int s3d_list_guard_page(struct s3d_list_guard *g,
			const struct s3d_list_page *pg, char *why,
			size_t whylen)
{
	const char *m = page_max(pg);
	char a[128], b[128];
	int err = 0;

	g->pages++;
	if (pg->truncated && !token_add(g, token_hash(pg->next_token), &err)) {
		snprintf(why, whylen, "page %u repeats a continuation token", g->pages);
		return -EINVAL;
	}
	if (err) {
		snprintf(why, whylen, "out of memory");
		return err;
	}
	if (m && g->last && strcmp(m, g->last) <= 0) {
		s3d_escape(m, a, sizeof(a));
		s3d_escape(g->last, b, sizeof(b));
		snprintf(why, whylen, "page %u goes back: its last entry '%s' is not after '%s'",
			 g->pages, a, b);
		return -EINVAL;
	}
	if (m) {
		char *c = strdup(m);

		if (!c) {
			snprintf(why, whylen, "out of memory");
			return -ENOMEM;
		}
		free(g->last);
		g->last = c;
		g->empty_run = 0;
	}
	if (!pg->truncated)
		return 0;
	if (!m && ++g->empty_run >= S3D_LIST_EMPTY_MAX) {
		snprintf(why, whylen, "%u truncated pages in a row without an entry",
			 g->empty_run);
		return -EINVAL;
	}
	if (g->pages >= g->max_pages) {
		snprintf(why, whylen, "more than %u pages (list_max_pages)",
			 g->max_pages);
		return -EFBIG;
	}
	return 0;
}
