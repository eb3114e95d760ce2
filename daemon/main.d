main.o: main.c ctx.h lib/config.h lib/retry.h lib/s3.h lib/creds.h \
 lib/util.h lib/s3.h lib/xfer.h lib/base.h lib/loop.h evict.h lib/base.h \
 lib/log.h lib/loop.h lib/retry.h lib/util.h metrics.h netlink.h req.h \
 ops.h selftest.h ../uapi/s3cachefs.h
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
evict.h:
lib/base.h:
lib/log.h:
lib/loop.h:
lib/retry.h:
lib/util.h:
metrics.h:
netlink.h:
req.h:
ops.h:
selftest.h:
../uapi/s3cachefs.h:
