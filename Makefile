# qplab — build, test, lab, bench, fuzz, install.
#
# User CFLAGS/LDFLAGS are added to ours, never replace them.  Every install
# path honours DESTDIR.  BUILD selects the output directory, so the
# sanitizer build lives beside the plain one without mixing objects.

SHELL      := /bin/bash

PREFIX     ?= /usr/local
LIBDIR     ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
BINDIR     ?= $(PREFIX)/bin
LIBEXECDIR ?= $(PREFIX)/libexec
DATADIR    ?= $(PREFIX)/share
DESTDIR    ?=

BUILD      ?= build
CC         ?= cc
WERROR     ?= 1
SANITIZE   ?= 0
FUZZ_SECONDS ?= 60
TEST_PREFIX ?=
VERSION    := 0.1.0

PKGS       := json-c
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null || echo -ljson-c)
CHECK_CFLAGS := $(shell pkg-config --cflags check 2>/dev/null)
CHECK_LIBS   := $(shell pkg-config --libs check 2>/dev/null || echo -lcheck -lsubunit -lrt -lm -pthread)
VERBS_LIBS := -libverbs
SYS_LIBS   := -lpthread -lm

WARN := -Wall -Wextra -Wstrict-prototypes -Wmissing-prototypes -Wwrite-strings \
        -Wshadow -Wformat=2 -Wno-format-nonliteral
ifeq ($(WERROR),1)
WARN += -Werror
endif
REAL_CFLAGS := -std=c11 -D_GNU_SOURCE -O2 -g $(WARN) -fPIC -fvisibility=hidden \
               $(PKG_CFLAGS) -MMD -MP $(CFLAGS)
ifeq ($(SANITIZE),1)
REAL_CFLAGS += -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all
SAN_LDFLAGS := -fsanitize=address,undefined
endif
ifeq ($(SANITIZE),thread)
REAL_CFLAGS += -O1 -fno-omit-frame-pointer -fsanitize=thread
SAN_LDFLAGS := -fsanitize=thread
endif
REAL_LDFLAGS := $(SAN_LDFLAGS) $(LDFLAGS)

