lib/prio.o: lib/prio.c lib/base.h lib/prio.h
lib/base.h:
lib/prio.h:
