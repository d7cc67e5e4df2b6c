#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# crash-guest.sh - the guest's half of scripts/crash-test, run inside the
# test guest (scripts/rdma-vm) with a virtual disk (/dev/vda) attached.
#
#   crash-guest.sh BUILD FS SRCDIR check|run|checkrun|once DEVICE [NO_SYNC]
#
# check: mount the disk (its journal replays what the last boot left) and
#        report every output under a final name in every migration
#        directory, one line each: "FILE DIR NAME SIZE SHA256" (for
#        stream.bin: the SHA-256 of its header and of its trailer, the
#        parts that do not depend on how the digest records were grouped,
#        and whether a record follows the header); the
#        temporaries: "TEMP DIR NAME SIZE".  Then empty the disk.
# run:   migrate SRCDIR's images with rdmig send -> rdmig recv over DEVICE
#        (rxe | siw) into m-1, m-2, ... on the disk, one after the other,
#        until the host cuts the power: "START", then per migration
#        "SENT K RC MS" as send exits (MS: since START).  With NO_SYNC=1 recv gets --no-sync
#        (the control: what a power cut does to outputs never flushed).
# checkrun: check, then run (one boot a trial).
# once:  one migration into m-1 (recv flushes, whatever NO_SYNC says),
#        then sync and unmount: the reference of a clean end.
# Every line goes to stdout, which QEMU writes to a host file at once.
set -uo pipefail

BUILD=$1 FS=$2 SRC=$3 MODE=$4 DEVICE=${5:-rxe} NO_SYNC=${6:-0}
MNT=/mnt/crash
RDMIG=$BUILD/rdmig

say() { echo "$*"; }

mount_disk() {
	local i
	modprobe -a virtio_blk "$FS" 2>/dev/null
	for ((i = 0; i < 100; i++)); do
		[ -b /dev/vda ] && break
		sleep 0.1
	done
	mkdir -p "$MNT"
	if ! mount -t "$FS" /dev/vda "$MNT"; then
		say "ERROR cannot mount /dev/vda as $FS"
		exit 1
	fi
}

# stream.bin's fixed parts (rdmig/imgstream.h): the header (16 bytes and
# 2 + name + 8 per block) and the trailer ("RMIT" and one 8-byte XXH64
# digest per block); a digest record ("RMID") must follow the header.
stream_sum() {
	local f=$1 h=16 n=0 name size
	for name in "$SRC"/*.img; do
		name=${name##*/}
		h=$((h + 10 + ${#name}))
		n=$((n + 1))
	done
	size=$(stat -c %s "$f")
	if [ "$size" -lt $((h + 4 + 4 + 8 * n)) ] ||
		[ "$(dd if="$f" bs=1 skip=$h count=4 2>/dev/null)" != RMID ]; then
		echo bad
		return
	fi
	echo "$(head -c $h "$f" | sha256sum | cut -c1-16):$(tail -c $((4 + 8 * n)) "$f" | sha256sum | cut -c1-16)"
}

check() {
	local d f name
	mount_disk
	for d in "$MNT"/m-*; do
		[ -d "$d" ] || continue
		for f in "$d"/* "$d"/.rdmig-*; do
			[ -e "$f" ] || continue
			name=${f##*/}
			if [[ $name == .rdmig-* ]]; then
				say "TEMP ${d##*/} $name $(stat -c %s "$f")"
			elif [ "$name" = stream.bin ]; then
				say "FILE ${d##*/} $name $(stat -c %s "$f") $(stream_sum "$f")"
			else
				say "FILE ${d##*/} $name $(stat -c %s "$f") $(sha256sum <"$f" | cut -d' ' -f1)"
			fi
		done
	done
	rm -rf "${MNT:?}"/m-*
	sync
	say "CHECKED"
	[ "${1:-}" = keep ] || umount "$MNT"
}

run() {
	local ip k rc port=23000 extra=() last=${1:-0}
	case $DEVICE in
	rxe) ip=$RDMAVM_RXE_IP ;;
	siw) ip=$RDMAVM_SIW_IP ;;
	esac
	[ "$NO_SYNC" = 1 ] && [ "$last" = 0 ] && extra=(--no-sync)
	mountpoint -q "$MNT" || mount_disk
	mkdir -p /tmp/src
	cp "$SRC"/*.img /tmp/src/
	sync
	say "START"
	t0=${EPOCHREALTIME//[!0-9]/}
	for ((k = 1; last == 0 || k <= last; k++)); do
		"$RDMIG" recv -v --listen "$ip:$((port + k))" --out "$MNT/m-$k" --timeout 30 "${extra[@]}" \
			>/dev/null 2>"/tmp/recv-$k.err" &
		for ((i = 0; i < 300; i++)); do
			grep -qs 'listening on' "/tmp/recv-$k.err" && break
			sleep 0.05
		done
		"$RDMIG" send --to "$ip:$((port + k))" --timeout 30 /tmp/src/*.img >/dev/null \
			2>"/tmp/send-$k.err"
		rc=$?
		t=${EPOCHREALTIME//[!0-9]/}
		say "SENT $k $rc $(((10#$t - 10#$t0) / 1000))"
		wait
	done
	sync
	umount "$MNT"
}

case $MODE in
check) check ;;
run) run ;;
checkrun) check keep && run ;;
once) run 1 ;;
*) echo "usage: $0 BUILD FS SRCDIR check|run DEVICE [NO_SYNC]" >&2; exit 2 ;;
esac
