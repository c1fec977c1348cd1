#!/bin/bash
# SPDX-License-Identifier: MIT
# Build the KUnit test kernel (the same one scripts/kunit.sh runs) without
# running it.
. "$(dirname "$0")/common.sh"
require "test kernel build" "${PKGS_KERNEL[@]}" || exit 1
cd "$KTREE"
log "building the test kernel with CC=$KCC (recorded in $BUILD/kcc)"
locked python3 tools/testing/kunit/kunit.py build "${KUNIT_OPTS[@]}"
