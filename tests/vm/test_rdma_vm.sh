#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Self-test of scripts/rdma-vm, run on the host.  Boots the guest 3 times:
#   1. one boot for most checks: devices, environment, exit status, stdout
#      and stderr kept apart, files shared both ways, real rping traffic
#      over rxe0 and siw0;
#   2. --timeout 5 -- sleep 60 must give 124, in bounded time;
#   3. --no-siw, and a command killed by a signal gives 128+n.
# Prints "ok - ..." / "FAIL - ..." per check and "N passed, N failed";
# exits non-zero on any failure.
#
# Usage: tests/vm/test_rdma_vm.sh   (as root on a fresh Debian 12 machine the
# first run also installs the packages and builds the cache)

set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RDMA_VM=${RDMA_VM:-$HERE/../../scripts/rdma-vm}

# shellcheck source=../lib/check.sh
. "$HERE/../lib/check.sh"
# Does file $1 hold exactly the text $2 (plus a final newline)?
has_exactly() { [ -f "$1" ] && [ "$(cat "$1")" = "$2" ]; }
# The same, ignoring the script's own "rdma-vm: ..." lines (a first run
# reports its package install and cache build on stderr).
has_exactly_but_ours() { [ -f "$1" ] && [ "$(grep -v '^rdma-vm: ' "$1")" = "$2" ]; }

WORK=$(mktemp -d "${TMPDIR:-/tmp}/rdma-vm-test.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
cd "$WORK" || exit 1

now_ms() { local t=${EPOCHREALTIME//[!0-9]/}; echo $((10#$t / 1000)); }

# Run the script; sets RC and MS (wall time); output in $1.out / $1.err.
run_vm() {
	local name=$1 t0
	shift
	t0=$(now_ms)
	"$RDMA_VM" "$@" >"$name.out" 2>"$name.err" </dev/null
	RC=$?
	MS=$(($(now_ms) - t0))
	echo "# $name: rdma-vm $* -> exit $RC in $MS ms"
}

# Helpers for the checks below.
both_envs() { grep -sqx "$1" env.txt && grep -sqx "$2" env.txt; }
rping_ok() { grep -sq '^client=0 ' "rping-rc-$1.txt" && grep -sqx server=0 "rping-rc-$1.txt"; }
three_pings() { [ "$(grep -sc 'ping data: rdma-ping-' "rping-$1.txt" 2>/dev/null)" = 3 ]; }

# ------------------------------------------------------------------ boot 1 --
token=host-token-$RANDOM$RANDOM
echo "$token" >from_host.txt
cat >guest1.sh <<'EOF'
# runs in the guest, in the shared test folder
ibv_devices >devices.txt 2>&1
for v in RDMAVM RDMAVM_RXE_DEV RDMAVM_RXE_IP RDMAVM_RXE_NETDEV RDMAVM_SIW_DEV RDMAVM_SIW_IP RDMAVM_SIW_NETDEV; do
	echo "$v=${!v:-}"
done >env.txt
ulimit -l >memlock.txt
cat /proc/sys/kernel/hostname >hostname.txt
cp from_host.txt seen_in_guest.txt
if read -r _; then echo "stdin had data" >stdin.txt; else echo "stdin empty" >stdin.txt; fi
echo "written in the guest" >from_guest.txt
# Real traffic: rping over each device (server in the background; the
# client retries until the server listens).
for ip in "$RDMAVM_RXE_IP" "$RDMAVM_SIW_IP"; do
	rping -s -a "$ip" -C 3 >"rping-server-$ip.txt" 2>&1 &
	srv=$!
	sleep 0.5
	for try in 1 2 3 4 5 6; do
		rping -c -a "$ip" -C 3 -v >"rping-$ip.txt" 2>&1 && break
		sleep 0.5
	done
	echo "client=$? try=$try" >"rping-rc-$ip.txt"
	wait "$srv"
	echo "server=$?" >>"rping-rc-$ip.txt"
done
# Interleaved output on both streams.
for i in 1 2 3; do
	echo "to-stdout-$i"
	echo "to-stderr-$i" >&2
done
exit 3
EOF
run_vm boot1 -- bash ./guest1.sh

check "exit status propagates (exit 3 -> $RC)" [ "$RC" = 3 ]
check "stdout carries exactly the stdout lines" has_exactly boot1.out "$(printf 'to-stdout-%s\n' 1 2 3)"
check "stderr carries exactly the stderr lines" \
	has_exactly_but_ours boot1.err "$(printf 'to-stderr-%s\n' 1 2 3)"
check "ibv_devices lists rxe0" grep -sqw rxe0 devices.txt
check "ibv_devices lists siw0" grep -sqw siw0 devices.txt
check "RDMAVM=1 is set" grep -sqx 'RDMAVM=1' env.txt
check "RDMAVM_RXE_IP is set (10.99.0.1)" grep -sqx 'RDMAVM_RXE_IP=10.99.0.1' env.txt
check "RDMAVM_SIW_IP is set (10.99.1.1)" grep -sqx 'RDMAVM_SIW_IP=10.99.1.1' env.txt
check "RDMAVM_RXE_DEV=rxe0, RDMAVM_SIW_DEV=siw0" both_envs RDMAVM_RXE_DEV=rxe0 RDMAVM_SIW_DEV=siw0
check "netdev names exported (rxenet0, siwnet0)" \
	both_envs RDMAVM_RXE_NETDEV=rxenet0 RDMAVM_SIW_NETDEV=siwnet0
check "ulimit -l is unlimited in the guest" has_exactly memlock.txt unlimited
check "the command ran in the guest (hostname rdmavm)" has_exactly hostname.txt rdmavm
check "stdin of the command is empty" has_exactly stdin.txt "stdin empty"
check "a host file in the cwd is visible in the guest" has_exactly seen_in_guest.txt "$token"
check "a file written in the guest's cwd is visible on the host" \
	has_exactly from_guest.txt "written in the guest"
for dev in rxe:10.99.0.1 siw:10.99.1.1; do
	ip=${dev#*:}
	check "rping over ${dev%%:*}0 ($ip): client and server exit 0" rping_ok "$ip"
	check "rping over ${dev%%:*}0: 3 pings with verified data" three_pings "$ip"
done
if [ "$failed" -gt 0 ]; then
	echo "# boot 1 stderr (last lines):"
	tail -n 40 boot1.err | sed 's/^/#   /'
fi

# ------------------------------------------------------------------ boot 2 --
run_vm boot2 --timeout 5 -- sleep 60
check "--timeout 5 -- sleep 60 gives 124 (got $RC)" [ "$RC" = 124 ]
timed_out_soon() { [ "$RC" = 124 ] && [ "$MS" -lt 40000 ]; }
check "--timeout 5 killed it well before 60 s ($MS ms)" timed_out_soon

# ------------------------------------------------------------------ boot 3 --
run_vm boot3 --no-siw -- bash -c 'ls /sys/class/infiniband; kill -TERM $$'
check "a command killed by SIGTERM gives 143 (got $RC)" [ "$RC" = 143 ]
check "--no-siw: only rxe0 exists" has_exactly boot3.out rxe0

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
