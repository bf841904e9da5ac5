# Wake-latency CDF, one curve per configuration.
# data: one block per configuration (two blank lines between), each headed
# by "# name", then "latency_ms fraction" lines.
set title title_text noenhanced
set xlabel "wake latency (ms, log scale)"
set ylabel "fraction of wake-ups at or below"
set logscale x
set format x "%g"
set yrange [0:1.02]
set grid xtics ytics mxtics
set key bottom right
plot for [i=0:n-1] data index i using 1:2 with steps lw 2 title columnheader(1)
