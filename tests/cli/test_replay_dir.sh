#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# test_replay_dir.sh RDMIG - `rdmig send --qemu-replay DIR` takes DIR as
# untrusted input (docs/security.md): links, FIFOs and other non-files are
# refused without being followed or opened for long, no message gives the
# size of a file it refused, hostile records are refused at once, and 4096
# blocks fit in 64 descriptors.  Everything here happens before the replay
# connects, so no RDMA device is needed: a record that passes fails at the
# connection (there is no QEMU at the address), and the test checks that
# it got there.  Prints "N passed, N failed"; exits non-zero on a failure.
set -u
RDMIG=${1:?usage: test_replay_dir.sh RDMIG}
PASSED=0
FAILED=0
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
OUT=$WORK/out

ok() { PASSED=$((PASSED + 1)); echo "ok: $*"; }
bad() { FAILED=$((FAILED + 1)); echo "FAILED: $*"; head -c 2000 "$OUT" | sed 's/^/  | /'; }
has() { grep -qF -- "$1" "$OUT"; }

# replay DIR [LIMIT_S]: run the replay against an address where nothing
# listens, at most LIMIT_S seconds (default 20); sets RC (124: it hung)
# and SECS
replay() {
	local t0=$SECONDS
	timeout -s KILL "${2:-20}" "$RDMIG" send --qemu-replay "$1" --to 127.0.0.1:9 --timeout 2 \
		>"$OUT" 2>&1 </dev/null
	RC=$?
	SECS=$((SECONDS - t0))
}
# refused DIR WHAT TEXT...: the replay exits 1 within its limit and says every TEXT
refused() {
	local dir=$1 what=$2 t
	shift 2
	replay "$dir"
	if [ "$RC" != 1 ]; then
		bad "$what: exit $RC, expected 1 (137: killed after 20 s)"
		return
	fi
	for t in "$@"; do
		has "$t" || { bad "$what: no '$t'"; return; }
	done
	ok "$what"
}
# reaches_connect DIR WHAT: the inputs passed; the failure is the connection's
reaches_connect() {
	replay "$1" "${3:-20}"
	if [ "$RC" = 1 ] && ! has "record.txt" && ! has ".img" && ! has "stream.bin" &&
		! has "Too many open files"; then
		ok "$2 (reached the connection in $SECS s)"
	else
		bad "$2: exit $RC, or the inputs were refused"
	fi
}

# A valid record of one block of 3 MiB + 1 byte.
make_record() {
	local d=$1
	mkdir -p "$d"
	head -c 3145729 /dev/urandom >"$d/a.img"
	head -c 100 /dev/urandom >"$d/stream.bin"
	cat >"$d/record.txt" <<-EOF
		rdmig-qemu-record 1
		machine -
		pin_all 0
		blocks 1 total=3145729
		block 0 offset=- length=3145729 chunks=4 file=a.img name=a
		phase 0 ram_blocks_request offset=10 hook=10 t=0
		phase 1 registration offset=10 hook=10 t=0
		touched 1 block=0 data=0-1 zero=-
		phase 2 registration offset=20 hook=20 t=0
		stream bytes=100
		end ok
	EOF
}

# A file outside the record whose size must not leak: 7777777 bytes.
SECRET=$WORK/secret
head -c 7777777 /dev/zero >"$SECRET"

make_record "$WORK/good"
reaches_connect "$WORK/good" "a valid record"

# --- links: refused, never followed, their target's size not told
for f in record.txt stream.bin a.img; do
	d=$WORK/link_$f
	make_record "$d"
	rm "$d/$f"
	ln -s "$SECRET" "$d/$f"
	refused "$d" "$f as a symbolic link" "is a symbolic link"
	has 7777777 && bad "$f as a link: the target's size is in the message"
done

# --- FIFOs: refused at once (a FIFO opened for reading would wait for a writer)
for f in record.txt stream.bin a.img; do
	d=$WORK/fifo_$f
	make_record "$d"
	rm "$d/$f"
	mkfifo "$d/$f"
	refused "$d" "$f as a FIFO" "not a regular file"
done

# --- a directory as an image
d=$WORK/dir_img
make_record "$d"
rm "$d/a.img"
mkdir "$d/a.img"
refused "$d" "a directory as an image" "image 'a.img': is not a regular file"

