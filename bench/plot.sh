#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# bench/plot.sh OUT - PNG plots (gnuplot) from the data files bench/report.py
# wrote into OUT/plot: latency CDF inline vs copy per class and device,
# instructions per message, bulk throughput vs ib_write_bw and QEMU, and
# send queue bytes vs the inline request, and the time budgets
# (budget_SIDE_DEV.png).  Prints the PNGs it made.
set -euo pipefail
OUT=${1:?}
cd "$OUT/plot"

png() { # NAME WIDTH HEIGHT: the terminal line
	echo "set terminal pngcairo noenhanced size $2,$3 font 'sans,10'; set output '$1.png'"
}

# One CDF per device and class, inline auto against inline 0.
for auto in cdf_*_auto.dat; do
	[ -e "$auto" ] || continue
	base=${auto%_auto.dat}
	off=${base}_off.dat
	name=${base#cdf_}
	gnuplot <<GP
$(png "$base" 700 420)
set title "${name//_/ }: latency CDF (auto = inline, 0 = copy)"
set xlabel "microseconds (log)"; set ylabel "fraction of operations"
set logscale x; set key bottom right; set grid
plot "$auto" using 1:2 with lines lw 2 title "inline auto", \
     "$off" using 1:2 with lines lw 2 dt 2 title "inline 0 (copy)"
GP
done

if [ -s cost.dat ]; then
	gnuplot <<GP
$(png cost 900 420)
set title "sender instructions per control message (callgrind, user space)"
set style data histograms; set style histogram clustered gap 1; set style fill solid 0.8
set xtics rotate by -30; set ylabel "instructions (log)"; set grid ytics; set key top left
# log: a 32 KiB message counts ~33000 (valgrind counts every byte of memcpy's
# rep movsb), the fixed-size ones ~1100
set logscale y; set yrange [500:*]
plot "cost.dat" using 2:xtic(1) title "inline auto", "" using 3 title "inline 0 (copy)"
GP
fi

if [ -s bulk.dat ]; then
	gnuplot <<GP
$(png bulk 1000 480)
set title "one RAM block: throughput (MB/s), same guest boot"
set style data histograms; set style histogram clustered gap 1; set style fill solid 0.8
set xtics rotate by -25; set ylabel "MB/s (block bytes / seconds)"; set grid ytics
set key top left
plot "bulk.dat" using 2:xtic(1) title "rdmig engine", \
     "" using 3 title "engine + XXH3 on a thread", "" using 4 title "rdmig send (XXH3 span digests)", \
     "" using 5 title "QEMU 7.2 -> QEMU", "" using 6 title "QEMU 10.0.2 -> QEMU", \
     "" using 7 title "ib_write_bw"
GP
fi

if [ -s chunks.dat ]; then
	gnuplot <<GP
$(png chunks 800 480)
set title "rdmig send -> recv: seconds against --chunk-size (random block)"
set logscale x 2; set xlabel "registration chunk (MiB)"; set ylabel "seconds"; set grid
set key top right
plot for [i=0:*] "chunks.dat" index i using 1:2 with linespoints lw 2 title columnheader(1)
GP
fi

# Each migration's time budget, one stacked bar per kind x chunk x
# registration, per device and side (report.py: medians of the rounds)
for dat in budget_*.dat; do
	[ -s "$dat" ] || continue
	base=${dat%.dat}
	side=${base#budget_}
	dev=${side#*_}
	side=${side%%_*}
	gnuplot <<GP
$(png "$base" 1000 520)
set title "where the time goes: $side side on $dev (seconds, random block; medians of rounds)"
set style data histograms; set style histogram rowstacked; set style fill solid 0.85 border -1
set boxwidth 0.7; set xtics rotate by -30; set ylabel "seconds"; set grid ytics
set key outside right top
colors = "#7f7f7f #1f77b4 #17becf #ff7f0e #bcbd22 #9467bd #d62728 #2ca02c #e377c2 #404040"
plot for [i=2:11] "$dat" using i:xtic(1) title columnheader(i) lc rgb word(colors, i - 1)
GP
done

if [ -s footprint.dat ]; then
	gnuplot <<GP
$(png footprint 800 480)
set title "send queue bytes vs requested inline (512 WRs, 2 SGEs)"
set xlabel "requested inline bytes"; set ylabel "bytes (log)"; set logscale y; set grid
set key top left
plot "footprint.dat" using 1:2 with linespoints lw 2 title "rxe (measured, incl. 1 RQ page)", \
     "" using 1:3 with linespoints lw 2 title "siw (measured)", \
     "" using 1:4 with linespoints dt 2 title "mlx5 legacy RC (model)", \
     "" using 1:5 with linespoints dt 2 title "mlx4 (model)", \
     "" using 1:6 with linespoints dt 2 title "irdma gen2 (model)"
GP
fi
ls "$PWD"/*.png
