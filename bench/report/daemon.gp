# muqssd's own CPU use against the number of sleeping threads in scope.
# gnuplot -e "data='daemon.dat'; out='daemon.png'; title_text='...'" daemon.gp
# data: "sleeping_threads cpu_pct" lines.
set terminal pngcairo size 800,500 enhanced font "sans,11"
set output out
set title title_text noenhanced
set xlabel "sleeping threads in scope"
set ylabel "muqssd CPU (% of one CPU)"
set yrange [0:*]
set xrange [0:*]
set grid
set key off
plot data using 1:2 with linespoints lw 2 pt 7 ps 1.2, \
     data using 1:2:(sprintf("%.2f%%", $2)) with labels offset 0,1 notitle
