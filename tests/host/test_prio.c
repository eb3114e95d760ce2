// SPDX-License-Identifier: GPL-2.0
/*
 * The start order of waiting transfers (prio.c): metadata, then chunks a
 * reader is blocked on, then readahead; FIFO within a class, retries first
 * in theirs; a class passed over S3D_PRIO_PASS times goes next, so
 * readahead is never starved.
 */
#include <stdlib.h>
#include <string.h>

#include "lib/base.h"
#include "lib/prio.h"
#include "tap.h"

struct item {
	struct s3d_list node;
	int prio;
	int id;
};

static struct item items[1000];

static struct item *pop(struct s3d_pq *pq)
{
	int prio = -1;
	struct s3d_list *n = s3d_pq_pop(pq, &prio);
	struct item *it;

	if (!n)
		return NULL;
	it = s3d_container_of(n, struct item, node);
	if (prio != it->prio)
		diag("popped from the wrong class");
	return it;
}

static void add(struct s3d_pq *pq, int id, int prio, bool front)
{
	items[id].id = id;
	items[id].prio = prio;
	s3d_list_init(&items[id].node);
	s3d_pq_add(pq, &items[id].node, prio, front);
}

static void test_order(void)
{
	struct s3d_pq pq;
	struct item *it;
	char got[64] = "";
	int i;

	s3d_pq_init(&pq);
	ok(s3d_pq_empty(&pq) && !s3d_pq_pop(&pq, NULL), "order: empty queue pops nothing");
	/* Submitted: async 0 1 2, sync 3 4, meta 5, async 6, meta 7. */
	add(&pq, 0, S3D_PRIO_ASYNC, false);
	add(&pq, 1, S3D_PRIO_ASYNC, false);
	add(&pq, 2, S3D_PRIO_ASYNC, false);
	add(&pq, 3, S3D_PRIO_SYNC, false);
	add(&pq, 4, S3D_PRIO_SYNC, false);
	add(&pq, 5, S3D_PRIO_META, false);
	add(&pq, 6, S3D_PRIO_ASYNC, false);
	add(&pq, 7, S3D_PRIO_META, false);
	is_int(s3d_pq_count(&pq, -1), 8, "order: 8 queued");
	is_int(s3d_pq_count(&pq, S3D_PRIO_ASYNC), 4, "order: 4 of them async");
	while ((it = pop(&pq)))
		snprintf(got + strlen(got), sizeof(got) - strlen(got), "%d", it->id);
	is_str(got, "57340126", "order: meta, sync, async; FIFO within each");
	ok(s3d_pq_empty(&pq), "order: empty after popping all");

	/* A retry goes first in its class, not before a more urgent one. */
	add(&pq, 0, S3D_PRIO_SYNC, false);
	add(&pq, 1, S3D_PRIO_META, false);
	add(&pq, 2, S3D_PRIO_SYNC, true);
	got[0] = '\0';
	while ((it = pop(&pq)))
		snprintf(got + strlen(got), sizeof(got) - strlen(got), "%d", it->id);
	is_str(got, "120", "order: a retry is first of its class");

	/* Out-of-range classes count as sync. */
	add(&pq, 0, S3D_PRIO_ASYNC, false);
	add(&pq, 1, 42, false);
	is_int(s3d_pq_count(&pq, S3D_PRIO_SYNC), 1, "order: an unknown class counts as sync");
	s3d_pq_del(&pq, &items[1].node, 42);
	s3d_pq_del(&pq, &items[0].node, S3D_PRIO_ASYNC);
	ok(s3d_pq_empty(&pq), "order: del takes them out");
	for (i = 0; i < S3D_PRIO_NR; i++)
		ok(strcmp(s3d_prio_name(i), "?"), "order: class %d has a name (%s)", i,
		   s3d_prio_name(i));
}

/* Readahead under a steady stream of blocked reads still gets its share. */
static void test_starvation(void)
{
	struct s3d_pq pq;
	struct item *it;
	int i, next = 0, async_started = 0, first_async = -1, sync_started = 0;

	s3d_pq_init(&pq);
	for (i = 0; i < 100; i++)
		add(&pq, next++, S3D_PRIO_ASYNC, false);
	/* 450 starts; before each, a new sync read arrives (the queue never
	 * runs out of sync work). */
	for (i = 0; i < 450; i++) {
		add(&pq, next++, S3D_PRIO_SYNC, false);
		it = pop(&pq);
		if (it->prio == S3D_PRIO_ASYNC) {
			if (first_async < 0)
				first_async = i;
			async_started++;
		} else {
			sync_started++;
		}
	}
	is_int(first_async, S3D_PRIO_PASS, "starvation: the first readahead starts after %d sync starts",
	       S3D_PRIO_PASS);
	is_int(async_started, 450 / (S3D_PRIO_PASS + 1),
	       "starvation: readahead gets one start in %d", S3D_PRIO_PASS + 1);
	ok(sync_started >= 450 * S3D_PRIO_PASS / (S3D_PRIO_PASS + 1),
	   "starvation: blocked reads get the rest (%d of 450)", sync_started);

	/* With no more sync work, readahead drains in FIFO order. */
	while ((it = pop(&pq)) && it->prio == S3D_PRIO_SYNC)
		;
	ok(it && it->prio == S3D_PRIO_ASYNC && it->id == async_started,
	   "starvation: readahead resumes where it left off (id %d)", it ? it->id : -1);

	/* A class that emptied starts counting afresh. */
	s3d_pq_init(&pq);
	for (i = 0; i < 20; i++)
		add(&pq, i, S3D_PRIO_META, false);
	add(&pq, 20, S3D_PRIO_ASYNC, false);
	for (i = 0; i < 3; i++)
		pop(&pq);
	s3d_pq_del(&pq, &items[20].node, S3D_PRIO_ASYNC);
	add(&pq, 21, S3D_PRIO_ASYNC, false);
	for (i = 0; i < S3D_PRIO_PASS - 1; i++)
		is_int(pop(&pq)->prio, S3D_PRIO_META, "starvation: meta start %d after readahead re-queued", i);
	it = pop(&pq);
	is_int(it->prio, S3D_PRIO_META, "starvation: the re-queued readahead waits its %d starts afresh",
	       S3D_PRIO_PASS);
	is_int(pop(&pq)->prio, S3D_PRIO_ASYNC, "starvation: then it goes");

	/* Sync and async both passed over by metadata: each gets its turn. */
	s3d_pq_init(&pq);
	for (i = 0; i < 200; i++)
		add(&pq, i, S3D_PRIO_META, false);
	add(&pq, 200, S3D_PRIO_SYNC, false);
	add(&pq, 201, S3D_PRIO_ASYNC, false);
	for (i = 0; i < 30; i++) {
		it = pop(&pq);
		if (it->id >= 200)
			break;
	}
	ok(it->id == 201 && i == S3D_PRIO_PASS,
	   "starvation: under metadata, the lowest passed-over class goes first (got %d after %d)",
	   it->id, i);
	for (i = 0; i < 30; i++) {
		it = pop(&pq);
		if (it->id >= 200)
			break;
	}
	ok(it->id == 200 && i < S3D_PRIO_PASS,
	   "starvation: then the sync one (after %d more)", i);
}

int main(void)
{
	test_order();
	test_starvation();
	return tap_done();
}
