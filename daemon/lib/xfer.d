lib/xfer.o: lib/xfer.c lib/base.h lib/curlm.h lib/loop.h lib/log.h \
 lib/prio.h lib/retry.h lib/s3.h lib/creds.h lib/util.h lib/xfer.h \
 lib/xml.h
lib/base.h:
lib/curlm.h:
lib/loop.h:
lib/log.h:
lib/prio.h:
lib/retry.h:
lib/s3.h:
lib/creds.h:
lib/util.h:
lib/xfer.h:
lib/xml.h:
