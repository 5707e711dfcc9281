#!/bin/sh
# bench/run_local.sh [-q] - what `make bench` runs, from any directory: the
# floor, FMPL latency, bandwidth and broadcast on a local 2-process job,
# then the interleaved comparisons with the peers installed (Open MPI,
# MPICH, UCX; bench/compare -P): point-to-point, the collectives, Himeno
# and the BLACS, their tables also as data files
# and plots in bench/out (bench/compare -p), and last the FMPL paper's
# figures on the emulated SR8000 (bench/sr8000) and the PEACH2 and hybrid
# papers' on emulated HA-PACS/TCA (bench/tca).
#
#   -q   quick (`make bench QUICK=1`, what CI runs on a fresh clone): every
#        program and every table, with a twentieth of the iterations, one
#        comparison round instead of three and each script's own quick mode
#
# Every step runs even when one before it failed; the summary names the
# steps that failed and the exit status is 1 if any did.  A figure of the
# emulated machines that is off the paper's is printed OFF, not counted
# as a failure (the scripts run with -k); a program that fails is.
set -u

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 2

quick=0
while getopts qh opt; do
    case $opt in
    q) quick=1 ;;
    *) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; [ "$opt" = h ] && exit 0; exit 2 ;;
    esac
done

runs=3 iters="" q=""
[ $quick = 1 ] && runs=1 iters="-i 0.05" q="-q"
failed="" nsteps=0

step() {   # step TITLE CMD ARGS...: run it, note a failure, go on
    title=$1
    shift
    nsteps=$((nsteps + 1))
    echo "== $title"
    "$@" || { st=$?; echo "== FAILED (status $st): $title"; failed="$failed
  $title"; }
    echo
}

# shellcheck disable=SC2086 # $iters and $q split into words on purpose
{
step "bench/floor" bench/floor
step "bin/fmplrun -n 2 bench/latency $iters" bin/fmplrun -n 2 bench/latency $iters
step "bin/fmplrun -n 2 bench/bw $iters" bin/fmplrun -n 2 bench/bw $iters
step "bin/fmplrun -n 2 bench/bcast $iters" bin/fmplrun -n 2 bench/bcast $iters
if command -v mpirun >/dev/null 2>&1 && [ -d bench/mpi ]; then
    for t in both coll himeno blacs; do
        step "bench/compare -r $runs -t $t -p bench/out${iters:+ -- $iters}" \
            bench/compare -r $runs -t $t -p bench/out ${iters:+-- $iters}
    done
else
    echo "== MPI not available (mpirun or bench/mpi missing): no comparison"
    echo
fi
step "bench/sr8000 $q -k (the emulated SR8000, FMPL_TRANSPORT=tcw)" bench/sr8000 $q -k
step "bench/tca $q -k (emulated HA-PACS/TCA: FMPL_TRANSPORT=peach2 and tca)" bench/tca $q -k
}

if [ -n "$failed" ]; then
    echo "make bench: $(echo "$failed" | grep -c .) of $nsteps steps failed:$failed"
    exit 1
fi
echo "make bench: all $nsteps steps ran"
