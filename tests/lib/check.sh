# SPDX-License-Identifier: BSD-2-Clause
# tests/lib/check.sh - what every shell test shares (source it):
#   ok/fail DESCRIPTION    count one check and print "ok - ..." / "FAIL - ..."
#   check DESCRIPTION CMD  ok if CMD succeeds
#   finish                 print "N passed, N failed"; exit 0 only if all passed
#   device_ip rxe|siw WHAT set IP to the device's guest-internal address, or
#                          fail: device tests run inside scripts/rdma-vm only
# shellcheck shell=bash
passed=0
failed=0
ok()   { echo "ok - $*"; passed=$((passed + 1)); }
fail() { echo "FAIL - $*"; failed=$((failed + 1)); }
check() {
	local what=$1
	shift
	if "$@"; then ok "$what"; else fail "$what"; fi
}
finish() {
	echo "$passed passed, $failed failed"
	[ "$failed" = 0 ] && [ "$passed" -gt 0 ]
	exit $?
}
device_ip() {
	case $1 in
	rxe) IP=${RDMAVM_RXE_IP:-} ;;
	siw) IP=${RDMAVM_SIW_IP:-} ;;
	*) echo "FAIL - unknown device '$1' (rxe or siw)"; exit 1 ;;
	esac
	if [ -z "$IP" ]; then
		echo "FAIL - RDMAVM_${1^^}_IP is not set: $2 tests run inside the test guest" \
			"(scripts/rdma-vm -- ctest -L $2)"
		exit 1
	fi
}
