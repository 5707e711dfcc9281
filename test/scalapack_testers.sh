#!/bin/bash
# scalapack_testers.sh - run Debian's ScaLAPACK testers on fmpl-blacs.
#
#   test/scalapack_testers.sh [--mpi-blacs] [-n "4 2"] [-T SEC] [-o DIR] [TESTER...]
#   test/scalapack_testers.sh --parse FILE   (only check a saved tester output)
#
# Runs the testers of scalapack-mpi-test (default: xdlu xdllt xdqr xslu xzlu
# xcllt xdinv xdsep, from /usr/lib/x86_64-linux-gnu/scalapack/openmpi-tests)
# in a scratch directory (removed on exit) holding the input file each one
# reads from its current directory:
#   x?lu -> LU.dat   x?llt -> LLT.dat   x?qr -> QR.dat   x?inv -> INV.dat
#   x?sep -> SEP.dat                    (shipped in /usr/share/scalapack)
# under
#   bin/fmplrun -n N -t SEC env LD_PRELOAD=lib/libfmpl_blacs.so TESTER
# once per process count N (default "4 2"):
#   N = 4: the shipped input file (its grids need up to 4 processes);
#   other N: a copy whose grid lines, found by their trailing comments
#     ("number of process grids", "values of P", "values of Q"), become
#     2 / 1 N / N 1 (the grids 1xN and Nx1; for N = 2: 2 / 1 2 / 2 1).
#   every N: the LU.dat and LLT.dat copies (x?lu, x?llt) turn their "Test
#     Cond. Est. and Iter. Ref." line from T to F.  Debian's iterative
#     refinement hands the condition estimator an uninitialised stack value
#     (valgrind: "Conditional jump or move depends on uninitialised
#     value(s)" in pdlacon_/pslacon_, created by a stack allocation in
#     pdporfs_/psgerfs_), so the processes of a grid may disagree whether
#     to iterate again and wait for each other for ever.  Whether they do
#     depends on what the stack held, i.e. on luck and on the caller's own
#     stack use: under Debian's own MPI-BLACS (4 of 12 runs of --mpi-blacs
#     -n 2 xdllt), on fmpl-blacs 2 to 4 of 10 runs of xdllt -n 2, and 8 of
#     10 of xslu -n 2 with FMPL built at -O1 (0 of 10 at -O2; 0 of 10 with
#     the line F).  A test must not pass or hang by luck, so that path is
#     off everywhere; the factorizations and solves keep every check.
#     SEP.dat lists (P, Q, NB) triples per test instead ("number of
#     processor configurations", "values of P", "values of Q", "values of
#     NB"): the triples with P*Q > N are dropped (a test left with none
#     gets 1 x N and its first NB) and "maximum number of processes" is N.
#
# Options:
#   --mpi-blacs   run under `mpirun -np N` without the preload (Debian's
#                 MPI-BLACS: to compare, and to validate the parser)
#   -n "N..."     process counts (default "4 2")
#   -T SEC        time limit per run (default 120; each takes 0.1-8 s)
#   -o DIR        keep every run's output in DIR (TESTER.N.MODE.out/.err)
#   --parse FILE  check FILE as a tester's standard output and exit
#
# The testers exit 0 even when tests fail, so a run passes only when
#   - its exit status is 0 (no crash, abort or time limit) and
#   - its standard output (device 6 in every shipped .dat) has
#       "END OF TESTS.",
#       "Finished N tests, with the following results:" with N > 0,
#       "P tests completed and passed residual checks." with P > 0,
#       "F tests completed and failed residual checks." (LU, LLT, QR, INV)
#         or "F tests completed and failed." (SEP) with F = 0,
#       "K tests completed without checking." (SEP) with K = 0 if present,
#     and no line that reports a failure: a result column "FAILED" (SEP:
#     "FAILED" or "FAIL <test>"), a residual line starting "||" and ending
#     in its value (printed only for a failed check, e.g.
#     "||Ax-b||/(||x||*||A||*eps*N)   0.0874909"), "failed" outside the
#     summary (and xdsep's header), "ILLEGAL", "Illegal", "Bad ...
#     parameters", "Unable to perform", "ERROR".
#   Skipped tests ("tests skipped because of illegal input values", the
#   BYPASS rows of xdqr's TZ tests, "tests skipped for lack of memory") are
#   allowed.
# Prints one line per run; exit status 0 when all passed, 1 otherwise, 2
# for a usage error.  FMPL_TOP overrides the repository root.
set -u

TOP=${FMPL_TOP:-$(cd "$(dirname "$0")/.." && pwd)}
TESTER_DIR=${SCALAPACK_TESTER_DIR:-/usr/lib/x86_64-linux-gnu/scalapack/openmpi-tests}
DAT_DIR=${SCALAPACK_DAT_DIR:-/usr/share/scalapack}
PRELOAD=$TOP/lib/libfmpl_blacs.so
FMPLRUN=$TOP/bin/fmplrun
DEFAULT_TESTERS="xdlu xdllt xdqr xslu xzlu xcllt xdinv xdsep"

usage() {
    sed -n '2,/^set -u/p' "$0" | sed -e '/^set -u/d' -e 's/^# \{0,1\}//'
    exit "${1:-2}"
}

mode=fmpl
counts="4 2"
limit=120
keep=""
parse_only=""
testers=""
while [ $# -gt 0 ]; do
    case "$1" in
        --mpi-blacs) mode=mpi; shift ;;
        -n) [ $# -ge 2 ] || usage; counts=$2; shift 2 ;;
        -T) [ $# -ge 2 ] || usage; limit=$2; shift 2 ;;
        -o) [ $# -ge 2 ] || usage; keep=$2; shift 2 ;;
        --parse) [ $# -ge 2 ] || usage; parse_only=$2; shift 2 ;;
        -h|--help) usage 0 ;;
        -*) usage ;;
        *) testers="$testers $1"; shift ;;
    esac
done
[ -n "$testers" ] || testers=$DEFAULT_TESTERS
for n in $counts; do
    case "$n" in ''|*[!0-9]*|0) usage ;; esac
done

# check_output FILE: 0 if FILE is the output of a passing tester run;
# prints the reasons otherwise.  Sets RESULT_SUMMARY.
RESULT_SUMMARY=""
check_output() {
    local out rc
    out=$(awk '
    # line-level problems are kept, the summary-level ones printed first
    function bad(msg) { if (nbad < 10) lines[nbad + 0] = msg; nbad++ }
    function badsum(msg) { print "  " msg; nsum++ }
    function num(s) { sub(/^ */, "", s); sub(/ .*/, "", s); return s }
    { sub(/\r$/, "") }
    /^ *Finished +[0-9]+ tests, with the following results:/ {
        s = $0; sub(/^ *Finished */, "", s); finished = num(s); next
    }
    /^ *[0-9]+ tests completed and passed residual checks\./ { passed = num($0); next }
    /^ *[0-9]+ tests completed and failed residual checks\./ { failed = num($0); nfail++; next }
    /^ *[0-9]+ tests completed and failed\./                  { failed = num($0); nfail++; next }
    /^ *[0-9]+ tests completed without checking\./            { nocheck = num($0); next }
    /^ *[0-9]+ tests skipped /                                { skipped += num($0); next }
    /^ *END OF TESTS\./ { ended = 1; next }
    / FAILED( |$)/ || / FAIL [A-Z]/ { bad("failed test: " $0); next }
    # a residual with its value: printed only for a failed check (the
    # headers explaining the residuals end in ")" or "and/or")
    /^ *\|\|.*[0-9] *$/ { bad("residual check reported: " $0); next }
    # the header of xdsep explaining its RESULT column
    /indication of which eigen request test failed/ { next }
    /[Ff]ailed/ { bad("failure: " $0); next }
    /ILLEGAL|Illegal|Unable to perform|ERROR/ { bad("error: " $0); next }
    /^ *Bad .* parameters/ { bad("error: " $0); next }
    END {
        if (finished == "") badsum("missing: Finished N tests, with the following results:")
        else if (finished + 0 == 0) badsum("no test run (Finished 0 tests)")
        if (passed == "") badsum("missing: N tests completed and passed residual checks.")
        else if (passed + 0 == 0) badsum("no test passed (0 tests completed and passed residual checks)")
        if (nfail == 0) badsum("missing: N tests completed and failed [residual checks].")
        else if (failed + 0 != 0) badsum(failed " tests completed and failed")
        if (nocheck != "" && nocheck + 0 != 0) badsum(nocheck " tests completed without checking")
        if (!ended) badsum("missing: END OF TESTS.")
        for (i = 0; i < nbad && i < 10; i++) print "  " lines[i]
        if (nbad > 10) print "  ... and " nbad - 10 " more lines reporting failures"
        printf "SUMMARY %s tests, %s passed, %s failed, %d skipped\n", \
            finished == "" ? "?" : finished, passed == "" ? "?" : passed, \
            failed == "" ? "?" : failed, skipped
        exit nbad + nsum > 0
    }' "$1")
    rc=$?
    RESULT_SUMMARY=$(printf '%s\n' "$out" | sed -n 's/^SUMMARY //p')
    printf '%s\n' "$out" | grep -v '^SUMMARY '
    return $rc
}

if [ -n "$parse_only" ]; then
    if check_output "$parse_only"; then
        echo "PASS $parse_only: $RESULT_SUMMARY"
        exit 0
    fi
    echo "FAIL $parse_only: $RESULT_SUMMARY"
    exit 1
fi

# dat_of TESTER: the input file it reads from its current directory
dat_of() {
    case "$1" in
        x?lu) echo LU.dat ;;
        x?llt) echo LLT.dat ;;
        x?qr) echo QR.dat ;;
        x?inv) echo INV.dat ;;
        x?sep) echo SEP.dat ;;
        *) return 1 ;;
    esac
}

