// SPDX-License-Identifier: GPL-2.0
/*
 * s3cachefs: test-only delay points.
 *
 * Races the VM tests must make happen on purpose (an eviction landing
 * between an extent scan and its use, say) are widened by a delay at a
 * named point. Off unless a test sets both module parameters:
 * fault_points (a bitmask of enum s3cfs_fault) and fault_delay_ms. Each
 * delay is logged, so that the test can show the interleaving happened.
 */
#include "s3cachefs.h"
#include <linux/moduleparam.h>
#include <linux/delay.h>

static unsigned int fault_points;
module_param(fault_points, uint, 0644);
MODULE_PARM_DESC(fault_points, "Tests only: bitmask of delay points to enable (0)");

static unsigned int fault_delay_ms;
module_param(fault_delay_ms, uint, 0644);
MODULE_PARM_DESC(fault_delay_ms, "Tests only: how long an enabled delay point sleeps (0)");

static const char *const s3cfs_fault_names[S3CFS_FAULT_NR] = {
	[S3CFS_FAULT_EVICT]	= "evict",
};

/**
 * s3cfs_fault_delay() - sleep at @point if a test enabled it
 * @point: the delay point
 */
void s3cfs_fault_delay(enum s3cfs_fault point)
{
	unsigned int ms = READ_ONCE(fault_delay_ms);

	if (!ms || !(READ_ONCE(fault_points) & BIT(point)))
		return;
	pr_info("fault point %s: sleeping %u ms\n", s3cfs_fault_names[point],
		ms);
	msleep(ms);
}
