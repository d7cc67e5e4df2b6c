#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# test_cli.sh RDMIG VERSION - the command line of the tool that needs no RDMA
# device: --version, the top-level help, and the hints rdmig gives on a host
# without RDMA.  Prints "N passed, N failed"; exits non-zero on a failure.
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

for v in --version version; do
	run 0 "$v" && { [ "$(cat "$OUT")" = "rdmig $VERSION" ] && ok "rdmig $v" ||
		bad "rdmig $v: expected 'rdmig $VERSION'"; }
done

run 0 --help && { has "recv --qemu" && has "send --qemu-replay" && has "version" &&
	ok "rdmig --help lists the QEMU modes and version" || bad "rdmig --help misses a mode"; }
run 2 && { has "usage: rdmig COMMAND" && ok "rdmig alone: usage, exit 2" || bad "no usage"; }
run 2 no-such-command && ok "an unknown command exits 2"
for c in send recv probe ping pong; do
	run 0 "$c" --help && { has "usage: rdmig $c" && ok "rdmig $c --help" || bad "$c --help"; }
done
run 0 recv --qemu --help && { has "--ramblocks" && ok "rdmig recv --qemu --help" || bad "no --ramblocks"; }
run 0 send --qemu-replay x --help && { has "--qemu-replay DIR" && ok "rdmig send --qemu-replay --help" ||
	bad "send --qemu-replay --help"; }
run 2 send && ok "send without --to: a usage error (2)"

# Only meaningful where there is no RDMA device at all.
if [ -z "$(ls /sys/class/infiniband 2>/dev/null)" ]; then
	if "$RDMIG" probe >"$OUT" 2>&1; then
		bad "rdmig probe succeeded without an RDMA device"
	else
		has "no RDMA device found" && has "rdma link add rxe0 type rxe netdev IFACE" &&
			has "scripts/rdma-vm" && ok "rdmig probe without a device: the hint" ||
			bad "rdmig probe: no hint"
	fi
	if "$RDMIG" send --to 127.0.0.1:9 --timeout 1 "$IMG" >"$OUT" 2>&1; then
		bad "rdmig send succeeded without an RDMA device"
	else
		has "rdmig: hint:" && ok "rdmig send without a device: a hint" ||
			bad "rdmig send: no hint"
	fi
	if "$RDMIG" probe --json >"$OUT" 2>/dev/null || [ -s "$OUT" ]; then
		bad "rdmig probe --json without a device: expected a failure and nothing on stdout"
	else
		ok "rdmig probe --json without a device: no partial JSON"
	fi
else
	echo "skip: this host has RDMA devices ($(ls /sys/class/infiniband | tr '\n' ' '))"
	# probe --json (issue 19): a JSON array, one object per device, each with
	# the tool's version (written by json-c; checked by Python's parser).
	if ! command -v python3 >/dev/null; then
		echo "skip: rdmig probe --json (no python3)"
	elif "$RDMIG" probe --json >"$OUT" 2>/dev/null && python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert isinstance(d, list) and d, "not a non-empty array"
for dev in d:
    assert dev["rdmig_version"] == sys.argv[2], dev.get("rdmig_version")
    assert isinstance(dev["device"], str) and isinstance(dev["max_send_wr"], int)
    assert isinstance(dev["ladder"]["ok"], bool) and isinstance(dev["rows"], list)
' "$OUT" "$VERSION" >/dev/null 2>&1; then
		ok "rdmig probe --json: valid JSON with rdmig_version"
	else
		bad "rdmig probe --json: not a JSON array of devices with rdmig_version $VERSION"
	fi
fi

echo "$PASSED passed, $FAILED failed"
[ "$FAILED" = 0 ]
