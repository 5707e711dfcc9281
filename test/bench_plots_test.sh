#!/bin/bash
# bench_plots_test.sh - bench/compare -p writes its tables as data files and
# plots them (what `make bench` leaves in bench/out), on a short run.
#
#   test/bench_plots_test.sh        from any directory, after `make`
#
# Runs `bench/compare -r 1 -t latency,bw,allreduce -m 4K -p DIR` (FMPL
# against Open MPI, one round, sizes to 4 KiB: a check of the files, not a
# measurement) and checks for each test: DIR/TEST.dat has a row per size
# with a number for FMPL, MPI and the ratio, the ratio is FMPL/MPI of the
# row, and DIR/TEST.png and DIR/TEST_ratio.png are PNG images gnuplot
# wrote; latency's and bw's data files carry the floor.  Then that a
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
    # rows: size FMPL MPI ratio, every one a number, the ratio FMPL/MPI
    # (to the 2 decimals it is printed with; "-" where MPI's value is 0:
    # bw of 0 bytes)
    why=$(awk '!/^#/ && NF {
        n++
        if (NF != 4 || $2 !~ /^[0-9.]+$/ || $3 !~ /^[0-9.]+$/ ||
            ($4 !~ /^[0-9.]+$/ && !($4 == "-" && $3 == 0))) {
            print "row " n " is not size FMPL MPI ratio: " $0; bad = 1; exit }
        if ($4 == "-") next
        d = $2 / $3 - $4; if (d < 0) d = -d
        if (d > 0.006) { print "row " n ": ratio " $4 " is not " $2 "/" $3; bad = 1; exit }
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