# grids_for FILE N > NEWFILE: the grid lines of an LU/LLT/QR/INV input file
# rewritten for N processes (grids 1xN and Nx1).  Fails unless each of the
# three lines is found exactly once.
grids_for() {
    awk -v n="$2" '
    function put(value, pat,    l) {
        l = tolower($0)
        if (!match(l, pat)) return 0
        print value "\t\t" substr($0, RSTART)
        return 1
    }
    {
        l = tolower($0)
        if (l ~ /number of process grids/) { c++; put(n == 1 ? "1" : "2", "number of process grids"); next }
        if (l ~ /values of p([^a-z]|$)/)   { p++; put(n == 1 ? "1" : "1 " n, "values of p"); next }
        if (l ~ /values of q([^a-z]|$)/)   { q++; put(n == 1 ? "1" : n " 1", "values of q"); next }
        print
    }
    END {
        if (c != 1 || p != 1 || q != 1) {
            printf "grid lines found: %d count, %d P, %d Q (want 1 each)\n", c, p, q > "/dev/stderr"
            exit 1
        }
    }' "$1"
}

# cond_off: an LU/LLT input file on stdin without the condition estimation
# and iterative refinement tests (see the top); fails unless the line is
# found exactly once.
cond_off() {
    awk '
    tolower($0) ~ /test cond\. est\. and iter\. ref\./ { c++; sub(/^[ \t]*[Tt]/, "F") }
    { print }
    END { if (c != 1) { printf "condition-estimation lines found: %d (want 1)\n", c > "/dev/stderr"; exit 1 } }'
}

# sep_for FILE N > NEWFILE: SEP.dat for N processes: per test, keep the
# (P, Q, NB) triples with P*Q <= N (none left: 1 x N with the first NB).
sep_for() {
    awk -v n="$2" '
    function lead(line, k,    t, i, out) {
        # the first k integers of line, blank-separated
        split(line, t, /[ \t]+/); out = ""
        for (i = 1; i <= length(t) && k > 0; i++)
            if (t[i] ~ /^[0-9]+$/) { out = out (out == "" ? "" : " ") t[i]; k-- }
        return out
    }
    function comment(line, pat,    l) {
        l = tolower(line)
        return match(l, pat) ? substr(line, RSTART) : ""
    }
    {
        l = tolower($0)
        if (l ~ /maximum number of processes/) {
            print n "\t\t" comment($0, "maximum number of processes"); maxp++; next
        }
        if (l !~ /number of processor configurations/) { print; next }
        cfgline = $0; nc = lead($0, 1) + 0
        if ((getline pl) <= 0 || (getline ql) <= 0 || (getline bl) <= 0) { err = "truncated"; exit 1 }
        if (tolower(pl) !~ /values of p/ || tolower(ql) !~ /values of q/ || tolower(bl) !~ /values of nb/) {
            err = "P/Q/NB lines not after a processor configuration count"; exit 1
        }
        split(lead(pl, nc), P, " "); split(lead(ql, nc), Q, " "); split(lead(bl, nc), B, " ")
        kp = kq = kb = ""; k = 0
        for (i = 1; i <= nc; i++)
            if (P[i] * Q[i] <= n) {
                kp = kp (k ? " " : "") P[i]; kq = kq (k ? " " : "") Q[i]; kb = kb (k ? " " : "") B[i]; k++
            }
        if (k == 0) { kp = 1; kq = n; kb = B[1]; k = 1 }
        print k "\t\t\t\t" comment(cfgline, "number of processor configurations")
        print kp "\t\t\t\t" comment(pl, "values of p")
        print kq "\t\t\t\t" comment(ql, "values of q")
        print kb "\t\t\t\t" comment(bl, "values of nb")
        ntests++
    }
    END {
        if (err != "") { print "SEP.dat: " err > "/dev/stderr"; exit 1 }
        if (maxp != 1 || ntests == 0) {
            printf "SEP.dat: %d maximum-processes lines, %d configuration blocks\n", maxp, ntests > "/dev/stderr"
            exit 1
        }
    }' "$1"
}

if [ "$mode" = fmpl ]; then
    for f in "$PRELOAD" "$FMPLRUN"; do
        if [ ! -e "$f" ]; then
            echo "FAIL: $f is not built"
            exit 1
        fi
    done
    label=fmpl-blacs
else
    if ! command -v mpirun > /dev/null 2>&1; then
        echo "FAIL: mpirun not found (openmpi-bin)"
        exit 1
    fi
    label=mpi-blacs
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/scalapack_testers.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 143' TERM INT HUP PIPE
[ -z "$keep" ] || mkdir -p "$keep" || exit 1

failed=0
total_t0=$(date +%s)
for x in $testers; do
    if ! dat=$(dat_of "$x"); then
        echo "FAIL $x: no known input file for this tester"
        failed=1
        continue
    fi
    if [ ! -x "$TESTER_DIR/$x" ] || [ ! -r "$DAT_DIR/$dat" ]; then
        echo "FAIL $x: $TESTER_DIR/$x or $DAT_DIR/$dat missing (scalapack-mpi-test, scalapack-test-common)"
        failed=1
        continue
    fi
    for n in $counts; do
        dir=$tmp/$x.$n
        mkdir -p "$dir" || exit 1
        ok=1
        if [ "$n" = 4 ]; then
            cp "$DAT_DIR/$dat" "$dir/grids" || ok=0
        elif [ "$dat" = SEP.dat ]; then
            sep_for "$DAT_DIR/$dat" "$n" > "$dir/grids" 2> "$dir/edit.err" || ok=0
        else
            grids_for "$DAT_DIR/$dat" "$n" > "$dir/grids" 2> "$dir/edit.err" || ok=0
        fi
        # no condition estimation and refinement (see the top)
        if [ $ok = 1 ] && { [ "$dat" = LU.dat ] || [ "$dat" = LLT.dat ]; }; then
            cond_off < "$dir/grids" > "$dir/$dat" 2> "$dir/edit.err" || ok=0
        elif [ $ok = 1 ]; then
            mv "$dir/grids" "$dir/$dat" || ok=0
        fi
        if [ $ok = 0 ]; then
            echo "FAIL $x -n $n ($label): cannot rewrite $dat for $n processes: $(cat "$dir/edit.err")"
            failed=1
            continue
        fi
        if [ "$mode" = fmpl ]; then
            cmd=(timeout -k 10 $((limit + 15)) "$FMPLRUN" -n "$n" -t "$limit"
                 env "LD_PRELOAD=$PRELOAD" "$TESTER_DIR/$x")
        else
            cmd=(timeout -k 10 "$limit" mpirun --allow-run-as-root --oversubscribe
                 --mca btl "self,vader" --mca mpi_yield_when_idle 1 -np "$n"
                 "$TESTER_DIR/$x")
        fi
        t0=$(date +%s%N)
        (cd "$dir" && "${cmd[@]}" > out 2> err < /dev/null)
        st=$?
        ms=$(( ($(date +%s%N) - t0) / 1000000 ))
        secs=$(printf '%d.%d' $((ms / 1000)) $((ms % 1000 / 100)))
        why=""
        case "$st" in
            0) ;;
            124|137) why="time limit of $limit s reached; " ;;
            *) why="exit status $st; " ;;
        esac
        check_output "$dir/out" > "$dir/problems" || why="${why}output check failed; "
        if [ -n "$keep" ]; then
            cp "$dir/out" "$keep/$x.$n.$label.out"
            cp "$dir/err" "$keep/$x.$n.$label.err"
        fi
        if [ -z "$why" ]; then
            echo "PASS $x -n $n ($label): $RESULT_SUMMARY, $secs s"
        else
            failed=1
            echo "FAIL $x -n $n ($label): ${why%; }; $RESULT_SUMMARY, $secs s"
            cat "$dir/problems"
            echo "  --- last lines of stdout:"
            tail -n 12 "$dir/out" | sed 's/^/  | /'
            echo "  --- last lines of stderr:"
            grep -v 'floating-point exceptions are signalling' "$dir/err" | tail -n 12 | sed 's/^/  | /'
        fi
    done
done
echo "total $(( $(date +%s) - total_t0 )) s"
exit "$failed"
