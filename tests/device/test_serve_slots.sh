#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# test_serve_slots.sh - `rdmig recv --serve --max-sources 1` takes a slot
# at the connect request, not at ESTABLISHED: four sources that ask at
# once get one slot between them (the others are rejected when they
# connect), where all four used to run together while their handshakes
# were in flight.  recv is stopped (SIGSTOP) while they ask, so that the
# four requests are queued together.  Each source's directory is named after its own
# connection's address.
#
# Usage: tests/device/test_serve_slots.sh BUILD_DIR DEVICE (rxe | siw)
# Prints "ok - ..." / "FAIL - ..." and "N passed, N failed".

# shellcheck disable=SC2016,SC2034,SC2153,SC2154,SC2317 # check "..." eval '...'; BUILD, END_RC: migtest.sh
set -uo pipefail

if [ $# -ne 2 ]; then
	echo "usage: $0 BUILD_DIR DEVICE" >&2
	exit 2
fi
BUILD=$(cd "$1" 2>/dev/null && pwd) || { echo "FAIL - no build directory '$1'"; exit 1; }
DEVICE=$2
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/device/migtest.sh
. "$HERE/migtest.sh"
migtest_init

PORT=23800
[ "$DEVICE" = siw ] && PORT=23900
OUT=$WORK/out

for n in 1 2 3 4; do
	mkdir -p "$WORK/src/$n"
	head -c $((4 * 1048576)) /dev/urandom >"$WORK/src/$n/image.bin"
done
bg v -- recv --serve --listen "$IP:$PORT" --out "$OUT" --json --timeout 20 --max-sources 1
for ((i = 0; i < 3000; i++)); do
	has_line "$WORK/v.err" 'recv: listening on' && break
	nap 0.01
done
# recv stopped while the four ask: their requests queue on the listener,
# and all four come in before any handshake ends (the race, made sure)
kill -STOP "$PID_v"
for n in 1 2 3 4; do
	bg "s$n" -- send --to "$IP:$PORT" --timeout 20 --json "$WORK/src/$n/image.bin"
done
nap 6
kill -CONT "$PID_v"
ok=0
for n in 1 2 3 4; do wait_end "s$n" 300 && [ "$END_RC" = 0 ] && ok=$((ok + 1)); done
kill -TERM "$PID_v"
wait_end v 120
peak=$(python3 -c '
import json, sys
for line in open(sys.argv[1]):
    o = json.loads(line)
    if o.get("event") == "summary":
        print(o.get("peak_sources"))' "$WORK/v.out")
check "at least one source served ($ok of 4)" [ "$ok" -ge 1 ]
check "never more than --max-sources 1 at once (peak $peak)" [ "$peak" = 1 ]
check "the others rejected when they connected" \
	eval '[ "$(grep -c "rejected a source from .*--max-sources 1" "$WORK/v.err")" = $((4 - ok)) ]'
check "each served source's directory is named after its address" \
	eval '[ "$(find "$OUT" -mindepth 1 -maxdepth 1 -type d -name "00??-20*Z-*${IP}*" | wc -l)" = "$ok" ]'
sed -n '1,6s|^|# v.err: |p' "$WORK/v.err"
finish
