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
# Besides start-up, aborts and fences, a rank killed mid-job over
# libfabric (which cannot see a process die): under `mpirun
# --enable-recovery` the survivors must learn it from the server's process
# table, under test/progs/pmix_serve from its PMIx event, each within 5 s
# and naming the victim; with neither (FMPL_PMIX_POLL=0, pmix_serve -q)
# FMPL_PEER_TIMEOUT ends the waits.
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
# shellcheck source=test/fault_lib.sh
. "$here/fault_lib.sh"
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

# timed COMMAND...: run it (killed after $KILL s), output in $tmp/out and
# $tmp/err; sets st, ms, secs and why=""
timed() {
    t0=$(now_ms)
    timeout -k 2 "$KILL" "$@" >"$tmp/out" 2>"$tmp/err"
    st=$?
    ms=$(( $(now_ms) - t0 ))
    secs=$(printf '%d.%03d' $((ms / 1000)) $((ms % 1000)))
    why=""
}

# verdict COMMAND...: PASS or FAIL (with why, the command and its output)
# for the run just made: $name, $secs, $why, $tmp/out and $tmp/err
verdict() {
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

# run NAME EXPECTED_STATUS STDERR_RULE COMMAND...
#   STDERR_RULE: "any", "empty", or a fixed string stderr must contain.
run() {
    name=$1 want=$2 errrule=$3
    shift 3
    timed "$@"
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
    verdict "$@"
}

# death_run NAME HOW COMMAND...: test/progs/fault's rank 2 of 3 fails;
# ranks 0 and 1 must each report FMPL_ERR_PEER soon after and leave
# nothing behind.  HOW says who tells them:
#   event   the server's PMIx event (FMPL's message "the PMIx server
#           reports rank 2 ..."), within 5 s, naming rank 2 and nobody else
#   table   the server's process table ("... process table says rank 2"),
#           the same
#   timeout FMPL_PEER_TIMEOUT (3 s), within 10 s: a survivor's wait on one
#           that gave up first takes a timeout of its own, and may name it
death_run() {
    name=$1 how=$2
    shift 2
    lim=5
    [ "$how" = timeout ] && lim=10
    timed "$@"
    # (137 is also a launcher's status for a rank killed by SIGKILL)
    if [ "$st" = 124 ] || { [ "$st" = 137 ] && [ "$ms" -ge $((KILL * 1000)) ]; }; then
        why="hung (killed after ${KILL} s)"
    elif ! fault_survivors "$tmp/out" 2 "$lim"; then
        why=$fault_why
    fi
    case $how in
        event) said="the PMIx server reports rank 2 " ;;
        table) said="the PMIx server's process table says rank 2 " ;;
        *) said="(FMPL_PEER_TIMEOUT): giving up" ;;
    esac
    if [ -z "$why" ] && ! grep -qF "$said" "$tmp/err"; then
        why="stderr lacks \"$said\""
    elif [ -z "$why" ] && [ "$how" != timeout ] &&
         grep -Eq "peer rank [01] failed|for rank [01] \(" "$tmp/err"; then
        why="a survivor was named as failed"
    elif [ -z "$why" ] && [ "$how" = timeout ] && grep -q "the PMIx server" "$tmp/err"; then
        why="the PMIx server named the victim: its word was not to be had"
    elif [ -z "$why" ] && pgrep -f "$F -a" >/dev/null; then
        why="left behind: $(pgrep -f "$F -a" | tr '\n' ' ')"
    fi
    verdict "$@"
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

    # A rank dies mid-job and the job goes on (--enable-recovery): over
    # libfabric, which cannot see a process die, the survivors learn it
    # from the server's process table (Open MPI 4.1's events do not reach
    # clients with PMIx 4.2), not after FMPL_PEER_TIMEOUT (60 s).
    # FMPL_PMIX_POLL=0: no asking, the timeout (3 s) ends the waits.
    OFI="-x FMPL_TRANSPORT=ofi -x FI_PROVIDER=tcp"
    if [ -x "$F" ]; then
        for af in p2p:kill coll:kill halo:kill p2p:exit; do
            death_run "mpirun --enable-recovery -n 3 fault -a ${af%:*} -f ${af#*:}, ofi: the process table" \
                table $MPIRUN $MPIFLAGS --enable-recovery $OFI -x FMPL_PEER_TIMEOUT=60 -n 3 \
                "$F" -a "${af%:*}" -f "${af#*:}" -t 300
        done
        death_run "mpirun --enable-recovery -n 3 fault -a p2p -f kill, ofi, FMPL_PMIX_POLL=0: the timeout" \
            timeout $MPIRUN $MPIFLAGS --enable-recovery $OFI -x FMPL_PEER_TIMEOUT=3 \
            -x FMPL_PMIX_POLL=0 -n 3 "$F" -a p2p -f kill -t 300
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

# A server that tells of deaths by PMIx events, as PRRTE does
# (test/progs/pmix_serve): the survivors name the victim from the event,
# before FMPL_PEER_TIMEOUT (60 s); one that tells nothing (-q, and no
# process table): the timeout (3 s).
S=$here/progs/pmix_serve
F=$here/progs/fault
if [ -x "$S" ] && [ -x "$F" ]; then
    for af in p2p:kill coll:kill p2p:exit; do
        death_run "pmix_serve -n 3 fault -a ${af%:*} -f ${af#*:}, ofi: the PMIx event" event \
            $NOLAUNCH FMPL_TRANSPORT=ofi FI_PROVIDER=tcp FMPL_PEER_TIMEOUT=60 \
            "$S" -n 3 "$F" -a "${af%:*}" -f "${af#*:}" -t 300
    done
    death_run "pmix_serve -q -n 3 fault -a p2p -f kill, ofi: no event, the timeout" timeout \
        $NOLAUNCH FMPL_TRANSPORT=ofi FI_PROVIDER=tcp FMPL_PEER_TIMEOUT=3 \
        "$S" -q -n 3 "$F" -a p2p -f kill -t 300
else
    fail=$((fail + 1))
    echo "FAIL pmix_serve: $S or $F is not built"
fi

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
