# SPDX-License-Identifier: MIT
#
# amdgpu profiler (SPM) and peer-memory series.
#
#   make                 base tree + series + test kernel + mailable series
#   make check           every test and check; ends with "N passed, N failed, N skipped"
# Both first install (as root) the Debian packages they need: make deps.
#
# Variables: KSRC=<kernel git tree> to build on your own tree instead of
# Debian's linux-source-6.12; BUILD=<dir> for a private work area (default
# build/); JOBS=<n>; DEPS=0 to skip the package step; KUNIT_CONFIG=nopc
# for make kunit's second configuration (no PREEMPT_COUNT).

export KSRC BUILD JOBS

.PHONY: all deps base series kernel out check kunit static percommit apply \
	userspace docs bench mutate mutate-native clean distclean help

all: series kernel out
	@echo "Series: $(or $(BUILD),build)/out/  Test kernel: $(or $(BUILD),build)/linux/.kunit/"

# Every Debian package make and make check need, installed before anything
# is built, so that both build with the same compiler (see scripts/deps.sh).
deps:
	scripts/deps.sh

base: deps
	scripts/base.sh

series: deps
	scripts/series.sh

kernel: series
	scripts/kbuild.sh

out: series
	scripts/format-patch.sh

check:
	scripts/check.sh

kunit: series
	scripts/kunit.sh $(FILTER)

static: out
	scripts/static.sh

percommit: series
	scripts/percommit.sh

userspace: series
	scripts/userspace.sh

docs: series
	scripts/docs.sh

bench: series
	scripts/bench.sh

# Every mutant of scripts/mutants/ against the KUnit case it names (slow:
# one kernel build and boot each); with MUTANTS_SAMPLE=N, N operator
# mutants of the series' own kernel files (see scripts/mutate.sh).
mutate: series
	scripts/mutate.sh $(MUTANTS)

# Every operator mutant of the SPM drain core against its native tests
# (seconds each; make check runs them too).
mutate-native: series
	scripts/mutate-native.sh $(MUTANTS)

# Apply the mailable series to your own kernel tree with git am.
apply:
	@test -n "$(KSRC)" || { echo "usage: make apply KSRC=<kernel git tree>"; exit 2; }
	$(MAKE) out
	cd "$(or $(BUILD),build)/out" && ls 0*.patch | grep -v '^0000-cover-letter' | \
		sed "s|^|$$PWD/|" | xargs git -C "$(KSRC)" am --3way

help:
	@sed -n '3,14p' Makefile

clean:
	rm -rf $(or $(BUILD),build)/out $(or $(BUILD),build)/percommit
	$(MAKE) -C tools/amdgpu-profiler clean 2>/dev/null || true

distclean:
	rm -rf $(or $(BUILD),build)