# --- sizes: what the record says, not what the file has
d=$WORK/short
make_record "$d"
truncate -s 7777777 "$d/a.img"
refused "$d" "an image of another size" "does not have the record's length=3145729 bytes"
has 7777777 && bad "an image of another size: its size is in the message"
d=$WORK/stream_size
make_record "$d"
truncate -s 7777777 "$d/stream.bin"
refused "$d" "a stream.bin of another size" "does not have the record's bytes=100"
has 7777777 && bad "a stream.bin of another size: its size is in the message"
d=$WORK/big_record
make_record "$d"
truncate -s 77777777 "$d/record.txt" # past the 64 MiB a record may have
refused "$d" "a record.txt larger than 64 MiB" "larger than the 67108864 bytes a record may have"
has 77777777 && bad "a record.txt larger than 64 MiB: its size is in the message"

# --- the issue's hostile records
# 4096 blocks of 1 TiB each (330 KB): refused at the first, with nothing planned
d=$WORK/claims
mkdir "$d"
{
	printf 'rdmig-qemu-record 1\nmachine -\npin_all 0\nblocks 4096 total=0\n'
	for ((i = 0; i < 4096; i++)); do
		printf 'block %d offset=- length=1099511627776 chunks=1048576 file=b%d.img name=b%d\n' \
			"$i" "$i" "$i"
	done
	printf 'phase 0 ram_blocks_request offset=0 hook=0 t=0\n'
	printf 'phase 1 registration offset=0 hook=0 t=0\nstream bytes=0\nend ok\n'
} >"$d/record.txt"
: >"$d/stream.bin"
refused "$d" "4096 blocks of 1 TiB without their images" "line 5: block 0: image 'b0.img'"
[ "$SECS" -le 5 ] || bad "4096 blocks of 1 TiB: refused after $SECS s"
# ... and with sparse images of 1 TiB: refused at the 17th, past 16 TiB in all
for ((i = 0; i < 20; i++)); do truncate -s 1T "$d/b$i.img"; done
refused "$d" "4096 blocks of 1 TiB with sparse images" \
	"line 21: block 16: the blocks claim more than 17592186044416 bytes in all"
[ "$SECS" -le 5 ] || bad "16 blocks of 1 TiB: refused after $SECS s"

# 100,000 touched lines over a whole 1 TiB block (a sparse image): each
# chunk is planned once (this took about 100 s)
d=$WORK/touched
mkdir "$d"
truncate -s 1T "$d/big.img"
: >"$d/stream.bin"
{
	printf 'rdmig-qemu-record 1\nmachine -\npin_all 0\nblocks 1 total=0\n'
	printf 'block 0 offset=- length=1099511627776 chunks=1048576 file=big.img name=big\n'
	printf 'phase 0 ram_blocks_request offset=0 hook=0 t=0\n'
	printf 'phase 1 registration offset=0 hook=0 t=0\n'
	yes 'touched 1 block=0 data=0-1048575 zero=-' | head -n 100000
	printf 'stream bytes=0\nend ok\n'
} >"$d/record.txt"
reaches_connect "$d" "100,000 touched lines over a 1 TiB block" 20
[ "$SECS" -le 10 ] || bad "100,000 touched lines: $SECS s"

# --- descriptors: 4096 blocks (the format's maximum) under ulimit -n 64
d=$WORK/many
mkdir "$d"
head -c 100 /dev/urandom >"$d/stream.bin"
{
	printf 'rdmig-qemu-record 1\nmachine -\npin_all 0\nblocks 4096 total=0\n'
	for ((i = 0; i < 4096; i++)); do
		printf 'block %d offset=- length=4096 chunks=1 file=b%d.img name=b%d\n' "$i" "$i" "$i"
	done
	printf 'phase 0 ram_blocks_request offset=10 hook=10 t=0\n'
	printf 'phase 1 registration offset=10 hook=10 t=0\nstream bytes=100\nend ok\n'
} >"$d/record.txt"
for ((i = 0; i < 4096; i++)); do head -c 4096 /dev/urandom >"$d/b$i.img"; done
replay_limited() {
	local t0=$SECONDS
	(ulimit -n 64 && exec timeout -s KILL 60 "$RDMIG" send --qemu-replay "$1" \
		--to 127.0.0.1:9 --timeout 2 >"$OUT" 2>&1 </dev/null)
	RC=$?
	SECS=$((SECONDS - t0))
}
replay_limited "$d"
if [ "$RC" = 1 ] && ! has "record.txt" && ! has ".img" && ! has "Too many open files"; then
	ok "4096 blocks under ulimit -n 64 (reached the connection)"
else
	bad "4096 blocks under ulimit -n 64: exit $RC, or the inputs were refused"
fi

echo "$PASSED passed, $FAILED failed"
[ "$FAILED" = 0 ]
