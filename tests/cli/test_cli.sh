#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# test_cli.sh RDMIG VERSION [no-device] - the command line of the tool that
# needs no RDMA device: --version, the help, usage errors (one line, exit 2);
# with no-device, the hints and failures rdmig gives on a host without RDMA
# (exit 77, a skip, on a host with RDMA devices).  Prints "N passed, N failed"; exits non-zero on a failure.
set -u
RDMIG=${1:?usage: test_cli.sh RDMIG VERSION}
VERSION=${2:?usage: test_cli.sh RDMIG VERSION}
PASSED=0
FAILED=0
OUT=$(mktemp)
IMG=$(mktemp)
trap 'rm -f "$OUT" "$IMG"' EXIT
echo data >"$IMG"

ok() { PASSED=$((PASSED + 1)); echo "ok: $*"; }
bad() { FAILED=$((FAILED + 1)); echo "FAILED: $*"; sed 's/^/  | /' "$OUT"; }

# run EXPECTED_STATUS ARGS...: the tool's stdout and stderr go to $OUT
run() {
	local want=$1 rc
	shift
	"$RDMIG" "$@" >"$OUT" 2>&1
	rc=$?
	if [ "$rc" != "$want" ]; then
		bad "rdmig $*: exit $rc, expected $want"
		return 1
	fi
}
has() { grep -qF -- "$1" "$OUT"; }

# no_device_checks: the hint, the failure objects and the --out left behind
# where this host has no RDMA device at all (test_cli.sh ... no-device).
no_device_checks() {
	if "$RDMIG" probe >"$OUT" 2>&1; then
		bad "rdmig probe succeeded without an RDMA device"
	else
		has "no RDMA device found" && has "modprobe rdma_rxe" &&
			has "rdma link add rxe0 type rxe netdev IFACE" && has "modprobe siw" &&
			has "rdma link add siw0 type siw netdev IFACE" && has "ibverbs-providers" &&
			has "scripts/rdma-vm" && ok "rdmig probe without a device: the hint" ||
			bad "rdmig probe: no hint"
	fi
	# the test guest is named only from a source tree: not by a copy
	# of the tool elsewhere, as a package installs it
	d=$(mktemp -d)
	cp "$RDMIG" "$d/rdmig"
	if "$d/rdmig" probe >"$OUT" 2>&1; then
		bad "a copied rdmig probe succeeded without an RDMA device"
	else
		has "rdma link add rxe0 type rxe netdev IFACE" && ! has "rdma-vm" &&
			ok "rdmig probe outside the source tree: the hint without the test guest" ||
			bad "rdmig probe outside the source tree: the wrong hint"
	fi
	rm -rf "$d"
	if "$RDMIG" send --to 127.0.0.1:9 --timeout 1 "$IMG" >"$OUT" 2>&1; then
		bad "rdmig send succeeded without an RDMA device"
	else
		has "rdmig: hint:" && ok "rdmig send without a device: a hint" ||
			bad "rdmig send: no hint"
	fi
	if "$RDMIG" probe --json >"$OUT" 2>/dev/null; then
		bad "rdmig probe --json succeeded without an RDMA device"
	else
		[ "$(wc -l <"$OUT")" = 1 ] && grep -q '"ok": false, "phase": "probe", "error": ' "$OUT" &&
			ok "rdmig probe --json without a device: one failure object" ||
			bad "rdmig probe --json without a device: not one failure object"
	fi
	# a recv that fails leaves nothing, not even the --out it made (recv
	# --qemu keeps record.txt once it listens: it says why)
	d=$(mktemp -d)
	"$RDMIG" recv --listen 127.0.0.1:9 --out "$d/new/out" --timeout 1 >/dev/null 2>&1
	[ -z "$(ls -A "$d")" ] && ok "recv failing before a source: no --out left" ||
		bad "recv failing before a source left $(ls -A "$d")"
	rm -rf "$d"
	d=$(mktemp -d)
	"$RDMIG" recv --serve --listen 127.0.0.1:9 --out "$d/new/out" --json >"$OUT" 2>/dev/null
	[ -z "$(ls -A "$d")" ] && [ "$(wc -l <"$OUT")" = 1 ] &&
		grep -q '"mode": "serve", .*"ok": false, "phase": "accept"' "$OUT" &&
		ok "recv --serve failing to listen: one JSON object, no --out left" ||
		bad "recv --serve failing to listen: $(ls -A "$d"), $(cat "$OUT")"
	rm -rf "$d"
	# with -v, the error is printed once
	"$RDMIG" send -v --to 127.0.0.1:9 --timeout 1 "$IMG" >"$OUT" 2>&1
	[ "$(grep -c 'rdma_create_event_channel\|no RDMA device found (' "$OUT")" = 1 ] &&
		[ "$(grep -c '^rdmig: send:' "$OUT")" = 1 ] && ok "send -v: the error once" ||
		bad "send -v: the error is not printed exactly once"
}

if [ "${3:-}" = no-device ]; then
	if [ -n "$(ls /sys/class/infiniband 2>/dev/null)" ]; then
		echo "skip: this host has RDMA devices ($(ls /sys/class/infiniband | tr '\n' ' '))"
		exit 77
	fi
	no_device_checks
	echo "$PASSED passed, $FAILED failed"
	[ "$FAILED" = 0 ] && [ "$PASSED" -gt 0 ]
	exit
fi

for v in --version version -V; do
	run 0 "$v" && { [ "$(cat "$OUT")" = "rdmig $VERSION" ] && ok "rdmig $v" ||
		bad "rdmig $v: expected 'rdmig $VERSION'"; }
done

run 0 --help && { has "recv --qemu" && has "send --qemu-replay" && has "version" &&
	ok "rdmig --help lists the QEMU modes and version" || bad "rdmig --help misses a mode"; }
# one_line: $OUT is exactly one "rdmig: ..." line that points to --help
one_line() { [ "$(wc -l <"$OUT")" = 1 ] && grep -q '^rdmig: .*(see rdmig .*--help)$' "$OUT"; }
# usage_error ARGS...: exit 2, one line pointing to --help
usage_error() {
	run 2 "$@" && { one_line && ok "rdmig $*: a usage error, one line" ||
		bad "rdmig $*: not one 'rdmig: ... --help' line"; }
}
usage_error
usage_error no-such-command
usage_error --bogus
usage_error send --bogus --to 127.0.0.1:9 "$IMG"
usage_error send --to
usage_error send --to 127.0.0.1:0 "$IMG"
usage_error send --to 127.0.0.1:9
usage_error send --to 127.0.0.1:9 --timeout 5x "$IMG"
usage_error send --to 127.0.0.1:9 --timeout ' 5' "$IMG"
usage_error send --to 127.0.0.1:9 --chunk-size 3M "$IMG"
usage_error send --to 127.0.0.1:9 --inline +16 "$IMG"
usage_error send --to 127.0.0.1:9 --verify md5 "$IMG"
usage_error send --to 127.0.0.1:9 --json=1 "$IMG"
usage_error send --to 127.0.0.1:9 --progress yes "$IMG"
usage_error recv --listen :4444 --out /nonexistent-rdmig-dir --progress
usage_error send --qemu-replay
usage_error send --qemu-replay /nonexistent --to 127.0.0.1:9 extra
usage_error recv --listen :4444
usage_error recv --out /nonexistent-rdmig-dir
usage_error recv --listen :4444 --out /nonexistent-rdmig-dir --max-total 5x
usage_error recv --listen :4444 --out /nonexistent-rdmig-dir --allow 10.0.0.0/+8
usage_error recv --listen :4444 --out /nonexistent-rdmig-dir --verify maybe
usage_error recv --listen :4444 --out /nonexistent-rdmig-dir operand
usage_error recv --qemu --listen :4444 --out /nonexistent-rdmig-dir --max-total 0
# recv --serve: its own options, strictly; nothing is created
SERVE_OUT=$(mktemp -u) # a name, not made
for bad_args in "--max-sources 0" "--max-sources 65" "--max-sources 4x" "--max-sources ''" \
	"--serve-max-total 0" "--serve-max-total 5x" "--serve-max-pinned 0" \
	"--serve-max-pinned -1" "--serve-max-files 0" "--serve-max-files 2000000001" \
	"--serve-max-files 9x" "--source-deadline -1" "--source-deadline 604801" \
	"--source-deadline 1x" "--progress yes" "--max-total 5x" "--verify maybe" "operand"; do
	eval "usage_error recv --serve --listen :4444 --out \"\$SERVE_OUT\" $bad_args"
done
usage_error recv --serve --out "$SERVE_OUT"
usage_error recv --serve --listen :4444
[ ! -e "$SERVE_OUT" ] && ok "recv --serve: a usage error creates no --out" ||
	bad "recv --serve: a usage error created --out"
run 0 recv --serve --help && { has "--max-sources" && has "--serve-max-total" &&
	has "--serve-max-pinned" && has "--serve-max-files" && has "--source-deadline" && ok "recv --serve --help: its own options" ||
	bad "recv --serve --help misses an option"; }
