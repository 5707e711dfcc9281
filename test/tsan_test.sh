#!/bin/sh
# tsan_test.sh - FMPL's threads under ThreadSanitizer: a copy of the tree
# built with -fsanitize=thread (library, fmplrun, test workers), then jobs
# that run every thread FMPL has beside the application's:
#   FMPL_PROGRESS_THREAD=1 on shared memory (spilled sends pushed, FIFOs
#   drained, the matrix pull: comm_matrix), point-to-point, cancels,
#   collectives; libfabric's tcp provider with the transport's progress
#   ticker (ofi), with and without the progress thread.
# A job passes when it exits 0 with no ThreadSanitizer report
# (TSAN_OPTIONS halt_on_error=1 exitcode=66: the first report fails it).
# Prints one line per job and "N passed, M failed"; exit status non-zero on
# any failure.
#
#   test/tsan_test.sh            from any directory (needs gcc's libtsan)
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/fmpl-tsan.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
cp -r "$top/src" "$top/include" "$top/tools" "$top/test" "$top/Makefile" "$top/fmpl.pc.in" \
    "$work/" || exit 1
rm -rf "$work/test/logs"
progs="pingpong random cancel spill progress coll_ops comm_matrix"
targets="lib/libfmpl.a bin/fmplrun"
for p in $progs; do targets="$targets test/progs/$p"; done
echo "tsan_test: building a copy with -fsanitize=thread"
# shellcheck disable=SC2086 # the list of targets
if ! make -C "$work" -s -j2 CFLAGS="-O1 -g -fsanitize=thread" LDFLAGS=-fsanitize=thread \
        $targets > "$work/build.log" 2>&1; then
    sed 's/^/    /' "$work/build.log" | tail -30
    echo "tsan_test: FAIL (the build)"
    exit 1
fi
export TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1"
pass=0 fail=0

# job NAME NP ENV... -- PROG ARGS
job() {
    name=$1 np=$2
    shift 2
    envs=""
    while [ "$1" != -- ]; do envs="$envs $1"; shift; done
    shift
    prog=$1
    shift
    # shellcheck disable=SC2086 # the environment assignments
    env $envs timeout -k 5 300 "$work/bin/fmplrun" -n "$np" -t 240 \
        "$work/test/progs/$prog" "$@" > "$work/out" 2>&1
    st=$?
    if [ $st = 0 ] && ! grep -q "ThreadSanitizer" "$work/out"; then
        echo "PASS $name"
        pass=$((pass + 1))
    else
        echo "FAIL $name: exit status $st"
        grep -A 30 "WARNING: ThreadSanitizer" "$work/out" | head -40 | sed 's/^/  | /'
        tail -5 "$work/out" | sed 's/^/  | /'
        fail=$((fail + 1))
    fi
}

PT=FMPL_PROGRESS_THREAD=1
job "shm pingpong, progress thread" 2 $PT -- pingpong -m 256K
job "shm random, progress thread" 3 $PT -- random -s 7 -R 3
job "shm cancel, progress thread" 3 $PT -- cancel
job "shm spill, progress thread" 2 $PT -- spill
job "shm progress" 2 $PT -- progress
job "shm coll_ops, progress thread" 3 $PT -- coll_ops -M 64K
job "shm comm_matrix, progress thread" 2 $PT -- comm_matrix
if [ -n "$(pkg-config --libs libfabric 2>/dev/null)" ]; then
    OFI="FMPL_TRANSPORT=ofi FI_PROVIDER=tcp"
    job "ofi pingpong" 2 $OFI -- pingpong -m 256K
    job "ofi random, progress thread" 3 $OFI $PT -- random -s 7 -R 3
    job "ofi cancel" 3 $OFI -- cancel
fi
echo "tsan_test: $pass passed, $fail failed"
[ $fail = 0 ]
