# SPDX-License-Identifier: GPL-2.0
# s3cachefs: the kernel module (through Kbuild), the daemon and the tools.
ifneq ($(KBUILD_MODULES)$(KBUILD_EXTMOD),)
include $(src)/Kbuild
else

# Kernels the module is built and tested against (KERNEL= picks one for check).
KDIR_6_1 ?= /lib/modules/$(shell bash tools/kver.sh 6.1)/build
KDIR_6_12 ?= /lib/modules/$(shell bash tools/kver.sh 6.12)/build
# `make` builds against the running kernel's headers, or Debian 12's 6.1
# headers where the running kernel has none (build hosts without modules).
KVER ?= $(shell uname -r)
KDIR ?= $(if $(wildcard /lib/modules/$(KVER)/build),/lib/modules/$(KVER)/build,$(KDIR_6_1))
KDIR_DEBUG ?= $(abspath ../shared/kernel-debug/build)
KERNEL ?= 6.1

.PHONY: all module daemon modules-all clean check check-full check-host check-vm check-peer powercut demo lint bench setup deb lintian

all: module daemon

setup:
	bash tools/setup.sh

# Build against $(KDIR) in the source tree (what DKMS does).
module:
	$(MAKE) -C $(KDIR) M=$(CURDIR) W=1 modules

daemon:
	$(MAKE) -C daemon
	$(MAKE) -C tools/s3cachectl

# Build one copy per kernel under build/<name>/ (sources are copied so the
# builds do not share object files).
build/%/s3cachefs.ko: FORCE
	@kdir="$(KDIR_$(subst .,_,$(subst -,_,$*)))"; \
	[ "$*" = debug ] && kdir="$(KDIR_DEBUG)"; \
	[ -n "$$kdir" ] && [ -d "$$kdir" ] || { echo "no headers for kernel $*" >&2; exit 1; }; \
	mkdir -p build/$*/kmod build/$*/uapi; \
	cp -p Kbuild Makefile VERSION build/$*/; \
	for f in kmod/*.[ch] uapi/*.h; do cmp -s $$f build/$*/$$f || cp -p $$f build/$*/$$f; done; \
	$(MAKE) -C $$kdir M=$(CURDIR)/build/$* W=1 modules

modules-all: build/6.1/s3cachefs.ko build/6.12/s3cachefs.ko

check: daemon
	bash tests/run.sh --kernel $(KERNEL) $(CHECK_ARGS)

# Everything on every kernel, the debug kernel included (what CI leaves out
# of the second kernel's run, and KASAN/lockdep): for kernel work before it
# is called done. Hours under TCG.
FULL_KERNELS ?= 6.1 6.12 debug
check-full: daemon
	@mkdir -p build; fail=0; for k in $(FULL_KERNELS); do \
		{ bash tests/run.sh --kernel $$k $(CHECK_ARGS) 2>&1 || echo failed >build/check-full-$$k.failed; } | \
			tee build/check-full-$$k.log; \
		[ ! -e build/check-full-$$k.failed ] || { rm -f build/check-full-$$k.failed; fail=1; }; \
	done; \
	for k in $(FULL_KERNELS); do printf '%s: ' $$k; tail -n 1 build/check-full-$$k.log; done; \
	exit $$fail

# Other people's test suites (xfstests' fsx/fsstress, pjdfstest) built from
# checkouts you name, run in the VM: tests/peer/run.sh. Not part of check.
check-peer: daemon
	PEER_SRC="$(PEER_SRC)" PEER_XFSTESTS="$(PEER_XFSTESTS)" PEER_PJDFSTEST="$(PEER_PJDFSTEST)" \
		bash tests/peer/run.sh --kernel $(KERNEL) $(PEER_ARGS)

check-host: daemon
	bash tests/run.sh --host-only

# Power cuts of a write-back node (QEMU killed), ROUNDS of them.
ROUNDS ?= 20
powercut: daemon
	bash tests/powercut.sh --kernel $(KERNEL) --rounds $(ROUNDS)

demo: all
	bash tools/demo.sh

bench: all
	bash tools/bench/bench.sh $(BENCH_ARGS)

# The Debian packages (debian/): s3cachefs_V_ARCH.deb (daemon, mount helper,
# s3cachectl, unit, manual pages) and s3cachefs-dkms_V_all.deb (the module's
# source for DKMS), built from a copy of the tree's files (tracked, and new
# ones not ignored) under build/deb/, where they land.
VERSION := $(shell cat VERSION)
DEB_DIR := build/deb
deb:
	rm -rf $(DEB_DIR)
	mkdir -p $(DEB_DIR)/s3cachefs-$(VERSION)
	git ls-files -co --exclude-standard | while IFS= read -r f; do \
		[ ! -e "$$f" ] || echo "$$f"; done | \
		tar -cf - -T - | tar -xf - -C $(DEB_DIR)/s3cachefs-$(VERSION)
	cd $(DEB_DIR)/s3cachefs-$(VERSION) && dpkg-buildpackage -b -us -uc -j$(shell nproc)
	@ls -1 $(DEB_DIR)/*.deb

# lintian on what `make deb` built: fails on an error (warnings are listed;
# those kept are overridden with their reason in debian/*.lintian-overrides).
lintian:
	lintian --fail-on error,warning --display-info $(DEB_DIR)/*.deb

CHECKPATCH ?= $(firstword $(wildcard /usr/src/linux-source-6.1/scripts/checkpatch.pl))
lint:
	perl $(CHECKPATCH) --no-tree --strict --terse -f kmod/*.c kmod/*.h uapi/*.h

clean:
	-$(MAKE) -C $(KDIR) M=$(CURDIR) clean 2>/dev/null
	-$(MAKE) -C daemon clean
	rm -rf build

FORCE:
endif
