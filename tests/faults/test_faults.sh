#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# test_faults.sh - the CI subset of scripts/faults (docs/reliability.md) on
# one device, inside the test guest (scripts/rdma-vm), as root:
#   loss-1%       over the device kind's veth pair, siw_a -> siw_b or
#                 rxe_a -> rxe_b, with 1% loss (made here unless
#                 scripts/rdma-vm --two-hosts made it, removed at the end):
#                 completes byte-identical.  rxe0 itself loops back inside
#                 the driver, where netem cannot act.
#   lost-dreq     (rxe) over rxe_a -> rxe_b, the sender's disconnect
#                 request after the data dropped once: the kernel sends it
#                 again while send waits for the answer, and the migration
#                 completes byte-identical.
#   stop-recv-5s  the receiver SIGSTOPped 5 s mid-transfer (--timeout 10):
#                 completes byte-identical.
#   enospc        --out (a tmpfs) filled up mid-transfer: recv fails naming
#                 ENOSPC, both sides end within 2 x the timeout, and no
#                 image is left under its final name.
# Usage: tests/device/test_faults.sh BUILD_DIR DEVICE (rxe | siw)
# Prints "ok - ..." / "FAIL - ..." and "N passed, N failed".

set -uo pipefail
[ $# -eq 2 ] || { echo "usage: $0 BUILD_DIR rxe|siw" >&2; exit 2; }
BUILD=$(cd "$1" 2>/dev/null && pwd) || { echo "FAIL - no build directory '$1'"; exit 1; }
DEVICE=$2
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/faults/faultlib.sh
. "$HERE/faultlib.sh"
device_ip "$DEVICE" device
case $DEVICE in rxe) FL_PORT=23500 ;; siw) FL_PORT=23700 ;; esac
fl_init "$BUILD" 16

case_row() { echo "# $FL_ROW | $FL_DETAIL"; }

if fl_pair_up "$DEVICE"; then
	fl_case loss-1% "$DEVICE-pair" netem "loss 1%"
	case_row
	check "1% loss on the path: completes byte-identical" [ "$FL_OUTCOME" = completed ]
	check "... and netem dropped packets on the way (${FL_DROPPED:-none})" [ "${FL_DROPPED:-0}" -ge 1 ]
	if [ "$DEVICE" = rxe ]; then
		fl_case lost-dreq "$DEVICE-pair" lostdreq
		case_row
		check "the disconnect request lost: completes byte-identical" [ "$FL_OUTCOME" = completed ]
		check "... and it was lost (DREQs dropped: ${FL_DROPPED:-none})" \
			[ "${FL_DROPPED:-0}" -ge 1 ]
	fi
else
	fail "the veth pair ${DEVICE}_a/${DEVICE}_b could not be made"
fi

fl_case stop-recv-5s "$DEVICE" stop 5
case_row
check "receiver stopped 5 s: completes byte-identical" [ "$FL_OUTCOME" = completed ]
check "... and it was stopped mid-transfer (state T seen)" [ "$FL_STRUCK" = 1 ]

fl_case enospc "$DEVICE" enospc
case_row
check "--out full mid-transfer: the migration fails" [ "$FL_OUTCOME" = failed ]
check "... after --out was seen full mid-transfer" [ "$FL_STRUCK" = 1 ]
check "... both sides end within 2 x --timeout" [ "$FL_BOUNDED" = 1 ]
# FL_DETAIL: "send RC: LINE | recv RC: LINE | ends ...".  The source may
# have finished (exit 0) before recv writes the images: the protocol has no
# message left to tell it then (docs/reliability.md).
# shellcheck disable=SC2317 # called by check
recv_said() { [[ $FL_DETAIL =~ \ \|\ recv\ [1-9][0-9]*:\ [^|]*No\ space\ left ]]; }
check "... recv exits non-zero naming ENOSPC: $FL_DETAIL" recv_said
check "... and no image under its final name (left:${FL_LEFT:- none})" [ -z "$FL_LEFT" ]
finish
