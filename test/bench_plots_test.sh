#!/bin/bash
# bench_plots_test.sh - bench/compare -p writes its tables as data files and
# plots them (what `make bench` leaves in bench/out), on a short run.
#
#   test/bench_plots_test.sh        from any directory, after `make`
#
# Runs `bench/compare -r 1 -t latency,bw,allreduce -m 4K -p DIR` (FMPL
# against Open MPI, one round, sizes to 4 KiB: a check of the files, not a
# measurement; and against MPICH and UCX where they are installed) and
# checks for each test: DIR/TEST.dat has a row per size with FMPL's value,
# each peer's, FMPL over each, the best peer's value, its name and FMPL
# over it, every ratio that of its row, the best the best of the row, and
# DIR/TEST.png and DIR/TEST_ratio.png are PNG images gnuplot wrote; latency's and bw's data files carry the floor.  Then that a
# DIR which cannot be made is refused (status 2).  Exits 1 on a failure.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL $*"; fail=1; }

command -v gnuplot >/dev/null || bad "no gnuplot (make deps installs gnuplot-nox)"
if ! "$top/bench/compare" -r 1 -t latency,bw,allreduce -m 4K -p "$tmp/out" >"$tmp/log" 2>&1; then
    bad "bench/compare -p exited non-zero:"
    tail -n 20 "$tmp/log" | sed 's/^/  | /'
fi
for t in latency bw allreduce; do
    dat=$tmp/out/$t.dat
    if [ ! -s "$dat" ]; then
        bad "$t: no data file $dat"
        continue
    fi
    # rows: size, FMPL, each peer, FMPL over each, the best peer's value,
    # its name and FMPL over it (the column line names them); every value
    # a number or "-", a ratio FMPL over its column to the 2 decimals it is
    # printed with, and the best the least time (bw: the most bandwidth)
    # of the peers but UCT (a floor)
    why=$(awk -v hi=$([ $t = bw ] && echo 1 || echo 0) '
    /^# size/ { np = (NF - 6) / 2; if (np < 1 || np != int(np)) { print "column line: " $0; bad = 1; exit }
                for (k = 1; k <= np; k++) floor[k] = $(3 + k) ~ /^UCT_/ }
    !/^#/ && NF {
        n++
        if (NF != 2 * np + 5) { print "row " n " has " NF " columns: " $0; bad = 1; exit }
        if ($2 !~ /^[0-9.]+$/) { print "row " n ": no FMPL value: " $0; bad = 1; exit }
        best = ""
        for (k = 1; k <= np; k++) {
            v = $(2 + k); r = $(2 + np + k)
            if (v == "-") continue
            if (v !~ /^[0-9.]+$/) { print "row " n ": peer value " v; bad = 1; exit }
            if (!floor[k] && (best == "" || (hi ? v + 0 > best + 0 : v + 0 < best + 0))) best = v
            if (v + 0 == 0) continue
            d = $2 / v - r; if (d < 0) d = -d
            if (d > 0.006) { print "row " n ": ratio " r " is not " $2 "/" v; bad = 1; exit }
        }
        if (best == "") { print "row " n ": no peer value: " $0; bad = 1; exit }
        if ($(NF - 2) + 0 != best + 0) { print "row " n ": best " $(NF - 2) " is not " best; bad = 1; exit }
        if (best + 0 > 0) {
            d = $2 / best - $NF; if (d < 0) d = -d
            if (d > 0.006) { print "row " n ": FMPL/best " $NF " is not " $2 "/" best; bad = 1; exit }
        }
    }
    END { if (!bad && n < 3) print "only " n + 0 " rows" }' "$dat")
    [ -z "$why" ] || bad "$t: $dat: $why"
    case $t in
        latency | bw) grep -q "^# floor: [0-9.]* " "$dat" || bad "$t: no floor line in $dat" ;;
    esac
    for png in "$tmp/out/$t.png" "$tmp/out/${t}_ratio.png"; do
        if [ "$(head -c 8 "$png" 2>/dev/null | od -An -tx1 | tr -d ' \n')" != 89504e470d0a1a0a ]; then
            bad "$t: $png is not a PNG image"
        fi
    done
    [ $fail = 1 ] || echo "PASS $t: $(grep -vc '^#' "$dat") sizes, data file and two plots"
done
touch "$tmp/file"
"$top/bench/compare" -r 1 -t latency -p "$tmp/file/out" >"$tmp/log" 2>&1
st=$?
if [ $st = 2 ] && grep -q "cannot create" "$tmp/log"; then
    echo "PASS a -p folder that cannot be made is refused"
else
    bad "-p under a file: status $st, expected 2 and 'cannot create'"
fi
if [ $fail = 0 ]; then
    echo "bench_plots_test: PASS"
else
    echo "bench_plots_test: FAIL"
    exit 1
fi
