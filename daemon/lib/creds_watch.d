lib/creds_watch.o: lib/creds_watch.c lib/base.h lib/creds.h \
 lib/creds_int.h lib/util.h lib/curlm.h lib/loop.h lib/log.h
lib/base.h:
lib/creds.h:
lib/creds_int.h:
lib/util.h:
lib/curlm.h:
lib/loop.h:
lib/log.h:
