# SPDX-License-Identifier: GPL-2.0
#
# xrdma: out-of-tree NVMe over Fabrics RDMA host transport (nvme-xrdma.ko).
#
#   make                    build against the pinned Debian 6.12 headers
#   make KDIR=/lib/modules/$(uname -r)/build   build for the running kernel
#   make KSRC=/path/to/linux   take nvme.h/fabrics.h from a source tree
#   make XRDMA_TEST_HOOKS=1 the test flavour: with the fault and delay hooks
#                           the selftests arm (the goals that boot test
#                           guests build it; every other goal, and the
#                           package always, builds without them)
#   make check              W=1 + sparse (both flavours), checkpatch,
#                           selftests in QEMU
#   make check-package      the Debian package's test alone
#   make tools              the selftests' user-space helpers (tools/badtarget)
#   make siw                soft-iWARP (siw.ko, not in Debian's kernel) from
#                           linux-source-6.12, for XRDMA_PROVIDER=siw
#   make demo               connect with xrdma in the QEMU rig, nvme list, fio
#   make install|uninstall  modules_install into updates/ + depmod
#   make deb                nvme-xrdma-dkms_<version>_all.deb (DKMS package)
#   make dkms               what dkms.conf runs: the module, or for a kernel
#                           it cannot be built for, one that refuses to load
#   make check-trixie-build W=1 + sparse with Debian 13's gcc-14 against its
#                           6.12 headers, in a trixie root (tools/vm/trixie-root)
#   make check-trixie-package  the package's apt install, DKMS builds, apt
#                           remove and purge in a throw-away trixie root
#   make KVER=7.3.4+deb13-amd64   build for a Debian 13 or 14 kernel (7.x),
#                           in a root of that release (tools/vm/kbuild-root)
#   make check-kernels      the core of the suite and the package test on
#                           Debian 12's 6.1, on Debian 13 and on 7.x, in guests

PIN_KVER  := $(shell cat /etc/xrdma-kver 2>/dev/null || echo 6.12.117)
# Debian's 6.12 ABIs are named <version>+deb<N>-amd64 after the release
# they were built for: +deb12 here, +deb13 in a trixie root
# (tools/vm/trixie-root, which writes its own /etc/xrdma-kver)
DEB_REL   := $(shell sed -n 's/^VERSION_ID="*\([0-9]*\).*/\1/p' \
		/etc/os-release 2>/dev/null)
KVER      ?= $(PIN_KVER)+deb$(or $(DEB_REL),12)-amd64
KDIR      ?= /lib/modules/$(KVER)/build
KSRC      ?=

# A kernel of a newer Debian release than this machine's (make
# KVER=7.3.4+deb13-amd64, 7.2.13+deb14-amd64): its headers cannot be
# installed here, and its kbuild needs that release's libc and compiler.
# The sources are copied to .build/kver/<abi>/src (its own build
# products stay) and the goals made there, chrooted
# into a root of that release with the kernel's headers and linux-source
# installed (tools/vm/kbuild-root); the goals are passed on.
XRDMA_FOREIGN := $(if $(filter command line,$(origin KVER)),$(if \
	$(wildcard $(KDIR)),,$(filter %+deb13-amd64 %+deb14-amd64,$(KVER))))

ifneq ($(XRDMA_FOREIGN),)
FOREIGN_SRC   := $(CURDIR)/.build/kver/$(KVER)/src
FOREIGN_GOALS := $(or $(MAKECMDGOALS),modules)

.PHONY: $(FOREIGN_GOALS) foreign
$(FOREIGN_GOALS): foreign
	@:

foreign:
	@root=$$(tools/vm/kbuild-root $(KVER)) && \
	mkdir -p $(FOREIGN_SRC) && \
	tar -c --exclude='*.o' --exclude='*.ko' --exclude='*.mod*' \
		--exclude='.*.cmd' --exclude='*.order' --exclude=Module.symvers \
		Makefile Kbuild drivers include Documentation tools/build | \
		tar -x -C $(FOREIGN_SRC) && \
	tools/vm/in-root "$$root" -- make -C $(FOREIGN_SRC) KVER=$(KVER) \
		$(if $(filter-out undefined,$(origin XRDMA_TEST_HOOKS)),\
		XRDMA_TEST_HOOKS=$(XRDMA_TEST_HOOKS)) \
		$(filter-out foreign,$(FOREIGN_GOALS)) && \
	{ ko=$(FOREIGN_SRC)/drivers/nvme/host/xrdma/nvme-xrdma.ko; \
	  [ ! -f $$ko ] || echo "  MODULE  $$ko"; }
else
# 1 (dkms.conf): no BTF of the target's nvme-core is an error, not a
# fallback to the version check alone
XRDMA_REQUIRE_BTF ?= 0

# The kernel we build for.  Its release (the module directory, depmod,
# vermagic) is utsrelease.h's: Debian's 6.1 headers say 6.1.0-57-amd64
# there but the upstream 6.1.192 in kernel.release, which is what the
# private headers' source must match (6.12's say 6.12.117+deb12-amd64 in
# both).  The series (6.1, 6.12) names the linux-source package.
KREL      := $(shell sed -n 's/^\#define UTS_RELEASE "\(.*\)"$$/\1/p' \
		$(KDIR)/include/generated/utsrelease.h 2>/dev/null)
KUPSTREAM := $(shell cat $(KDIR)/include/config/kernel.release 2>/dev/null)
KSERIES   := $(subst $() ,.,$(wordlist 1,2,$(subst ., ,$(KUPSTREAM))))
KSRC_TAR  ?= /usr/src/linux-source-$(KSERIES).tar.xz
KSRC_TOP   = $(notdir $(KSRC_TAR:.tar.xz=))
# the kernel image, for the BTF base where the headers ship no vmlinux
KIMAGE    ?= /boot/vmlinuz-$(KREL)
MODDIR    := $(dir $(KDIR:%/=%))
ifeq ($(wildcard $(MODDIR)kernel),)
MODDIR    := /lib/modules/$(KREL)/
endif

BUILD     := $(CURDIR)/.build
KHDR      := $(BUILD)/ksrc
HDR_FILES := drivers/nvme/host/nvme.h drivers/nvme/host/fabrics.h \
	     scripts/checkpatch.pl scripts/spelling.txt \
	     scripts/const_structs.checkpatch scripts/kernel-doc \
	     scripts/extract-vmlinux Makefile
KDOC_PY   := tools/docs/kernel-doc tools/lib/python/kdoc
# what the extraction is for: another kernel extracts again
HDR_STAMP  = $(HDR_FILES) $(if $(KSRC),$(KSRC),$(KSRC_TAR)) $(KREL)
MOD       := drivers/nvme/host/xrdma/nvme-xrdma.ko
SOURCES    = $(filter-out %.mod.c %/counters.h,\
		$(wildcard drivers/nvme/host/xrdma/*.[ch])) \
	     $(wildcard include/trace/events/*.h)
# X-macro lists, which checkpatch cannot parse: checked without these tests
XMACRO_SOURCES = drivers/nvme/host/xrdma/counters.h
XMACRO_IGNORE  = COMPLEX_MACRO,MACRO_ARG_REUSE,MACRO_ARG_PRECEDENCE,TRAILING_SEMICOLON

# The flavour. XRDMA_TEST_HOOKS=1 builds the test one: the fault and
# delay hooks (fault.c, delay.c, their debugfs files, the test_hooks
# parameter) that the selftests arm. 0 builds the production one, which
# has none of them. Given (on the command line or in the environment) it
# holds for every goal; otherwise the goals that boot test guests build 1
# (GUEST_HOOKS), the others 0 (make, install, demo, bench), and the
# package's DKMS build is always 0. Kbuild rebuilds an object when its
# command line or a header it includes changes, so the flavour is
# recorded in a header that every object includes (xrdma_flavour.h),
# rewritten only when it changes.
HOOKS_GIVEN := $(filter command line environment,$(origin XRDMA_TEST_HOOKS))
XRDMA_TEST_HOOKS ?= 0
ifneq ($(filter-out 0 1,$(XRDMA_TEST_HOOKS)),)
$(error XRDMA_TEST_HOOKS=$(XRDMA_TEST_HOOKS): 0 or 1)
endif
GUEST_HOOKS := $(if $(HOOKS_GIVEN),$(XRDMA_TEST_HOOKS),1)
FLAVOUR     := $(if $(filter 1,$(XRDMA_TEST_HOOKS)),test,production)

KBUILD_ARGS = -C $(KDIR) M=$(CURDIR) XRDMA_KHDR=$(KHDR) \
	      XRDMA_TEST_HOOKS=$(XRDMA_TEST_HOOKS)

.PHONY: all modules clean check check-build checkpatch selftests demo \
	test-modules check-build-flavour FORCE \
	bench soak stress faults lint install uninstall headers check-debug \
	check-twoguest check-twoguest-reverse check-twoguest-61 check-package dkms siw \
	check-kernels k61-modules newer-modules bench-modules \
	check-trixie-build check-trixie-package trixie-src \
	debug-kernel debug-modules tools deb

all: modules

# --- private nvme headers and the layout guard ----------------------------

# The stamp lists the files extracted and for which kernel; a changed
# HDR_FILES or another kernel extracts again.
ifneq ($(strip $(HDR_STAMP)),$(strip $(shell cat $(KHDR)/.stamp 2>/dev/null)))
.PHONY: $(KHDR)/.stamp
endif

$(KHDR)/.stamp: $(if $(KSRC),,$(KSRC_TAR))
	@rm -rf $(KHDR) && mkdir -p $(KHDR)
ifneq ($(KSRC),)
	@echo "  HDRS    $(KSRC)"
	@cd $(KSRC) && cp --parents $(HDR_FILES) $(KHDR)/
else
	@test -f "$(KSRC_TAR)" || { echo "error: $(KSRC_TAR) missing:" \
		"run tools/setup or pass KSRC=<kernel source tree>" >&2; exit 1; }
	@echo "  HDRS    $(KSRC_TAR)"
	@tar -xJf $(KSRC_TAR) -C $(KHDR) --strip-components=1 \
		$(addprefix $(KSRC_TOP)/,$(HDR_FILES))
endif
	@echo '$(HDR_STAMP)' > $@

# Since 7.x scripts/kernel-doc links to a Python script and its library:
# those too, for checkpatch and lint only (a second pass over the
# tarball, which a DKMS build need not wait for)
$(KHDR)/.kdoc: $(KHDR)/.stamp
	@if [ -L $(KHDR)/scripts/kernel-doc ]; then \
		if [ -n "$(KSRC)" ]; then cd $(KSRC) && \
			cp -r --parents $(KDOC_PY) $(KHDR)/; \
		else tar -xJf $(KSRC_TAR) -C $(KHDR) --strip-components=1 \
			$(addprefix $(KSRC_TOP)/,$(KDOC_PY)); fi; fi
	@touch $@

$(KHDR)/xrdma_layout.h: $(KHDR)/.stamp tools/build/gen-layout
	@tools/build/check-version $(KHDR)/Makefile "$(KUPSTREAM)"
	@XRDMA_REQUIRE_BTF=$(XRDMA_REQUIRE_BTF) \
		tools/build/gen-layout $(KDIR) $(MODDIR) $@ $(KIMAGE) \
		$(KHDR)/scripts/extract-vmlinux

# the target kernel's API, as XRDMA_HAVE_* for compat.h (no version tests)
$(KHDR)/xrdma_have.h: $(KHDR)/.stamp tools/build/probe \
		$(wildcard tools/build/probes/*.c)
	@tools/build/probe $(KDIR) $(KHDR) $(CURDIR)/include $@

# a prerequisite of the goals that build the module alone: another goal
# (checkpatch) must not switch the flavour of the objects in the tree
$(KHDR)/xrdma_flavour.h: $(KHDR)/.stamp FORCE
	@{ echo '/* generated by the Makefile: the $(FLAVOUR) flavour */'; \
	   [ $(FLAVOUR) = production ] || echo '#define XRDMA_TEST_HOOKS 1'; \
	} >$@.tmp
	@if cmp -s $@.tmp $@; then rm -f $@.tmp; else \
		mv $@.tmp $@ && echo "  FLAVOUR $(FLAVOUR)"; fi

headers: $(KHDR)/xrdma_layout.h $(KHDR)/xrdma_have.h

# --- build ----------------------------------------------------------------

modules: headers $(KHDR)/xrdma_flavour.h
	$(MAKE) $(KBUILD_ARGS) $(MODULES_W) modules

# the test flavour (or the one the command line names) where tools/vm/run
# takes the module from ($(MOD)), for the goals that boot test guests
test-modules:
	@$(MAKE) --no-print-directory XRDMA_TEST_HOOKS=$(GUEST_HOOKS) \
		$(MODULES_W) modules

# DKMS (dkms.conf): a failed build would fail the installation of the
# kernel on Debian 12 (dkms 3.0.10 fails autoinstall on any module it
# cannot install, BUILD_EXCLUSIVE skips included).  Where the private
# headers do not match the kernel (another series, no linux-source of its
# series, another version, the layout guard), build refuse.c instead,
# with the first error as the reason it gives and the linux-source
# package of the kernel's series as what to install.  The package's
# module is the production flavour whatever the environment says.
XRDMA_VERSION ?= unknown
# the series the driver is written for (compat.h, tools/build/probes/)
XRDMA_SERIES := 6.1 6.12 7.2 7.3
# the linux-source of the kernel's series: its upstream version, to refuse
# a kernel of another one without unpacking the tarball (a minute or two
# under TCG)
SRC_PKGVER = $(if $(KSRC),,$(shell dpkg-query -W -f='$${Version}' \
		linux-source-$(KSERIES) 2>/dev/null | sed 's/-.*//'))
KUPSTREAM_VER = $(shell echo '$(KUPSTREAM)' | sed -E 's/^([0-9]+\.[0-9]+\.[0-9]+).*/\1/')
dkms:
	@mkdir -p $(BUILD)
	@why=; src=linux-source-$(KSERIES); \
	case " $(XRDMA_SERIES) " in \
	*" $(KSERIES) "*) ;; \
	*) src=; why="Linux $(or $(KSERIES),of $(KDIR)) is not a series nvme-xrdma builds for";; \
	esac; \
	[ -n "$$why" ] || [ -n "$(KSRC)" ] || [ -f "$(KSRC_TAR)" ] || \
		why="$$src is not installed (no $(KSRC_TAR))"; \
	[ -n "$$why" ] || [ -z "$(SRC_PKGVER)" ] || case "$(KUPSTREAM)" in \
	"$(SRC_PKGVER)"[+-]*|"$(SRC_PKGVER)") ;; \
	*) why="$$src is $(SRC_PKGVER) but the target kernel is $(KUPSTREAM)";; \
	esac; \
	if [ -z "$$why" ]; then \
		$(MAKE) XRDMA_TEST_HOOKS=0 modules >$(BUILD)/dkms.log 2>&1; rc=$$?; \
		cat $(BUILD)/dkms.log; [ $$rc -eq 0 ] && exit 0; \
		why=$$(grep -m1 'error:' $(BUILD)/dkms.log | \
			sed 's/^.*error: *//; s/["\\]//g; s/;$$//'); \
	fi; \
	echo "dkms: nvme-xrdma cannot be built for $(KREL): $${why:-build failed}" >&2; \
	echo "dkms: building a module that refuses to load and says so" >&2; \
	mkdir -p $(KHDR) && { \
	printf '#define XRDMA_REFUSE_%s "%s"\n' WHY "$${why:-build failed}" \
		VERSION "$(XRDMA_VERSION)" SERIES "$(XRDMA_SERIES)"; \
	[ -z "$$src" ] || printf '#define XRDMA_REFUSE_%s "%s"\n' \
		SOURCE "$$src" UPSTREAM "$(KUPSTREAM_VER)"; \
	} >$(KHDR)/xrdma_refuse.h && \
	$(MAKE) $(KBUILD_ARGS) clean >/dev/null && \
	$(MAKE) $(KBUILD_ARGS) XRDMA_REFUSE=1 modules

# user-space helpers of the selftests: the misbehaving target
tools:
	$(MAKE) -C tools/badtarget

# --- soft-iWARP, the rig's second RDMA provider ----------------------------
#
# Debian's kernel is built without CONFIG_RDMA_SIW. Only
# drivers/infiniband/sw/siw of the source the private headers come from
# (the tarball, or KSRC) is copied to .build/siw and built there against
# KDIR; the version check of the headers covers it. XRDMA_PROVIDER=siw
# makes the rig use it (selftests/lib/rig.sh; tools/vm/run installs it).
SIW_PATH  := drivers/infiniband/sw/siw
SIW_DIR   := $(BUILD)/siw
SIW_KO    := $(SIW_DIR)/siw.ko

$(SIW_DIR)/.stamp: $(KHDR)/.stamp
	@tools/build/check-version $(KHDR)/Makefile "$(KUPSTREAM)"
	@rm -rf $(SIW_DIR) && mkdir -p $(SIW_DIR)
ifneq ($(KSRC),)
	@echo "  SIW     $(KSRC)/$(SIW_PATH)"
	@cp $(KSRC)/$(SIW_PATH)/* $(SIW_DIR)/
else
	@echo "  SIW     $(KSRC_TAR)"
	@tar -xJf $(KSRC_TAR) -C $(SIW_DIR) --strip-components=5 \
		$(KSRC_TOP)/$(SIW_PATH)
endif
	@touch $@

siw: $(SIW_DIR)/.stamp
	$(MAKE) -C $(KDIR) M=$(SIW_DIR) CONFIG_RDMA_SIW=m modules

clean:
	-$(MAKE) $(KBUILD_ARGS) clean
	-$(MAKE) -C tools/badtarget clean
	rm -rf $(BUILD)

# W=1 and sparse (C=2 checks every file) must print nothing, in both
# flavours: the production one, then the test one, whose objects stay for
# make check's selftests (XRDMA_TEST_HOOKS given: that one alone).  Every feature probe of the kernel's series or an older one
# must pass: one that fails there is a broken probe (tools/build/probe
# --check).
CHECK_FLAVOURS := $(if $(HOOKS_GIVEN),$(XRDMA_TEST_HOOKS),0 1)
check-build:
	@for f in $(CHECK_FLAVOURS); do \
		$(MAKE) --no-print-directory XRDMA_TEST_HOOKS=$$f \
			check-build-flavour || exit 1; done

check-build-flavour: headers $(KHDR)/xrdma_flavour.h
	@tools/build/probe --check $(KHDR)/xrdma_have.h $(KSERIES) || { \
		echo "check-build: FAILED: feature probes fail on $(KREL)" \
		"(.build/ksrc/probe/probe.log)" >&2; exit 1; }
	@# every object again, so that each file's warnings show; not kbuild's
	@# clean, which would empty .build's other trees (siw, k61, ...) too
	@find drivers -name '*.o' -delete
	@# KBUILD_CHECKSRC: since 7.x the kernel's Makefile turns C=2 off
	@# (and says so) when scripts/checker-valid.sh fails, and Debian's
	@# headers lack it; a sparse too old for the headers fails here, loudly
	$(MAKE) $(KBUILD_ARGS) W=1 C=2 KBUILD_CHECKSRC=2 modules 2>&1 | \
		grep -v 'C=2 specified, but' | tee $(BUILD)/build-$(FLAVOUR).log
	@grep -q '^  CHECK ' $(BUILD)/build-$(FLAVOUR).log || { \
		echo "check-build: FAILED: sparse did not run" >&2; exit 1; }
	@if grep -E 'warning|error|: note:' $(BUILD)/build-$(FLAVOUR).log | \
	    grep -v '^make'; then \
		echo "check-build: FAILED: warnings above ($(FLAVOUR) flavour)" >&2; \
		exit 1; fi
	@echo "check-build: W=1 + sparse clean, $(FLAVOUR) flavour"

checkpatch: headers $(KHDR)/.kdoc
	@$(KHDR)/scripts/checkpatch.pl --no-tree --strict --show-types \
		--quiet -f $(SOURCES) && \
	$(KHDR)/scripts/checkpatch.pl --no-tree --strict --show-types \
		--quiet --ignore $(XMACRO_IGNORE) -f $(XMACRO_SOURCES) && \
	echo "checkpatch: clean"
	@out=$$($(KHDR)/scripts/kernel-doc -none -Wall $(SOURCES) \
		$(XMACRO_SOURCES) 2>&1); [ -z "$$out" ] || \
		{ echo "$$out"; echo "kernel-doc: FAILED" >&2; exit 1; }
	@echo "kernel-doc: clean"

# shell scripts, and the reStructuredText documents with their kernel-doc
lint: $(KHDR)/.kdoc
	shellcheck -x tools/setup tools/demo tools/vm/run tools/vm/init \
		tools/vm/selftests tools/vm/fetch-kernel tools/vm/twoguest \
		tools/vm/trixie-root tools/vm/in-root tools/vm/kbuild-root \
		$(filter-out tools/build/rst-check tools/build/probes,\
		$(wildcard tools/build/*)) \
		tools/debug/build-kernel
	$(MAKE) -s -C selftests lint
	@tools/build/rst-check --kernel-doc $(KHDR)/scripts/kernel-doc \
		$$(find Documentation -name '*.rst')
	@echo "lint: shellcheck and rst clean"

# the suite, the package test (its host half on this machine, then its
# guest), then test_lifecycle with CPUs offline since boot, then the siw
# pass; one total line
selftests: test-modules tools deb siw
	tools/vm/selftests

# the package test alone: apt install, the DKMS builds, apt remove and
# purge in a throw-away root on this machine, then one guest that loads
# and uses the module DKMS built (selftests/package/)
check-package: deb
	tools/vm/selftests --package

# the module make check tests is the test flavour check-build built last:
# with W=1 for its "test-modules" prerequisite too, kbuild finds nothing
# to rebuild
check: MODULES_W := W=1
check: check-build checkpatch lint selftests

# --- Debian 13 (trixie) ---------------------------------------------------
#
# Trixie's 6.12 headers need its libc and gcc-14, so these run in a trixie
# root (tools/vm/trixie-root builds it once, 1.5 GB under
# /var/tmp/xrdma-trixie). The build is a copy of the tree (.build/trixie/src)
# made with the root's own make, chrooted in with the repository
# bind-mounted (tools/vm/in-root): this tree's Debian 12 build is left as
# it is. The package test is package/host_dkms.sh in an overlay of that
# root (dkms 3.2, pahole 1.30, trixie's newest 6.12 and an older ABI),
# then package/test_dkms.sh in a guest booted from that root.
TRIXIE_SRC   := $(BUILD)/trixie/src
TRIXIE_STATE := $(BUILD)/trixie/dkms

trixie-src:
	@rm -rf $(TRIXIE_SRC) && mkdir -p $(TRIXIE_SRC)/tools
	@cp -a Makefile Kbuild drivers include $(TRIXIE_SRC)/
	@cp -a tools/build $(TRIXIE_SRC)/tools/
	@find $(TRIXIE_SRC)/drivers \( -name '*.o' -o -name '*.ko' \
		-o -name '*.mod*' -o -name '.*.cmd' -o -name '*.order' \
		-o -name 'Module.symvers' \) -delete

# (both flavours: the test one, built last, is what check-kernels boots)
check-trixie-build: trixie-src
	@root=$$(tools/vm/trixie-root) && \
		tools/vm/in-root "$$root" -- make -C $(TRIXIE_SRC) \
		$(if $(HOOKS_GIVEN),XRDMA_TEST_HOOKS=$(XRDMA_TEST_HOOKS)) \
		check-build

# both halves: the second in a guest that boots trixie's kernel with the
# trixie root as its root file system (tools/vm/run --root)
check-trixie-package: deb
	@rm -rf $(TRIXIE_STATE) && mkdir -p $(TRIXIE_STATE)
	@root=$$(tools/vm/trixie-root) && XRDMA_DKMS_ROOT=$$root \
		selftests/package/host_dkms.sh $(TRIXIE_STATE) && \
	XRDMA_DKMS_STATE=$(TRIXIE_STATE) tools/vm/run --root "$$root" \
		--no-ko --timeout 1200 \
		-- selftests/run_selftests.sh package/test_dkms.sh

# --- debug-kernel tier ------------------------------------------------------
#
# The same selftests on a 6.12.117 kernel built from linux-source-6.12 with
# KASAN, lockdep, kmemleak, DEBUG_LIST, DEBUG_OBJECTS (tools/debug/). The
# kernel build is cached under /var/tmp/xrdma-debug; the first one takes
# long (see README.md). Our module is built in a
# copy of the tree (.build/debug/src) so the normal build stays as it is.
# The tests are basic/ and xrdma/: package/ checks the Debian package on
# the Debian kernels (DKMS builds, which would take hours under KASAN).
# DEBUG_FLAVOUR=kcsan: the KCSAN kernel instead (tools/debug/kcsan.config),
# e.g. make check-debug DEBUG_FLAVOUR=kcsan DEBUG_TESTS=<test_stress.sh>.
DEBUG_FLAVOUR ?=
DEBUG_SRC   := $(BUILD)/debug$(DEBUG_FLAVOUR:%=-%)/src
DEBUG_KO    := $(DEBUG_SRC)/$(MOD)
DEBUG_TESTS ?= $(sort $(wildcard selftests/basic/test_*.sh)) \
	       $(sort $(wildcard selftests/xrdma/test_*.sh))
DEBUG_DIR    = $(shell XRDMA_DEBUG_FLAVOUR=$(DEBUG_FLAVOUR) tools/debug/build-kernel)

debug-kernel:
	@XRDMA_DEBUG_FLAVOUR=$(DEBUG_FLAVOUR) tools/debug/build-kernel >/dev/null

debug-modules: debug-kernel
	@rm -rf $(DEBUG_SRC) && mkdir -p $(DEBUG_SRC)/tools
	@cp -a Makefile Kbuild drivers include $(DEBUG_SRC)/
	@cp -a tools/build $(DEBUG_SRC)/tools/
	@find $(DEBUG_SRC)/drivers -name '*.o' -o -name '*.ko' \
		-o -name '*.mod*' -o -name '.*.cmd' | xargs -r rm -f
	$(MAKE) -C $(DEBUG_SRC) KDIR=$(DEBUG_DIR)/obj \
		MODDIR=$(DEBUG_DIR)/root/lib/modules/$$(cat $(DEBUG_DIR)/release)/ \
		KSRC_TAR=$(KSRC_TAR) XRDMA_TEST_HOOKS=$(GUEST_HOOKS) W=1 modules

# one guest per test file (tools/vm/selftests --each: lockdep is off for
# the rest of a boot after its first report). no5lvl: on QEMU's CPU with
# LA57, 6.12's identify_cpu() clears the CPU's feature bits for a moment,
# KASAN then takes the 5-level direct map for a wild address, and a timer
# interrupt in that window at boot reports a wild-memory-access in
# handle_edge_irq(), whose taint switches lockdep off for the whole boot
# (seen in 2 of 27 debug guests). A guest may take 3 h: test_bad_target
# took 60 min on one slow machine and had done 24 of its 29 subtests
# after 90 min on another.
check-debug: debug-modules tools
	XRDMA_TIMEOUT_SCALE=8 XRDMA_STRESS_SECS=1800 tools/vm/selftests --each \
		--kernel-dir $(DEBUG_DIR) --ko $(DEBUG_KO) --timeout 10800 \
		--append no5lvl -- $(DEBUG_TESTS)

# the production flavour: the demo arms no hook
demo: modules
	tools/vm/run -- tools/demo

# the long soak: 200 connect/disconnect cycles, 50 resets under I/O, one
# hour for the test instead of xrdma/settings' limit
soak: test-modules
	XRDMA_SOAK_CYCLES=200 XRDMA_SOAK_RESETS=50 XRDMA_TIMEOUT=3600 \
		tools/vm/run --timeout 5400 \
		-- selftests/run_selftests.sh xrdma/test_soak.sh

# the actors of the controller life cycle at once for 30 min (make check
# runs 2 min of it, make check-debug 30): see selftests/xrdma/test_stress.sh
# (it arms no hook: XRDMA_TEST_HOOKS=0 runs it on the production flavour)
stress: test-modules tools siw
	XRDMA_STRESS_SECS=$${XRDMA_STRESS_SECS:-1800} XRDMA_TIMEOUT=3600 \
		tools/vm/run --timeout 5400 \
		-- selftests/run_selftests.sh xrdma/test_stress.sh

# only the link flap test (make check runs it too)
faults: test-modules
	tools/vm/run --timeout 3600 -- selftests/run_selftests.sh xrdma/test_flap.sh

# two guests: xrdma on our kernel against Linux's nvmet-rdma on Debian 12's
# 6.1 kernel (downloaded once into /var/tmp/xrdma-kernels), over a QEMU
# network link; see tools/vm/twoguest
check-twoguest: test-modules
	tools/vm/twoguest

# the other pairing: a 6.1 host with xrdma, our 6.12 kernel as the target
check-twoguest-reverse: k61-modules
	tools/vm/twoguest --reverse --ko $(K61_KO)

# both guests on 6.1, the host with xrdma built for it
check-twoguest-61: k61-modules
	tools/vm/twoguest --all61 --ko $(K61_KO)

# --- Debian 12's own 6.1 ------------------------------------------------------
#
# The core of the suite (tools/vm/selftests --core) with host and target
# on 6.1: a guest booted from the kernel tools/vm/fetch-kernel keeps in
# /var/tmp/xrdma-kernels, with the module built for it from this tree, in
# a copy (.build/k61/src) so that the 6.12 build stays as it is.  Its
# headers and linux-source-6.1 come from tools/setup; its nvme-core BTF
# and vmlinux from the fetched image.
K61_SRC := $(BUILD)/k61/src
K61_KO  := $(K61_SRC)/$(MOD)

k61-modules:
	@rm -rf $(K61_SRC) && mkdir -p $(K61_SRC)/tools
	@cp -a Makefile Kbuild drivers include $(K61_SRC)/
	@cp -a tools/build $(K61_SRC)/tools/
	@find $(K61_SRC)/drivers \( -name '*.o' -o -name '*.ko' -o -name '*.mod*' \
		-o -name '.*.cmd' \) -delete
	@dir=$$(tools/vm/fetch-kernel) && rel=$$(cat "$$dir/release") && \
	{ [ -d /lib/modules/$$rel/build ] || { echo "error: no headers" \
		"for $$rel: run tools/setup (XRDMA_K61)" >&2; exit 1; }; } && \
	$(MAKE) -C $(K61_SRC) KDIR=/lib/modules/$$rel/build \
		MODDIR=$$dir/root/lib/modules/$$rel/ KIMAGE=$$dir/bzImage \
		XRDMA_TEST_HOOKS=$(GUEST_HOOKS) W=1 modules

# trixie's module: built in the trixie root (make check-trixie-build, the
# tree copied to .build/trixie/src)
TRIXIE_KO := $(TRIXIE_SRC)/$(MOD)

# the core and the package test on 6.1, on Debian 13 and on the 7.x
# kernels (trixie-backports 7.3, sid 7.2), one summary line
# (tools/vm/selftests --kernels)
check-kernels: k61-modules tools deb check-trixie-build newer-modules
	tools/vm/selftests --kernels "$$(tools/vm/fetch-kernel)" $(K61_KO) \
		"$$(tools/vm/trixie-root)" $(TRIXIE_KO) \
		$(foreach k,$(XRDMA_NEWER_KVERS),\
		"$$(tools/vm/fetch-kernel $(k))" $(BUILD)/kver/$(k)/src/$(MOD))

# Debian's 7.x kernels, each with make KVER=<abi> (in a root of its
# release, .build/kver/<abi>/src), the test flavour: trixie-backports'
# and sid's
XRDMA_NEWER_KVERS ?= 7.3.4+deb13-amd64 7.2.13+deb14-amd64

newer-modules:
	@for k in $(XRDMA_NEWER_KVERS); do \
		$(MAKE) --no-print-directory KVER=$$k \
			XRDMA_TEST_HOOKS=$(GUEST_HOOKS) modules || exit 1; done

# make bench measures the production flavour, the module an admin
# installs, not the test one with its hooks.
# guest vCPUs of make bench (4 for the scale table's 4-queue row)
XRDMA_BENCH_CPUS ?= 2

# XRDMA_BENCH_KVER=7.3.4+deb13-amd64: the same in a guest booted from
# that kernel (tools/vm/fetch-kernel), against its own nvme-rdma and
# nvme-tcp, with the module make KVER=<it> builds (and its siw for
# XRDMA_PROVIDER=siw)
XRDMA_BENCH_KVER ?=
BENCH_SRC = $(BUILD)/kver/$(XRDMA_BENCH_KVER)/src
BENCH_RUN = $(if $(XRDMA_BENCH_KVER),--kernel-dir \
	"$$(tools/vm/fetch-kernel $(XRDMA_BENCH_KVER))" --ko $(BENCH_SRC)/$(MOD) \
	$(if $(filter siw,$(XRDMA_PROVIDER)),--ko $(BENCH_SRC)/.build/siw/siw.ko))

bench: $(if $(XRDMA_BENCH_KVER),bench-modules,modules)
	XRDMA_HOST_LOAD="$$(cat /proc/loadavg)" \
		tools/vm/run --production --cpus $(XRDMA_BENCH_CPUS) \
		--timeout 3000 $(BENCH_RUN) -- tools/bench

bench-modules:
	$(MAKE) KVER=$(XRDMA_BENCH_KVER) modules \
		$(if $(filter siw,$(XRDMA_PROVIDER)),siw)

# --- Debian package (DKMS) ----------------------------------------------
#
# dpkg-buildpackage on a copy of the sources in .build/deb with
# packaging/debian as debian/ and a generated debian/changelog; the .deb
# lands at the top of the tree. The version comes from git describe.
DEB_VERSION = $(shell tools/build/deb-version)
DEB_SRC     = $(BUILD)/deb/nvme-xrdma-$(DEB_VERSION)

deb:
	@rm -rf $(BUILD)/deb nvme-xrdma-dkms_*_all.deb
	@mkdir -p $(DEB_SRC)/tools
	@cp -a Makefile Kbuild drivers include $(DEB_SRC)/
	@cp -a tools/build $(DEB_SRC)/tools/
	@cp -a packaging/debian $(DEB_SRC)/debian
	@find $(DEB_SRC)/drivers \( -name '*.o' -o -name '*.ko' \
		-o -name '*.mod*' -o -name '.*.cmd' -o -name '*.order' \
		-o -name 'Module.symvers' \) -delete
	@printf '%s\n' "nvme-xrdma ($(DEB_VERSION)) unstable; urgency=medium" \
		'' "  * Built from git $$(git describe --always --dirty)." \
		'' " -- xrdma developers <xrdma@localhost>  $$(date -R)" \
		> $(DEB_SRC)/debian/changelog
	cd $(DEB_SRC) && dpkg-buildpackage -b -us -uc -tc \
		>$(BUILD)/deb/build.log 2>&1 || \
		{ tail -n 30 $(BUILD)/deb/build.log; exit 1; }
	@cp $(BUILD)/deb/nvme-xrdma-dkms_$(DEB_VERSION)_all.deb .
	@echo "  DEB     nvme-xrdma-dkms_$(DEB_VERSION)_all.deb"

# --- install ------------------------------------------------------------

# INSTALL_MOD_PATH=DIR installs below DIR (staging, packaging).
DEPMOD = depmod -a $(if $(INSTALL_MOD_PATH),-b $(INSTALL_MOD_PATH)) $(KREL)

install: modules
	$(MAKE) $(KBUILD_ARGS) INSTALL_MOD_DIR=updates \
		MODLIB=$(INSTALL_MOD_PATH)/lib/modules/$(KREL) modules_install
	$(DEPMOD)

uninstall:
	find $(INSTALL_MOD_PATH)/lib/modules/$(KREL)/updates \
		-name 'nvme-xrdma.ko*' -print -delete
	$(DEPMOD)

FORCE:

endif # XRDMA_FOREIGN
