#!/bin/sh
# coverage.sh - line and branch coverage per folder, from the gcov data a
# run of the tests left in build/ (what `make coverage` prints).
#
#   test/coverage.sh [-f FILES.csv]
#     -f  also keep gcovr's per-file table (CSV) there
#
# The tree must have been built with --coverage (make coverage does) and
# the tests run since.  Folders are those of the library (src/...), the
# BLACS (blacs/) and fmplrun (tools/); a line or branch no test reached
# is what to look at next, above all in error paths (gcovr --txt lists
# them file by file).  Needs gcovr (Debian's gcovr; make coverage
# installs it).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
files=""
[ "${1:-}" = -f ] && files=${2:-}
if ! command -v gcovr > /dev/null 2>&1; then
    echo "coverage: gcovr is not installed (apt-get install gcovr; make coverage does)"
    exit 1
fi
if ! find "$top/build" -name '*.gcda' 2>/dev/null | grep -q .; then
    echo "coverage: no gcov data under build/: build with --coverage (make coverage)"
    exit 1
fi
csv=$(mktemp "${TMPDIR:-/tmp}/fmpl-cov.XXXXXX") || exit 1
trap 'rm -f "$csv"' EXIT
# shared objects and forked ranks write the same .gcda files: gcov merges;
# the library's are in build/, fmplrun's in bin/
(cd "$top" && gcovr -r . --filter 'src/' --filter 'blacs/' --filter 'tools/' \
    --exclude-unreachable-branches --gcov-ignore-parse-errors --csv "$csv" build bin) ||
    exit 1
[ -n "$files" ] && cp "$csv" "$files"
# filename,line_total,line_covered,line_percent,branch_total,branch_covered,...
awk -F, 'NR > 1 {
        d = $1; sub(/\/[^\/]*$/, "", d)
        lt[d] += $2; lc[d] += $3; bt[d] += $5; bc[d] += $6
        LT += $2; LC += $3; BT += $5; BC += $6
    }
    function pct(c, t) { return t ? sprintf("%5.1f%%", 100 * c / t) : "    -" }
    END {
        printf "%-26s %13s %7s %13s %7s\n", "folder", "lines", "", "branches", ""
        n = 0
        for (d in lt) dirs[++n] = d
        for (i = 2; i <= n; i++)       # sort by name
            for (j = i; j > 1 && dirs[j - 1] > dirs[j]; j--) {
                t = dirs[j]; dirs[j] = dirs[j - 1]; dirs[j - 1] = t
            }
        for (i = 1; i <= n; i++) {
            d = dirs[i]
            printf "%-26s %6d/%-6d %7s %6d/%-6d %7s\n", d, lc[d], lt[d], pct(lc[d], lt[d]),
                   bc[d], bt[d], pct(bc[d], bt[d])
        }
        printf "%-26s %6d/%-6d %7s %6d/%-6d %7s\n", "all", LC, LT, pct(LC, LT), BC, BT,
               pct(BC, BT)
    }' "$csv"
