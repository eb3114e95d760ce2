lib/creds.o: lib/creds.c lib/base.h lib/creds.h lib/creds_int.h \
 lib/util.h lib/log.h
lib/base.h:
lib/creds.h:
lib/creds_int.h:
lib/util.h:
lib/log.h:
