#!/bin/sh
# sanitizer_test.sh - FMPL built with a sanitizer, run on real jobs.
#
#   test/sanitizer_test.sh thread     from any directory (gcc's libtsan)
#   test/sanitizer_test.sh address    (gcc's libasan and libubsan)
#
# Builds a copy of the tree (library, fmpl-blacs, fmplrun, the test
# workers) with the sanitizer, then runs jobs under the copy's fmplrun:
#   thread   FMPL's threads beside the application's: FMPL_PROGRESS_THREAD=1
#            on shared memory (spilled sends pushed, FIFOs drained, the
#            matrix pull: comm_matrix), point-to-point, cancels,
#            collectives; libfabric's tcp provider with the transport's
#            progress ticker, with and without the progress thread.
#   address  AddressSanitizer (with LeakSanitizer) and
#            UndefinedBehaviorSanitizer (every check fatal): the
#            point-to-point, collective, halo-exchange and BLACS workers on
#            shared memory and on libfabric's tcp provider, the routed
#            transport (two ranks per host name), and bad arguments.
# A job passes when it exits 0 with no sanitizer report (the first report
# ends the process with status 66; any "Sanitizer" or "runtime error" line
# in the output fails the job too).  Prints one line per job and "N passed,
# M failed"; exit status non-zero on any failure.
set -u
mode=${1:-}
case $mode in
    thread) flags="-fsanitize=thread" ;;
    address) flags="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer" ;;
    *) echo "usage: $0 thread|address" >&2; exit 2 ;;
esac
top=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/fmpl-san.XXXXXX") || exit 1
[ -n "${SAN_KEEP:-}" ] || trap 'rm -rf "$work"' EXIT
cp -r "$top/src" "$top/include" "$top/tools" "$top/test" "$top/blacs" "$top/Makefile" \
    "$top/fmpl.pc.in" "$top/fmpl-blacs.pc.in" "$work/" || exit 1
rm -rf "$work/test/logs"
if [ "$mode" = thread ]; then
    progs="pingpong random cancel spill progress coll_ops comm_matrix"
else
    progs="pingpong random cancel spill truncate badargs selfsend sync early coll_ops
           coll_comm coll_args coll_halo comm_matrix blacs_p2p blacs_coll blacs_grid"
fi
targets="lib/libfmpl.a bin/fmplrun"
for p in $progs; do targets="$targets test/progs/$p"; done
echo "sanitizer_test $mode: building a copy with $flags"
# shellcheck disable=SC2086 # the list of targets
if ! make -C "$work" -s -j2 CFLAGS="-O1 -g $flags" FFLAGS="-O1 -g $flags" \
        LDFLAGS="$flags" $targets > "$work/build.log" 2>&1; then
    sed 's/^/    /' "$work/build.log" | tail -30
    echo "sanitizer_test $mode: FAIL (the build)"
    exit 1
fi
export TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1"
# leaks too (LeakSanitizer reports at exit); a report is fatal
export ASAN_OPTIONS="halt_on_error=1 exitcode=66 detect_leaks=1 abort_on_error=0"
export UBSAN_OPTIONS="halt_on_error=1 exitcode=66 print_stacktrace=1"
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
    if [ $st = 0 ] && ! grep -Eq "Sanitizer|runtime error:" "$work/out"; then
        echo "PASS $name"
        pass=$((pass + 1))
    else
        echo "FAIL $name: exit status $st"
        grep -E -A 30 "(WARNING|ERROR): [A-Za-z]*Sanitizer|runtime error:" "$work/out" |
            head -40 | sed 's/^/  | /'
        tail -5 "$work/out" | sed 's/^/  | /'
        fail=$((fail + 1))
    fi
}

HAVE_OFI=$(pkg-config --libs libfabric 2>/dev/null)
OFI="FMPL_TRANSPORT=ofi FI_PROVIDER=tcp"
PT=FMPL_PROGRESS_THREAD=1
if [ "$mode" = thread ]; then
    job "shm pingpong, progress thread" 2 $PT -- pingpong -m 256K
    job "shm random, progress thread" 3 $PT -- random -s 7 -R 3
    job "shm cancel, progress thread" 3 $PT -- cancel
    job "shm spill, progress thread" 2 $PT -- spill
    job "shm progress" 2 $PT -- progress
    job "shm coll_ops, progress thread" 3 $PT -- coll_ops -M 64K
    job "shm comm_matrix, progress thread" 2 $PT -- comm_matrix
    if [ -n "$HAVE_OFI" ]; then
        job "ofi pingpong" 2 $OFI -- pingpong -m 256K
        job "ofi random, progress thread" 3 $OFI $PT -- random -s 7 -R 3
        job "ofi cancel" 3 $OFI -- cancel
    fi
else
    # shared memory: every point-to-point worker, the collectives, the
    # halo exchange, matrices, the BLACS
    job "shm pingpong" 2 -- pingpong -m 1M
    job "shm pingpong, no CMA" 2 FMPL_SHM_CMA=0 -- pingpong -m 256K
    job "shm random" 3 -- random -s 7 -R 3
    job "shm cancel" 3 -- cancel
    job "shm spill" 2 -- spill
    job "shm truncate" 2 -- truncate
    job "shm badargs" 2 -- badargs
    job "shm selfsend" 2 -- selfsend -m 256K
    job "shm sync" 2 -- sync -m 256K -r 1
    job "shm early" 2 -- early
    job "shm coll_ops" 3 -- coll_ops -M 64K
    job "shm coll_comm" 4 -- coll_comm -F 20
    job "shm coll_args" 2 -- coll_args
    job "shm coll_halo 3-D" 4 -- coll_halo -g 2x2x1 -m
    job "shm coll_halo 2-D" 2 -- coll_halo -g 2x1 -m -w 2 -e 24
    job "shm comm_matrix" 2 -- comm_matrix
    job "shm blacs_p2p" 2 -- blacs_p2p
    job "shm blacs_coll" 4 -- blacs_coll
    job "shm blacs_grid" 4 -- blacs_grid
    # routed: two ranks per host name (shm within, libfabric across)
    if [ -n "$HAVE_OFI" ]; then
        job "ofi pingpong" 2 $OFI -- pingpong -m 1M
        job "ofi random" 3 $OFI -- random -s 7 -R 3
        job "ofi cancel" 3 $OFI -- cancel
        job "ofi coll_ops" 3 $OFI -- coll_ops -M 64K
        job "ofi coll_halo" 4 $OFI -- coll_halo -g 2x2x1 -m
        job "ofi blacs_coll" 4 $OFI -- blacs_coll
        RT="FMPL_TEST_RANKS_PER_HOST=2 FI_PROVIDER=tcp"
        job "routed random" 4 $RT -- random -s 7 -R 3
        job "routed coll_ops" 4 $RT -- coll_ops -M 64K
    fi
fi
echo "sanitizer_test $mode: $pass passed, $fail failed"
[ $fail = 0 ]
