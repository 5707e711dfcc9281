#!/bin/sh
# bench/run_local.sh - what `make bench` runs, from any directory: the
# floor, FMPL latency, bandwidth and broadcast on a local 2-process job,
# then the interleaved FMPL/MPI comparisons (point-to-point, then the
# collectives) when MPI is there, their tables also as data files and
# plots in bench/out (bench/compare -p), and last the FMPL paper's figures on the
# emulated SR8000 (bench/sr8000), and the PEACH2 and hybrid papers' on
# emulated HA-PACS/TCA (bench/tca).
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
echo "== bin/fmplrun -n 2 bench/bcast"
bin/fmplrun -n 2 bench/bcast
echo
if command -v mpirun >/dev/null 2>&1 && [ -x bench/mpi/latency ] && [ -x bench/mpi/bw ]; then
    echo "== bench/compare -r 3 -p bench/out"
    bench/compare -r 3 -p bench/out
else
    echo "== MPI not available (mpirun or bench/mpi/* missing): no comparison"
fi
coll_mpi=1
for t in barrier bcast reduce allreduce allgather; do
    [ -x "bench/mpi/$t" ] || coll_mpi=0
done
if command -v mpirun >/dev/null 2>&1 && [ $coll_mpi = 1 ]; then
    echo
    echo "== bench/compare -r 3 -t coll -p bench/out"
    bench/compare -r 3 -t coll -p bench/out
fi
echo
echo "== bench/sr8000 (the emulated SR8000, FMPL_TRANSPORT=tcw)"
bench/sr8000 -k
echo
echo "== bench/tca (emulated HA-PACS/TCA: FMPL_TRANSPORT=peach2 and tca)"
bench/tca -k
