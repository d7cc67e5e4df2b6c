#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# test_serve.sh - `rdmig recv --serve` on a real device inside
# the test guest (scripts/rdma-vm): one receiver, many `rdmig send`
# processes.
#
# Usage: tests/device/test_serve.sh BUILD_DIR DEVICE
#   1. one source alone, then 8 at once into --max-sources 8 (4 MiB each):
#      every image byte-identical and verified, each in a directory of its
#      own; prints
#      the total throughput of both runs and the receiver's peak resident
#      and pinned memory against --serve-max-total ("# serve: ..." lines).
#   2. a source killed mid-way among good ones: its directory goes, the
#      others are verified; recv exits 1 (a source failed) after SIGTERM.
#   3. a source whose blocks exceed what the running sources leave of
#      --serve-max-total is refused (send exits non-zero, naming the
#      limit) while the running ones finish; a source beyond
#      --max-sources is rejected when it connects.
#   4. SIGTERM drains: no new source is accepted, the running ones
#      finish, recv exits 0 with a summary.
#   5. (rxe) files are admitted: a source of three empty images (five files with
#      its stream.bin and directory, no bytes) is refused under
#      --serve-max-files 4, naming the limit; one image (three files) is
#      received.
#   6. (rxe) `rdmig status` on --status (a stale socket replaced, a second
#      server on a live one refused): 8 live sources held mid-way (their peer,
#      phase, bytes; as a table, JSON that matches rdmig-json(7), and
#      Prometheus metrics), then the 8 among the ended, verified; the
#      socket goes with the server.
#   DEVICE: rxe | siw
# Prints "ok - ..." / "FAIL - ..." and "N passed, N failed", and each
# section's time ("# section N: S s").
#
# What a case costs in the emulated guest is the bytes through the sanitizer
# build (about 5 MB/s) and every python3 started (seconds each): the images
# are small (4 MiB, 16 MiB for the sources held mid-way), and one python3
# per receiver reads its JSON lines (facts).

# shellcheck disable=SC2016,SC2034,SC2153,SC2154,SC2317 # check "..." eval '...'; BUILD, END_RC: migtest.sh
set -uo pipefail

if [ $# -ne 2 ]; then
	echo "usage: $0 BUILD_DIR DEVICE" >&2
	exit 2
fi
BUILD=$(cd "$1" 2>/dev/null && pwd) || { echo "FAIL - no build directory '$1'"; exit 1; }
DEVICE=$2
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/device/migtest.sh
. "$HERE/migtest.sh"
migtest_init

PORT=23000
[ "$DEVICE" = siw ] && PORT=23500
MiB=1048576
CHECK_JSON="$HERE/../cli/check_json.py"
JSON_MAN="$HERE/../../man/rdmig-json.7.scd"
SIZE=$((4 * MiB)) # per source of section 1
HELD=$((16 * MiB)) # per source held mid-way (sections 2 to 4)

# image N [SIZE]: $WORK/src/N/image.bin of random bytes (one per source:
# a mix-up between sources would show)
image() {
	mkdir -p "$WORK/src/$1"
	head -c "${2:-$SIZE}" /dev/urandom >"$WORK/src/$1/image.bin"
}

# serve TAG PORT OUT ARGS...: recv --serve --json in the background,
# waiting until it listens
serve() {
	local tag=$1 port=$2 out=$3 i
	shift 3
	bg "$tag" -- recv --serve --listen "$IP:$port" --out "$out" --json --timeout 60 "$@"
	for ((i = 0; i < 3000; i++)); do
		has_line "$WORK/$tag.err" 'recv: listening on' && return 0
		ended "$tag" && break
		nap 0.01
	done
	echo "# recv --serve did not start listening:" >&2
	cat "$WORK/$tag.err" >&2
	return 1
}

# send TAG PORT N: rdmig send of source N's image, in the background
send() { bg "$1" -- send --to "$IP:$2" --timeout 60 --json "$WORK/src/$3/image.bin"; }

# admitted OUT COUNT: wait (60 s at most) until COUNT source directories
# in OUT hold an image being written (their headers were admitted; the
# temporary stream.bin beside it does not count)
admitted() {
	local n now deadline
	now_ms_to deadline
	deadline=$((deadline + 60000))
	while :; do
		n=$(find "$1" -mindepth 2 -maxdepth 2 -name '.rdmig-*.img' 2>/dev/null | wc -l)
		[ "$n" -ge "$2" ] && return 0
		now_ms_to now
		[ "$now" -lt "$deadline" ] || return 1
		nap 0.01
	done
}

# why: what the processes said after a failed check (the first lines of
# each stderr), once per section
why() {
	local f
	[ "$failed" = "${WHY_SEEN:-0}" ] && return
	WHY_SEEN=$failed
	for f in "$WORK"/*.err; do
		[ -s "$f" ] && sed -n "1,4s|^|# ${f##*/}: |p" "$f"
	done
}

