#!/bin/bash
# SPDX-License-Identifier: MIT
# Build the KUnit test kernel (the same one scripts/kunit.sh runs) without
# running it.
. "$(dirname "$0")/common.sh"
cd "$KTREE"
locked python3 tools/testing/kunit/kunit.py build --arch=x86_64 \
	--kunitconfig=drivers/gpu/drm/amd/amdgpu/tests/.kunitconfig \
	--build_dir=.kunit --jobs="$JOBS" --make_options "CC=$KCC"
