/* SPDX-License-Identifier: GPL-2.0 */
/*
 * s3cachefs tracepoints: the life of an upcall request, by id.
 *   echo 1 > /sys/kernel/tracing/events/s3cachefs/enable
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM s3cachefs

#if !defined(_S3CFS_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _S3CFS_TRACE_H

#include <linux/tracepoint.h>

DECLARE_EVENT_CLASS(s3cfs_req_class,
	TP_PROTO(u64 id, u32 mount_id, u8 cmd, u64 offset, u64 length,
		 int status),
	TP_ARGS(id, mount_id, cmd, offset, length, status),
	TP_STRUCT__entry(
		__field(u64, id)
		__field(u32, mount_id)
		__field(u8, cmd)
		__field(u64, offset)
		__field(u64, length)
		__field(int, status)
	),
	TP_fast_assign(
		__entry->id = id;
		__entry->mount_id = mount_id;
		__entry->cmd = cmd;
		__entry->offset = offset;
		__entry->length = length;
		__entry->status = status;
	),
	TP_printk("req=%llu mount=%u cmd=%u off=%llu len=%llu status=%d",
		  __entry->id, __entry->mount_id, __entry->cmd,
		  __entry->offset, __entry->length, __entry->status)
);

#define S3CFS_REQ_EVENT(name)						\
DEFINE_EVENT(s3cfs_req_class, name,					\
	TP_PROTO(u64 id, u32 mount_id, u8 cmd, u64 offset, u64 length,	\
		 int status),						\
	TP_ARGS(id, mount_id, cmd, offset, length, status))

S3CFS_REQ_EVENT(s3cfs_req_queue);
S3CFS_REQ_EVENT(s3cfs_req_send);
S3CFS_REQ_EVENT(s3cfs_req_done);
S3CFS_REQ_EVENT(s3cfs_req_timeout);
S3CFS_REQ_EVENT(s3cfs_req_flush);
S3CFS_REQ_EVENT(s3cfs_req_cancel);

#endif /* _S3CFS_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace
#include <trace/define_trace.h>
