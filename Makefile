# SPDX-License-Identifier: GPL-2.0-only
#
# pybpfprof build: bpf/*.bpf.c -> .bpf.o, linked into one pybpfprof.bpf.o ->
# pybpfprof.skel.h; src/*/*.c -> pybpfprof.
# Everything generated goes under $(OUTPUT); `make V=1` shows the commands.
# CFLAGS, CPPFLAGS and LDFLAGS are the user's: the flags the build needs are
# kept apart (PB_CFLAGS) and always applied, so `make CFLAGS=-O0` keeps the
# include paths and the warnings.

# `make SANITIZE=1 check`: pybpfprof and the unit tests under ASan+UBSan, in
# their own output directory so the normal build is left as it is.
ifeq ($(SANITIZE),1)
OUTPUT ?= .output-asan
CC := clang
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
EXTRA_CFLAGS += $(SAN_FLAGS)
LDFLAGS += $(SAN_FLAGS)
BIN := $(OUTPUT)/pybpfprof
endif
OUTPUT ?= .output
BIN ?= pybpfprof
CLANG ?= clang
LLVM_STRIP ?= llvm-strip
# Debian installs bpftool in /usr/sbin, which is not on a plain user's PATH.
BPFTOOL ?= $(or $(shell command -v bpftool 2>/dev/null),/usr/sbin/bpftool)
CC ?= cc
ARCH := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
VMLINUX_DIR := vmlinux/$(ARCH)
VMLINUX_H ?= $(VMLINUX_DIR)/vmlinux.h
VERSION := 0.1.0

CFLAGS ?= -g -O2
COMMA := ,
PB_CFLAGS := -std=gnu11 -Wall -Wextra -Werror -Wno-unused-parameter -Wshadow \
	     -Wstrict-prototypes -Wmissing-prototypes -Iinclude -I$(OUTPUT) \
	     -DPYBPFPROF_VERSION='"$(VERSION)"'
ALL_CFLAGS = $(PB_CFLAGS) $(CPPFLAGS) $(CFLAGS) $(EXTRA_CFLAGS)
# Tests and fuzz targets also reach each folder's private headers (src/FOLDER/x.h).
TEST_CFLAGS = $(ALL_CFLAGS) -Isrc
LDLIBS += -lbpf -ldw -lelf -llzma -lz -lm -lcurl -lmicrohttpd -lpthread
# The tests read what pybpfprof writes with a JSON parser that is not its own.
TEST_LDLIBS := -ljansson

# clang -target bpf does not know the host's system include paths; borrow them
# (libbpf-tools does the same) so <bpf/bpf_helpers.h> and friends resolve.
CLANG_BPF_SYS_INCLUDES ?= $(shell $(CLANG) -v -E - </dev/null 2>&1 \
	| sed -n '/<...> search starts here:/,/End of search list./{ s| \(/.*\)|-idirafter \1|p }')
BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Iinclude -I$(VMLINUX_DIR) \
	      $(CLANG_BPF_SYS_INCLUDES) -Wall -Werror

# One BPF file per feature, each compiled alone, then statically linked
# (bpftool gen object) into one object: one skeleton for userspace.
BPF_SRCS := $(wildcard bpf/*.bpf.c)
BPF_HDRS := $(wildcard bpf/*.h)
# shared.bpf.o first: it defines what the others declare extern, and libbpf
# 1.1's linker places an extern map met before its definition at offset 0.
BPF_OBJS := $(patsubst bpf/%.bpf.c,$(OUTPUT)/bpf/%.bpf.o,bpf/shared.bpf.c \
	      $(filter-out bpf/shared.bpf.c,$(BPF_SRCS)))
BPF_LINKED := $(OUTPUT)/pybpfprof.bpf.o
SKELS := $(OUTPUT)/pybpfprof.skel.h
SRCS := $(wildcard src/*/*.c)
OBJS := $(patsubst src/%.c,$(OUTPUT)/src/%.o,$(SRCS))
LIB_OBJS := $(filter-out $(OUTPUT)/src/cli/main.o,$(OBJS))
# Only the objects that include the skeleton wait for (and rebuild with) the BPF side.
SKEL_USERS := $(patsubst src/%.c,$(OUTPUT)/src/%.o,$(shell grep -l 'skel\.h"' $(SRCS)))
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(OUTPUT)/tests/%,$(UNIT_SRCS))

