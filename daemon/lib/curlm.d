lib/curlm.o: lib/curlm.c lib/base.h lib/curlm.h lib/loop.h lib/log.h
lib/base.h:
lib/curlm.h:
lib/loop.h:
lib/log.h:
