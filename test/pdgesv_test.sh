#!/bin/bash
# pdgesv_test.sh - ScaLAPACK's PDGESV on fmpl-blacs: the C and Fortran examples.
#
#   test/pdgesv_test.sh [-n N] [-nb NB] [-T SEC]
#
# Builds nothing: runs examples/pdgesv and examples/pdgesv_f (ScaLAPACK
# linked after lib/libfmpl_blacs.so; see their headers) under
# bin/fmplrun -t SEC on the grids
#     1 process 1x1,  2 processes 1x2 and 2x1,  4 processes 2x2
# solving the same N x N system (default N = 500, NB = 24: the last block
# is partial).  A run passes when it exits with status 0 and process
# {0,0} printed its result line ending in ": PASS" (scaled residual
# ||Ax-b|| / (||A|| ||x|| n eps) < 10, relative error < 1e-8).
# Prints one line per run, then "N passed, M failed"; exit status 0 when
# everything passed, 1 otherwise, 2 for a usage error.
# FMPL_TOP overrides the repository root.
set -u

TOP=${FMPL_TOP:-$(cd "$(dirname "$0")/.." && pwd)}
FMPLRUN=$TOP/bin/fmplrun

usage() {
    sed -n '2,/^set -u/p' "$0" | sed -e '/^set -u/d' -e 's/^# \{0,1\}//'
    exit "${1:-2}"
}

n=500
nb=24
limit=60
while [ $# -gt 0 ]; do
    case "$1" in
        -n) [ $# -ge 2 ] || usage; n=$2; shift 2 ;;
        -nb) [ $# -ge 2 ] || usage; nb=$2; shift 2 ;;
        -T) [ $# -ge 2 ] || usage; limit=$2; shift 2 ;;
        -h|--help) usage 0 ;;
        *) usage ;;
    esac
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/pdgesv_test.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 143' TERM INT HUP PIPE

pass=0
fail=0
for prog in pdgesv pdgesv_f; do
    exe=$TOP/examples/$prog
    # processes:P:Q
    for grid in 1:1:1 2:1:2 2:2:1 4:2:2; do
        np=${grid%%:*}
        pq=${grid#*:}
        p=${pq%:*}
        q=${pq#*:}
        name="$prog -n $n -nb $nb -p $p -q $q on $np processes"
        if [ ! -x "$exe" ] || [ ! -x "$FMPLRUN" ]; then
            echo "FAIL $name: $exe or $FMPLRUN is not built"
            fail=$((fail + 1))
            continue
        fi
        t0=$(date +%s%N)
        timeout -k 10 $((limit + 15)) "$FMPLRUN" -n "$np" -t "$limit" \
            "$exe" -n "$n" -nb "$nb" -p "$p" -q "$q" > "$tmp/out" 2>&1 < /dev/null
        st=$?
        ms=$(( ($(date +%s%N) - t0) / 1000000 ))
        secs=$(printf '%d.%d' $((ms / 1000)) $((ms % 1000 / 100)))
        line=$(grep -E "^$prog: n=" "$tmp/out" | tail -n 1)
        if [ "$st" = 0 ] && [ "$(grep -cE "^$prog: n=.*: PASS\$" "$tmp/out")" = 1 ] &&
           ! grep -q 'FAIL' "$tmp/out"; then
            echo "PASS $name ($secs s): ${line#*: }"
            pass=$((pass + 1))
        else
            case "$st" in
                124) why="time limit of $limit s reached" ;;
                0) why="no PASS line" ;;
                *) why="exit status $st" ;;
            esac
            echo "FAIL $name ($secs s): $why"
            sed 's/^/  | /' "$tmp/out" | tail -n 20
            fail=$((fail + 1))
        fi
    done
done
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