ifeq ($(V),1)
	Q =
	msg =
else
	Q = @
	msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

.PHONY: all check check-unit check-integration tests-build check-matrix check-layout example vmlinux lint clean bench \
	bench-formats bench-native bench-scale bench-soak bench-budget bench-wall bench-signatures bench-opcodes \
	bench-peers bench-peers-self-test bench-timeline fuzz fuzz-smoke fuzz-build check-all
.DELETE_ON_ERROR:
.SECONDARY:

all: $(BIN)

$(BIN): $(OBJS)
	$(call msg,BINARY,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS) $^ $(LDLIBS) -o $@

$(OUTPUT) $(OUTPUT)/tests:
	$(Q)mkdir -p $@

$(OUTPUT)/bpf/%.bpf.o: bpf/%.bpf.c include/bpf_abi.h $(BPF_HDRS) $(VMLINUX_H) | $(OUTPUT)
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@
	$(Q)$(LLVM_STRIP) -g $@

# Maps several files use are defined once (bpf/shared.bpf.c) and declared
# extern elsewhere (bpf/shared.h); the linker resolves them.
$(BPF_LINKED): $(BPF_OBJS)
	$(call msg,BPF-LINK,$@)
	$(Q)$(BPFTOOL) gen object $@ $^

$(SKELS): $(BPF_LINKED)
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< > $@

$(SKEL_USERS): $(SKELS)

$(OUTPUT)/src/%.o: src/%.c | $(OUTPUT)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

$(OUTPUT)/tests/%: tests/unit/%.c $(LIB_OBJS) | $(OUTPUT)/tests
	$(call msg,TEST-CC,$@)
	$(Q)$(CC) $(TEST_CFLAGS) -Itests/unit -MMD -MP $< $(LIB_OBJS) $(LDLIBS) $(TEST_LDLIBS) -lcmocka -o $@

# Captures the stack walk's fixtures from live interpreters
# (tests/capture_stackwalk.sh; not part of check).
$(OUTPUT)/tests/capture_stackwalk: tests/capture_stackwalk.c $(LIB_OBJS) | $(OUTPUT)/tests
	$(call msg,TEST-CC,$@)
	$(Q)$(CC) $(TEST_CFLAGS) -Itests/unit -MMD -MP $< $(LIB_OBJS) $(LDLIBS) -o $@

# Regenerate the pinned vmlinux.h from the running kernel's BTF.
vmlinux:
	$(call msg,GEN,$(VMLINUX_DIR)/vmlinux_$(shell uname -r | cut -d. -f1-2).h)
	$(Q)$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c \
		> $(VMLINUX_DIR)/vmlinux_$(shell uname -r | cut -d. -f1-2).h
	$(Q)ln -sf vmlinux_$(shell uname -r | cut -d. -f1-2).h $(VMLINUX_DIR)/vmlinux.h

# What check runs on, built without running it (check-all builds both passes first).
tests-build: $(BIN) $(UNIT_BINS)

check-unit: $(UNIT_BINS)
	$(Q)tests/run-unit.sh $(UNIT_BINS)

check-integration: $(BIN)
	$(Q)PYBPFPROF=$(abspath $(BIN)) tests/integration/run.sh

# The README's test command: unit tests, then root integration tests on real
# CPython processes; the last line is the summary "N passed, N failed, N skipped".
# With SANITIZE=1 the same tests run against the sanitizer build, and any
# sanitizer report fails them (tests/check.sh sets the options).
check: $(BIN) $(UNIT_BINS)
	$(Q)tests/check.sh $(if $(filter 1,$(SANITIZE)),asan=$(OUTPUT)$(COMMA)sanitize,plain=$(OUTPUT))

# What CI runs: the man page, the formatting and the layout checks, check, the
# same under ASan+UBSan, then a short smoke of every fuzz target; the last line
# sums them: "N passed, N failed, N skipped".
check-all:
	$(Q)MAKE="$(MAKE)" tests/check-all.sh

# libFuzzer targets over every decoder of bytes a target controls
# (tests/fuzz/fuzz_*.c), linked with the src/ objects built again with
# sanitizer coverage under $(FUZZ_OUT). `make fuzz` runs each for
# FUZZ_SECONDS from its seed corpus (tests/fuzz/corpus/NAME) plus seeds taken
# from this machine's interpreters; new inputs and crashes go to
# $(FUZZ_OUT), never into the repository. A crash fails the target.
# FUZZ_RUNS=N (environment) also stops each target after N executions.
FUZZ_SECONDS ?= 60
FUZZ_OUT := $(OUTPUT)/fuzz
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_NAMES := $(patsubst tests/fuzz/fuzz_%.c,%,$(wildcard tests/fuzz/fuzz_*.c))
FUZZ_BINS := $(patsubst %,$(FUZZ_OUT)/fuzz_%,$(FUZZ_NAMES))
FUZZ_LIB_OBJS := $(patsubst $(OUTPUT)/src/%.o,$(FUZZ_OUT)/src/%.o,$(LIB_OBJS))

$(FUZZ_OUT):
	$(Q)mkdir -p $@

$(patsubst $(OUTPUT)/src/%.o,$(FUZZ_OUT)/src/%.o,$(SKEL_USERS)): $(SKELS)

