#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# test_unit_syscalls.sh - does the systemd unit's sandbox leave rdmig
# working?  The unit (debian/rdmig.rdmig-recv@.service) allows the system
# calls of @system-service less @privileged, and of the devices only
# /dev/infiniband's rdma_cm and the verbs devices (major
# "infiniband_verbs").  There is no systemd in the test guest, so this
# runs the receiver's work under strace instead: recv --serve with its
# status socket and sd_notify, a dynamic and a pin-all source, rdmig status,
# the drain; then a one-shot recv.  Every system call they made must be in
# the unit's filter (expanded by systemd-analyze syscall-filter, read from
# the unit file itself), and the devices they opened under its DeviceAllow.
#
# Usage: tests/device/test_unit_syscalls.sh BUILD_DIR DEVICE  (rxe | siw)
# The build users run (release): a sanitizer's runtime makes calls of its own.
# Prints "ok - ..." / "FAIL - ..." and "N passed, N failed".

# shellcheck disable=SC2016,SC2034,SC2153,SC2154 # check "..." eval '...'; BUILD, END_RC: migtest.sh
set -uo pipefail

if [ $# -ne 2 ]; then
	echo "usage: $0 BUILD_DIR DEVICE" >&2
	exit 2
fi
BUILD=$(cd "$1" 2>/dev/null && pwd) || { echo "FAIL - no build directory '$1'"; exit 1; }
DEVICE=$2
HERE=$(cd "$(dirname "$0")" && pwd)
UNIT=$HERE/../../debian/rdmig.rdmig-recv@.service
# shellcheck source=tests/device/migtest.sh
. "$HERE/migtest.sh"
migtest_init

for tool in strace systemd-analyze; do
	command -v "$tool" >/dev/null || { fail "$tool is installed (apt-get install $tool)"; finish; }
done
PORT=24300
[ "$DEVICE" = siw ] && PORT=24400
MiB=$((1 << 20))
head -c $((8 * MiB)) /dev/urandom >"$WORK/a.img"
head -c $((8 * MiB)) /dev/urandom >"$WORK/b.img"
TRACE=(strace -f -qq -o)

# ------------------------------------------------- recv --serve, traced --

notify_listen
check "the stand-in for systemd listens" [ -S "$WORK/notify.sock" ]

NOTIFY_SOCKET=$WORK/notify.sock RDMIG_STATUS_SOCKET=$WORK/status.sock \
	bg serve --as "${TRACE[@]}" "$WORK/serve.trace" -- \
	recv --serve --listen "$IP:$PORT" --out "$WORK/out" --timeout 60 --pin-all
for ((i = 0; i < 6000; i++)); do
	has_line "$WORK/serve.err" 'recv: listening on' && break
	ended serve && break
	nap 0.01
done
check "recv --serve listens under strace" has_line "$WORK/serve.err" 'recv: listening on'
bg a -- send --to "$IP:$PORT" --timeout 60 "$WORK/a.img"
wait_end a 300
check "a dynamic source is received ($END_RC)" [ "$END_RC" = 0 ]
bg b -- send --to "$IP:$PORT" --timeout 60 --pin-all "$WORK/b.img"
wait_end b 300
check "a pin-all source is received ($END_RC)" [ "$END_RC" = 0 ]
check "rdmig status answers (RDMIG_STATUS_SOCKET)" \
	eval 'RDMIG_STATUS_SOCKET=$WORK/status.sock "$RDMIG" status | grep -q "2 verified"'
# the signal goes to recv itself: strace, signalled, would detach
kill -TERM "$(pgrep -P "$PID_serve" -x rdmig)"
wait_end serve 120
check "recv --serve drains and exits 0 ($END_RC)" [ "$END_RC" = 0 ]
for ((i = 0; i < 1000; i++)); do has_line "$WORK/notify.txt" STOPPING=1 && break; nap 0.01; done
check "it told systemd READY=1 and STOPPING=1" \
	eval 'grep -qx READY=1 "$WORK/notify.txt" && grep -qx STOPPING=1 "$WORK/notify.txt"'

# ---------------------------------------------------- one-shot recv --

bg one --as "${TRACE[@]}" "$WORK/one.trace" -- \
	recv --listen "$IP:$((PORT + 1))" --out "$WORK/out1" --timeout 60 -v
for ((i = 0; i < 6000; i++)); do
	has_line "$WORK/one.err" 'recv: listening on' && break
	ended one && break
	nap 0.01
done
bg c -- send --to "$IP:$((PORT + 1))" --timeout 60 "$WORK/a.img"
wait_end c 300
wait_end one 120
check "a one-shot recv under strace receives and exits 0 ($END_RC)" [ "$END_RC" = 0 ]

# ------------------------------------------------------- the filter --

# expand NAME...: the system calls of these names and groups, one a line
expand() {
	local x
	for x in "$@"; do
		if [[ $x == @* ]]; then
			# a group's listing: its calls and its nested groups, indented
			systemd-analyze syscall-filter "$x" 2>/dev/null |
				sed -n '2,$s/^ *\([-@a-z0-9_]*\).*/\1/p' | grep -v '^$' |
				while read -r y; do expand "$y" </dev/null; done
		else
			echo "$x"
		fi
	done
}
allow=$(sed -n 's/^SystemCallFilter=\([^~].*\)/\1/p' "$UNIT")
deny=$(sed -n 's/^SystemCallFilter=~\(.*\)/\1/p' "$UNIT")
# shellcheck disable=SC2086 # the lines' words
expand $allow | sort -u >"$WORK/allowed"
# shellcheck disable=SC2086
expand $deny | sort -u >"$WORK/denied"
comm -23 "$WORK/allowed" "$WORK/denied" >"$WORK/filter"
check "the unit's filter expands ($(wc -l <"$WORK/filter") calls allowed, $(wc -l <"$WORK/denied") denied)" \
	[ "$(wc -l <"$WORK/filter")" -gt 100 ]
# the calls made: "PID name(" and "PID <... name resumed>"
sed -nE 's/^[0-9]+ +(<\.\.\. )?([a-z0-9_]+)[( ].*/\2/p' "$WORK/serve.trace" "$WORK/one.trace" |
	sort -u >"$WORK/made"
outside=$(comm -23 "$WORK/made" "$WORK/filter" | tr '\n' ' ')
check "every one of the $(wc -l <"$WORK/made") system calls rdmig made is in the unit's filter (outside:${outside:- none})" \
	[ -z "$outside" ]

# ------------------------------------------------------ the devices --

# the character majors named "infiniband_verbs" (the kernel registers a
# fixed one and a dynamic one), all of which char-infiniband_verbs allows
major=$(awk '$2 == "infiniband_verbs" { printf "%s ", $1 }' /proc/devices)
opened=$(sed -nE 's/.*open(at)?\(.*"(\/dev\/[^"]*)".*= [0-9]+$/\2/p' "$WORK/serve.trace" "$WORK/one.trace" | sort -u)
bad=
for dev in $opened; do
	case $dev in
	/dev/infiniband/rdma_cm | /dev/null | /dev/zero | /dev/full | /dev/random | /dev/urandom) ;;
	/dev/infiniband/uverbs*)
		[[ " $major" == *" $((16#$(stat -c %t "$dev"))) "* ]] || bad="$bad $dev" ;;
	*) bad="$bad $dev" ;;
	esac
done
check "the devices opened ($(echo $opened)) are those of DeviceAllow (infiniband_verbs: ${major% })" \
	eval '[ -n "$major" ] && [ -z "$bad" ] && [[ "$opened" == */dev/infiniband/uverbs* ]]'

kill "$NOTIFY_PID" 2>/dev/null
finish
