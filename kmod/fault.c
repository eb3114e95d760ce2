// SPDX-License-Identifier: GPL-2.0
/*
 * s3cachefs: test-only fault points.
 *
 * Races the VM tests must make happen on purpose (an eviction landing
 * between an open and its extent scan, a daemon dying during a send) are
 * widened by a delay at a named point. Off unless a test names the point in
 * fault_points (a comma-separated list); a point reached then logs "fault
 * point NAME" and sleeps fault_delay_ms (s3cfs_fault()), so that the test
 * can show the interleaving happened. The points:
 *   send            a request's unicast to the daemon has returned
 *   send_port       a request is about to go to the port id the daemon
 *                   had when it was looked up (upcall.c)
 *   ra_work         a readahead worker starts, before its first piece
 *   umount_flushed  unmount: requests flushed, inodes not yet evicted
 *   rd_eagain       an IOCB_NOWAIT lower read fails with -EAGAIN untried
 *   evict           EVICT: chunks forgotten under data_sem, before the punch
 *   evict_noack     EVICT: done, but no ack is sent (as if the daemon's
 *                   receive queue had been full)
 *   local_pin       an open for write holds the cache file's flock and has
 *                   found it still at its name, before it tags it LOCAL
 *                   (local.c)
 *   upq_uploaded    write-back: a queued upload's answer is in, not yet
 *                   applied, no lock of the file held (upqueue.c)
 *   upload_send     an UPLOAD is about to go to the daemon (upload.c); a
 *                   queued one holds wb_sem only
 *   stream_send     a stream's parts are written back, not yet announced
 *                   to the daemon (stream.c)
 *   list_begin      a readdir's LIST has reported or been answered, not
 *                   yet looked at (dir.c): the answer overtakes the report
 */
#include "s3cachefs.h"
#include <linux/moduleparam.h>
#include <linux/delay.h>
#include <linux/string.h>

static char fault_points[64];
module_param_string(fault_points, fault_points, sizeof(fault_points), 0644);
MODULE_PARM_DESC(fault_points, "Tests only: comma-separated fault points to hit (default none)");
static unsigned int fault_delay_ms;
module_param(fault_delay_ms, uint, 0644);
MODULE_PARM_DESC(fault_delay_ms, "Tests only: how long a fault point sleeps, ms (default 0)");

/**
 * s3cfs_fault() - a test-only fault point (process context)
 * @point: its name
 *
 * Return: true if a test turned @point on (it has slept fault_delay_ms).
 */
bool s3cfs_fault(const char *point)
{
	char buf[sizeof(fault_points)];
	size_t n = strlen(point);
	unsigned int ms;
	char *p;

	if (!READ_ONCE(fault_points[0]))
		return false;
	kernel_param_lock(THIS_MODULE);
	strscpy(buf, fault_points, sizeof(buf));
	kernel_param_unlock(THIS_MODULE);
	for (p = buf; (p = strstr(p, point)); p += n)
		if ((p == buf || p[-1] == ',') &&
		    (!p[n] || p[n] == ',' || p[n] == '\n'))
			break;
	if (!p)
		return false;
	ms = READ_ONCE(fault_delay_ms);
	pr_info("fault point %s: %u ms\n", point, ms);
	if (ms) {
		msleep(ms);
		pr_info("fault point %s: done\n", point);
	}
	return true;
}
