evict.o: evict.c evict.h lib/config.h lib/retry.h lib/s3.h lib/creds.h \
 lib/util.h lib/base.h lib/log.h lib/loop.h lib/base.h lib/util.h walk.h \
 ../uapi/s3cachefs.h
evict.h:
lib/config.h:
lib/retry.h:
lib/s3.h:
lib/creds.h:
lib/util.h:
lib/base.h:
lib/log.h:
lib/loop.h:
lib/base.h:
lib/util.h:
walk.h:
../uapi/s3cachefs.h:
