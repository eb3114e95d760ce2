/* SPDX-License-Identifier: GPL-2.0 */
/*
 * loop.c: the event loop. One epoll set holds every descriptor the process
 * waits on; timers sit on a list sorted by due time whose head bounds the
 * wait. Single threaded: every callback runs on the loop.
 */
#ifndef S3D_LOOP_H
#define S3D_LOOP_H

#include <stdbool.h>
#include <stdint.h>

#include "base.h"

struct s3d_timer {
	struct s3d_list node;
	uint64_t due_ms;
	bool armed;
	void (*fn)(struct s3d_timer *t);
};

struct s3d_watch {
	int fd;
	bool dead;
	void (*cb)(struct s3d_watch *w, uint32_t events);
	struct s3d_list node;	/* on the dead list until freed */
};

int s3d_loop_open(void);
void s3d_loop_close(void);
void s3d_loop_set_turn(void (*fn)(void));
int s3d_loop_watch(struct s3d_watch *w, int fd, uint32_t events,
		   void (*cb)(struct s3d_watch *w, uint32_t events));
void s3d_loop_unwatch(struct s3d_watch *w);
int s3d_loop_modify(struct s3d_watch *w, uint32_t events);
void s3d_loop_unwatch_free(struct s3d_watch *w);
int s3d_loop_run(bool (*until)(void *arg), void *arg);
void s3d_loop_stop(void);
void s3d_timer_arm(struct s3d_timer *t, uint64_t delay_ms);
void s3d_timer_cancel(struct s3d_timer *t);

#endif /* S3D_LOOP_H */
