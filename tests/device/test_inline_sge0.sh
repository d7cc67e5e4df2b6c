#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# test_inline_sge0.sh - rdmig send -> rdmig recv with both processes under
# the inline_sge0 shim (tests/shim/inline_sge0.c), which sends only
# sg_list[0] of an inline work request, as irdma before rdma-core v44 did.
# rdmig must still move every byte, and still send inline: the shim must
# have seen inline sends (it was active), cut none (no inline send had a
# second SGE), and REGISTER_REQUEST (40 bytes) and REGISTER_RESULT (32
# bytes) must have gone inline.  Inside the test guest only.
#
# Usage: tests/device/test_inline_sge0.sh BUILD_DIR DEVICE   (rxe | siw)
set -uo pipefail

if [ $# -ne 2 ]; then
	echo "usage: $0 BUILD_DIR DEVICE" >&2
	exit 2
fi
BUILD=$(cd "$1" 2>/dev/null && pwd) || { echo "FAIL - no build directory '$1'"; exit 1; }
DEVICE=$2
RDMIG=$BUILD/rdmig
SHIM=$BUILD/tests/libinline_sge0.so

# shellcheck source=tests/lib/check.sh
. "$(dirname "$0")/../lib/check.sh"
device_ip "$DEVICE" device
for f in "$RDMIG" "$SHIM"; do
	[ -e "$f" ] || { echo "FAIL - $f is missing: build first"; exit 1; }
done
PORT=24000
[ "$DEVICE" = siw ] && PORT=24500

WORK=$(mktemp -d "${TMPDIR:-/tmp}/test-inline-sge0.XXXXXX") || exit 1
RPID=""
cleanup() {
	[ -n "$RPID" ] && kill "$RPID" 2>/dev/null
	rm -rf "$WORK"
}
trap cleanup EXIT

# Under the shim: an ASan runtime that is not first in the library list
# would refuse to start.
shimmed() {
	LD_PRELOAD=$SHIM INLINE_SGE0_REPORT=$WORK/shim.report \
		ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 "$@"
}

# json_type FILE OBJECT TYPE: the count of TYPE in the per-type OBJECT
json_type() {
	grep -o "\"$2\": {[^}]*}" "$1" | grep -o "\"$3\": [0-9]*" | head -n1 | sed 's/.*: //'
}
json_num() { grep -o "\"$2\": [0-9]*" "$1" | head -n1 | sed 's/.*: //'; }
# at_least1 VALUE: VALUE is a number > 0
at_least1() { [ -n "$1" ] && [ "$1" -gt 0 ]; }

# Two files of odd sizes: several chunks, so several REGISTER round trips.
head -c 3000001 /dev/urandom >"$WORK/a.bin"
head -c 777 /dev/urandom >"$WORK/b.bin"
shimmed timeout 300 "$RDMIG" recv --listen "$IP:$PORT" --out "$WORK/out" --timeout 60 --json -v \
	>"$WORK/recv.json" 2>"$WORK/recv.err" </dev/null &
RPID=$!
for ((i = 0; i < 600; i++)); do
	grep -q '^recv: listening on' "$WORK/recv.err" 2>/dev/null && break
	kill -0 "$RPID" 2>/dev/null || break
	sleep 0.1
done
shimmed timeout 300 "$RDMIG" send --to "$IP:$PORT" --timeout 60 --json "$WORK/a.bin" "$WORK/b.bin" \
	>"$WORK/send.json" 2>"$WORK/send.err" </dev/null
SEND_RC=$?
wait "$RPID"
RECV_RC=$?
RPID=""
if [ "$SEND_RC" != 0 ] || [ "$RECV_RC" != 0 ]; then
	echo "# send exit $SEND_RC, recv exit $RECV_RC" >&2
	tail -n 5 "$WORK/send.err" "$WORK/recv.err" >&2
fi
check "send exits 0 under the shim" [ "$SEND_RC" = 0 ]
check "recv exits 0 under the shim" [ "$RECV_RC" = 0 ]
for f in a.bin b.bin; do
	check "$f arrives byte for byte" cmp -s "$WORK/$f" "$WORK/out/$f.img"
done
echo "# shim: $(tr '\n' ' ' <"$WORK/shim.report" 2>/dev/null)"
check "the shim reported for both processes" [ "$(grep -c '^inline_sends=' "$WORK/shim.report" 2>/dev/null)" = 2 ]
check "the shim saw inline sends in both processes" \
	[ "$(grep -c '^inline_sends=[1-9]' "$WORK/shim.report" 2>/dev/null)" = 2 ]
check "the shim cut no inline send (one SGE each)" \
	[ "$(grep -c ' cut=0$' "$WORK/shim.report" 2>/dev/null)" = 2 ]
n=$(json_type "$WORK/send.json" messages_sent_inline REGISTER_REQUEST)
check "send: REGISTER_REQUEST went inline ($n)" at_least1 "$n"
n=$(json_type "$WORK/recv.json" messages_sent_inline REGISTER_RESULT)
check "recv: REGISTER_RESULT went inline ($n)" at_least1 "$n"
n=$(json_num "$WORK/send.json" inline_granted)
check "send: inline granted ($n) covers a REGISTER_REQUEST (40)" [ "${n:-0}" -ge 40 ]
finish
