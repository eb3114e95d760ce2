lib/log.o: lib/log.c lib/log.h lib/util.h
lib/log.h:
lib/util.h:
