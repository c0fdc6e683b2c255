# godat: libdat.so.1, the DAT 1.2 (uDAPL) library, built from Go.

PREFIX     ?= /usr/local
SYSCONFDIR ?= $(PREFIX)/etc
LIBDIR     ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
BINDIR     ?= $(PREFIX)/bin
MANDIR     ?= $(PREFIX)/share/man
DESTDIR    ?=

# The Go toolchain: go on PATH, else where the Go distribution installs it.
ifeq ($(shell command -v go 2>/dev/null),)
export PATH := $(PATH):/usr/local/go/bin
endif
GO      ?= go
# Build with the toolchain go.mod names (its toolchain line), which the go
# command fetches from the module proxy on first use, whatever a machine's
# go.env says (some set local, this machine's among them): Go 1.27's cgo callback
# checks package initialisation with an atomic flag where 1.26 received from
# a closed channel under its lock, and every DAT call that enters Go is such
# a callback. GOTOOLCHAIN=local in the environment builds with the local Go.
export GOTOOLCHAIN ?= auto
CC      ?= cc
VERSION := 1.2.0
B       := build
LIB     := $(B)/lib/libdat.so.$(VERSION)
PCDIR   := $(B)/pkgconfig
GOSRC   := $(shell find core rdma export -name '*.go' -o -name '*.c' -o -name '*.h' -o -name '*.map') go.mod go.sum
HEADERS := $(wildcard include/dat/*.h)
DATINFO := $(B)/bin/datinfo
MANPAGES := man/datinfo.1 man/godat.7
CFLAGS  ?= -O2 -g -Wall -Wextra -Werror -std=gnu11

# Tests and examples find the library and headers of this tree through
# pkg-config, as a consumer would, and the repository's dat.conf.
TESTENV := PKG_CONFIG_PATH=$(CURDIR)/$(PCDIR) DAT_OVERRIDE=$(CURDIR)/dat.conf

.PHONY: all deps check install example bench clean gotest ctest abi headers symbols installcheck coverage sanitize \
	fresh-check generated designcheck check-verbs verbs-guest fuzzcheck fuzz bench-verbs check-verbs-ctest

# Paths under the prefix are written as ${prefix}/... in dat.pc, so that
# pkg-config --define-prefix can relocate a staged (DESTDIR) install.
under_prefix = $(patsubst $(PREFIX)/%,$${prefix}/%,$(1))

all: $(LIB) $(PCDIR)/dat.pc $(DATINFO)

$(LIB): $(GOSRC) $(HEADERS)
	@mkdir -p $(B)/lib
	$(GO) build -buildmode=c-shared -trimpath -o $@ \
		-ldflags "-X main.sysconfdir=$(SYSCONFDIR) -extldflags '-Wl,--version-script=$(CURDIR)/export/libdat.map -Wl,-soname,libdat.so.1'" \
		./export
	@rm -f $(B)/lib/libdat.h
	ln -sf libdat.so.$(VERSION) $(B)/lib/libdat.so.1
	ln -sf libdat.so.1 $(B)/lib/libdat.so

# pkg-config file for using the library from the build tree.
$(PCDIR)/dat.pc: pkgconfig/dat.pc.in
	@mkdir -p $(PCDIR)
	sed -e 's|@PREFIX@|$(CURDIR)|' -e 's|@LIBDIR@|$(CURDIR)/$(B)/lib|' \
	    -e 's|@INCLUDEDIR@|$(CURDIR)/include|' -e 's|@SYSCONFDIR@|$(CURDIR)|' $< > $@

# The Debian packages the build and the tests need (tools/deps.sh: installs
# them as root, else prints the apt-get line). The README's two commands run
# it first; the rest of the targets assume it has run.
deps:
	@tools/deps.sh

# datinfo (tools/datinfo), a C program over the public DAT API, run from the
# build tree; `make install` links it again against the installed library.
$(DATINFO): tools/datinfo/datinfo.c tools/datinfo/env.h $(HEADERS) $(LIB)
	@mkdir -p $(B)/bin
	$(CC) $(CFLAGS) -Iinclude -o $@ $< -L$(B)/lib -Wl,-rpath,$(CURDIR)/$(B)/lib -ldat

# The first README command: build and run a real client/server exchange.
example: deps
	@$(MAKE) --no-print-directory all
	$(MAKE) -C ctest example TESTENV="$(TESTENV)"

# Benchmarks beside libfabric, UCX and C floors, as one table (not part of
# check: it measures, it asserts nothing). A few minutes.
bench: all
	$(MAKE) -C bench run TESTENV="$(TESTENV)"

# The second README command, and all CI runs (.ci/run). Every part runs
# even when an earlier one fails (make -k), so one red part does not hide
# the others; check fails if any part failed.
CHECKS := generated designcheck gotest fuzzcheck abi headers symbols ctest benchsmoke coverage sanitize installcheck check-verbs
check: deps
	@$(MAKE) --no-print-directory all
	@$(MAKE) --no-print-directory -k $(CHECKS) || { echo "make check: FAILED (see the parts above)"; exit 1; }

# The README's two commands in a fresh Debian root from a clean clone of
# HEAD (root only; slow, so not part of check).
fresh-check:
	tools/fresh-check.sh $(CURDIR)

# go vet builds every test first (fetching the modules they need); the
# tests then run in a network namespace of their own (tools/privnet.sh).
gotest:
	$(GO) vet ./core/... ./rdma/... ./ctest/... ./tools/...
	$(GO) vet -tags cgotest ./export/...
	tools/privnet.sh $(GO) test -race -count=1 ./core/... ./rdma/... ./ctest/... ./tools/...
	tools/privnet.sh $(GO) test -count=1 -tags cgotest ./export/...

# The Go fuzz targets (everything a peer sends: shm CM messages, ring
# slots, hints, registration tables, ring words; TCP frames, handshakes and
# the receive loop; dat.conf), one after another (tools/fuzz.sh): for
# FUZZCHECKTIME each in check, FUZZTIME each in fuzz. Check counts
# executions (40000 each: 1-3 s a decoder, about 8 s for the TCP receive
# loop, here) rather than time: Go 1.26's coordinator can report a
# time-limited run that ends while a starved worker is mid-input as a
# failure ("context deadline exceeded", golang/go#75804), and a count has
# no deadline. Seeds live in each package's testdata/fuzz; a finding fails
# and leaves its input there.
FUZZCHECKTIME ?= 40000x
FUZZTIME      ?= 60s
fuzzcheck:
	GO=$(GO) tools/fuzz.sh $(FUZZCHECKTIME)

fuzz:
	GO=$(GO) tools/fuzz.sh $(FUZZTIME)

# Generated files are current: datinfo's table of environment variables
# (go generate ./core) and godat(7) names every one of them; the C entry
# points, export/api.c, are what tools/apigen makes of the DAT 1.2 ABI
# facts (go generate ./export).
generated:
	$(GO) run ./tools/envgen -check tools/datinfo/env.h -man man/godat.7
	$(GO) run ./tools/apigen -check export/api.c ctest/abi/dat12-ofed-layout.tsv export/api_extra.tsv

# Every path DESIGN.md names exists.
designcheck:
	tools/designcheck.sh DESIGN.md

abi:
	ctest/abi/run.sh $(CURDIR)

headers:
	ctest/headers/run.sh $(CURDIR)

symbols: $(LIB)
	ctest/symbols.sh $(LIB) export/libdat.map

ctest: all
	$(MAKE) -C ctest check TESTENV="$(TESTENV)"

# The benchmark programs run to their end over each IA (bench/smoke.sh):
# they check every completion, so a streaming pattern that breaks a
# connection fails here; nothing is timed. About 10 s.
benchsmoke: all
	$(MAKE) -C bench smoke TESTENV="$(TESTENV)"

# The C suite against an ASan build of libdat (Go code instrumented too):
# invalid accesses and leaks of C memory fail.
ASAN := $(B)/asan
$(ASAN)/lib/libdat.so.$(VERSION): $(GOSRC) $(HEADERS)
	@mkdir -p $(ASAN)/lib
	$(GO) build -asan -buildmode=c-shared -trimpath -o $@ \
		-ldflags "-X main.sysconfdir=$(SYSCONFDIR) -extldflags '-Wl,--version-script=$(CURDIR)/export/libdat.map -Wl,-soname,libdat.so.1'" \
		./export
	@rm -f $(ASAN)/lib/libdat.h
	ln -sf libdat.so.$(VERSION) $(ASAN)/lib/libdat.so.1
	ln -sf libdat.so.1 $(ASAN)/lib/libdat.so

$(ASAN)/pkgconfig/dat.pc: pkgconfig/dat.pc.in
	@mkdir -p $(ASAN)/pkgconfig
	sed -e 's|@PREFIX@|$(CURDIR)|' -e 's|@LIBDIR@|$(CURDIR)/$(ASAN)/lib|' \
	    -e 's|@INCLUDEDIR@|$(CURDIR)/include|' -e 's|@SYSCONFDIR@|$(CURDIR)|' $< > $@

sanitize: $(ASAN)/lib/libdat.so.$(VERSION) $(ASAN)/pkgconfig/dat.pc
	ctest/sanitize.sh $(CURDIR)

# Every man page return value maps to a C test case (ctest/COVERAGE.md).
coverage:
	$(GO) run ./ctest/coverage -check ctest/coverage/retvals.tsv ctest/COVERAGE.md ctest

# Real kernel verbs (Soft-RoCE, Soft-iWARP) in a QEMU VM booting Debian's
# kernel (vm/README.md): one boot runs vm/guest-check.sh. Where the machine
# cannot boot the VM it prints one SKIP line and succeeds.
check-verbs:
	@MAKE="$(MAKE)" vm/check-verbs.sh

# The whole C suite over godat-verbs in the VM alone (about 20 min under
# TCG; check-verbs runs it among its steps).
check-verbs-ctest:
	@MAKE="$(MAKE)" VERBS_STEPS=ctest_verbs vm/check-verbs.sh

# godat over verbs beside perftest (ib_send_lat, ib_write_bw, ib_read_bw)
# on the VM's rxe0, in one boot (vm/bench-verbs.sh): raw figures and ratios,
# no assertion; not part of check. About five minutes under TCG.
bench-verbs: all
	@vm/verbs-vm.sh --prepare || { echo "bench-verbs: the verbs VM cannot run here"; exit 1; }
	@$(MAKE) --no-print-directory -C bench all TESTENV="$(TESTENV)"
	vm/verbs-vm.sh --timeout 1800 -- vm/bench-verbs.sh $(CURDIR)/$(B)/bench

# What the guest runs, built on the host; check-verbs makes it once the VM's
# packages (libibverbs-dev, librdmacm-dev) are in.
verbs-guest: $(B)/vm/verbs_smoke $(B)/vm/verbs.test all
	@$(MAKE) --no-print-directory -C ctest programs TESTENV="$(TESTENV)"

# The verbs backend's tests (rdma/verbs, with the rdmatest suite), run by
# the guest's go_verbs step.
$(B)/vm/verbs.test: $(GOSRC)
	@mkdir -p $(B)/vm
	$(GO) test -c -o $@ ./rdma/verbs

$(B)/vm/verbs_smoke: vm/smoke/verbs_smoke.c
	@mkdir -p $(B)/vm
	$(CC) -O2 -g -Wall -Wextra -Werror -o $@ $< -lrdmacm -libverbs

installcheck: all
	ctest/install.sh $(CURDIR)

install: all
	install -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR)/dat $(DESTDIR)$(SYSCONFDIR) $(DESTDIR)$(LIBDIR)/pkgconfig
	install -m 0755 $(LIB) $(DESTDIR)$(LIBDIR)/
	ln -sf libdat.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libdat.so.1
	ln -sf libdat.so.1 $(DESTDIR)$(LIBDIR)/libdat.so
	install -m 0644 $(HEADERS) $(DESTDIR)$(INCLUDEDIR)/dat/
	install -m 0644 dat.conf $(DESTDIR)$(SYSCONFDIR)/dat.conf
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man7
	@mkdir -p $(B)/install
	$(CC) $(CFLAGS) -Iinclude -o $(B)/install/datinfo tools/datinfo/datinfo.c -L$(B)/lib -Wl,-rpath,$(LIBDIR) -ldat
	install -m 0755 $(B)/install/datinfo $(DESTDIR)$(BINDIR)/datinfo
	install -m 0644 man/datinfo.1 $(DESTDIR)$(MANDIR)/man1/datinfo.1
	install -m 0644 man/godat.7 $(DESTDIR)$(MANDIR)/man7/godat.7
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(call under_prefix,$(LIBDIR))|' \
	    -e 's|@INCLUDEDIR@|$(call under_prefix,$(INCLUDEDIR))|' \
	    -e 's|@SYSCONFDIR@|$(call under_prefix,$(SYSCONFDIR))|' pkgconfig/dat.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/dat.pc

clean:
	rm -rf $(B)
