#!/bin/bash
# SPDX-License-Identifier: MIT
# Build the KUnit test kernel (the same one scripts/kunit.sh runs) without
# running it.
. "$(dirname "$0")/common.sh"
cd "$KTREE"
locked python3 tools/testing/kunit/kunit.py build "${KUNIT_OPTS[@]}"
