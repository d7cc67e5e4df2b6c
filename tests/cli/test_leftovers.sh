#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# test_leftovers.sh RDMIG - a recv that was killed leaves its temporary
# files (.rdmig-PID-N.NAME) in --out; the next recv on that directory
# removes those of a process that is gone, and only those: not a live
# process's, not a name that only looks alike, not a symlink or a
# directory, not another user's, and says what it removed.  The sweep
# happens before recv listens, so no RDMA device is needed: recv then
# fails to listen (or waits), and the test stops it.  Prints
# "N passed, N failed".
set -u
RDMIG=${1:?usage: test_leftovers.sh RDMIG}
. "$(dirname "$0")/../lib/check.sh"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
OUT=$WORK/out
mkdir -m 700 "$OUT"

# a PID that is no process: above pid_max
dead=$(( $(cat /proc/sys/kernel/pid_max) + 7 ))
echo a >"$OUT/.rdmig-$dead-0.disk.img"
echo b >"$OUT/.rdmig-$dead-1.stream.bin"
echo c >"$OUT/.rdmig-$$-0.live.img"          # this shell: alive
echo d >"$OUT/.rdmig-x-0.disk.img"           # not a PID
echo e >"$OUT/.rdmig-$dead.disk.img"         # no serial
echo f >"$OUT/keep.img"
ln -s /etc/hostname "$OUT/.rdmig-$dead-2.link.img"
mkdir "$OUT/.rdmig-$dead-3.dir.img"
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
	echo g >"$OUT/.rdmig-$dead-4.other.img"
	chown nobody "$OUT/.rdmig-$dead-4.other.img"
fi

timeout -s KILL 20 "$RDMIG" recv --listen 127.0.0.1:1 --out "$OUT" --timeout 1 >"$WORK/out.txt" \
	2>"$WORK/err.txt" </dev/null
rc=$?
check "recv ran and ended by itself (exit $rc), not by a signal or the watchdog" \
	eval '[ "$rc" -gt 0 ] && [ "$rc" -lt 124 ]'
check "recv says it removed the 2 temporaries of a gone process: $(grep removed "$WORK/err.txt")" \
	grep -q "removed 2 temporary files that an earlier recv left in $OUT" "$WORK/err.txt"
check "both are gone" eval '[ ! -e "$OUT/.rdmig-$dead-0.disk.img" ] && [ ! -e "$OUT/.rdmig-$dead-1.stream.bin" ]'
check "a live process's temporary stays" [ -e "$OUT/.rdmig-$$-0.live.img" ]
check "names that only look alike stay" \
	eval '[ -e "$OUT/.rdmig-x-0.disk.img" ] && [ -e "$OUT/.rdmig-$dead.disk.img" ] && [ -e "$OUT/keep.img" ]'
check "a symlink and a directory so named stay (and the link's target)" \
	eval '[ -L "$OUT/.rdmig-$dead-2.link.img" ] && [ -d "$OUT/.rdmig-$dead-3.dir.img" ] && [ -s /etc/hostname ]'
if [ -e "$OUT/.rdmig-$dead-4.other.img" ] || [ "$(id -u)" = 0 ]; then
	check "another user's stays" [ -e "$OUT/.rdmig-$dead-4.other.img" ]
fi
check "no sanitizer report" eval '! grep -qE "Sanitizer|runtime error" "$WORK/err.txt"'
finish