LIB_SRC    := $(sort $(wildcard lib/*/*.c))
HARNESS_SRC := $(sort $(wildcard harness/*/*.c))
# The Mooncake adapter's pure part (mooncake/proto*.c): in the unit tests
# always; the rest of mooncake/ is built only against a Mooncake build.
MCPROTO_SRC := $(sort $(wildcard mooncake/proto*.c))
UNIT_SRC   := $(sort $(wildcard tests/unit/*.c tests/unit/*/*.c))
RDMA_SRC   := $(sort $(wildcard tests/rdma/*.c))
FUZZ_SRC   := $(sort $(wildcard fuzz/*.c))
BENCH_SRC  := $(sort $(wildcard bench/*.c))

LIB_OBJ     := $(LIB_SRC:%.c=$(BUILD)/obj/%.o)
HARNESS_OBJ := $(HARNESS_SRC:%.c=$(BUILD)/obj/%.o)
UNIT_OBJ    := $(UNIT_SRC:%.c=$(BUILD)/obj/%.o)
MCPROTO_OBJ := $(MCPROTO_SRC:%.c=$(BUILD)/obj/%.o)
RDMA_OBJ    := $(RDMA_SRC:%.c=$(BUILD)/obj/%.o)
UNIT_SUITES := $(patsubst test_%.c,%,$(filter test_%.c,$(notdir $(UNIT_SRC))))
RDMA_SUITES := $(patsubst tests/rdma/test_%.c,%,$(filter tests/rdma/test_%.c,$(RDMA_SRC)))

STATIC_LIB := $(BUILD)/libqphs.a
SHARED_LIB := $(BUILD)/libqphs.so
QPLAB      := $(BUILD)/qplab
LIBS_ALL   := $(STATIC_LIB) $(PKG_LIBS) $(VERBS_LIBS) $(SYS_LIBS)


.PHONY: hostile all unit check-layers lint-shell compat vmtest-hosts mooncake-diff mooncake-agent mooncake-check lab-mooncake wire-test ci-validate browser-test vmtest check sanitize tsan valgrind fuzz fuzz-long bench lab quirks install uninstall clean deps-check help
.DEFAULT_GOAL := all

all: $(STATIC_LIB) $(SHARED_LIB) $(QPLAB)

help:
	@echo "make            build $(STATIC_LIB), $(SHARED_LIB), $(QPLAB)"
	@echo "make check      the test command: unit tests, the hostile peer, then the lab self-tests"
	@echo "make hostile    a hostile peer against qplab hs serve on loopback (tests/hostile/run.sh)"
	@echo "make lab        the scenario catalogue on the best backend"
	@echo "make unit       Check unit tests only (no RDMA, no root), then check-layers, lint-shell,"
	@echo "                the README catalogue check and tests/bench/flame.sh"
	@echo "make check-layers  the layer rules of README's Layout (tools/check-layers)"
	@echo "make lint-shell every tracked shell script through shellcheck; set -eu in netns/"
	@echo "make vmtest     the tests that need rdma_rxe, in the lab VM (one boot per kernel), then vmtest-hosts"
	@echo "make vmtest-hosts  the hosts backend on two lab VMs of different kernels (tests/vm/hosts-vm.sh)"
	@echo "make compat     the message bodies against Mooncake's JSON library"
	@echo "make mooncake-diff MOONCAKE_BUILD=DIR  our segment descriptor through Mooncake's own decoder (else SKIP)"
	@echo "make mooncake-agent MOONCAKE_BUILD=DIR  $(BUILD)/mooncake/qplab-mooncake-agent: a real Mooncake as a lab host"
	@echo "make lab-mooncake MOONCAKE_BUILD=DIR  the interop slice once per placement (else SKIP; part of make lab)"
	@echo "make ci-validate  the Vagrantfile and .github/workflows through vagrant validate and action-validator"
	@echo "make wire-test  the Wireshark dissector through tshark: golden frames, bad frames, loopback captures"
	@echo "make browser-test  report.html of 100 scenarios on 3 kernels in headless Chromium: DOM checks, a screenshot"
	@echo "make sanitize   unit tests under ASan+UBSan (build/sanitize)"
	@echo "make tsan       unit tests under ThreadSanitizer (build/tsan); build/tsan/tests/rdma for the VM"
	@echo "make valgrind   unit tests under valgrind"
	@echo "make fuzz       libFuzzer targets, FUZZ_SECONDS=$(FUZZ_SECONDS) each"
	@echo "make fuzz-long  each libFuzzer target to FUZZ_RUNS=$(FUZZ_RUNS) executions (hours; not in CI)"
	@echo "make quirks     docs/quirks.md: qplab quirks in the lab VM, per kernel and per quirk profile"
	@echo "make bench      benchmarks (prints figures)"
	@echo "make install    PREFIX=$(PREFIX) DESTDIR=$(DESTDIR): libqphs, qphs.h and qphs/*.h (error log config"
	@echo "                json frame addr body daemon client rdma probe), qphs.pc, qplab, netns/, scenarios/,"
	@echo "                the Wireshark dissector (share/qplab/wireshark/mooncake.lua)"

# The lab's constants (subnets, table base, host limit, name prefix, state
# directory) are defined once, in netns/lab.conf, which the netns/ scripts
# source; the C side gets them as build/gen/lab_conf.h (QPLAB_LAB_NAME: a
# number when the value is all digits, else a string).  A line that is not
# NAME=VALUE (or a comment) stops the build.
LAB_CONF_H := $(BUILD)/gen/lab_conf.h
$(LAB_CONF_H): netns/lab.conf Makefile
	@mkdir -p $(@D)
	@awk 'BEGIN { print "/* Generated from netns/lab.conf by the Makefile: edit that file. */"; \
	    print "#ifndef QPLAB_LAB_CONF_H"; print "#define QPLAB_LAB_CONF_H" } \
	  /^[ \t]*(#|$$)/ { next } \
	  /^QPLAB_[A-Z0-9_]+=[^ \t"#]+([ \t]+#.*)?$$/ { split($$0, kv, "="); v = kv[2]; sub(/[ \t].*/, "", v); \
	    n = substr(kv[1], 7); if (v ~ /^[0-9]+$$/) print "#define QPLAB_LAB_" n " " v; \
	    else print "#define QPLAB_LAB_" n " \"" v "\""; next } \
	  { print FILENAME ":" NR ": not NAME=VALUE: " $$0 > "/dev/stderr"; bad = 1; exit 1 } \
	  END { if (!bad) print "#endif" }' netns/lab.conf > $@.tmp || { rm -f $@.tmp; exit 1; }
	@mv $@.tmp $@

# Include paths per target (the layer rules of README's Layout): lib/ sees
# its own folders, everything else sees lib/include only, plus its own.
# The generated headers ($(BUILD)/gen) are on every path.
LIB_INC     := -Ilib/include -Ilib
HARNESS_INC := -Ilib/include -Iharness -I$(BUILD)/gen
$(BUILD)/obj/lib/%.o: lib/%.c
	@mkdir -p $(@D)
	$(CC) $(REAL_CFLAGS) $(LIB_INC) -c $< -o $@
$(BUILD)/obj/harness/%.o: harness/%.c | $(LAB_CONF_H)
	@mkdir -p $(@D)
	$(CC) $(REAL_CFLAGS) $(HARNESS_INC) -c $< -o $@
MOONCAKE_INC := -Ilib/include -Iharness -Imooncake
$(BUILD)/obj/mooncake/%.o: mooncake/%.c
	@mkdir -p $(@D)
	$(CC) $(REAL_CFLAGS) $(MOONCAKE_INC) -c $< -o $@

$(STATIC_LIB): $(LIB_OBJ)
	@mkdir -p $(@D)
	rm -f $@
	ar rcs $@ $^

$(SHARED_LIB): $(LIB_OBJ)
	@mkdir -p $(@D)
	$(CC) -shared -Wl,-soname,libqphs.so.0 $(REAL_LDFLAGS) -o $@ $^ $(PKG_LIBS) $(VERBS_LIBS) $(SYS_LIBS)

$(QPLAB): $(HARNESS_OBJ) $(STATIC_LIB)
	$(CC) -Wl,--build-id=sha1 $(REAL_LDFLAGS) -o $@ $(HARNESS_OBJ) $(LIBS_ALL)

# The unit runner's suite list comes from the file names: tests/unit/test_NAME.c
# defines `Suite *suite_NAME(void)`.
$(BUILD)/gen/unit_suites.h: $(UNIT_SRC) Makefile
	@mkdir -p $(@D)
	@printf '%s\n' $(foreach s,$(UNIT_SUITES),"SUITE($(s))") > $@.tmp
	@cmp -s $@.tmp $@ || mv $@.tmp $@; rm -f $@.tmp
$(BUILD)/gen/rdma_suites.h: $(RDMA_SRC) Makefile
	@mkdir -p $(@D)
	@printf '%s\n' $(foreach s,$(RDMA_SUITES),"SUITE($(s))") > $@.tmp
	@cmp -s $@.tmp $@ || mv $@.tmp $@; rm -f $@.tmp

# Library suites test lib/'s private codecs on purpose; lab suites see the
# harness and the public API.
$(BUILD)/obj/tests/unit/lib/%.o: tests/unit/lib/%.c $(BUILD)/gen/unit_suites.h
	@mkdir -p $(@D)
	$(CC) $(REAL_CFLAGS) $(LIB_INC) -I$(BUILD)/gen -Itests/unit $(CHECK_CFLAGS) -c $< -o $@
$(BUILD)/obj/tests/unit/lab/%.o: tests/unit/lab/%.c $(BUILD)/gen/unit_suites.h | $(LAB_CONF_H)
	@mkdir -p $(@D)
	$(CC) $(REAL_CFLAGS) $(HARNESS_INC) -Itests/unit -Itests/unit/lab $(CHECK_CFLAGS) -c $< -o $@
$(BUILD)/obj/tests/unit/mooncake/%.o: tests/unit/mooncake/%.c $(BUILD)/gen/unit_suites.h
	@mkdir -p $(@D)
	$(CC) $(REAL_CFLAGS) -Ilib/include -Imooncake -I$(BUILD)/gen -Itests/unit $(CHECK_CFLAGS) -c $< -o $@
$(BUILD)/obj/tests/unit/%.o: tests/unit/%.c $(BUILD)/gen/unit_suites.h
	@mkdir -p $(@D)
	$(CC) $(REAL_CFLAGS) -Ilib/include -I$(BUILD)/gen -Itests/unit $(CHECK_CFLAGS) -c $< -o $@
$(BUILD)/obj/tests/rdma/%.o: tests/rdma/%.c $(BUILD)/gen/rdma_suites.h | $(LAB_CONF_H)
	@mkdir -p $(@D)
	$(CC) $(REAL_CFLAGS) $(LIB_INC) -I$(BUILD)/gen -Itests/unit -Itests/rdma $(CHECK_CFLAGS) -c $< -o $@

HARNESS_LIBOBJ := $(filter-out $(BUILD)/obj/harness/cli/main.o,$(HARNESS_OBJ))
$(BUILD)/tests/unit: $(UNIT_OBJ) $(HARNESS_LIBOBJ) $(MCPROTO_OBJ) $(STATIC_LIB)
	@mkdir -p $(@D)
	$(CC) $(REAL_LDFLAGS) -o $@ $(UNIT_OBJ) $(HARNESS_LIBOBJ) $(MCPROTO_OBJ) $(LIBS_ALL) $(CHECK_LIBS)
# The rdma runner shares the deadline and error-hit helpers of the unit runner.
$(BUILD)/tests/rdma: $(RDMA_OBJ) $(BUILD)/obj/tests/unit/unit_common.o $(STATIC_LIB)
	@mkdir -p $(@D)
	$(CC) $(REAL_LDFLAGS) -o $@ $(RDMA_OBJ) $(BUILD)/obj/tests/unit/unit_common.o $(LIBS_ALL) $(CHECK_LIBS)

deps-check:
	@scripts/deps.sh --ensure

unit: deps-check all $(BUILD)/tests/unit $(BUILD)/bench/flame check-layers lint-shell
	QPLAB_BUILD=$(BUILD) $(TEST_PREFIX) $(BUILD)/tests/unit
	tests/docs/readme-catalogue.sh .
	tests/bench/flame.sh $(BUILD)/bench/flame

# A hostile peer against qplab hs serve on loopback, at a small scale
# (tests/hostile/run.sh, bench/hs_attack.c --check; about 10 s).
hostile: deps-check $(QPLAB) $(BUILD)/bench/hs_attack
	tests/hostile/run.sh $(BUILD)

# The layer rules (README's Layout): tools/check-layers over the tree, and
# over the fixtures of tests/layers that prove each rule fires.
$(BUILD)/tools/check-layers: tools/check-layers.c
	@mkdir -p $(@D)
	$(CC) -std=c11 -O2 -g $(WARN) $(CFLAGS) -o $@ $< $(LDFLAGS)
check-layers: $(BUILD)/tools/check-layers $(BUILD)/gen/unit_suites.h $(BUILD)/gen/rdma_suites.h $(LAB_CONF_H)
	$(BUILD)/tools/check-layers --cc "$(CC)" --gen $(BUILD)/gen --ignore $(BUILD)
	tests/layers/run.sh $(BUILD)/tools/check-layers

lint-shell:
	tests/lint/shell.sh .

check: deps-check
	$(MAKE) unit
	$(MAKE) hostile
	$(MAKE) compat
	$(MAKE) mooncake-check
	$(MAKE) wire-test
	$(MAKE) ci-validate
	$(MAKE) browser-test
	$(MAKE) vmtest

# The Vagrantfile, the CI workflow and the Vagrant inventory, checked by
# their own tools (tests/ci/validate.sh: vagrant validate, action-validator).
ci-validate: deps-check
	tests/ci/validate.sh

# The tests that need real rxe: one VM boot per lab kernel, the full set on
# the newest, the smoke set on the others (tests/vm/run-selftests.sh).
vmtest: deps-check all $(BUILD)/tests/rdma
	QPLAB_BUILD=$(BUILD) tests/vm/run-selftests.sh $(VMTEST_ARGS)
	$(MAKE) vmtest-hosts

# The hosts backend on two guests of different kernels, booted together
# (`qplab vm --guest`, `qplab run --backend hosts-vm`): HOSTS_VM_KERNELS
# names the pair.
HOSTS_VM_KERNELS ?= 6.1 7
vmtest-hosts: deps-check all
	QPLAB_BUILD=$(BUILD) tests/vm/hosts-vm.sh $(HOSTS_VM_KERNELS)

# The differential test of the message bodies against jsoncpp 1.9.5, the JSON
# library Mooncake links (tests/compat/run.sh).
compat: deps-check $(STATIC_LIB)
	BUILD=$(BUILD) tests/compat/run.sh
	$(MAKE) mooncake-diff

# Our segment descriptor against a real Mooncake build's decodeSegmentDesc
# and RdmaTransport::selectDevice, in the lab VM (tests/mooncake/
# segment-diff.sh): MOONCAKE_BUILD=DIR names the build; without it, a SKIP
# with the reason.
MOONCAKE_BUILD ?=
mooncake-diff: all
	QPLAB_BUILD=$(abspath $(BUILD)) tests/mooncake/segment-diff.sh $(MOONCAKE_BUILD)

# qplab-mooncake-agent (mooncake/): a real Mooncake Transfer Engine as a lab
# host, built against MOONCAKE_BUILD by scripts/mooncake-agent.sh; make
# check builds it when MOONCAKE_BUILD is given, make lab runs the interop
# slice with it (lab-mooncake), each a SKIP with the reason without one.
MOONCAKE_AGENT := $(BUILD)/mooncake/qplab-mooncake-agent
mooncake-agent: all
	BUILD=$(BUILD) CC="$(CC)" scripts/mooncake-agent.sh $(MOONCAKE_BUILD)
mooncake-check:
	@if [ -n "$(MOONCAKE_BUILD)" ]; then $(MAKE) mooncake-agent; \
	else echo "ok - mooncake-agent # SKIP no Mooncake build (make check MOONCAKE_BUILD=DIR builds the adapter; README, \"Building Mooncake for the lab\")"; fi
# The interop slice (scenarios tagged interop), once per placement each
# lists; results in $(BUILD)/lab-mooncake/.
lab-mooncake:
	@if [ -z "$(MOONCAKE_BUILD)" ]; then \
	  echo "# interop slice: SKIP no Mooncake build (make lab MOONCAKE_BUILD=DIR: README, \"Mooncake hosts\")"; \
	else $(MAKE) mooncake-agent && \
	  $(QPLAB) run scenarios --tag interop --placements --mooncake-agent $(MOONCAKE_AGENT) \
	    $(foreach k,$(KERNELS),--kernel $(k)) --out $(BUILD)/lab-mooncake $(LAB_ARGS); fi

# The Wireshark dissector (wireshark/mooncake.lua) through tshark, against
# qplab hs decode: synthetic captures built by tests/wire/pcapgen, and
# loopback captures of hs send and hs serve (tests/wire/run.sh).
$(BUILD)/tests/pcapgen: tests/wire/pcapgen.c
	@mkdir -p $(@D)
	$(CC) -std=c11 -D_GNU_SOURCE -O2 -g $(WARN) $(CFLAGS) -o $@ $< $(LDFLAGS)
wire-test: deps-check $(QPLAB) $(BUILD)/tests/pcapgen
	BUILD=$(BUILD) tests/wire/run.sh

# report.html in a real browser: a made-up results document of 100
# scenarios on three kernels through `qplab report`, loaded by Debian's
# headless Chromium through playwright-core (tests/browser/run.sh; the
# screenshot lands in $(BUILD)/browser/report.png).
browser-test: deps-check $(QPLAB)
	BUILD=$(BUILD) tests/browser/run.sh

sanitize: deps-check
	$(MAKE) BUILD=build/sanitize SANITIZE=1 QPLAB_TIME_MULTIPLIER=$${QPLAB_TIME_MULTIPLIER:-3} unit

# ThreadSanitizer: the library, qplab and the unit suites built with
# -fsanitize=thread in build/tsan.  halt_on_error: a report ends the test
# that caused it, which Check then counts as an error; lock-order inversions
# (potential deadlocks) are reports too.  setarch -R runs without address
# randomisation: TSan's shadow memory layout does not fit every address a
# kernel with large vm.mmap_rnd_bits hands out.  Suppressions, each with
# the reason its race is benign, are in tests/tsan.supp.
tsan: deps-check
	TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$(CURDIR)/tests/tsan.supp $${TSAN_OPTIONS:-}" \
	  $(MAKE) BUILD=build/tsan SANITIZE=thread QPLAB_TIME_MULTIPLIER=$${QPLAB_TIME_MULTIPLIER:-5} \
	  TEST_PREFIX="setarch -R" unit

valgrind: deps-check
	CK_FORK=no QPLAB_TIME_MULTIPLIER=$${QPLAB_TIME_MULTIPLIER:-20} $(MAKE) unit \
	  TEST_PREFIX="valgrind -q --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite,indirect --show-leak-kinds=definite,indirect"

# make quirks: the driver quirk matrices of docs/quirks.md, from `qplab quirks`
# in the lab VM: one boot per kernel of QUIRKS_KERNELS, one more for the quirk
# profiles on QUIRKS_PROFILE_KERNEL (scripts/quirks-doc.sh); JSON in $(BUILD)/quirks/.
QUIRKS_KERNELS ?= 6.1 6.12 7
QUIRKS_PROFILE_KERNEL ?= 7
quirks: deps-check all
	QPLAB_BUILD=$(BUILD) QUIRKS_KERNELS="$(QUIRKS_KERNELS)" \
	  QUIRKS_PROFILE_KERNEL=$(QUIRKS_PROFILE_KERNEL) scripts/quirks-doc.sh $(QPLAB)

# libFuzzer targets: fuzz/NAME.c each becomes build/fuzz/NAME, linked with
# the library and the harness's scenario parser and JSON reader (pure code,
# no main).  The code under test is compiled once (instrumented, no
# libFuzzer main) into one archive that every target links.
FUZZ_CC := clang
FUZZ_SAN := -fsanitize=address,undefined
FUZZ_CFLAGS := -std=c11 -D_GNU_SOURCE -g -O1 $(FUZZ_SAN) -Ilib/include -Ilib -Iharness \
               -I$(BUILD)/gen $(PKG_CFLAGS)
FUZZ_BINS := $(FUZZ_SRC:fuzz/%.c=$(BUILD)/fuzz/%)
FUZZ_LINK := $(LIB_SRC) $(sort $(wildcard harness/scenario/*.c)) harness/cli/jread.c \
             harness/cli/readfile.c harness/cli/labwords.c harness/run/agent_msg.c \
             harness/run/agent_facts.c harness/agent/agent_cfg.c
FUZZ_OBJ := $(FUZZ_LINK:%.c=$(BUILD)/fuzz/obj/%.o)
$(BUILD)/fuzz/obj/%.o: %.c | $(LAB_CONF_H)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -MMD -MP -c $< -o $@
$(BUILD)/fuzz/libtarget.a: $(FUZZ_OBJ)
	rm -f $@ && ar rcs $@ $^
-include $(FUZZ_OBJ:.o=.d)
$(BUILD)/fuzz/%: fuzz/%.c $(BUILD)/fuzz/libtarget.a $(wildcard lib/include/qphs/*.h harness/scenario/*.h) $(LAB_CONF_H)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< $(BUILD)/fuzz/libtarget.a $(PKG_LIBS) $(VERBS_LIBS) $(SYS_LIBS)
# One recipe for both: fuzz runs each target for FUZZ_SECONDS, fuzz-long
# each to FUZZ_RUNS executions (hours; not in CI).  Each target is its own
# goal (fuzz-for-NAME, fuzz-to-NAME), so `make -j2 -O fuzz-long` runs two at
# once and prints each target's lines together when it ends.  Corpora stay
# in build/fuzz/corpus-NAME, so a later run starts where the last one ended.
FUZZ_RUNS ?= 10000000
FUZZ_NAMES := $(FUZZ_SRC:fuzz/%.c=%)
# $(1) the target, $(2) libFuzzer's flags, $(3) the words after its name;
# FUZZ_FLAGS_NAME, where set, adds that target's own flags.  The daemon
# target's scripts cost a real round trip per operation: longer ones only
# made runs slower (700-byte scripts ran 770 runs a second).
FUZZ_FLAGS_fuzz_daemon_conn := -max_len=128
# The fast Connection reader's differential only compares the bodies the
# fast reader reads: the keys and tokens of one help the fuzzer make them.
FUZZ_FLAGS_fuzz_hs_desc_fast := -dict=fuzz/fuzz_hs_desc_fast.dict
define fuzz_one
	@n=$(1); f=$(BUILD)/fuzz/$$n; mkdir -p $(BUILD)/fuzz/corpus-$$n; \
	seeds=; [ -d fuzz/seeds/$$n ] && seeds=fuzz/seeds/$$n; \
	flags='$(FUZZ_FLAGS_$(1))'; \
	echo "# fuzz $$n $(3)$${flags:+ ($$flags)}"; t0=$$(date +%s); \
	rc=0; $$f $(2) $$flags -print_final_stats=1 -artifact_prefix=$(BUILD)/fuzz/ \
	    $(BUILD)/fuzz/corpus-$$n $$seeds > $(BUILD)/fuzz/$$n.log 2>&1 || rc=$$?; \
	if [ $$rc = 0 ] || [ $$rc = 72 ]; then \
	  grep -E 'stat::number_of_executed_units|stat::average_exec_per_sec|^Done' $(BUILD)/fuzz/$$n.log; \
	  echo "# fuzz $$n: $$(( $$(date +%s) - t0 )) s"; \
	  if [ $$rc = 72 ]; then echo "# fuzz $$n: interrupted (SIGINT) before the end"; exit 1; fi; \
	else \
	  grep -E 'ERROR|SUMMARY|Test unit written|^fuzz_' $(BUILD)/fuzz/$$n.log; \
	  echo "# fuzz $$n found a problem: $(BUILD)/fuzz/$$n.log"; exit 1; \
	fi
endef
fuzz: $(FUZZ_NAMES:%=fuzz-for-%)
fuzz-long: $(FUZZ_NAMES:%=fuzz-to-%)
fuzz-for-%: deps-check $(BUILD)/fuzz/%
	$(call fuzz_one,$*,-max_total_time=$(FUZZ_SECONDS),for $(FUZZ_SECONDS)s)
fuzz-to-%: deps-check $(BUILD)/fuzz/%
	$(call fuzz_one,$*,-runs=$(FUZZ_RUNS),to $(FUZZ_RUNS) executions)

BENCH_BINS := $(BENCH_SRC:bench/%.c=$(BUILD)/bench/%)
$(BUILD)/bench/%: bench/%.c $(STATIC_LIB)
	@mkdir -p $(@D)
	$(CC) $(REAL_CFLAGS) -Ilib/include -c $< -o $@.o
	$(CC) $(REAL_LDFLAGS) -o $@ $@.o $(LIBS_ALL)
# make bench PROFILE=1: also profiles (linux-perf, cpu-clock) hs serve under
# load and, in the VM, bursts of ours and of rdma_cm's cmtime
# (QPLAB_BENCH_PROFILES), from a frame-pointer build in $(BUILD)/prof; flame
# graphs (SVG) beside the figures in $(BUILD)/bench.
PROFILE ?=
bench: deps-check all $(BENCH_BINS)
	@if [ "$(PROFILE)" = 1 ]; then $(MAKE) --no-print-directory BUILD=$(BUILD)/prof PROFILE= \
	  CFLAGS='$(CFLAGS) -fno-omit-frame-pointer' all $(BENCH_BINS:$(BUILD)/%=$(BUILD)/prof/%); fi
	QPLAB_BENCH_PROFILE=$(if $(filter 1,$(PROFILE)),$(BUILD)/prof) bench/run.sh $(BUILD)

# make lab [KERNELS="6.1 6.12 7"] [LAB_ARGS="--tag smoke"]: the catalogue on the
# best backend (netns here when netns/probe says so, else one VM boot per
# kernel); TAP on stdout, results.json, junit.xml and report.html in build/lab/.
# CAPTURE=1: a pcap per scenario in build/lab/pcaps (qplab run --capture).
lab: deps-check all
	$(QPLAB) run scenarios $(foreach k,$(KERNELS),--kernel $(k)) --out $(BUILD)/lab $(if $(filter 1,$(CAPTURE)),--capture) $(LAB_ARGS)
	$(MAKE) lab-mooncake

$(BUILD)/qphs.pc: Makefile
	@mkdir -p $(@D)
	@printf '%s\n' 'prefix=$(PREFIX)' 'libdir=$(LIBDIR)' 'includedir=$(INCLUDEDIR)' '' \
	  'Name: qphs' 'Description: Mooncake-compatible RDMA handshake and QP setup' \
	  'Version: $(VERSION)' 'Requires.private: json-c' \
	  'Libs: -L$${libdir} -lqphs' 'Libs.private: -libverbs -lpthread' \
	  'Cflags: -I$${includedir}' > $@

install: all $(BUILD)/qphs.pc
	install -d $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCLUDEDIR)/qphs $(DESTDIR)$(BINDIR) \
	  $(DESTDIR)$(LIBEXECDIR)/qplab $(DESTDIR)$(DATADIR)/qplab/scenarios \
	  $(DESTDIR)$(DATADIR)/qplab/wireshark
	install -m 644 $(STATIC_LIB) $(DESTDIR)$(LIBDIR)/libqphs.a
	install -m 755 $(SHARED_LIB) $(DESTDIR)$(LIBDIR)/libqphs.so.$(VERSION)
	ln -sf libqphs.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libqphs.so.0
	ln -sf libqphs.so.0 $(DESTDIR)$(LIBDIR)/libqphs.so
	install -m 644 $(BUILD)/qphs.pc $(DESTDIR)$(LIBDIR)/pkgconfig/qphs.pc
	install -m 644 lib/include/qphs.h $(DESTDIR)$(INCLUDEDIR)/qphs.h
	install -m 644 lib/include/qphs/*.h $(DESTDIR)$(INCLUDEDIR)/qphs/
	install -m 755 $(QPLAB) $(DESTDIR)$(BINDIR)/qplab
	install -m 644 wireshark/mooncake.lua $(DESTDIR)$(DATADIR)/qplab/wireshark/mooncake.lua
	@for f in netns/*; do [ -f "$$f" ] || continue; \
	  echo "install $$f"; install -m 755 "$$f" $(DESTDIR)$(LIBEXECDIR)/qplab/; done
	@if [ -n "$$(ls scenarios 2>/dev/null)" ]; then cp -R scenarios/. $(DESTDIR)$(DATADIR)/qplab/scenarios/; fi

uninstall:
	rm -f $(DESTDIR)$(LIBDIR)/libqphs.a $(DESTDIR)$(LIBDIR)/libqphs.so* \
	  $(DESTDIR)$(LIBDIR)/pkgconfig/qphs.pc $(DESTDIR)$(INCLUDEDIR)/qphs.h $(DESTDIR)$(BINDIR)/qplab
	rm -rf $(DESTDIR)$(INCLUDEDIR)/qphs $(DESTDIR)$(LIBEXECDIR)/qplab $(DESTDIR)$(DATADIR)/qplab

clean:
	rm -rf build

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
