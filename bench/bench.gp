# Plots for docs/BENCHMARKS.md from the CSV files the benchmarks write.
#   gnuplot -e "in='CSVDIR'; out='PNGDIR'" bench/bench.gp
set datafile separator comma
if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) { set terminal pngcairo size 800,450 font ",10" } else { set terminal png size 800,450 }
set key top left
set termoption noenhanced
set grid ytics
set style fill solid 0.6 border -1
set boxwidth 0.35

# W1: write bandwidth per configuration.
set output out."/w1.png"
set title "W1: ten datasets, one 1000x1000 int32 plane each per pass (median)"
set ylabel "MB/s (creation to last flush)"
set yrange [0:*]
set xtics rotate by -15
plot in."/w1.csv" skip 1 using 0:3:xtic(1) with boxes notitle

# W2: time relative to sec2, 1-D and 2-D.
set output out."/w2.png"
set title "W2: 1000 small extensible datasets, (creation + appends) / sec2 (median)"
set ylabel "ratio to sec2"
set key top left
set termoption noenhanced
plot in."/w2.csv" skip 1 every ::0::3 using ($0-0.18):6:xtic(2) with boxes title "1-D", \
     ""           skip 1 every ::4::7 using ($0+0.18):6 with boxes title "2-D", \
     1.25 with lines dt 2 lc rgb "black" title "target 1.25"

# Latency: cumulative distribution of publish-to-visible delays.
set output out."/latency.png"
set title "Publish-to-visible latency (H5Dwrite + H5Fflush to reader sees it)"
set xlabel "delay, ms"
set ylabel "fraction of samples"
set xtics norotate
set logscale x
set yrange [0:1]
set key bottom right
plot for [i=0:4] in."/latency_samples.csv" index i using 2:3 with steps lw 2 title columnhead(1)
unset logscale x

# End of tick: publish time against dirty pages, and sequential write time.
set output out."/eot.png"
set title "End of tick: time to publish vs. dirty metadata pages (median per K)"
set xlabel "dirty pages in the tick (4 KiB)"
set ylabel "ms"
set logscale xy
set autoscale y
set key top left
set termoption noenhanced
plot in."/eot.csv" skip 1 every ::0::3 using 4:($5/1000) with linespoints lw 2 title "publish, md on disk", \
     ""           skip 1 every ::4::7 using 4:($5/1000) with linespoints lw 2 title "publish, md on /dev/shm", \
     ""           skip 1 every ::0::3 using 4:($8/1000) with linespoints dt 2 title "same bytes at sequential pwrite bandwidth"
