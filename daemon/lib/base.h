/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What every file of the S3 client and the daemon uses: small macros and
 * an intrusive doubly linked list.
 */
#ifndef S3D_BASE_H
#define S3D_BASE_H

#include <stdbool.h>
#include <stddef.h>

/* The project's one version (../VERSION), passed by the Makefiles. */
#ifndef S3D_VERSION
#error "S3D_VERSION is not defined: build with daemon/Makefile (it reads VERSION)"
#endif

#define S3D_ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define S3D_MIN(a, b)		((a) < (b) ? (a) : (b))
#define S3D_MAX(a, b)		((a) > (b) ? (a) : (b))
#define s3d_container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))

/* An intrusive doubly linked list; a head is a node of its own. */
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

#endif /* S3D_BASE_H */
