# SPDX-License-Identifier: BSD-2-Clause
# tests/lib/check.sh - what every shell test shares (source it):
#   ok/fail DESCRIPTION    count one check and print "ok - ..." / "FAIL - ..."
#   check DESCRIPTION CMD  ok if CMD succeeds
#   finish                 print "N passed, N failed"; exit 0 only if all passed
#   tool_failed RC WANT ERR [ERE]
#                          an expected failure that is the tool's own: exit
#                          status WANT, an error line matching ERE (default
#                          '^rdmig: ') in the stderr file ERR and no
#                          sanitizer report there ("any non-zero exit" would
#                          take an ASan abort, 134, or a crash, 139, for it)
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
tool_failed() {
	local rc=$1 want=$2 err=$3 re=${4:-'^rdmig: '}
	if [ "$rc" != "$want" ]; then
		echo "#   exit status $rc, expected $want"
		return 1
	fi
	if grep -qE 'Sanitizer|runtime error:' "$err" 2>/dev/null; then
		echo "#   a sanitizer report in $err:"
		grep -m3 -E 'Sanitizer|runtime error:' "$err" | sed 's/^/#     /'
		return 1
	fi
	if ! grep -qE -- "$re" "$err" 2>/dev/null; then
		echo "#   no line matching '$re' in $err"
		return 1
	fi
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