# hold OUT COUNT TAG: once COUNT sources of OUT were admitted, stop
# source TAG (SIGSTOP), which must not have ended yet
hold() {
	local pid=PID_$3
	admitted "$1" "$2"
	kill -STOP "${!pid}"
	check "$3 admitted and held mid-way" eval '! ended '"$3"
}

# stop_serve TAG: SIGTERM, then wait for the drain (120 s)
stop_serve() {
	local pid=PID_$1
	kill -TERM "${!pid}"
	wait_end "$1" 120
}

# facts TAG: the JSON lines of recv --serve TAG ($WORK/TAG.out) read by ONE
# python3 into $WORK/TAG.facts, for the helpers below: "count EVENT OK N",
# "summary KEY VALUE", and "dir PATH" per verified source
facts() {
	python3 -c '
import json, sys
counts = {}
for line in open(sys.argv[1]):
    o = json.loads(line)
    ev = o.get("event")
    if ev == "summary":
        for k, v in o.items():
            print("summary", k, v)
        continue
    key = (ev, str(o.get("ok")).lower())
    counts[key] = counts.get(key, 0) + 1
    if ev == "source" and o["ok"] and o["verified"]:
        print("dir", o["out"])
for (ev, ok), n in counts.items():
    print("count", ev, ok, n)' "$WORK/$1.out" >"$WORK/$1.facts"
}

