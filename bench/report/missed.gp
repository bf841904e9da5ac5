# % periods missed per workload (groups) and configuration (bars).
# data: header "workload cfg1 cfg2 ...", then one row per workload.
set title "Periods missed, median over repetitions (lower is better)"
set ylabel "% missed"
set xlabel "workload"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set yrange [0:ymax]
set grid ytics
set key outside top center horizontal
set xtics noenhanced
plot for [i=2:ncfg+1] data using i:xtic(1) title columnheader(i)
