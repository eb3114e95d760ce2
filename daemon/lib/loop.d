lib/loop.o: lib/loop.c lib/base.h lib/log.h lib/loop.h lib/util.h
lib/base.h:
lib/log.h:
lib/loop.h:
lib/util.h:
