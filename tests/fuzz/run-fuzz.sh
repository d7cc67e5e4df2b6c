#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# run-fuzz.sh [SECONDS] [TARGET] - build one libFuzzer target with clang and run it.
#
# TARGET is wire (default: fuzz_wire, the message decoder), dest
# (fuzz_dest, the destination engine over faked completions) or stream
# (fuzz_stream, librdmig-stream's parsers of QEMU's and rdmig's streams).  Builds it
# into build-fuzz (RDMIG_FUZZ_BUILD overrides), runs it for SECONDS
# (default 20) on a temporary copy of tests/fuzz/corpus/TARGET (the
# checked-in corpus is never written), prints the fuzzer's execs/s, and
# exits non-zero if the fuzzer found a crash.  A crashing input is kept in
# build-fuzz/artifacts/ (replay: build-fuzz/tests/fuzz_TARGET FILE).
#
# RDMIG_FUZZ_DIRECT=1 skips CMake and compiles the fuzzer straight from its
# sources (no libibverbs needed, nor its headers; handy while the
# rest of the tree does not build).
set -euo pipefail

secs=${1:-20}
target=${2:-wire}
if ! [[ $secs =~ ^[0-9]+$ ]] || [ "$secs" -eq 0 ]; then
	echo "usage: $0 [SECONDS] [wire|dest|stream]" >&2
	exit 2
fi
case $target in
wire)
	# the decoder alone
	direct_srcs="src/base/wire.c src/base/error.c tests/fuzz/fuzz_wire.c"
	max_len=4096
	;;
dest)
	# the destination engine over a fake of its seam (engine_io.h)
	direct_srcs="src/engine/dest.c src/engine/dest_serve.c src/engine/dest_zranges.c src/engine/dest_events.c src/base/clock.c src/engine/engine.c src/base/wire.c src/base/error.c src/base/log.c src/base/opts.c
		tests/fuzz/fuzz_dest.c tests/fuzz/fake_io.c"
	max_len=8192 # room for a few hundred records
	;;
stream)
	# librdmig-stream's parsers, through its installed headers
	direct_srcs="stream/qemu_stream.c stream/qemu_stream_end.c stream/qemu_stream_states.c stream/qemu_ramblock.c
		stream/replay_record.c stream/imgstream.c stream/digest.c src/base/clock.c src/engine/engine.c src/base/error.c
		src/base/log.c src/base/opts.c tests/fuzz/fuzz_stream.c -lxxhash -lcrypto"
	max_len=4096
	;;
*)
	echo "usage: $0 [SECONDS] [wire|dest|stream]" >&2
	exit 2
	;;
esac
name=fuzz_$target

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
build=${RDMIG_FUZZ_BUILD:-build-fuzz}
bin=$build/tests/$name
# Sanitizers abort on the first report, so UBSan findings count as crashes.
# fuzzer-no-link instruments the library too: without it libFuzzer gets no
# coverage from the parser it is meant to explore.
san="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"

if [ "${RDMIG_FUZZ_DIRECT:-0}" = 1 ]; then
	mkdir -p "$build/tests"
	# shellcheck disable=SC2086 # the source list is meant to split
	clang -std=c11 -D_GNU_SOURCE -g -O1 $san -fsanitize=fuzzer -Iinclude -Istream/include -Isrc/base -Isrc/transport -Isrc/engine -Isrc/images -Istream -Itests/fuzz \
		$direct_srcs -o "$bin"
else
	mkdir -p "$build"
	if ! { CC=clang cmake -S . -B "$build" -DRDMIG_FUZZ=ON \
		-DCMAKE_C_FLAGS="$san -fsanitize=fuzzer-no-link" &&
		cmake --build "$build" --target "$name"; } >"$build/$name-build.log" 2>&1; then
		tail -n 40 "$build/$name-build.log" >&2
		echo "$name: build failed (full log: $build/$name-build.log)" >&2
		exit 2
	fi
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/rdmig-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/corpus" "$build/artifacts"
cp "tests/fuzz/corpus/$target"/* "$work/corpus/"

echo "$name: ${secs}s on a copy of tests/fuzz/corpus/$target ($(ls "$work/corpus" | wc -l) seeds)"
set +e
"$bin" -max_total_time="$secs" -max_len="$max_len" -timeout=10 -print_final_stats=1 \
	-artifact_prefix="$root/$build/artifacts/$name-" "$work/corpus" >"$work/log" 2>&1
status=$?
set -e

execs=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$work/log" | tail -n 1)
units=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log" | tail -n 1)
if [ "$status" -ne 0 ]; then
	tail -n 60 "$work/log" >&2
	echo "$name: FAILED (exit $status); inputs in $build/artifacts/" >&2
	exit 1
fi
echo "$name: no crash; ${units:-?} executions, execs/s: ${execs:-?}, corpus grew to $(ls "$work/corpus" | wc -l)"