$(FUZZ_OUT)/src/%.o: src/%.c | $(FUZZ_OUT)
	$(call msg,FUZZ-CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(ALL_CFLAGS) -fsanitize=fuzzer-no-link $(FUZZ_SAN) -MMD -MP -c $< -o $@

$(FUZZ_OUT)/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz.h $(FUZZ_LIB_OBJS) | $(FUZZ_OUT)
	$(call msg,FUZZ-LD,$@)
	$(Q)$(CLANG) $(TEST_CFLAGS) -Itests/fuzz -fsanitize=fuzzer $(FUZZ_SAN) -MMD -MP $< \
		$(FUZZ_LIB_OBJS) $(LDLIBS) $(TEST_LDLIBS) -o $@

fuzz-build: $(FUZZ_BINS)

fuzz: $(FUZZ_BINS)
	$(Q)FUZZ_OUT=$(FUZZ_OUT) tests/fuzz/run.sh $(FUZZ_SECONDS) $(FUZZ_NAMES)

# The CI smoke: every target for 10 s.
fuzz-smoke: $(FUZZ_BINS)
	$(Q)FUZZ_OUT=$(FUZZ_OUT) tests/fuzz/run.sh 10 $(FUZZ_NAMES)

# The version matrix alone (make check runs it too): prepares the Debian
# release directories if needed (tests/debian-roots.sh, cached), then runs the
# harness's discovery check and the per-interpreter tests on every build:
# pyenv's shared builds and the chrooted Debian builds.
check-matrix: SHELL := /bin/bash
check-matrix: pybpfprof
	$(Q). tests/as-root.sh && as_root tests/debian-roots.sh >/dev/null && \
	as_root tests/integration/run.sh harness_discovery 'split_*' 'hotline_*' \
		pid_namespace error_unsupported_version

# Profiles the bundled example workload for 5 seconds and prints the report
# (as root: through sudo when make is not run as root).
PYTHON ?= /usr/bin/python3
SUDO ?= $(if $(filter 0,$(shell id -u)),,sudo)
example: pybpfprof
	@$(PYTHON) examples/busy.py 10 > /dev/null & pid=$$!; sleep 0.5; \
	$(SUDO) ./pybpfprof -p $$pid -d 5; status=$$?; kill $$pid 2>/dev/null; exit $$status

bench: pybpfprof
	bench/overhead.sh

# --mode wall's cost on a socket ping-pong: slowdown and BPF ns per switch (not part of check).
bench-wall: pybpfprof
	bench/wall.sh

# --native and --kernel: target slowdown, BPF cost per sample, unwinding cost.
bench-native: pybpfprof
	bench/native.sh

# What writing each report format costs on a large synthetic profile (no root).
$(OUTPUT)/bench/formats: bench/formats.c $(LIB_OBJS)
	$(call msg,BENCH-CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(TEST_CFLAGS) -MMD -MP $< $(LIB_OBJS) $(LDLIBS) -o $@

bench-formats: $(OUTPUT)/bench/formats
	$(Q)$<

# What --timeline adds per CPU sample, and what its writers cost (no root).
$(OUTPUT)/bench/timeline: bench/timeline.c $(LIB_OBJS)
	$(call msg,BENCH-CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(TEST_CFLAGS) -MMD -MP $< $(LIB_OBJS) $(LDLIBS) -o $@

bench-timeline: $(OUTPUT)/bench/timeline
	$(Q)$<

# What --signatures costs per sample, BPF and userspace (root; not part of check).
bench-signatures: pybpfprof
	bench/signatures.sh

# What --opcodes and the exception state read cost per sample in BPF (root; not part of check).
bench-opcodes: pybpfprof
	bench/opcodes.sh

# 100 busy CPython processes profiled at once with -a (not part of check).
bench-scale: pybpfprof
	bench/scale.py 100 10 99

# The agent for 30 minutes over 50 processes with churn, its RSS and CPU drawn
# in bench/agent_soak.svg (not part of check; BENCH_SECONDS shortens it).
bench-soak: pybpfprof
	$(SUDO) $(PYTHON) bench/agent_soak.py

# The agent's overhead budget: 50 busy processes at -F 999 fixed, then with
# --max-overhead 1, its cost and rate every interval drawn in bench/agent_budget.svg
# (not part of check; about 12 minutes; BENCH_SECONDS shortens it).
bench-budget: pybpfprof
	$(SUDO) $(PYTHON) bench/agent_budget.py

# pybpfprof against cProfile, yappi, scalene, line_profiler, Austin,
# pyinstrument, memray (installs them first) and CPython 3.15's own sampler
# (Tachyon); rewrites the peers section of BENCHMARKS.md and bench/peers.svg
# from one run (not part of check; about 25 minutes; PEERS_ARGS=--quick to try
# it out).
bench-peers: pybpfprof
	$(SUDO) bench/peers --benchmarks BENCHMARKS.md --svg bench/peers.svg $(PEERS_ARGS)

bench-peers-self-test:
	$(Q)$(PYTHON) bench/peers.py --self-test

# The source tree's shape: no folder includes from or calls into a folder
# above it, no dependency cycle between objects, no function over 80 lines
# (main over 60). See tests/check-layout.py and the README's Layout section.
check-layout: $(OBJS)
	$(Q)tests/check-layout.py $(OBJS)

# Static analysis of the userspace code and unit tests (cppcheck, on every
# machine of this kind). LIBBPF_OPTS is libbpf's macro, spelled out for it.
lint: $(SKELS)
	cppcheck --enable=warning,portability,performance --std=c11 -q --error-exitcode=1 \
		'-DLIBBPF_OPTS(t,n,...)=struct t n = {__VA_ARGS__}' -I include -I src -I $(OUTPUT) \
		src/*/*.c tests/unit/*.c

clean:
	rm -rf $(OUTPUT) .output-asan $(BIN) pybpfprof

-include $(wildcard $(OUTPUT)/src/*/*.d $(OUTPUT)/tests/*.d $(OUTPUT)/bench/*.d \
	$(FUZZ_OUT)/src/*/*.d $(FUZZ_OUT)/*.d)

# ---- Install, man page, formatting -----------------------------------------
# `make install [PREFIX=/usr/local] [DESTDIR=]`: the binary in sbin (it needs
# root), its man page, and the agent's systemd unit with its options file
# (SYSCONFDIR/default/pybpfprof, kept if it exists: it is the admin's); `make
# uninstall` removes the binary, the page and the unit.
PREFIX ?= /usr/local
SBINDIR ?= $(PREFIX)/sbin
MANDIR ?= $(PREFIX)/share/man
UNITDIR ?= $(PREFIX)/lib/systemd/system
SYSCONFDIR ?= /etc
INSTALL ?= install

install: $(BIN)
	$(call msg,INSTALL,$(DESTDIR)$(SBINDIR)/pybpfprof)
	$(Q)$(INSTALL) -D -m 755 $(BIN) $(DESTDIR)$(SBINDIR)/pybpfprof
	$(call msg,INSTALL,$(DESTDIR)$(MANDIR)/man8/pybpfprof.8)
	$(Q)$(INSTALL) -D -m 644 man/pybpfprof.8 $(DESTDIR)$(MANDIR)/man8/pybpfprof.8
	$(call msg,INSTALL,$(DESTDIR)$(UNITDIR)/pybpfprof.service)
	$(Q)mkdir -p $(DESTDIR)$(UNITDIR)
	$(Q)sed -e 's|@SBINDIR@|$(SBINDIR)|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' \
		-e 's|@UNITDIR@|$(UNITDIR)|g' systemd/pybpfprof.service.in \
		>$(DESTDIR)$(UNITDIR)/pybpfprof.service
	$(Q)chmod 644 $(DESTDIR)$(UNITDIR)/pybpfprof.service
	$(Q)[ -e $(DESTDIR)$(SYSCONFDIR)/default/pybpfprof ] || \
		$(INSTALL) -D -m 600 systemd/pybpfprof.default $(DESTDIR)$(SYSCONFDIR)/default/pybpfprof

uninstall:
	$(call msg,RM,$(DESTDIR)$(SBINDIR)/pybpfprof $(DESTDIR)$(MANDIR)/man8/pybpfprof.8)
	$(Q)rm -f $(DESTDIR)$(SBINDIR)/pybpfprof $(DESTDIR)$(MANDIR)/man8/pybpfprof.8 \
		$(DESTDIR)$(UNITDIR)/pybpfprof.service

# The man page against the binary's --help, and rendered with every warning.
check-man: $(BIN)
	$(Q)tests/check-man.sh $(abspath $(BIN)) man/pybpfprof.8

# C sources and headers under these folders, at any depth, except generated
# ones ("Generated; do not edit"), formatted by .clang-format (clang-format 14).
CLANG_FORMAT ?= clang-format
FORMAT_DIRS := src include bpf tests/unit tests/fuzz
FORMAT_FILES = $(shell find $(FORMAT_DIRS) -type f -name '*.[ch]' 2>/dev/null | sort | \
		 xargs -r grep -L 'Generated; do not edit')

format:
	$(call msg,FORMAT,$(words $(FORMAT_FILES)) files)
	$(Q)$(CLANG_FORMAT) -i --style=file $(FORMAT_FILES)

# Lists each file clang-format would change (with how many of its lines), and fails if any.
format-check:
	$(Q)n=0 lines=0; for f in $(FORMAT_FILES); do \
		d=$$($(CLANG_FORMAT) --style=file "$$f" | diff "$$f" - | grep -c '^<'); \
		[ "$$d" -eq 0 ] || { echo "  $$f ($$d lines)"; n=$$((n + 1)) lines=$$((lines + d)); }; \
	done; \
	echo "format-check: $$n of $(words $(FORMAT_FILES)) files ($$lines lines) differ from" \
		"clang-format $$($(CLANG_FORMAT) --version | sed 's/.*version //') (make format rewrites them)"; \
	[ $$n -eq 0 ]

.PHONY: install uninstall check-man format format-check
