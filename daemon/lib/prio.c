// SPDX-License-Identifier: GPL-2.0
/*
 * The order in which waiting S3 transfers start: a queue per priority
 * class (enum s3d_prio), FIFO within a class. The engine (xfer.c) and
 * each bucket's admission (the daemon's ctx.c) keep one.
 *
 * Metadata (LOOKUP, LIST, the HEAD of a stale FETCH) goes first: an `ls`
 * or a `stat` must not wait behind hundreds of readahead GETs. Then the
 * chunks readers are blocked on, then readahead and prefetch. Strict
 * order would let a steady stream of reads starve readahead (and a
 * readahead that never starts only times out in the kernel), so a class
 * that is passed over S3D_PRIO_PASS times in a row while it waits gets the
 * next start: readahead keeps at least one start in S3D_PRIO_PASS + 1.
 */
#include "base.h"
#include "prio.h"

static const char *const prio_names[S3D_PRIO_NR] = {
	[S3D_PRIO_META] = "meta",
	[S3D_PRIO_SYNC] = "sync",
	[S3D_PRIO_ASYNC] = "async",
};

const char *s3d_prio_name(int prio)
{
	return prio >= 0 && prio < S3D_PRIO_NR ? prio_names[prio] : "?";
}

void s3d_pq_init(struct s3d_pq *pq)
{
	int c;

	for (c = 0; c < S3D_PRIO_NR; c++) {
		s3d_list_init(&pq->q[c]);
		pq->n[c] = 0;
		pq->passed[c] = 0;
	}
}

static int clamp_prio(int prio)
{
	return prio < 0 || prio >= S3D_PRIO_NR ? S3D_PRIO_SYNC : prio;
}

/**
 * s3d_pq_add() - queue @node in class @prio
 * @pq: the queue
 * @node: not on any list
 * @prio: enum s3d_prio (out of range: S3D_PRIO_SYNC); the owner must pass
 *	the same to s3d_pq_del()
 * @front: first of its class (a retry: older than anything queued)
 */
void s3d_pq_add(struct s3d_pq *pq, struct s3d_list *node, int prio,
		bool front)
{
	prio = clamp_prio(prio);
	if (front)
		s3d_list_add_before(node, pq->q[prio].next);
	else
		s3d_list_add_tail(node, &pq->q[prio]);
	pq->n[prio]++;
}

static void counted_out(struct s3d_pq *pq, int prio)
{
	if (!--pq->n[prio])
		pq->passed[prio] = 0;
}

/* Take @node, queued with @prio, out of @pq. */
void s3d_pq_del(struct s3d_pq *pq, struct s3d_list *node, int prio)
{
	s3d_list_del(node);
	counted_out(pq, clamp_prio(prio));
}

/**
 * s3d_pq_pop() - the node that starts next, out of @pq
 * @pq: the queue
 * @prio: set to its class (may be NULL)
 *
 * Return: the node, or NULL if @pq is empty.
 */
struct s3d_list *s3d_pq_pop(struct s3d_pq *pq, int *prio)
{
	struct s3d_list *node;
	int c, top = -1, pick;

	for (c = 0; c < S3D_PRIO_NR && top < 0; c++)
		if (pq->n[c])
			top = c;
	if (top < 0)
		return NULL;
	pick = top;
	/* A lower class passed over often enough: its turn (lowest first). */
	for (c = S3D_PRIO_NR - 1; c > top; c--) {
		if (pq->n[c] && pq->passed[c] >= S3D_PRIO_PASS) {
			pick = c;
			break;
		}
	}
	for (c = pick + 1; c < S3D_PRIO_NR; c++)
		if (pq->n[c])
			pq->passed[c]++;
	pq->passed[pick] = 0;
	node = pq->q[pick].next;
	s3d_list_del(node);
	counted_out(pq, pick);
	if (prio)
		*prio = pick;
	return node;
}

bool s3d_pq_empty(const struct s3d_pq *pq)
{
	int c;

	for (c = 0; c < S3D_PRIO_NR; c++)
		if (pq->n[c])
			return false;
	return true;
}

/* Nodes queued in class @prio, or in all of them (@prio < 0). */
unsigned int s3d_pq_count(const struct s3d_pq *pq, int prio)
{
	unsigned int n = 0;
	int c;

	if (prio >= 0)
		return prio < S3D_PRIO_NR ? pq->n[prio] : 0;
	for (c = 0; c < S3D_PRIO_NR; c++)
		n += pq->n[c];
	return n;
}
