#!/bin/bash
# blacs_debian.sh - run Debian's BLACS testers (xCbtest, xFbtest) on fmpl-blacs.
#
#   test/blacs_debian.sh [-t C|F] [--mpi-blacs] [-T SEC] [-o DIR]
#   test/blacs_debian.sh --parse FILE      (only check a saved tester report)
#
# The testers of scalapack-mpi-test (/usr/lib/x86_64-linux-gnu/scalapack/
# openmpi-tests/xCbtest: the C interface, xFbtest: the Fortran one) run
# under Open MPI's mpirun on 4 processes with lib/libfmpl_blacs.so in
# LD_PRELOAD, so every BLACS call goes to fmpl-blacs (FMPL bootstraps
# through PMIx beside the testers' own MPI).  Input: the shipped
# /usr/share/scalapack/BLACS/{bt,sdrv,bsbr,comb}.dat, every section on,
# copied into a scratch directory (removed on exit).
#
# Options:
#   -t C|F        run one tester only (default both)
#   --mpi-blacs   no preload: Debian's own MPI-BLACS (to compare, and to
#                 validate the parser)
#   -T SEC        time limit per tester (default 120; each takes 9-15 s)
#   -o DIR        keep each tester's stdout/stderr in DIR
#   --parse FILE  check FILE as a tester report and exit (no run)
#
# Where the report goes: bt.dat names unit 6, so the testers write to
# standard output (the file name blacstest.out is ignored for unit 6);
# a blacstest.out, if one appears, is checked as well.
#
# A tester passes when
#   - every "<PREC> <TEST> TESTS: N TESTS; P PASSED, S SKIPPED, F FAILED."
#     line has F = 0 and P > 0 ("... TESTS: PASSED ALL N TESTS." needs
#     N > 0), and every "... TESTS: BEGIN." has its result line;
#   - SDRV and BSBR appear for INTEGER, REAL, DOUBLE PRECISION, COMPLEX,
#     DOUBLE COMPLEX, and SUM/AMX/AMN for INTEGER, REAL, COMPLEX,
#     DOUBLE COMPLEX.  DOUBLE PRECISION SUM/AMX/AMN are checked when present
#     but not required: the reference tester (BLACS/TESTING/blacstest.f,
#     RUNTESTS) has no 'D' branch in its COMB loop, so they never run, with
#     MPI-BLACS either;
#   - AUXILIARY TESTS: BEGIN., PASSED for BLACS_PNUM/BLACS_PCOORD,
#     BLACS_GRIDMAP, both LOCALLY-BLOCKING SEND tests, BLACS_SET/BLACS_GET;
#     REPEATABLE SUM PASSED or SKIPPED; DONE BLACS_FREEBUFF, DONE BARRIER,
#     DONE BLACS_GRIDEXIT; the BLACS_ABORT announcement;
#   - no line with "FAILED " as a test verdict, no "ERROR" line before the
#     BLACS_ABORT announcement;
#   - no process of the tester survives its BLACS_ABORT (mpirun's exit
#     status is non-zero by design and not checked, except for the time
#     limit); survivors are killed and the tester fails.
# Prints one summary line per tester; exit status 0 when all passed, 1
# otherwise, 2 for a usage error.  FMPL_TOP overrides the repository root.
set -u

TOP=${FMPL_TOP:-$(cd "$(dirname "$0")/.." && pwd)}
TESTER_DIR=${BLACS_TESTER_DIR:-/usr/lib/x86_64-linux-gnu/scalapack/openmpi-tests}
DAT_DIR=${BLACS_DAT_DIR:-/usr/share/scalapack/BLACS}
PRELOAD=$TOP/lib/libfmpl_blacs.so
NPROCS=4

usage() {
    sed -n '2,/^set -u/p' "$0" | sed -e '/^set -u/d' -e 's/^# \{0,1\}//'
    exit "${1:-2}"
}

testers="C F"
mode=fmpl
limit=120
keep=""
parse_only=""
while [ $# -gt 0 ]; do
    case "$1" in
        -t) [ $# -ge 2 ] || usage
            case "$2" in C|c) testers=C ;; F|f) testers=F ;; *) usage ;; esac
            shift 2 ;;
        --mpi-blacs) mode=mpi; shift ;;
        -T) [ $# -ge 2 ] || usage; limit=$2; shift 2 ;;
        -o) [ $# -ge 2 ] || usage; keep=$2; shift 2 ;;
        --parse) [ $# -ge 2 ] || usage; parse_only=$2; shift 2 ;;
        -h|--help) usage 0 ;;
        *) usage ;;
    esac
done

# check_report FILE: 0 if FILE is a passing tester report; prints the
# reasons otherwise.  Sets REPORT_SUMMARY to "S sections, P passed, K skipped".
REPORT_SUMMARY=""
check_report() {
    local out rc
    out=$(awk '
    function bad(msg) { print "  " msg; nbad++ }
    { sub(/\r$/, "") }
    # the BLACS_ABORT announcement ends what must be clean
    /The final auxiliary test is for BLACS_ABORT/ { abort_seen = 1 }
    /^ *[A-Z][A-Z ]* (SDRV|BSBR|SUM|AMX|AMN) TESTS: BEGIN\./ {
        s = $0; sub(/^ */, "", s); sub(/ TESTS: BEGIN\..*/, "", s)
        begun[s] = NR; next
    }
    /^ *[A-Z][A-Z ]* (SDRV|BSBR|SUM|AMX|AMN) TESTS: *PASSED ALL/ {
        s = $0; sub(/^ */, "", s); sub(/ TESTS:.*/, "", s)
        t = $0; sub(/.*PASSED ALL */, "", t); sub(/ .*/, "", t)
        if (t !~ /^[0-9]+$/ || t + 0 == 0) bad("no test run: " $0)
        done[s] = 1; nsec++; npass += t; next
    }
    /^ *[A-Z][A-Z ]* (SDRV|BSBR|SUM|AMX|AMN) TESTS: *[0-9*]+ TESTS;/ {
        s = $0; sub(/^ */, "", s); sub(/ TESTS:.*/, "", s)
        line = $0
        p = line; sub(/ PASSED,.*/, "", p); sub(/.*[^0-9]/, "", p)
        k = line; sub(/ SKIPPED,.*/, "", k); sub(/.*[^0-9]/, "", k)
        f = line; sub(/ FAILED\..*/, "", f); sub(/.*[^0-9]/, "", f)
        if (p !~ /^[0-9]+$/ || k !~ /^[0-9]+$/ || f !~ /^[0-9]+$/)
            bad("unreadable result line: " line)
        else {
            if (f + 0 != 0) bad("failures: " line)
            if (p + 0 == 0) bad("nothing passed: " line)
        }
        done[s] = 1; nsec++; npass += p; nskip += k; next
    }
    /^ *AUXILIARY TESTS: BEGIN\./ { aux = 1; next }
    /^ *PASSED  / { s = $0; sub(/^ *PASSED  */, "", s); passed[s] = 1; next }
    /^ *SKIPPED / { s = $0; sub(/^ *SKIPPED */, "", s); skipped[s] = 1; next }
    /^ *DONE / { s = $0; sub(/^ *DONE */, "", s); sub(/ *$/, "", s); donec[s] = 1; next }
    /FAILED/ { bad("failure reported: " $0); next }
    /ERROR/ && !abort_seen { bad("error reported: " $0); next }
    END {
        split("INTEGER,REAL,DOUBLE PRECISION,COMPLEX,DOUBLE COMPLEX", prec, ",")
        for (i = 1; i <= 5; i++) {
            split("SDRV BSBR SUM AMX AMN", tst, " ")
            for (j = 1; j <= 5; j++) {
                s = prec[i] " " tst[j]
                # the reference tester never runs DOUBLE PRECISION COMB
                optional = (prec[i] == "DOUBLE PRECISION" && j >= 3)
                if (!(s in done) && !optional) bad("missing section: " s " TESTS")
            }
        }
        for (s in begun)
            if (!(s in done)) bad("section began but has no result (line " begun[s] "): " s)
        if (!aux) bad("missing: AUXILIARY TESTS: BEGIN.")
        n = split("BLACS_PNUM/BLACS_PCOORD TEST|BLACS_GRIDMAP TEST|" \
                  "LOCALLY-BLOCKING CONTIGUOUS SEND TEST|" \
                  "LOCALLY-BLOCKING NON-CONTIGUOUS SEND TEST|" \
                  "BLACS_SET/BLACS_GET TESTS", need, "|")
        for (i = 1; i <= n; i++)
            if (!(need[i] in passed)) bad("missing: PASSED  " need[i])
        if (!("REPEATABLE SUM TEST" in passed) && !("REPEATABLE SUM TEST" in skipped))
            bad("missing: PASSED or SKIPPED REPEATABLE SUM TEST")
        n = split("BLACS_FREEBUFF|BARRIER|BLACS_GRIDEXIT", need, "|")
        for (i = 1; i <= n; i++)
            if (!(need[i] in donec)) bad("missing: DONE " need[i])
        if (!abort_seen) bad("missing: the BLACS_ABORT announcement")
        printf "SUMMARY %d sections, %d passed, %d skipped\n", nsec, npass, nskip
        exit nbad > 0
    }' "$1")
    rc=$?
    REPORT_SUMMARY=$(printf '%s\n' "$out" | sed -n 's/^SUMMARY //p')
    printf '%s\n' "$out" | grep -v '^SUMMARY ' | head -n 40
    return $rc
}

if [ -n "$parse_only" ]; then
    if check_report "$parse_only"; then
        echo "PASS $parse_only: $REPORT_SUMMARY"
        exit 0
    fi
    echo "FAIL $parse_only: $REPORT_SUMMARY"
    exit 1
fi

if ! command -v mpirun > /dev/null 2>&1; then
    echo "FAIL: mpirun not found (openmpi-bin)"
    exit 1
fi
for f in bt sdrv bsbr comb; do
    if [ ! -r "$DAT_DIR/$f.dat" ]; then
        echo "FAIL: $DAT_DIR/$f.dat missing (scalapack-test-common)"
        exit 1
    fi
done
if [ "$mode" = fmpl ] && [ ! -f "$PRELOAD" ]; then
    echo "FAIL: $PRELOAD is not built"
    exit 1
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/blacs_debian.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 143' TERM INT HUP PIPE
[ -z "$keep" ] || mkdir -p "$keep" || exit 1

# PIDs of the live processes working in directory $1: the tester's ranks
# (and anything they started), only ours whatever else runs on the machine.
survivors() {
    find /proc/[0-9]*/cwd -maxdepth 0 -lname "$1" 2> /dev/null |
        sed -e 's|^/proc/||' -e 's|/cwd$||'
}

MPIRUN=(mpirun --allow-run-as-root --oversubscribe --mca btl "self,vader"
        --mca mpi_yield_when_idle 1 -np "$NPROCS")
if [ "$mode" = fmpl ]; then
    MPIRUN+=(-x "LD_PRELOAD=$PRELOAD"
             -x "LD_LIBRARY_PATH=$TOP/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
    label=fmpl-blacs
else
    label=mpi-blacs
fi

failed=0
for t in $testers; do
    name=x${t}btest
    prog=$TESTER_DIR/$name
    dir=$tmp/$name
    mkdir -p "$dir" || exit 1
    cp "$DAT_DIR"/bt.dat "$DAT_DIR"/sdrv.dat "$DAT_DIR"/bsbr.dat "$DAT_DIR"/comb.dat "$dir"/
    if [ ! -x "$prog" ]; then
        echo "FAIL $name ($label): $prog missing (scalapack-mpi-test)"
        failed=1
        continue
    fi
    t0=$(date +%s)
    (cd "$dir" && timeout -k 10 "$limit" "${MPIRUN[@]}" "$prog" > stdout 2> stderr)
    st=$?
    secs=$(( $(date +%s) - t0 ))
    why=""
    # BLACS_ABORT must have ended every process: give the launcher a moment
    left=""
    for _ in 1 2 3 4 5 6 7 8 9 10; do
        left=$(survivors "$dir")
        [ -z "$left" ] && break
        sleep 0.5
    done
    if [ -n "$left" ]; then
        why="processes left behind ($(ps -o pid=,comm= -p "$(echo "$left" | paste -sd,)" | paste -sd,), killed); "
        # shellcheck disable=SC2086
        kill -9 $left 2> /dev/null
    fi
    if [ "$st" = 124 ] || [ "$st" = 137 ]; then
        why="${why}time limit of $limit s reached; "
    fi
    report=$dir/stdout
    if [ -s "$dir/blacstest.out" ]; then
        cat "$dir/stdout" "$dir/blacstest.out" > "$dir/report"
        report=$dir/report
    fi
    check_report "$report" > "$dir/problems" || why="${why}report check failed; "
    if [ -n "$keep" ]; then
        cp "$dir/stdout" "$keep/$name.$label.stdout"
        cp "$dir/stderr" "$keep/$name.$label.stderr"
    fi
    if [ -z "$why" ]; then
        echo "PASS $name ($label): $REPORT_SUMMARY, mpirun status $st (BLACS_ABORT), $secs s"
    else
        failed=1
        echo "FAIL $name ($label): ${why%; }; $REPORT_SUMMARY, mpirun status $st, $secs s"
        cat "$dir/problems"
        echo "  --- last lines of stdout:"
        tail -n 15 "$dir/stdout" | sed 's/^/  | /'
        echo "  --- last lines of stderr:"
        tail -n 15 "$dir/stderr" | sed 's/^/  | /'
    fi
done
exit "$failed"
