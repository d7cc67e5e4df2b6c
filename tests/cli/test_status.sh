#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# test_status.sh RDMIG MAN - `rdmig status` against a stand-in server (a
# UNIX socket that answers each client with a canned status object, as
# `recv --serve --status` does; the real server is tests/device/
# test_serve.sh's section 6): the table, --json as it came and valid per
# rdmig-json(7), --metrics in the Prometheus text format, an answer that
# is not a status, a server that never answers, and each under valgrind's
# memcheck when RDMIG is not a sanitizer build.  Prints "N passed, N
# failed".
set -u
RDMIG=${1:?usage: test_status.sh RDMIG MAN}
MAN=${2:?usage: test_status.sh RDMIG MAN}
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../lib/check.sh"
D=$(mktemp -d)
PIDS=()
trap 'kill "${PIDS[@]}" 2>/dev/null; rm -rf "$D"' EXIT

cat >"$D/status.json" <<'JSON'
{ "schema": 1, "command": "recv", "mode": "serve", "event": "status", "rdmig_version": "0.3.0", "ok": true, "pid": 4242, "listen": "10.0.0.1", "port": 4444, "out": "/srv/images", "draining": false, "uptime_seconds": 3723.5, "sources_running": 2, "sources_ok": 15, "sources_failed": 1, "sources_rejected": 3, "max_sources": 4, "serve_max_total": 8589934592, "serve_max_pinned": null, "serve_max_files": 100000, "reserved_total": 2147483648, "reserved_pinned": 1048576, "reserved_files": 6, "peak_rss_bytes": 3221225472, "peak_pinned_bytes": 2097152, "sources": [ { "seq": 17, "peer": "10.0.0.3", "dir": "0017-20261205T120000Z-10.0.0.3", "phase": "receiving", "bytes_total": 1073741824, "bytes_done": 536870912, "seconds": 5.0, "rate_MBps": 107.37, "eta_seconds": 5.0 }, { "seq": 18, "peer": "fd00::\"x", "dir": "0018-20261205T120004Z-fd00__x", "phase": "header", "bytes_total": 0, "bytes_done": 0, "seconds": 0.2, "rate_MBps": 0.0, "eta_seconds": null } ], "ended": [ { "seq": 16, "peer": "10.0.0.2", "dir": "0016-20261205T115500Z-10.0.0.2", "verified": false, "bytes_total": 4096, "seconds": 1.5, "message": "the source disconnected" }, { "seq": 15, "peer": "10.0.0.2", "dir": "0015-20261205T115000Z-10.0.0.2", "verified": true, "bytes_total": 1073741824, "seconds": 9.8 } ] }
JSON
# serve SOCKET FILE|-: answer each client with FILE's bytes (-: never answer)
serve() {
	python3 -c '
import os, socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1])
s.listen(8)
while True:
    c, _ = s.accept()
    if sys.argv[2] == "-":
        time.sleep(30)
    else:
        c.sendall(open(sys.argv[2], "rb").read())
    c.close()' "$1" "$2" &
	PIDS+=($!)
	for ((i = 0; i < 500; i++)); do [ -S "$1" ] && return; sleep 0.01; done
}
serve "$D/s.sock" "$D/status.json"
echo "not json" >"$D/garbage"
serve "$D/g.sock" "$D/garbage"
serve "$D/mute.sock" -

# the tool under memcheck, unless it is a sanitizer build
RUN=("$RDMIG")
if command -v valgrind >/dev/null && ! nm -D "$RDMIG" 2>/dev/null | grep -q __asan_init; then
	RUN=(valgrind -q --error-exitcode=97 --leak-check=full --errors-for-leak-kinds=definite "$RDMIG")
fi

"${RUN[@]}" status --socket "$D/s.sock" >"$D/table" 2>"$D/err"
rc=$?
check "the table (exit $rc)" eval '[ $rc = 0 ] &&
	grep -q "^rdmig recv --serve (pid 4242) on 10.0.0.1:4444 into /srv/images: serving, up 3724 s" "$D/table" &&
	grep -q "^sources: 2 running (at most 4), 15 verified, 1 failed, 3 rejected" "$D/table" &&
	grep -q "^reserved: blocks 2.00 GiB of 8.00 GiB, pinned 1.0 MiB (no limit), files 6 of 100000$" "$D/table" &&
	grep -qE "^  0017 10.0.0.3 +receiving +512.0 MiB of 1.00 GiB +107.4 MB/s +5 s  0017-" "$D/table" &&
	grep -qE "^  0018 .* header .* - +0018-" "$D/table" &&
	grep -q "^  0016 10.0.0.2 .*FAILED .*: the source disconnected" "$D/table" &&
	grep -q "^  0015 10.0.0.2 .*verified 1.00 GiB in 9.8 s" "$D/table"'
[ $rc = 0 ] || sed 's/^/# /' "$D/table" "$D/err"

RDMIG_STATUS_SOCKET=$D/s.sock "${RUN[@]}" status --json >"$D/out.json" 2>"$D/err"
check "--json: the object as the server wrote it, from RDMIG_STATUS_SOCKET ($?)" cmp -s "$D/out.json" "$D/status.json"
check "... and it is what rdmig-json(7) says" python3 "$HERE/check_json.py" "$MAN" "$D/out.json"

"${RUN[@]}" status --socket "$D/s.sock" --metrics >"$D/prom" 2>"$D/err"
rc=$?
check "--metrics (exit $rc): the server's gauges and counters" eval '[ $rc = 0 ] &&
	grep -qx "rdmig_serve_sources_running 2" "$D/prom" &&
	grep -qx "rdmig_serve_sources_total{outcome=\"verified\"} 15" "$D/prom" &&
	grep -qx "rdmig_serve_limit{kind=\"total\"} 8589934592" "$D/prom" &&
	! grep -q "rdmig_serve_limit{kind=\"pinned\"}" "$D/prom" &&
	grep -qx "rdmig_serve_source_bytes_done{seq=\"17\",peer=\"10.0.0.3\"} 536870912" "$D/prom"'
check "... a label value escaped (a quote in a peer)" \
	grep -qF 'rdmig_serve_source_bytes_total{seq="18",peer="fd00::\"x"} 0' "$D/prom"
check "... every line a comment or a sample of the text format, each family typed" python3 -c '
import re, sys
typed, ok = set(), True
for line in open(sys.argv[1]):
    line = line.rstrip("\n")
    m = re.match(r"# TYPE (\S+) (gauge|counter)$", line)
    if m:
        typed.add(m.group(1)); continue
    if line.startswith("# HELP "):
        continue
    m = re.match(r"([a-z_][a-z0-9_]*)(\{[a-z_]+=\"(\\.|[^\"\\])*\"(,[a-z_]+=\"(\\.|[^\"\\])*\")*\})? (-?[0-9.e+]+)$", line)
    ok = ok and bool(m) and m.group(1) in typed
sys.exit(0 if ok else 1)' "$D/prom"

"${RUN[@]}" status --socket "$D/g.sock" >/dev/null 2>"$D/err"
rc=$?
check "an answer that is not a status: exit 1 ($rc), said" \
	eval '[ $rc = 1 ] && grep -q "not a status object" "$D/err"'
"${RUN[@]}" status --socket "$D/mute.sock" --json >"$D/mute.json" 2>"$D/err"
rc=$?
check "a server that never answers: exit 1 ($rc) after 5 s, said, one JSON failure object" \
	eval '[ $rc = 1 ] && grep -q "did not answer within 5 s" "$D/err" &&
		python3 "$HERE/check_json.py" "$MAN" "$D/mute.json" >/dev/null'
finish
