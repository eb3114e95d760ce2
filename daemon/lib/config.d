lib/config.o: lib/config.c lib/base.h lib/config.h lib/retry.h lib/s3.h \
 lib/creds.h lib/util.h lib/log.h lib/path.h lib/xfer.h lib/loop.h
lib/base.h:
lib/config.h:
lib/retry.h:
lib/s3.h:
lib/creds.h:
lib/util.h:
lib/log.h:
lib/path.h:
lib/xfer.h:
lib/loop.h:
