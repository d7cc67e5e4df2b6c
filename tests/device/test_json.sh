#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# test_json.sh BUILD_DIR DEVICE - the --json objects of the commands that
# need a device and are not migrations, on rxe or siw (run inside
# scripts/rdma-vm): probe's success, ping's and pong's statistics, send's
# and recv's --progress json lines, and the failures a device gives (a recv
# no source comes to, a send nobody answers).  Each output is one object that matches rdmig-json(7)
# (tests/cli/check_json.py).  The migrations' objects are checked by
# test_migrate.sh.
# Prints "ok - ..." / "FAIL - ..." per check and "N passed, N failed".

# shellcheck disable=SC2317 # helpers run through check() and trap
set -u
BUILD=$(cd "$1" 2>/dev/null && pwd) || { echo "FAIL - no build directory '$1'"; exit 1; }
DEVICE=$2
HERE=$(cd "$(dirname "$0")" && pwd)
RDMIG=$BUILD/rdmig
MAN=$HERE/../../man/rdmig-json.7.scd
# shellcheck source=tests/lib/check.sh
. "$HERE/../lib/check.sh"
device_ip "$DEVICE" device
PORT=18600 # (a range of its own: chunks.shapes uses 18900-)
[ "$DEVICE" = siw ] && PORT=$((PORT + 50))
WORK=$(mktemp -d "${TMPDIR:-/tmp}/test-json.XXXXXX") || exit 1
PONG=""
cleanup() {
	[ -n "$PONG" ] && kill "$PONG" 2>/dev/null
	rm -rf "$WORK"
}
trap cleanup EXIT

schema() { python3 "$HERE/../cli/check_json.py" "$MAN" "$@" >"$WORK/check" 2>&1 || { cat "$WORK/check"; false; }; }
json_num() { grep -o "\"$2\": [0-9.]*" "$1" 2>/dev/null | head -n1 | sed 's/.*: //'; }
# has FILE TEXT
has() { grep -qF -- "$2" "$1"; }

# probe: one object, the device in its array
timeout 60 "$RDMIG" probe --device "${DEVICE}0" --json >"$WORK/probe.json" 2>"$WORK/probe.err"
check "probe --json exits 0" test $? = 0
check "probe --json: ${DEVICE}0 in devices, ok" eval \
	'has "$WORK/probe.json" "\"devices\": [ { \"device\": \"${DEVICE}0\"" && has "$WORK/probe.json" "\"ok\": true"'
check "probe --json matches rdmig-json(7)" schema "$WORK/probe.json"

# ping -> pong: 200 round trips, counted on both sides
N=200
timeout 120 "$RDMIG" pong --listen "$IP:$PORT" --json >"$WORK/pong.json" 2>"$WORK/pong.err" &
PONG=$!
for ((i = 0; i < 50; i++)); do
	timeout 60 "$RDMIG" ping --to "$IP:$PORT" -n $N --json >"$WORK/ping.json" 2>"$WORK/ping.err" && break
	sleep 0.2 # pong is not listening yet
done
check "ping --json exits 0" has "$WORK/ping.json" '"ok": true'
wait "$PONG"
check "pong --json exits 0" test $? = 0
PONG=""
check "ping: $N round trips, p50 $(json_num "$WORK/ping.json" register_rtt_p50_us) us" eval \
	'[ "$(json_num "$WORK/ping.json" register_requests)" = $N ] &&
	 [ -n "$(json_num "$WORK/ping.json" register_rtt_p99_us)" ]'
check "pong: answered $N requests" test "$(json_num "$WORK/pong.json" register_requests)" = $N
check "ping and pong: the connection's members" eval \
	'has "$WORK/ping.json" "\"device\": \"${DEVICE}0\"" && has "$WORK/pong.json" "\"device\": \"${DEVICE}0\""'
check "ping and pong --json match rdmig-json(7)" schema "$WORK/ping.json" "$WORK/pong.json"

# send -> recv with --progress json: JSON lines on stderr, each a progress
# object; the last says every byte is done; stdout keeps its one object
head -c $((48 << 20)) /dev/urandom >"$WORK/rand.bin"
timeout 300 "$RDMIG" recv --listen "$IP:$((PORT + 3))" --out "$WORK/in" --timeout 60 --json -v \
	--progress json >"$WORK/precv.json" 2>"$WORK/precv.err" &
RPID=$!
for ((i = 0; i < 300; i++)); do
	grep -q '^recv: listening on' "$WORK/precv.err" 2>/dev/null && break
	sleep 0.1
done
timeout 300 "$RDMIG" send --to "$IP:$((PORT + 3))" --chunk-size 1M --json --progress json \
	"$WORK/rand.bin" >"$WORK/psend.json" 2>"$WORK/psend.err"
check "send --progress json exits 0" test $? = 0
wait "$RPID"
check "recv --progress json exits 0" test $? = 0
for f in psend precv; do
	check "$f: progress lines match rdmig-json(7) ($(grep -c '^{' "$WORK/$f.err") lines)" \
		eval 'python3 "$HERE/../cli/check_json.py" --progress "$MAN" "$WORK/$f.err" >"$WORK/check" ||
		      { cat "$WORK/check"; false; }'
	check "$f: the last progress line is every byte" eval \
		'[ "$(grep "^{" "$WORK/$f.err" | tail -n1 | grep -o "\"bytes_done\": [0-9]*")" = \
		   "\"bytes_done\": $((48 << 20))" ]'
done
check "send and recv results match rdmig-json(7)" schema "$WORK/psend.json" "$WORK/precv.json"

# failures with a device: no source comes; nobody listens
timeout 60 "$RDMIG" recv --listen "$IP:$((PORT + 1))" --out "$WORK/out" --timeout 1 --json \
	>"$WORK/recv.json" 2>"$WORK/recv.err"
check "recv no source comes to: exit 1" test $? = 1
check "recv: phase accept, RDMIG_ETIMEDOUT" has "$WORK/recv.json" \
	'"ok": false, "phase": "accept", "error": { "code": "RDMIG_ETIMEDOUT"'
check "recv: --out it made is gone" test ! -e "$WORK/out"
echo data >"$WORK/img"
timeout 60 "$RDMIG" send --to "$IP:$((PORT + 2))" --timeout 2 --json "$WORK/img" \
	>"$WORK/send.json" 2>"$WORK/send.err"
check "send nobody answers: exit 1" test $? = 1
# rxe says RDMIG_EREJECTED or RDMIG_ETIMEDOUT, siw ECONNREFUSED: a name either way
check "send: phase connect ($(grep -o '"code": "[A-Z_]*"' "$WORK/send.json"))" grep -qE \
	'"ok": false, "phase": "connect", "error": \{ "code": "[A-Z][A-Z_]+"' "$WORK/send.json"
check "recv and send failures match rdmig-json(7)" schema "$WORK/recv.json" "$WORK/send.json"
for f in recv send; do
	check "$f: the error once on stderr" test "$(grep -c "^rdmig: $f:" "$WORK/$f.err")" = 1
done

finish