# fact TAG WORD1 WORD2 [WORD3]: the last word of TAG's fact line that starts
# with these words (builtins only)
fact() {
	local a b c d
	while read -r a b c d; do
		if [ $# = 3 ] && [ "$a" = "$2" ] && [ "$b" = "$3" ]; then
			echo "$c${d:+ $d}"
			return
		fi
		[ $# = 4 ] && [ "$a" = "$2" ] && [ "$b" = "$3" ] && [ "$c" = "$4" ] && { echo "$d"; return; }
	done <"$WORK/$1.facts"
	[ $# = 4 ] && echo 0 # no source line with that outcome
}

# json_count TAG EVENT OK: TAG's JSON lines with this event and ok
json_count() { fact "$1" count "$2" "$3"; }

# summary TAG KEY: a member of TAG's summary line
summary() { fact "$1" summary "$2"; }

# same N TAG: the one directory of TAG's verified sources that holds
# source N's image, byte-identical
same() {
	local a d
	while read -r a d; do
		[ "$a" = dir ] && cmp -s "$d/image.bin.img" "$WORK/src/$1/image.bin" && return 0
	done <"$WORK/$2.facts"
	return 1
}

# section N: the time since the previous section began, then a new start
section() {
	local now
	now_ms_to now
	[ -n "${SECTION_T0:-}" ] && echo "# section $SECTION: $(((now - SECTION_T0) / 1000)) s"
	SECTION=$1 SECTION_T0=$now
}

# ------------------------------------------------ 1. one, then eight --

section 1
for n in 0 1 2 3 4 5 6 7; do image "$n"; done
OUT=$WORK/out1
serve v1 "$PORT" "$OUT" --max-sources 8 || { fail "recv --serve starts"; finish; }
now_ms_to t0
send a0 "$PORT" 0
wait_end a0 120
check "one source alone: send exits 0 ($END_RC)" [ "$END_RC" = 0 ]
ONE_MS=$((END_MS - t0))

now_ms_to t0
for n in 0 1 2 3 4 5 6 7; do send "b$n" "$PORT" "$n"; done
last=0
good=0
for n in 0 1 2 3 4 5 6 7; do
	if wait_end "b$n" 300 && [ "$END_RC" = 0 ]; then good=$((good + 1)); fi
	[ "${END_MS:-0}" -gt "$last" ] && last=$END_MS
done
EIGHT_MS=$((last - t0))
check "8 sources at once: every send exits 0 ($good of 8)" [ "$good" = 8 ]
stop_serve v1
check "recv --serve exits 0 after SIGTERM ($END_RC)" [ "$END_RC" = 0 ]
facts v1
check "9 JSON lines of verified sources, none failed" \
	eval '[ "$(json_count v1 source true)" = 9 ] && [ "$(json_count v1 source false)" = 0 ]'
bad=
for n in 0 1 2 3 4 5 6 7; do same "$n" v1 || bad="$bad $n"; done
check "every image byte-identical, in a directory of its own (bad:${bad:- none})" [ -z "$bad" ]
check "9 source directories, named <seq>-<time>-<address>" \
	eval '[ "$(find "$OUT" -mindepth 1 -maxdepth 1 -type d -name "00??-20*Z-*" | wc -l)" = 9 ]'
check "the summary: 9 ok, at most 8 at once" \
	eval '[ "$(summary v1 sources_ok)" = 9 ] && [ "$(summary v1 peak_sources)" -le 8 ]'
check "its JSON lines match rdmig-json(7)" python3 "$CHECK_JSON" --lines "$JSON_MAN" "$WORK/v1.out"
rss=$(summary v1 peak_rss_bytes)
pinned=$(summary v1 peak_pinned_bytes)
reserved=$(summary v1 peak_reserved_total)
limit=$(summary v1 serve_max_total)
# (each number must be there: a missing one fails, it is not taken as 0)
check "the reservations stayed within --serve-max-total ($reserved <= $limit)" \
	eval '[ -n "$reserved" ] && [ -n "$limit" ] && [ "$reserved" -le "$limit" ]'
check "pinned at most what the running sources reserved ($pinned <= $reserved + 32 MiB)" \
	eval '[ -n "$pinned" ] && [ -n "$reserved" ] && [ "$pinned" -le $((reserved + 32 * MiB)) ]'
echo "# serve $DEVICE: 1 source of $((SIZE / MiB)) MiB in $ONE_MS ms" \
	"($((SIZE / 1000 / (ONE_MS > 0 ? ONE_MS : 1))) MB/s);" \
	"8 at once in $EIGHT_MS ms ($((8 * SIZE / 1000 / (EIGHT_MS > 0 ? EIGHT_MS : 1))) MB/s total);" \
	"peak resident $((rss / MiB)) MiB, peak pinned $((pinned / MiB)) MiB," \
	"peak reserved $((reserved / MiB)) MiB of --serve-max-total $((limit / MiB)) MiB"

# A source that must stay running while the test looks elsewhere is
# stopped (SIGSTOP) once admitted and continued afterwards: the receiver
# waits for it (within --timeout 60: a loaded host slows the sends the
# test runs meanwhile), and nothing depends on how fast the
# emulated guest moves the bytes.

why
rm -f "$WORK"/*.err
rm -rf "$WORK/out1" # room in the guest

# The sources stopped once admitted are large enough (16 MiB, about 3 s
# alone at the guest's 5 MB/s) not to end in the moment between the test
# seeing their image files (polled every 10 ms) and the stop.
image m1 "$HELD"
image m2 "$HELD"
image m3 "$HELD"

# -------------------------------------- 2. a source killed mid-way --

section 2
OUT=$WORK/out2
serve v2 $((PORT + 1)) "$OUT" --max-sources 4 || { fail "recv --serve starts"; finish; }
send k $((PORT + 1)) m1
hold "$OUT" 1 k
for n in 1 2 3; do send "g$n" $((PORT + 1)) "$n"; done
nap 0.3
kill -9 "$PID_k"
good=0
for n in 1 2 3; do wait_end "g$n" 300 && [ "$END_RC" = 0 ] && good=$((good + 1)); done
check "the 3 good sources beside the killed one exit 0 ($good of 3)" [ "$good" = 3 ]
wait_end k 10
stop_serve v2
check "recv exits 1: one source failed ($END_RC)" [ "$END_RC" = 1 ]
facts v2
check "3 verified sources and 1 failed in the JSON lines" \
	eval '[ "$(json_count v2 source true)" = 3 ] && [ "$(json_count v2 source false)" = 1 ]'
bad=
for n in 1 2 3; do same "$n" v2 || bad="$bad $n"; done
check "the good images byte-identical (bad:${bad:- none})" [ -z "$bad" ]
check "the killed source's directory is gone: 3 remain, no temporary file" \
	eval '[ "$(find "$OUT" -mindepth 1 -maxdepth 1 -type d | wc -l)" = 3 ] && [ -z "$(find "$OUT" -name ".rdmig-*")" ]'
check "the failure named on stderr, once" \
	eval '[ "$(grep -c "^rdmig: recv: source .*its outputs were removed" "$WORK/v2.err")" = 1 ]'

why
# ----------------------- 3. over the total, and beyond --max-sources --

section 3
OUT=$WORK/out3
# refused at its header, so never read: its size is all that counts
mkdir -p "$WORK/src/big" && truncate -s $((2 * HELD)) "$WORK/src/big/image.bin"
# each source is charged its blocks and its hashing copy: one thread here,
# a copy of one span (send's default, 4 MiB) as the blocks are larger; so
# --serve-max-total is 3.5 sources' blocks and 3 copies
COPY=$((4 * MiB))
RDMIG_HASH_THREADS=1 serve v3 $((PORT + 2)) "$OUT" --max-sources 3 \
	--serve-max-total $(((7 * HELD / 2 + 3 * COPY) / MiB))M ||
	{ fail "recv --serve starts"; finish; }
send h1 $((PORT + 2)) m1
hold "$OUT" 1 h1
send h2 $((PORT + 2)) m2
hold "$OUT" 2 h2
send over $((PORT + 2)) big # 2 held sources reserved of 3.5: 2 more do not fit
wait_end over 60
for ((i = 0; i < 500; i++)); do has_line "$WORK/v3.err" 'rdmig: recv: source' && break; nap 0.01; done
check "a source over what --serve-max-total leaves is refused ($END_RC)" \
	tool_failed "$END_RC" 1 "$WORK/over.err"
check "... and recv says which limit, for that source only" \
	eval '[ "$(grep -c "^rdmig: recv: source .*--serve-max-total" "$WORK/v3.err")" = 1 ]'
send h3 $((PORT + 2)) m3 # 1 more fits: 3 running
hold "$OUT" 3 h3
send busy $((PORT + 2)) 5
wait_end busy 60
check "a source beyond --max-sources is rejected when it connects ($END_RC)" \
	tool_failed "$END_RC" 1 "$WORK/busy.err"
check "... and recv says why" grep -q "rejected a source from .*--max-sources 3" "$WORK/v3.err"
kill -CONT "$PID_h1" "$PID_h2" "$PID_h3"
good=0
for t in h1 h2 h3; do wait_end "$t" 300 && [ "$END_RC" = 0 ] && good=$((good + 1)); done
check "the running sources finish ($good of 3)" [ "$good" = 3 ]
stop_serve v3
check "recv exits 1: one source refused ($END_RC)" [ "$END_RC" = 1 ]
facts v3
check "the summary: 3 ok, 1 failed, 1 rejected" \
	eval '[ "$(summary v3 sources_ok)/$(summary v3 sources_failed)/$(summary v3 sources_rejected)" = 3/1/1 ]'
check "its JSON lines (a refused source, a rejected one) match rdmig-json(7)" \
	python3 "$CHECK_JSON" --lines "$JSON_MAN" "$WORK/v3.out"
check "the images of the running sources byte-identical" \
	eval 'same m1 v3 && same m2 v3 && same m3 v3'

why
# ---------------------------------------------------- 4. SIGTERM drains --

section 4
OUT=$WORK/out4
serve v4 $((PORT + 3)) "$OUT" || { fail "recv --serve starts"; finish; }
send d1 $((PORT + 3)) m1
hold "$OUT" 1 d1
send d2 $((PORT + 3)) 4
for ((i = 0; i < 6000; i++)); do # d2 accepted: its directory is there
	[ "$(find "$OUT" -mindepth 1 -maxdepth 1 -type d | wc -l)" -ge 2 ] && break
	nap 0.01
done
kill -TERM "$PID_v4"
for ((i = 0; i < 500; i++)); do has_line "$WORK/v4.err" 'recv: SIGTERM: no new source' && break; nap 0.01; done
send late $((PORT + 3)) 5
wait_end late 60
check "after SIGTERM a new source is not accepted ($END_RC)" tool_failed "$END_RC" 1 "$WORK/late.err"
kill -CONT "$PID_d1"
good=0
for t in d1 d2; do wait_end "$t" 300 && [ "$END_RC" = 0 ] && good=$((good + 1)); done
check "the running sources finish after SIGTERM ($good of 2)" [ "$good" = 2 ]
wait_end v4 120
check "recv exits 0 once they are done ($END_RC)" [ "$END_RC" = 0 ]
facts v4
check "the summary: 2 ok" [ "$(summary v4 sources_ok)" = 2 ]
check "the drained images byte-identical" eval 'same m1 v4 && same 4 v4'

why
# Sections 5 and 6 are the tool's own (admission of files, the status
# socket, sd_notify): the same on either device, so rxe runs them.
if [ "$DEVICE" = rxe ]; then
# ------------------------------------------- 5. files, not just bytes --

section 5
OUT=$WORK/out5
mkdir -p "$WORK/src/empty"
for n in 1 2 3; do : >"$WORK/src/empty/e$n.bin"; done
serve v5 $((PORT + 4)) "$OUT" --serve-max-files 4 || { fail "recv --serve starts"; finish; }
bg many -- send --to "$IP:$((PORT + 4))" --timeout 60 --json "$WORK/src/empty/e1.bin" \
	"$WORK/src/empty/e2.bin" "$WORK/src/empty/e3.bin"
wait_end many 60
check "three empty images (5 files, 0 bytes) over --serve-max-files 4 are refused ($END_RC)" \
	tool_failed "$END_RC" 1 "$WORK/many.err"
for ((i = 0; i < 500; i++)); do has_line "$WORK/v5.err" 'rdmig: recv: source' && break; nap 0.01; done
check "... and recv says which limit" grep -q "^rdmig: recv: source .*--serve-max-files (4)" "$WORK/v5.err"
send one $((PORT + 4)) 1
wait_end one 120
check "one image (3 files) fits: send exits 0 ($END_RC)" [ "$END_RC" = 0 ]
stop_serve v5
facts v5
check "the summary: --serve-max-files 4, 3 files reserved at most" \
	eval '[ "$(summary v5 serve_max_files)/$(summary v5 peak_reserved_files)" = 4/3 ]'
check "the image byte-identical" same 1 v5

why
# ------------------------------------------------ 6. rdmig status --

section 6
OUT=$WORK/out6
SOCK=$WORK/status.sock
for n in 4 5 6 7 8; do image "m$n" "$HELD"; done
notify_listen
check "the stand-in for systemd listens" [ -S "$WORK/notify.sock" ]
# a socket a killed server left behind: the next one replaces it
python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$SOCK"
check "a stale socket is at --status" [ -S "$SOCK" ]
# The first source stays held while the other seven are started and
# admitted one by one: on a slow guest that took over a minute, past the
# default idle timeout, which is not what this section tests.
NOTIFY_SOCKET=$WORK/notify.sock serve v6 $((PORT + 5)) "$OUT" --max-sources 8 --status "$SOCK" \
	--idle-timeout 600 ||
	{ fail "recv --serve starts"; finish; }
check "the status socket is there, replaced, mode 0600" \
	eval '[ -S "$SOCK" ] && [ "$(stat -c %a "$SOCK")" = 600 ] && "$RDMIG" status --socket "$SOCK" >/dev/null'
# a second server on the same socket is refused, and the first goes on
"$RDMIG" recv --serve --listen "$IP:$((PORT + 6))" --out "$WORK/out6b" --status "$SOCK" \
	>/dev/null 2>"$WORK/second.err"
rc=$?
check "a second server on a live --status is refused ($rc), said" \
	eval '[ "$rc" = 1 ] && grep -q "another server answers there" "$WORK/second.err" && [ -S "$SOCK" ]'
for n in 1 2 3 4 5 6 7 8; do
	send "s$n" $((PORT + 5)) "m$n"
	hold "$OUT" "$n" "s$n"
done
"$RDMIG" status --socket "$SOCK" >"$WORK/st.txt" 2>"$WORK/st.err"
check "rdmig status exits 0 and shows 8 running ($?)" grep -q '^sources: 8 running (at most 8)' "$WORK/st.txt"
check "... one line per source, each receiving" \
	eval '[ "$(grep -c " receiving " "$WORK/st.txt")" = 8 ]'
"$RDMIG" status --socket "$SOCK" --json >"$WORK/st.json"
check "rdmig status --json matches rdmig-json(7)" python3 "$CHECK_JSON" "$JSON_MAN" "$WORK/st.json"
check "... 8 sources, each of $HELD bytes, from this guest's address" python3 -c '
import json, sys
o = json.load(open(sys.argv[1]))
s = o["sources"]
ok = len(s) == 8 and o["sources_running"] == 8 and o["reserved_files"] == 8 * 3
ok = ok and all(x["bytes_total"] == int(sys.argv[2]) and x["peer"] == sys.argv[3] and
                0 <= x["bytes_done"] <= x["bytes_total"] and x["phase"] == "receiving" for x in s)
sys.exit(0 if ok else 1)' "$WORK/st.json" "$HELD" "$IP"
"$RDMIG" status --socket "$SOCK" --metrics >"$WORK/st.prom"
check "rdmig status --metrics: 8 running, a series per source" \
	eval 'grep -qx "rdmig_serve_sources_running 8" "$WORK/st.prom" &&
		[ "$(grep -c "^rdmig_serve_source_bytes_total{seq=\"[0-9]*\",peer=\"$IP\"} $HELD$" "$WORK/st.prom")" = 8 ]'
for n in 1 2 3 4 5 6 7 8; do pid=PID_s$n; kill -CONT "${!pid}"; done
good=0
for n in 1 2 3 4 5 6 7 8; do wait_end "s$n" 300 && [ "$END_RC" = 0 ] && good=$((good + 1)); done
check "the 8 finish ($good of 8)" [ "$good" = 8 ]
for ((i = 0; i < 500; i++)); do
	"$RDMIG" status --socket "$SOCK" --json >"$WORK/st2.json" 2>/dev/null &&
		grep -q '"sources_ok": 8' "$WORK/st2.json" && break
	nap 0.01
done
check "then none running, 8 verified among the ended" python3 -c '
import json, sys
o = json.load(open(sys.argv[1]))
e = o["ended"]
sys.exit(0 if o["sources_running"] == 0 and len(e) == 8 and all(x["verified"] for x in e) else 1)' \
	"$WORK/st2.json"
stop_serve v6
check "recv exits 0 ($END_RC), its socket gone" eval '[ "$END_RC" = 0 ] && [ ! -e "$SOCK" ]'
# the listener may lag behind in the emulated guest: its last datagram first
for ((i = 0; i < 1000; i++)); do has_line "$WORK/notify.txt" STOPPING=1 && break; nap 0.01; done
kill "$NOTIFY_PID" 2>/dev/null
sed 's/^/# notify: /' "$WORK/notify.txt"
check "systemd was told READY=1, 8 running, 8 ok, then STOPPING=1" \
	eval 'grep -qx "READY=1" "$WORK/notify.txt" &&
		grep -q "^STATUS=serving: 8 running" "$WORK/notify.txt" &&
		grep -q "^STATUS=serving: 0 running, 8 ok, 0 failed" "$WORK/notify.txt" &&
		grep -qx "STOPPING=1" "$WORK/notify.txt"'
"$RDMIG" status --socket "$SOCK" >/dev/null 2>"$WORK/st3.err"
rc=$?
check "rdmig status without a server: exit 1 ($rc), says so" \
	eval '[ "$rc" = 1 ] && grep -q "cannot reach a server at" "$WORK/st3.err"'

why
fi
section end
finish
