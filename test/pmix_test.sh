#!/bin/sh
# pmix_test.sh - run the PMIx bootstrap tests under Open MPI's mpirun.
#
#   test/pmix_test.sh [BOOT_PMIX_TEST [BOOT_PMIX_MPI]]
#
# Builds nothing: give it the built programs (test/progs/boot_pmix_test.c,
# and test/progs/boot_pmix_mpi.c built with mpicc; see their headers).
# Without arguments (as test/run_tests.sh calls it) it takes
# test/progs/boot_pmix_test and test/progs/boot_pmix_mpi next to itself;
# the MPI runs are skipped when that one was built without mpicc.
# Prints one PASS/FAIL/SKIP line per run with its wall time, the output of
# failed runs, and finally "N passed, M failed"; exits 1 if anything failed.
#
# Environment:
#   MPIRUN                 launcher (default mpirun)
#   PMIX_TEST_TIME_LIMIT   seconds a run may take before it counts as failed
#                          (default 10; runs take 0.1-2.5 s on 2 cores)
#   PMIX_TEST_KILL_AFTER   seconds before a hung run is killed (default 30)

# Command prefixes ($MPIRUN $MPIFLAGS, $NOLAUNCH, $opts) are lists of words
# on purpose.
# shellcheck disable=SC2086

set -u

if [ $# -gt 2 ]; then
    echo "usage: $0 [BOOT_PMIX_TEST [BOOT_PMIX_MPI]]" >&2
    exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
if [ $# -ge 1 ]; then
    T=$1
    M=${2:-}
else
    T=$here/progs/boot_pmix_test
    M=$here/progs/boot_pmix_mpi
    [ -x "$M" ] || M=""
fi
if [ ! -x "$T" ]; then
    echo "$0: $T is not built" >&2
    echo "0 passed, 1 failed"
    exit 1
fi
MPIRUN=${MPIRUN:-mpirun}
LIMIT=${PMIX_TEST_TIME_LIMIT:-10}
KILL=${PMIX_TEST_KILL_AFTER:-30}

pass=0
fail=0
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pmix_test.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

# mpirun refuses to run as root without this; --oversubscribe lets -n 4
# run on a 2-core machine.
MPIFLAGS="--oversubscribe"
[ "$(id -u)" = 0 ] && MPIFLAGS="--allow-run-as-root $MPIFLAGS"

# A run "from the shell": no launcher variables, even if this script itself
# was started by one.
NOLAUNCH="env"
for v in $(env | sed -n 's/^\(PMIX_[A-Za-z0-9_]*\)=.*/\1/p; s/^\(OMPI_[A-Za-z0-9_]*\)=.*/\1/p'); do
    NOLAUNCH="$NOLAUNCH -u $v"
done

now_ms() { date +%s%N | cut -c1-13; }

# run NAME EXPECTED_STATUS STDERR_RULE COMMAND...
#   STDERR_RULE: "any", "empty", or a fixed string stderr must contain.
run() {
    name=$1 want=$2 errrule=$3
    shift 3
    t0=$(now_ms)
    timeout -k 2 "$KILL" "$@" >"$tmp/out" 2>"$tmp/err"
    st=$?
    ms=$(( $(now_ms) - t0 ))
    secs=$(printf '%d.%03d' $((ms / 1000)) $((ms % 1000)))
    why=""
    if [ "$st" = 77 ] && [ "$want" = 0 ]; then
        echo "SKIP $name: $(head -n 1 "$tmp/out")"
        return
    fi
    if [ "$st" = 124 ] || [ "$st" = 137 ]; then
        why="hung (killed after ${KILL} s)"
    elif [ "$st" != "$want" ]; then
        why="exit status $st, expected $want"
    elif [ "$ms" -gt $((LIMIT * 1000)) ]; then
        why="took $secs s (limit $LIMIT s)"
    elif [ "$errrule" = empty ] && [ -s "$tmp/err" ]; then
        why="printed on stderr"
    elif [ "$errrule" != any ] && [ "$errrule" != empty ] &&
         ! grep -qF -- "$errrule" "$tmp/err"; then
        why="stderr lacks \"$errrule\""
    fi
    if [ -z "$why" ]; then
        pass=$((pass + 1))
        echo "PASS $name ($secs s)"
    else
        fail=$((fail + 1))
        echo "FAIL $name ($secs s): $why"
        echo "  command: $*"
        sed 's/^/  out: /' "$tmp/out"
        sed 's/^/  err: /' "$tmp/err"
    fi
}

# Without a launcher the back-end must decline at once and silently.
run "no launcher: FMPL_ERR_UNSUPPORTED, silent" 0 empty \
    $NOLAUNCH "$T" --expect-unsupported

# Launcher variables left over but no server: fail fast with our message
# (libpmix may add a line of its own), never hang.
run "stale PMIX_NAMESPACE/PMIX_RANK: fails fast" 1 "fmpl: PMIx_Init failed" \
    $NOLAUNCH PMIX_NAMESPACE=fmpl-test-no-server PMIX_RANK=0 "$T"

if ! command -v "$MPIRUN" >/dev/null 2>&1; then
    echo "SKIP every mpirun run: $MPIRUN not found"
else
    for n in 1 2 4; do
        run "mpirun -n $n boot_pmix_test" 0 any $MPIRUN $MPIFLAGS -n $n "$T"
    done
    # The launcher must end the whole job, with the aborting rank's code;
    # the other ranks wait in a fence meanwhile (the case that crashes
    # Open MPI 4.1's mpirun when PMIx_Abort is used, see boot_pmix.c).
    for n in 2 4; do
        run "mpirun -n $n boot_pmix_test --abort" 3 any $MPIRUN $MPIFLAGS -n $n "$T" --abort
        run "mpirun -n $n boot_pmix_test --die" 5 any $MPIRUN $MPIFLAGS -n $n "$T" --die
    done

    # A rank that stops (SIGSTOP: alive and silent) before the last fence:
    # the others' fmpl_finalize gives up after FMPL_PEER_TIMEOUT (PMIx's
    # fence timeout) instead of waiting for ever, and mpirun ends the job
    # with their exit code.
    F=$here/progs/fault
    if [ -x "$F" ]; then
        run "mpirun -n 3, a rank stopped before the last fence: FMPL_PEER_TIMEOUT" 3 \
            "PMIx_Fence waited 2 s (FMPL_PEER_TIMEOUT)" \
            $MPIRUN $MPIFLAGS -x FMPL_PEER_TIMEOUT=2 -n 3 "$F" -a finalize -f stop -t 50
    fi

    if [ -n "$M" ]; then
        for opts in "" "--boot-first" "--mpi-finalize-first" "--boot-first --mpi-finalize-first"; do
            for n in 1 2 4; do
                run "mpirun -n $n boot_pmix_mpi $opts" 0 any \
                    $MPIRUN $MPIFLAGS -n $n "$M" $opts
            done
        done
    fi
fi

if [ -n "$M" ]; then
    # An Open MPI singleton (MPI_Init without mpirun) starts its own PMIx
    # server and exports PMIX_NAMESPACE/PMIX_RANK; the boot joins it.
    run "MPI singleton, boot after MPI_Init" 0 any $NOLAUNCH "$M"
fi

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
