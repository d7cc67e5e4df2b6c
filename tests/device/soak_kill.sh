#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# soak_kill.sh - many more kill -9 trials than CI runs: N migrations per
# device (rxe and siw, at the same time) and side (sender, receiver), each
# with one side killed at a random moment (tests/device/test_kill.sh).
#
# Usage: tests/device/soak_kill.sh [BUILD_DIR] [N]     (default: build 100)
# Inside the test guest, e.g. with the release build (64 MiB images):
#   scripts/rdma-vm --mem 3072 --timeout 7200 -- tests/device/soak_kill.sh build 200
# Prints every trial and ends with "soak: N trials, N passed, N failed".

set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
BUILD=${1:-build}
N=${2:-100}
passed=0
failed=0

for side in kill_send kill_recv; do
	out=$(bash "$HERE/test_kill.sh" "$BUILD" "$side" both "$N" 2>&1)
	echo "$out"
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' <<<"$out" | tail -n1)
	if [ -z "$line" ]; then
		failed=$((failed + 1))
		continue
	fi
	passed=$((passed + ${line%% *}))
	line=${line#*, }
	failed=$((failed + ${line%% *}))
done
echo "soak: $((4 * N)) trials, $passed passed, $failed failed"
[ "$failed" = 0 ] && [ "$passed" -gt 0 ]
