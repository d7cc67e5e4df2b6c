#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# test_example.sh - run an example of examples/ on a real RDMA device, inside
# the test guest (scripts/rdma-vm), where RDMAVM_RXE_IP and RDMAVM_SIW_IP are
# set.  Outside it the test FAILS.
#
# Usage: tests/device/test_example.sh PROGRAM DEVICE
#   PROGRAM: an example taking "recv HOST PORT" / "send HOST PORT" (the
#            receiver prints "listening on port N" first)
#   DEVICE:  rxe | siw
# Prints "ok - ..." / "FAIL - ..." per check and "N passed, N failed".
set -uo pipefail

if [ $# -ne 2 ]; then
	echo "usage: $0 PROGRAM DEVICE" >&2
	exit 2
fi
PROG=$1
DEVICE=$2

# shellcheck source=tests/lib/check.sh
. "$(dirname "$0")/../lib/check.sh"

device_ip "$DEVICE" device
[ -x "$PROG" ] || { echo "FAIL - $PROG is missing: build first"; exit 1; }
WORK=$(mktemp -d)
trap 'kill "$RECV" 2>/dev/null; rm -rf "$WORK"' EXIT

"$PROG" recv "$IP" 0 >"$WORK/recv.out" 2>"$WORK/recv.err" &
RECV=$!
PORT=
for _ in $(seq 100); do
	PORT=$(sed -n 's/^listening on port \([0-9][0-9]*\)$/\1/p' "$WORK/recv.out")
	[ -n "$PORT" ] && break
	kill -0 "$RECV" 2>/dev/null || break
	sleep 0.1
done
if [ -z "$PORT" ]; then
	fail "$(basename "$PROG") recv listens on $DEVICE ($IP): $(cat "$WORK/recv.err")"
	finish
fi
ok "$(basename "$PROG") recv listens on $IP port $PORT"

check "$(basename "$PROG") send to $IP:$PORT exits 0" \
	timeout 120 "$PROG" send "$IP" "$PORT"
recv_ok() {
	timeout 60 tail --pid="$RECV" -f /dev/null
	wait "$RECV"
}
check "$(basename "$PROG") recv exits 0 (the block arrived whole)" recv_ok
cat "$WORK/recv.out" "$WORK/recv.err"
check "recv says what it received" grep -q '^received ' "$WORK/recv.out"
finish
