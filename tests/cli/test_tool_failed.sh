#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# test_tool_failed.sh - tests/lib/check.sh's tool_failed, which every
# expected failure of the device and interop tests goes through: it takes
# the tool's own status and error line only, never a sanitizer's abort or
# report, nor a missing message.
# Prints "N passed, N failed"; exits non-zero on a failure.
set -u
# shellcheck source=tests/lib/check.sh
. "$(dirname "$0")/../lib/check.sh"
E=$(mktemp)
trap 'rm -f "$E"' EXIT
echo "rdmig: recv: the source disconnected before the end of its stream" >"$E"
check "status 1 with the tool's line: taken" tool_failed 1 1 "$E"
check "... and with the line asked for" tool_failed 1 1 "$E" 'disconnected before the end'
check "another message: refused" eval '! tool_failed 1 1 "$E" "chunk-size mismatch" >/dev/null'
check "an ASan abort (134): refused" eval '! tool_failed 134 1 "$E" >/dev/null'
check "a crash (139): refused" eval '! tool_failed 139 1 "$E" >/dev/null'
echo "==123==ERROR: AddressSanitizer: heap-use-after-free on address 0x1" >>"$E"
check "status 1 with an ASan report: refused" eval '! tool_failed 1 1 "$E" >/dev/null'
echo "rdmig: recv: failed" >"$E"
echo "src/x.c:3:5: runtime error: signed integer overflow" >>"$E"
check "status 1 with a UBSan report: refused" eval '! tool_failed 1 1 "$E" >/dev/null'
: >"$E"
check "status 1 without an error line: refused" eval '! tool_failed 1 1 "$E" >/dev/null'
check "a missing stderr file: refused" eval '! tool_failed 1 1 /nonexistent/err >/dev/null'
finish
