# ISO share of the machine over time against the iso_cpu cap.
# data: "t_s iso_share_pct iso_percent_reading" lines ("?" = no reading).
set title title_text noenhanced
set xlabel "time (s)"
set ylabel "% of the machine"
set yrange [0:105]
set grid
set key bottom right
set datafile missing "?"
plot data using 1:2 with linespoints lw 2 pt 7 ps 0.6 title "ISO hogs' CPU share (measured)", \
     data using 1:3 with lines lw 1 dt 2 title "muqssd's iso\\_percent reading", \
     cap with lines lw 2 lc rgb "red" title sprintf("iso\\_cpu = %g%%", cap)
