#!/bin/bash
# bench/plot.sh OUT - PNG plots from the JSON of bench/run-in-guest.sh:
# latency CDF inline vs copy per class, bulk throughput vs ib_write_bw,
# queue footprint vs inline request.  Uses python3 to flatten JSON, gnuplot
# to draw.
set -euo pipefail
OUT=${1:?}
cd "$OUT"
for dev in rxe siw; do
	[ -f "latency_$dev.json" ] || continue
	python3 - "$dev" <<'PY'
import json, sys
dev = sys.argv[1]
d = json.load(open(f"latency_{dev}.json"))
for c in d["classes"]:
    for mode in ("auto", "off"):
        v = c[mode]["sorted_every_10th"]
        with open(f"cdf_{dev}_{c['class']}_{mode}.dat", "w") as f:
            for i, x in enumerate(v):
                f.write(f"{x} {(i + 1) / len(v)}\n")
PY
	for cls in $(python3 -c "import json;print(' '.join(c['class'] for c in json.load(open('latency_$dev.json'))['classes']))"); do
		gnuplot <<GP
set terminal pngcairo size 800,500
set output "cdf_${dev}_${cls}.png"
set title "$dev: $cls latency CDF (inline auto vs off)"
set xlabel "microseconds"; set ylabel "fraction"; set logscale x; set key bottom right
plot "cdf_${dev}_${cls}_auto.dat" with lines title "inline auto", "cdf_${dev}_${cls}_off.dat" with lines title "inline off (copy)"
GP
	done
done
if [ -f bulk.json ]; then
	python3 <<'PY'
import json
d = json.load(open("bulk.json"))["bulk"]
with open("bulk.dat", "w") as f:
    for r in d:
        s = r.get("send") or {}
        f.write(f'"{r["device"]} {r["image"]} {r["registration"]}" {s.get("throughput_MBps", 0)} {r.get("ib_write_bw_MBps") or 0}\n')
PY
	gnuplot <<'GP'
set terminal pngcairo size 1000,500
set output "bulk.png"
set title "rdmig send -> recv throughput vs ib_write_bw (MB/s)"
set style data histograms; set style fill solid 0.8; set xtics rotate by -30; set ylabel "MB/s"
plot "bulk.dat" using 2:xtic(1) title "rdmig", "" using 3 title "ib\\_write\\_bw"
GP
fi
if [ -f probe.json ]; then
	python3 <<'PY'
import json
def a16(x): return (x + 15) // 16 * 16
def a64(x): return (x + 63) // 64 * 64
def pow2(x):
    p = 1
    while p < x: p <<= 1
    return p
wr, sge = 512, 2
for dev in json.load(open("probe.json")):
    with open(f"footprint_{dev['device']}.dat", "w") as f:
        for r in dev["rows"]:
            n = r["requested"]
            mlx5 = pow2(wr * a64(max(192 + 16 * sge, 192 + a16(4 + n))))
            f.write(f'{n} {r["queue_bytes"] if r["ok"] else "NaN"} {mlx5}\n')
PY
	gnuplot <<'GP'
set terminal pngcairo size 800,500
set output "footprint.png"
set title "QP queue bytes vs requested inline size (512 send WRs, 2 SGEs)"
set xlabel "requested inline bytes"; set ylabel "bytes"; set logscale y
plot "footprint_rxe0.dat" using 1:2 with linespoints title "rxe0 (measured)", \
     "footprint_siw0.dat" using 1:2 with linespoints title "siw0 (measured)", \
     "footprint_rxe0.dat" using 1:3 with linespoints title "mlx5 legacy RC (model)"
GP
fi
ls "$OUT"/*.png 2>/dev/null
