#!/bin/sh
# bench/run_local.sh - what `make bench` runs, from any directory: the
# floor, FMPL latency and bandwidth on a local 2-process job, then the
# interleaved FMPL/MPI comparison when MPI is there.
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

echo "== bench/floor"
bench/floor
echo
echo "== bin/fmplrun -n 2 bench/latency"
bin/fmplrun -n 2 bench/latency
echo
echo "== bin/fmplrun -n 2 bench/bw"
bin/fmplrun -n 2 bench/bw
echo
if command -v mpirun >/dev/null 2>&1 && [ -x bench/mpi/latency ] && [ -x bench/mpi/bw ]; then
    echo "== bench/compare -r 3"
    bench/compare -r 3
else
    echo "== MPI not available (mpirun or bench/mpi/* missing): no comparison"
fi
