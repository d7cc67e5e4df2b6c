#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# test_memcheck.sh RDMIG - every command's error paths (bad options, missing
# arguments, bad addresses, no RDMA device) once under valgrind's memcheck:
# each run must end with the tool's own status and valgrind must report no
# error, above all no read of uninitialised memory.  RDMIG is a build
# without sanitizers (valgrind cannot run an ASan binary).  Without valgrind
# this test fails: a memcheck that did not run is not a pass.
# Prints "N passed, N failed"; exits non-zero on a failure.
set -u
RDMIG=${1:?usage: test_memcheck.sh RDMIG}
if ! command -v valgrind >/dev/null; then
	echo "FAILED: valgrind is not installed: the memcheck did not run (apt-get install valgrind)"
	exit 1
fi
PASSED=0
FAILED=0
D=$(mktemp -d)
trap 'rm -rf "$D"' EXIT
echo data >"$D/img"
# valgrind's own status for an error it found: no status of the tool's
VG_ERR=97

# mc STATUS ARGS...: rdmig ARGS under memcheck exits STATUS, valgrind quiet
mc() {
	local want=$1 rc
	shift
	# without --track-origins, which doubles the time: an error is found
	# all the same (VALGRIND_OPTS=--track-origins=yes says where it came from)
	valgrind -q --tool=memcheck --error-exitcode=$VG_ERR \
		--leak-check=no --log-file="$D/vg.log" "$RDMIG" "$@" >"$D/out" 2>&1 </dev/null
	rc=$?
	if [ "$rc" = "$VG_ERR" ] || [ -s "$D/vg.log" ]; then
		FAILED=$((FAILED + 1))
		echo "FAILED: rdmig $*: valgrind reports errors (exit $rc)"
		grep -m1 -i 'uninitialised' "$D/vg.log" >/dev/null && echo "  (uninitialised memory used)"
		head -n 30 "$D/vg.log" | sed 's/^/  | /'
	elif [ "$rc" != "$want" ]; then
		FAILED=$((FAILED + 1))
		echo "FAILED: rdmig $*: exit $rc under valgrind, expected $want"
		sed 's/^/  | /' "$D/out"
	else
		PASSED=$((PASSED + 1))
		echo "ok: rdmig $* (exit $rc, memcheck clean)"
	fi
}

NOOUT=$D/none/out # its parent does not exist
# no command, unknown ones, help
mc 2
mc 2 no-such-command
mc 2 --bogus
mc 0 --version
mc 0 --help
for c in probe ping pong send recv status; do
	mc 0 "$c" --help
done
mc 0 help
mc 0 help recv --serve
mc 2 help no-such-command
mc 2 help recv --bogus
mc 2 recv --serve --qemu --listen :4444 --out "$NOOUT"
# probe
mc 2 probe --bogus
mc 2 probe --inline 2000
mc 2 probe operand
# ping and pong: bad options, a missing address, bad addresses
for c in ping pong; do
	[ $c = ping ] && a=--to || a=--listen
	mc 2 $c
	mc 2 $c --json
	mc 2 $c -v
	mc 2 $c $a
	mc 2 $c $a 127.0.0.1:9 --bogus
	mc 2 $c $a 127.0.0.1:9 --timeout 5x
	mc 2 $c $a 127.0.0.1:9 --inline 5000
	mc 2 $c $a 127.0.0.1
	mc 2 $c $a 127.0.0.1:99999
	mc 2 $c $a '[::1'
	mc 2 $c $a 127.0.0.1:9 operand
done
mc 2 ping --to 127.0.0.1:9 -n 0
mc 2 ping --to 127.0.0.1:9 -n abc
# send
mc 2 send
mc 2 send --json
mc 2 send --to
mc 2 send --to 127.0.0.1:9
mc 2 send --to 127.0.0.1:0 "$D/img"
mc 2 send --to 127.0.0.1 "$D/img"
mc 2 send --to '[::1' "$D/img"
mc 2 send --to 127.0.0.1:9 --bogus "$D/img"
mc 2 send --to 127.0.0.1:9 --timeout 5x "$D/img"
mc 2 send --to 127.0.0.1:9 --chunk-size 3M "$D/img"
mc 2 send --to 127.0.0.1:9 --verify md5 "$D/img"
mc 2 send --qemu-replay
mc 2 send --qemu-replay "$D/nonexistent" --to 127.0.0.1:9 extra
# recv, recv --serve, recv --qemu
mc 2 recv
mc 2 recv --json
mc 2 recv --listen :4444
mc 2 recv --out "$NOOUT"
mc 2 recv --listen 127.0.0.1 --out "$NOOUT"
mc 2 recv --listen '[::1' --out "$NOOUT"
mc 2 recv --listen :4444 --out "$NOOUT" --max-total 5x
mc 2 recv --listen :4444 --out "$NOOUT" --allow 10.0.0.0/+8
mc 2 recv --listen :4444 --out "$NOOUT" --verify maybe
mc 2 recv --listen :4444 --out "$NOOUT" operand
mc 2 recv --serve
mc 2 recv --serve --listen :4444
mc 2 recv --serve --out "$NOOUT"
mc 2 recv --serve --listen :4444 --out "$NOOUT" --max-sources 0
mc 2 recv --qemu
mc 2 recv --qemu --listen :4444 --out "$NOOUT" --max-total 0
mc 2 recv --qemu --listen 127.0.0.1:9 --out "$NOOUT" --source-qmp /x --ramblocks /y
# status: bad options; no server (a missing socket, a file that is not one)
mc 2 status
mc 2 status --json
mc 2 status --socket
mc 2 status --socket "$D/s" --json --metrics
mc 2 status --socket "$D/s" operand
mc 2 status --bogus
mc 1 status --socket "$D/none.sock"
mc 1 status --json --socket "$D/img"
# failures past the options where this host has no RDMA device (the
# tool's status 1)
if [ -z "$(ls /sys/class/infiniband 2>/dev/null)" ]; then
	mc 1 probe
	mc 1 probe --json
	mc 1 ping --to 127.0.0.1:9 --timeout 1
	mc 1 ping --json --to 127.0.0.1:9 --timeout 1
	mc 1 pong --listen 127.0.0.1:9 --timeout 1
	mc 1 pong --json --listen 127.0.0.1:9 --timeout 1
	mc 1 send --to 127.0.0.1:9 --timeout 1 "$D/img"
	mc 1 send --json --to 127.0.0.1:9 --timeout 1 "$D/img"
	mc 1 recv --listen 127.0.0.1:9 --out "$D/r1" --timeout 1
	mc 1 recv --json --serve --listen 127.0.0.1:9 --out "$D/r2" --timeout 1
fi
echo "$PASSED passed, $FAILED failed"
[ "$FAILED" = 0 ]
