ops.o: ops.c ctx.h lib/config.h lib/retry.h lib/s3.h lib/creds.h \
 lib/util.h lib/s3.h lib/xfer.h lib/base.h lib/loop.h lib/log.h \
 lib/path.h mount.h lib/base.h lib/util.h req.h op_common.h store.h \
 ../uapi/s3cachefs.h ops.h
ctx.h:
lib/config.h:
lib/retry.h:
lib/s3.h:
lib/creds.h:
lib/util.h:
lib/s3.h:
lib/xfer.h:
lib/base.h:
lib/loop.h:
lib/log.h:
lib/path.h:
mount.h:
lib/base.h:
lib/util.h:
req.h:
op_common.h:
store.h:
../uapi/s3cachefs.h:
ops.h:
