#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# test_outputs.sh - what `rdmig recv` writes into --out DIR, and how much a
# source may make it write, on a real device inside
# the test guest (scripts/rdma-vm).
#
# Usage: tests/device/test_outputs.sh BUILD_DIR CASE DEVICE
#   files   a symlink, a FIFO or a file planted under an output's name is
#           refused (one line, the source told, the link's target intact);
#           --force replaces it by rename; an --out owned by another user or
#           writable by others without the sticky bit is refused unless
#           --force; recv --qemu's record.txt the same.
#   limits  images are sparse (a 32 MiB block with 1 MiB of data takes about
#           1 MiB of disk and reads back equal); without --max-total a block
#           larger than --out's free space is refused before any data
#           moves, naming the available memory and the free space.
#   DEVICE: rxe | siw
# Prints "ok - ..." / "FAIL - ..." and "N passed, N failed".

# shellcheck disable=SC2016,SC2317,SC2034,SC2153,SC2154,SC2012 # check "..." eval '...': expanded when the check runs; BUILD, END_RC: migtest.sh
set -uo pipefail

if [ $# -ne 3 ]; then
	echo "usage: $0 BUILD_DIR CASE DEVICE" >&2
	exit 2
fi
BUILD=$(cd "$1" 2>/dev/null && pwd) || { echo "FAIL - no build directory '$1'"; exit 1; }
CASE=$2
DEVICE=$3
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/device/migtest.sh
. "$HERE/migtest.sh"
migtest_init

case $CASE in
files) PORT=22000 ;; limits) PORT=22100 ;;
*) echo "FAIL - unknown case '$CASE'"; exit 1 ;;
esac
[ "$DEVICE" = siw ] && PORT=$((PORT + 500))

IMG=$WORK/image.bin
head -c $((2 * 1048576)) /dev/urandom >"$IMG"

# migrate N OUT "RECV ARGS" [FILE]: recv into OUT on port PORT+N, send FILE
# (default $IMG); RECV_RC and SEND_RC (99: did not end or did not start).
migrate() {
	local n=$1 out=$2 rargs=$3 file=${4:-$IMG}
	RECV_RC=99 SEND_RC=99
	# shellcheck disable=SC2086 # rargs is a list of words
	if ! start_recv "r$n" $((PORT + n)) "$out" --timeout 20 $rargs 2>/dev/null; then
		ended "r$n" && RECV_RC=$END_RC
		return 1
	fi
	bg "s$n" -- send --to "$IP:$((PORT + n))" --timeout 20 "$file"
	wait_end "s$n" 120 && SEND_RC=$END_RC
	wait_end "r$n" 60 && RECV_RC=$END_RC
}

# refused N WHAT PATTERN: recv N exited 1 with one error line matching PATTERN
refused() {
	local tag=r$1 pat=$3 # seen by check's eval (bash scopes dynamically)
	check "$2: recv exits 1 with one line: $(error_lines "$tag")" \
		eval '[ "$RECV_RC" = 1 ] && one_error_line "$tag" && error_lines "$tag" | grep -q "$pat"'
}

# only_these DIR NAMES...: DIR holds exactly NAMES (hidden files included)
only_these() {
	local dir=$1
	shift
	[ "$(cd "$dir" && ls -A | sort | tr '\n' ' ')" = "$(printf '%s ' "$@" | tr ' ' '\n' | sed '/^$/d' | sort | tr '\n' ' ')" ]
}

# ----------------------------------------------------------------- files --

case_files() {
	local o
	echo precious >"$WORK/victim"

	# a symlink where the image goes: found when the header names the block
	o=$WORK/out1
	mkdir "$o" && ln -s "$WORK/victim" "$o/image.bin.img"
	migrate 1 "$o" ""
	refused 1 "a symlink planted as image.bin.img" "image.bin.img exists (a symlink)"
	check "... the source is told (send exits $SEND_RC): $(error_lines s1)" [ "$SEND_RC" = 1 ]
	check "... its target is untouched" grep -qx precious "$WORK/victim"
	check "... and recv left nothing of its own" only_these "$o" image.bin.img

	# a FIFO as stream.bin: refused at once, never opened (that blocked)
	o=$WORK/out2
	mkdir "$o" && mkfifo "$o/stream.bin"
	bg r2 -- recv --listen "$IP:$((PORT + 2))" --out "$o" --timeout 20
	if wait_end r2 20; then
		RECV_RC=$END_RC
		refused 2 "a FIFO planted as stream.bin" "stream.bin exists (a FIFO)"
	else
		fail "a FIFO planted as stream.bin: recv still runs after 20 s"
		kill -9 "$PID_r2" 2>/dev/null
	fi

	# a file of an earlier run: refused; --force replaces it by rename
	o=$WORK/out3
	mkdir "$o" && echo "earlier run" >"$o/image.bin.img" && ln "$o/image.bin.img" "$WORK/hardlink"
	migrate 3 "$o" ""
	refused 3 "an existing image.bin.img" "image.bin.img exists (a file).*--force"
	check "... is not truncated" grep -qx "earlier run" "$o/image.bin.img"
	migrate 4 "$o" "--force"
	check "--force over it migrates (send $SEND_RC, recv $RECV_RC)" \
		eval '[ "$SEND_RC" = 0 ] && [ "$RECV_RC" = 0 ]'
	check "... the image is replaced by the new one" cmp -s "$IMG" "$o/image.bin.img"
	check "... by rename: the old file (another link to it) keeps its bytes" \
		grep -qx "earlier run" "$WORK/hardlink"
	check "... and no temporary file is left" only_these "$o" image.bin.img stream.bin

	# who owns --out
	o=$WORK/out5
	mkdir "$o" && chown 65534:65534 "$o"
	migrate 5 "$o" ""
	refused 5 "an --out owned by uid 65534" "is owned by uid 65534, neither you"
	o=$WORK/out6
	mkdir "$o" && chmod 0777 "$o"
	migrate 6 "$o" ""
	refused 6 "an --out writable by everyone" "writable by everyone without the sticky bit"
	migrate 7 "$o" "--force"
	check "--force accepts it (send $SEND_RC, recv $RECV_RC)" \
		eval '[ "$SEND_RC" = 0 ] && [ "$RECV_RC" = 0 ] && cmp -s "$IMG" "$o/image.bin.img"'
	o=$WORK/out8
	mkdir "$o" && chmod 01777 "$o"
	migrate 8 "$o" ""
	check "a sticky world-writable --out (like /tmp) is accepted (send $SEND_RC, recv $RECV_RC)" \
		eval '[ "$SEND_RC" = 0 ] && [ "$RECV_RC" = 0 ]'

	# recv --qemu: record.txt is an output too
	o=$WORK/out9
	mkdir "$o" && ln -s "$WORK/victim" "$o/record.txt"
	bg q9 -- recv --qemu --listen "$IP:$((PORT + 9))" --out "$o" --timeout 5
	wait_end q9 20
	check "recv --qemu with a symlink as record.txt: exits 1 ($END_RC): $(error_lines q9)" \
		eval '[ "$END_RC" = 1 ] && error_lines q9 | grep -q "record.txt exists (a symlink)"'
	check "... its target is untouched" grep -qx precious "$WORK/victim"
}

# ---------------------------------------------------------------- limits --

case_limits() {
	local o=$WORK/out1 sparse=$WORK/sparse.bin kib
	huge=$WORK/huge.bin small=$WORK/small # globals: seen by check's eval
	# 32 MiB, data only in its ninth MiB
	truncate -s 32M "$sparse"
	head -c 1048576 /dev/urandom | dd of="$sparse" bs=1M seek=8 conv=notrunc status=none
	migrate 1 "$o" "" "$sparse"
	check "a 32 MiB block with 1 MiB of data migrates (send $SEND_RC, recv $RECV_RC)" \
		eval '[ "$SEND_RC" = 0 ] && [ "$RECV_RC" = 0 ]'
	check "... and reads back equal" cmp -s "$sparse" "$o/sparse.bin.img"
	kib=$(($(stat -c '%b * %B' "$o/sparse.bin.img" 2>/dev/null || echo 0) / 1024))
	check "... its image takes $kib KiB of disk (at most 2048)" \
		eval '[ "$kib" -gt 0 ] && [ "$kib" -le 2048 ]'

	# the default limit: a 16 MiB file system and a 64 MiB block of zeros
	# (about 1 KB of stream: the header, a trailer with the zeros' digest)

	mkdir "$small"
	if ! mount -t tmpfs -o size=16m tmpfs "$small"; then
		fail "cannot mount a tmpfs"
		return
	fi
	truncate -s 64M "$huge"
	migrate 2 "$small/out" "" "$huge"
	refused 2 "64 MiB announced, 16 MiB free" \
		"exceed the limit.*the smaller of the available memory, .*, and the free space in $small/out, "
	check "... the source is told (send exits $SEND_RC)" [ "$SEND_RC" = 1 ]
	check "... nothing was written: $(df -k "$small" | tail -n1)" only_these "$small/out"
	# --max-total lifts it; the sparse image fits where a dense one did not
	migrate 3 "$small/out3" "--max-total 1G" "$huge"
	check "--max-total 1G: the 64 MiB of zeros migrate into 16 MiB (send $SEND_RC, recv $RECV_RC)" \
		eval '[ "$SEND_RC" = 0 ] && [ "$RECV_RC" = 0 ] && cmp -s "$huge" "$small/out3/huge.bin.img"'
	umount "$small"
}

case $CASE in
files) case_files ;;
limits) case_limits ;;
esac
finish