run 0 recv --help && { has "recv --serve" && ok "recv --help points to recv --serve" ||
	bad "recv --help does not mention --serve"; }
run 0 recv --listen :4444 --serve --help && { has "--max-sources" &&
	ok "recv ... --serve --help: the serve help, wherever --serve stands" ||
	bad "recv ... --serve --help is not the serve help"; }
usage_error probe --bogus
usage_error probe --inline 2000
usage_error probe operand
for c in ping pong; do
	[ $c = ping ] && a=--to || a=--listen
	usage_error "$c" "$a" 127.0.0.1:9 --bogus
	usage_error "$c" "$a" 127.0.0.1:9 -T abc
	usage_error "$c" "$a" 127.0.0.1:9 --timeout 5x
	usage_error "$c"
done
usage_error ping --to 127.0.0.1:9 -n abc
usage_error ping --to 127.0.0.1:9 -n 5x
usage_error ping --to 127.0.0.1:9 -n 0
usage_error pong --listen :9 -n 5
RDMIG_HASH_THREADS=9x usage_error send --to 127.0.0.1:9 "$IMG"
RDMIG_REGISTER_THREADS=0 usage_error send --to 127.0.0.1:9 "$IMG"
RDMIG_HASH_THREADS=abc usage_error recv --listen :4444 --out /nonexistent-rdmig-dir
for c in send recv probe ping pong; do
	run 0 "$c" --help && { has "usage: rdmig $c" && ok "rdmig $c --help" || bad "$c --help"; }
done
run 0 recv --qemu --help && { has "--ramblocks" && ok "rdmig recv --qemu --help" || bad "no --ramblocks"; }
run 0 send --qemu-replay x --help && { has "--qemu-replay DIR" && ok "rdmig send --qemu-replay --help" ||
	bad "send --qemu-replay --help"; }
# --help anywhere, even where an option's value would be
for args in "send --qemu-replay --help" "send --to --help" "recv --out --help" "ping -n --help" \
	"send --bogus --help" "probe --device -h"; do
	# shellcheck disable=SC2086
	run 0 $args && { has "usage: rdmig" && ok "rdmig $args: the help" || bad "rdmig $args: no help"; }
done
run 2 send && ok "send without --to: a usage error (2)"
# a usage error under --json: the one line on stderr, one object on stdout
if "$RDMIG" send --json --bogus >"$OUT" 2>/dev/null; then
	bad "send --json --bogus succeeded"
else
	grep -q '"ok": false, "phase": "options", "error": { "code": "usage", ' "$OUT" &&
		[ "$(wc -l <"$OUT")" = 1 ] && ok "send --json --bogus: one failure object" ||
		bad "send --json --bogus: no failure object on stdout"
fi

# recv --qemu --source-qmp (before anything RDMA): the source's `info
# ramblock` over QMP, from a stand-in QMP server (fake_qmp.py)
HERE=$(cd "$(dirname "$0")" && pwd)
run 2 recv --qemu --listen 127.0.0.1:9 --out /nonexistent/x --source-qmp /x --ramblocks /y &&
	{ one_line && has "--ramblocks and --source-qmp" && ok "recv --qemu: --source-qmp with --ramblocks: usage error" ||
		bad "recv --qemu --source-qmp --ramblocks: not one usage line"; }
if command -v python3 >/dev/null; then
	d=$(mktemp -d)
	# qmp_case MODE STATUS: rdmig recv --qemu against fake_qmp.py MODE
	qmp_case() {
		python3 "$HERE/fake_qmp.py" "$d/qmp" "$1" &
		local fake=$! i
		for ((i = 0; i < 100; i++)); do [ -S "$d/qmp" ] && break; sleep 0.05; done
		"$RDMIG" recv --qemu --listen 127.0.0.1:9 --out "$d/out" --timeout 1 -v --json \
			--source-qmp "$d/qmp" >"$OUT.json" 2>"$OUT"
		local rc=$?
		kill "$fake" 2>/dev/null
		wait "$fake" 2>/dev/null
		rm -f "$d/qmp"
		return $rc
	}
	qmp_case good
	has "recv: the source's 'info ramblock' (QMP $d/qmp): 3 RAM blocks" &&
		! grep -q '"phase": "setup"' "$OUT.json" &&
		ok "recv --qemu --source-qmp: the RAM blocks from QMP (an event before the answer skipped)" ||
		bad "recv --qemu --source-qmp: no RAM blocks from the QMP server"
	qmp_case error
	[ $? = 1 ] && has "QMP human-monitor-command: no monitor here" && grep -q '"phase": "setup"' "$OUT.json" &&
		ok "recv --qemu --source-qmp: a QMP error fails the setup" ||
		bad "recv --qemu --source-qmp: a QMP error"
	qmp_case garbage
	[ $? = 1 ] && has "the source's 'info ramblock' (--source-qmp): line 1 is not" &&
		ok "recv --qemu --source-qmp: a table that is not 'info ramblock' fails the setup" ||
		bad "recv --qemu --source-qmp: a bad table"
	"$RDMIG" recv --qemu --listen 127.0.0.1:9 --out "$d/fresh" --source-qmp "$d/none" >"$OUT" 2>&1
	[ $? = 1 ] && has "QMP socket '$d/none': No such file or directory" && [ ! -e "$d/fresh" ] &&
		ok "recv --qemu --source-qmp: no socket fails the setup, creates nothing" ||
		bad "recv --qemu --source-qmp: no socket"
	rm -rf "$d"
else
	bad "recv --qemu --source-qmp: python3 is missing (the stand-in QMP server)"
fi

# rdmig help [COMMAND [MODE]]: the help asked for, exit 0
run 0 help && { has "help [COMMAND]" && has "recv --serve" && ok "rdmig help: the commands" ||
	bad "rdmig help: not the list of commands"; }
for c in send recv probe ping pong; do
	run 0 help "$c" && { has "usage: rdmig $c" && ok "rdmig help $c: its help" || bad "rdmig help $c"; }
done
run 0 help recv --serve && { has "--max-sources" && ok "rdmig help recv --serve: the mode's help" ||
	bad "rdmig help recv --serve: not the serve help"; }
run 0 help send --qemu-replay && { has "--qemu-replay DIR" && ok "rdmig help send --qemu-replay" ||
	bad "rdmig help send --qemu-replay"; }
usage_error help no-such-command
usage_error help recv --bogus
usage_error help recv --serve extra
# two modes at once: said as such, not as an unknown option
usage_error recv --serve --qemu --listen :4444 --out /nonexistent-rdmig-dir
has "--serve and --qemu cannot be combined" && ok "recv --serve --qemu: the two modes named" ||
	bad "recv --serve --qemu: not said that they cannot be combined"
# recv --serve --progress json|human: accepted (one option set for both
# modes) but a note says it shows nothing; none and auto say nothing
"$RDMIG" recv --serve --listen 127.0.0.1:9 --out /nonexistent-rdmig-dir/x --progress json \
	--timeout 1 >/dev/null 2>"$OUT"
has "rdmig: recv --serve: note: --progress json shows nothing in serve mode" &&
	ok "recv --serve --progress json: a note says it shows nothing" ||
	bad "recv --serve --progress json: no note"
"$RDMIG" recv --serve --listen 127.0.0.1:9 --out /nonexistent-rdmig-dir/x --progress none \
	--timeout 1 >/dev/null 2>"$OUT"
! has "note: --progress" && ok "recv --serve --progress none: no note" ||
	bad "recv --serve --progress none: a note"

# The host's RDMA devices decide which checks can run: the no-device ones
# are their own ctest case (cli.no_device: test_cli.sh RDMIG VERSION
# no-device), skipped (77) where devices exist.
if [ -n "$(ls /sys/class/infiniband 2>/dev/null)" ]; then
	# probe --json: one object with the tool's version, its
	# devices in an array (written by json-c; checked by Python's parser).
	if ! command -v python3 >/dev/null; then
		bad "rdmig probe --json: python3 is missing"
	elif "$RDMIG" probe --json >"$OUT" 2>/dev/null && python3 -c '
import json, sys
o = json.load(open(sys.argv[1]))
assert o["rdmig_version"] == sys.argv[2] and o["ok"] is True, o.get("rdmig_version")
d = o["devices"]
assert isinstance(d, list) and d, "not a non-empty array"
for dev in d:
    assert isinstance(dev["device"], str) and isinstance(dev["max_send_wr"], int)
    assert isinstance(dev["ladder"]["ok"], bool) and isinstance(dev["rows"], list)
' "$OUT" "$VERSION" >/dev/null 2>&1; then
		ok "rdmig probe --json: valid JSON with rdmig_version"
	else
		bad "rdmig probe --json: not an object with rdmig_version $VERSION and devices"
	fi
fi

echo "$PASSED passed, $FAILED failed"
[ "$FAILED" = 0 ]
