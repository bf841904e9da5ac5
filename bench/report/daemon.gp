# muqssd's own CPU use against the number of sleeping threads in scope.
# data: "sleeping_threads cpu_pct" lines.
set title title_text noenhanced
set xlabel "sleeping threads in scope"
set ylabel "muqssd CPU (% of one CPU)"
set yrange [0:*]
set xrange [0:*]
set grid
set key off
plot data using 1:2 with linespoints lw 2 pt 7 ps 1.2, \
     data using 1:2:(sprintf("%.2f%%", $2)) with labels offset 0,1 notitle
