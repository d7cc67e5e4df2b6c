#!/usr/bin/env bash
# run-fuzz.sh [SECONDS] - build the wire fuzzer with clang and run it.
#
# Builds target fuzz_wire into build-fuzz, runs it for SECONDS (default 20)
# on a temporary copy of tests/fuzz/corpus/wire (the checked-in corpus is
# never written), prints the fuzzer's execs/s, and exits non-zero if the
# fuzzer found a crash.  A crashing input is kept in build-fuzz/artifacts/.
#
# RDMIG_FUZZ_DIRECT=1 skips CMake and compiles the fuzzer straight from
# src/wire.c and src/error.c (no libibverbs needed; handy while the rest of
# the tree does not build).
set -euo pipefail

secs=${1:-20}
if ! [[ $secs =~ ^[0-9]+$ ]] || [ "$secs" -eq 0 ]; then
	echo "usage: $0 [SECONDS]" >&2
	exit 2
fi

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
build=build-fuzz
# Sanitizers abort on the first report, so UBSan findings count as crashes.
# fuzzer-no-link instruments the library too: without it libFuzzer gets no
# coverage from the parser it is meant to explore.
san="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"

if [ "${RDMIG_FUZZ_DIRECT:-0}" = 1 ]; then
	bin=$build/tests/fuzz_wire
	mkdir -p "$build/tests"
	clang -std=c11 -D_GNU_SOURCE -g -O1 $san -fsanitize=fuzzer -Iinclude -Isrc \
		src/wire.c src/error.c tests/fuzz/fuzz_wire.c -o "$bin"
else
	bin=$build/tests/fuzz_wire
	mkdir -p "$build"
	if ! { CC=clang cmake -S . -B "$build" -DRDMIG_FUZZ=ON \
		-DCMAKE_C_FLAGS="$san -fsanitize=fuzzer-no-link" &&
		cmake --build "$build" --target fuzz_wire; } >"$build/fuzz-build.log" 2>&1; then
		tail -n 40 "$build/fuzz-build.log" >&2
		echo "fuzz_wire: build failed (full log: $build/fuzz-build.log)" >&2
		exit 2
	fi
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/rdmig-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/corpus" "$build/artifacts"
cp tests/fuzz/corpus/wire/* "$work/corpus/"

echo "fuzz_wire: ${secs}s on a copy of tests/fuzz/corpus/wire ($(ls "$work/corpus" | wc -l) seeds)"
set +e
"$bin" -max_total_time="$secs" -max_len=4096 -timeout=10 -print_final_stats=1 \
	-artifact_prefix="$root/$build/artifacts/" "$work/corpus" >"$work/log" 2>&1
status=$?
set -e

execs=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$work/log" | tail -n 1)
units=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log" | tail -n 1)
if [ "$status" -ne 0 ]; then
	tail -n 60 "$work/log" >&2
	echo "fuzz_wire: FAILED (exit $status); inputs in $build/artifacts/" >&2
	exit 1
fi
echo "fuzz_wire: no crash; ${units:-?} executions, execs/s: ${execs:-?}, corpus grew to $(ls "$work/corpus" | wc -l)"
