lib/creds_http.o: lib/creds_http.c lib/base.h lib/creds.h lib/creds_int.h \
 lib/util.h
lib/base.h:
lib/creds.h:
lib/creds_int.h:
lib/util.h:
