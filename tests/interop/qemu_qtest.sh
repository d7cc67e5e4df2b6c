#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# qemu_qtest.sh - QEMU's own RDMA migration test (tests/qtest/migration-test
# of QEMU 10.2.2, built by scripts/qemu-inline beside qemu-system-x86_64)
# run on the test guest's rxe0, against the stock 10.2.2 or the build with
# the project's series.  QEMU's test skips (it does not fail) when it finds
# no RDMA link or too little locked memory; here a skip is a failure, so a
# run proves that the case ran.
#
# Usage: tests/interop/qemu_qtest.sh stock|inline CASE
#   CASE   plain      /x86_64/migration/precopy/rdma/plain
#          ipv6       /x86_64/migration/precopy/rdma/plain/ipv6
#          inline-off /x86_64/migration/precopy/rdma/inline-off (the series'
#                     own case: x-rdma-max-inline=0 on both sides)
# (glib's -p takes a path's children too: plain skips ipv6 with -s)
#
# Runs inside the guest (scripts/rdma-vm), where RDMAVM_RXE_IP is set; the
# host must have built both QEMUs first (scripts/qemu-inline [--stock]).
# QEMU's helper (scripts/rdma-migration-helper.sh detect, run by the test
# from the source tree) picks the first RDMA link that has an IPv4 address:
# the check below makes sure that is rxe0's.  Prints "ok - ..." /
# "FAIL - ..." and "N passed, N failed".
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/lib/check.sh
. "$HERE/../lib/check.sh"

[ $# = 2 ] || { echo "usage: $0 stock|inline plain|ipv6|inline-off" >&2; exit 2; }
KIND=$1
CASE=$2
case $KIND in
stock) BIN=$("$HERE/../../scripts/qemu-inline" --stock 2>/dev/null | tail -n1) ;;
inline) BIN=$("$HERE/../../scripts/qemu-inline" 2>/dev/null | tail -n1) ;;
*) echo "FAIL - unknown build '$KIND'"; exit 1 ;;
esac
case $CASE in
plain) path=/x86_64/migration/precopy/rdma/plain skip=(-s "$path/ipv6") ;;
ipv6) path=/x86_64/migration/precopy/rdma/plain/ipv6 skip=() ;;
inline-off) path=/x86_64/migration/precopy/rdma/inline-off skip=() ;;
*) echo "FAIL - unknown case '$CASE'"; exit 1 ;;
esac
[ -x "$BIN" ] || { echo "FAIL - no $KIND QEMU 10.2.2 in the cache: run scripts/qemu-inline${KIND/inline/} on the host first"; exit 1; }
BUILD=$(dirname "$BIN")
SRC=$(dirname "$BUILD")
OUT=$(dirname "$SRC")
TEST=$BUILD/tests/qtest/migration-test
[ -x "$TEST" ] || { echo "FAIL - no $TEST (scripts/qemu-inline builds it)"; exit 1; }
[ -n "${RDMAVM_RXE_IP:-}" ] || { echo "FAIL - RDMAVM_RXE_IP is not set: run inside scripts/rdma-vm"; exit 1; }

WORK=$(mktemp -d "${TMPDIR:-/tmp}/qemu-qtest.XXXXXX") || exit 1
trap 'rm -rf "$WORK"' EXIT
# QTEST_QEMU_BINARY must end in qemu-system-x86_64 (the test reads the
# target from the name); the +ds build needs the firmware path, and the
# test's machines (q35, its e1000e) the option ROMs of Debian's ipxe-qemu
mkdir -p "$WORK/bin"
printf '#!/bin/sh\nexec %q -L %q -L /usr/share/qemu -L /usr/share/seabios -L /usr/lib/ipxe/qemu "$@"\n' \
	"$BIN" "$OUT/firmware/usr/share/qemu" >"$WORK/bin/qemu-system-x86_64"
chmod +x "$WORK/bin/qemu-system-x86_64"

echo "# $KIND: $("$BIN" --version | head -n1) ($BIN)"
if [ "$CASE" = ipv6 ]; then
	link=$(cd "$SRC" && IP_FAMILY=ipv6 bash scripts/rdma-migration-helper.sh detect 2>/dev/null)
	check "QEMU's rdma-migration-helper.sh finds an IPv6 address on an RDMA link ($link)" \
		test -n "$link"
else
	link=$(cd "$SRC" && bash scripts/rdma-migration-helper.sh detect 2>/dev/null)
	check "QEMU's rdma-migration-helper.sh finds rxe0's address ($link, rxe0 is $RDMAVM_RXE_IP)" \
		test "$link" = "$RDMAVM_RXE_IP"
fi
if [ "$KIND" = stock ] && [ "$CASE" = inline-off ]; then
	check "the stock build has no inline-off case (the series adds it)" \
		eval '! (cd "$SRC" && QTEST_QEMU_BINARY="$WORK/bin/qemu-system-x86_64" "$TEST" -l | grep -q rdma/inline-off)'
	finish
fi

t0=$SECONDS
(cd "$SRC" && QTEST_QEMU_BINARY="$WORK/bin/qemu-system-x86_64" timeout 900 "$TEST" --tap -k -p "$path" "${skip[@]}") \
	>"$WORK/tap" 2>"$WORK/err"
rc=$?
sed 's/^/# /' "$WORK/tap" | grep -v '^# # ' | head -n 20
check "$path ran and passed under QEMU's test ($KIND, exit $rc, $((SECONDS - t0)) s)" \
	eval 'test "$rc" = 0 && grep -Eq "^ok [0-9]+ $path\$" "$WORK/tap"'
check "$path was not skipped" eval '! grep -Eq "^ok [0-9]+ $path # SKIP" "$WORK/tap"'
check "$path was the only case that ran" \
	test "$(grep -E '^(not )?ok [0-9]+ ' "$WORK/tap" | grep -vc '# SKIP')" = 1
[ "$rc" = 0 ] || tail -n 20 "$WORK/err" | sed 's/^/# /'
finish
