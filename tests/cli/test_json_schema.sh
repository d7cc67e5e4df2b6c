#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# test_json_schema.sh RDMIG MAN - what every command prints with --json where
# no RDMA device is needed: exactly one object on stdout after a usage error
# and after a failure, and each matches its schema (MAN: man/rdmig-json.7.scd,
# read by check_json.py).  On a host with RDMA devices probe's success is
# checked too.  The checker itself is checked on objects that break the
# schema.  Prints "N passed, N failed"; exits non-zero on a failure.
set -u
RDMIG=${1:?usage: test_json_schema.sh RDMIG MAN}
MAN=${2:?usage: test_json_schema.sh RDMIG MAN}
CHECK="$(dirname "$0")/check_json.py"
PASSED=0
FAILED=0
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
echo data >"$WORK/img"
N=0

ok() { PASSED=$((PASSED + 1)); echo "ok: $*"; }
bad() { FAILED=$((FAILED + 1)); echo "FAILED: $*"; }

# json WANT_STATUS PHASE ARGS...: run rdmig ARGS with --json; its stdout must
# be one object of a failure in PHASE that matches the schema
json() {
	local want=$1 phase=$2 out rc
	shift 2
	N=$((N + 1))
	out=$WORK/$N.json
	"$RDMIG" "$@" --json >"$out" 2>"$WORK/$N.err"
	rc=$?
	if [ "$rc" != "$want" ]; then
		bad "rdmig $* --json: exit $rc, expected $want"
	elif ! grep -q "\"ok\": false, \"phase\": \"$phase\", \"error\": { \"code\": " "$out"; then
		bad "rdmig $* --json: no failure in phase $phase on stdout: $(cat "$out")"
	elif ! python3 "$CHECK" "$MAN" "$out" >"$WORK/check" 2>&1; then
		bad "rdmig $* --json: does not match rdmig-json(7):"
		sed 's/^/  | /' "$WORK/check"
	else
		ok "rdmig $* --json: one failure object ($phase), as rdmig-json(7) says"
	fi
}

if ! command -v python3 >/dev/null; then
	echo "FAILED: python3 is needed to check the JSON against rdmig-json(7)"
	exit 1
fi

# usage errors, every command and mode
json 2 options send --bogus
json 2 options send --to 127.0.0.1:9 --timeout 5x "$WORK/img"
json 2 options send --qemu-replay "$WORK" --to 127.0.0.1:9 extra
json 2 options recv --listen :9
json 2 options recv --qemu --listen :9 --out "$WORK/q" --max-total 0
json 2 options recv --serve --listen :9 --out "$WORK/s" --max-sources 0
json 2 options probe extra
json 2 options ping --to 127.0.0.1:9 -n 5x
json 2 options pong --listen :9 --timeout abc
# failures after the options
json 1 setup send --to 127.0.0.1:9 "$WORK/no-such-file"
json 1 setup send --qemu-replay "$WORK/no-record" --to 127.0.0.1:9
if [ -z "$(ls /sys/class/infiniband 2>/dev/null)" ]; then
	# no RDMA here: each fails where it first needs it
	json 1 connect send --to 127.0.0.1:9 --timeout 1 "$WORK/img"
	json 1 accept recv --listen 127.0.0.1:9 --out "$WORK/r" --timeout 1
	json 1 accept recv --qemu --listen 127.0.0.1:9 --out "$WORK/q" --timeout 1
	json 1 accept recv --serve --listen 127.0.0.1:9 --out "$WORK/s"
	json 1 probe probe
	json 1 connect ping --to 127.0.0.1:9 --timeout 1
	json 1 accept pong --listen 127.0.0.1:9 --timeout 1
else
	if "$RDMIG" probe --json >"$WORK/probe.json" 2>/dev/null &&
		python3 "$CHECK" "$MAN" "$WORK/probe.json" >"$WORK/check" 2>&1; then
		ok "rdmig probe --json: a success that matches rdmig-json(7)"
	else
		bad "rdmig probe --json: $(cat "$WORK/probe.json" "$WORK/check")"
	fi
fi

# recv --serve's JSON lines (what a run on a device prints: tests/device/test_serve.sh
# checks its real ones), each against its event's section; a line of an
# unknown event or without a member is refused
serve_head='"schema": 1, "command": "recv", "mode": "serve", "rdmig_version": "x"'
{
	echo "{ $serve_head, \"event\": \"rejected\", \"peer\": \"10.0.0.1\", \"ok\": false, \"phase\": \"accept\", \"error\": { \"code\": \"busy\", \"message\": \"m\" } }"
	echo "{ $serve_head, \"event\": \"summary\", \"listen\": \"\", \"port\": 9, \"out\": \"o\", \"sources_ok\": 1, \"sources_failed\": 0, \"sources_rejected\": 1, \"max_sources\": 4, \"peak_sources\": 1, \"serve_max_total\": 5, \"serve_max_pinned\": null, \"serve_max_files\": null, \"peak_reserved_total\": 1, \"peak_reserved_pinned\": 1, \"peak_reserved_files\": 3, \"peak_rss_bytes\": 1, \"peak_pinned_bytes\": 1, \"ok\": true }"
} >"$WORK/serve.jsonl"
if python3 "$CHECK" --lines "$MAN" "$WORK/serve.jsonl" >"$WORK/check" 2>&1; then
	ok "check_json.py --lines takes recv --serve's rejected and summary lines"
else
	bad "check_json.py --lines refuses valid serve lines: $(cat "$WORK/check")"
fi
sed 's/"peak_sources": 1, //' "$WORK/serve.jsonl" >"$WORK/serve-bad.jsonl"
echo "{ $serve_head, \"event\": \"other\", \"ok\": true }" >>"$WORK/serve-bad.jsonl"
if python3 "$CHECK" --lines "$MAN" "$WORK/serve-bad.jsonl" >"$WORK/check" 2>&1 ||
	[ "$(grep -c FAILED "$WORK/check")" -lt 1 ] ||
	! grep -q "peak_sources" "$WORK/check" || ! grep -q "no section of the page for command 'recv', mode 'serve'" "$WORK/check"; then
	bad "check_json.py --lines takes broken serve lines: $(cat "$WORK/check")"
else
	ok "check_json.py --lines refuses a summary without a member and an unknown event"
fi

# --help is not a run: the help, no object
"$RDMIG" send --json --help >"$WORK/help" 2>&1
grep -q '^usage: rdmig send' "$WORK/help" && ! grep -q '"schema"' "$WORK/help" &&
	ok "send --json --help: the help only" || bad "send --json --help: $(head -3 "$WORK/help")"

# the checker refuses what breaks the schema
base='{ "schema": 1, "command": "probe", "rdmig_version": "x", "ok": true, "devices": [] }'
broken=(
	'{ "schema": 2, "command": "probe", "rdmig_version": "x", "ok": true, "devices": [] }'
	'{ "schema": 1, "command": "probe", "rdmig_version": "x", "ok": true }'
	'{ "schema": 1, "command": "probe", "rdmig_version": "x", "ok": true, "devices": [], "extra": 1 }'
	'{ "schema": 1, "command": "probe", "rdmig_version": "x", "ok": "yes", "devices": [] }'
	'{ "schema": 1, "command": "probe", "rdmig_version": "x", "ok": false, "devices": [] }'
	'{ "schema": 1, "command": "probe", "rdmig_version": "x", "ok": true, "devices": [ { "device": "rxe0" } ] }'
	'{ "schema": 1, "command": "send", "rdmig_version": "x", "ok": false, "phase": "options", "error": { "code": "usage", "message": "m" } }'
	'{ "schema": 1, "command": "recv", "mode": "files", "rdmig_version": "x", "ok": false, "phase": "accept", "error": { "code": "usage" } }'
)
echo "$base" >"$WORK/base.json"
if python3 "$CHECK" "$MAN" "$WORK/base.json" >/dev/null; then
	ok "check_json.py takes a probe success without devices"
else
	bad "check_json.py refuses a valid object: $base"
fi
i=0
for b in "${broken[@]}"; do
	i=$((i + 1))
	echo "$b" >"$WORK/broken$i.json"
	if python3 "$CHECK" "$MAN" "$WORK/broken$i.json" >/dev/null; then
		bad "check_json.py takes a broken object: $b"
	else
		ok "check_json.py refuses broken object $i"
	fi
done
# a budget's phases add up to its total, none negative (the checker's
# own arithmetic: a failure object may carry any documented member)
fail_head='"schema": 1, "command": "send", "mode": "files", "rdmig_version": "x", "ok": false, "phase": "migrate", "error": { "code": "c", "message": "m" }'
phases='"start": 0.010000, "connect": 0.020000, "setup": 0.030000, "register_wait": 0.000000, "writes": 1.000000, "hash_wait": 0.000001, "commit": 0.000100, "teardown": 0.100000'
echo "{ $fail_head, \"budget\": { $phases, \"other\": 0.000002, \"total\": 1.160103 } }" >"$WORK/budget.json"
if python3 "$CHECK" "$MAN" "$WORK/budget.json" >"$WORK/check" 2>&1; then
	ok "check_json.py takes a budget that adds up"
else
	bad "check_json.py refuses a budget that adds up: $(cat "$WORK/check")"
fi
for b in '"other": 0.000002, "total": 1.2' '"other": -0.1, "total": 1.060101' '"total": 1.160101'; do
	echo "{ $fail_head, \"budget\": { $phases, $b } }" >"$WORK/budget-bad.json"
	if python3 "$CHECK" "$MAN" "$WORK/budget-bad.json" >/dev/null 2>&1; then
		bad "check_json.py takes a broken budget: $b"
	else
		ok "check_json.py refuses a budget with $b"
	fi
done
printf '%s\n%s\n' "$base" "$base" >"$WORK/two.json"
python3 "$CHECK" "$MAN" "$WORK/two.json" >/dev/null && bad "check_json.py takes two objects" ||
	ok "check_json.py refuses two objects"

echo "$PASSED passed, $FAILED failed"
[ "$FAILED" = 0 ]
