#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# test_unit.sh UNIT CONF - the systemd unit as shipped: systemd-analyze
# verifies it, scores its exposure at most 2.0 ("security --offline"), it
# runs --serve by default (as does the example configuration), is of
# Type=notify, and gives --serve its status socket in its runtime
# directory.  Whether rdmig works inside its sandbox is
# tests/device/test_unit_syscalls.sh, on the devices.  Prints "N passed,
# N failed".
set -u
UNIT=${1:?usage: test_unit.sh UNIT CONF}
CONF=${2:?usage: test_unit.sh UNIT CONF}
. "$(dirname "$0")/../lib/check.sh"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
command -v systemd-analyze >/dev/null || { fail "systemd-analyze is installed (apt-get install systemd)"; finish; }
# an instance's file name, as systemd-analyze wants one
cp "$UNIT" "$WORK/rdmig-recv@vm1.service"

systemd-analyze security --offline=yes "$WORK/rdmig-recv@vm1.service" >"$WORK/sec.txt" 2>&1
score=$(sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p' "$WORK/sec.txt")
check "systemd-analyze security scores the unit at most 2.0 (${score:-none})" \
	eval '[ -n "$score" ] && systemd-analyze security --offline=yes --threshold=20 "$WORK/rdmig-recv@vm1.service" >/dev/null 2>&1'
check "... with a system call filter, a device ACL and the process tree hidden" \
	eval '! grep -qE "✗ (SystemCallFilter=~@(privileged|mount|module|raw-io|reboot|swap|debug|clock)|DeviceAllow=  *Service has no|ProtectProc=)" "$WORK/sec.txt"'
check "it is of Type=notify, --serve by default, its status socket in its runtime directory" \
	eval 'grep -qx "Type=notify" "$UNIT" && grep -qx "Environment=RDMIG_MODE=--serve RDMIG_OPTIONS=" "$UNIT" &&
		grep -qx "Environment=RDMIG_STATUS_SOCKET=%t/rdmig/%i/status.sock" "$UNIT" &&
		grep -qx "RuntimeDirectory=rdmig/%i" "$UNIT"'
check "the example configuration serves too, and passes no option serve refuses" \
	eval 'grep -qx "RDMIG_MODE=--serve" "$CONF" && ! grep -qE "^RDMIG_OPTIONS=.*--progress" "$CONF"'
finish
