#!/bin/sh
# himeno_test.sh - examples/himeno must give the same gosa on 1 process and
# on 2, 3, 4, 6 and 8 processes (several process grids, uneven splits, p in
# malloc'ed and in fmpl_alloc_mem memory, the exchange overlapped with the
# inner sweep: -o), and every run must exit with 0.
#
#   test/himeno_test.sh            from any directory, after `make`
#
# The grid, 35 x 27 x 20, divides evenly by none of the process grids used
# (33 x 25 updated points in i x j), so ranks own different numbers of
# planes, and every run exercises the physical boundaries (nbr = -1).
# Himeno's b coefficients are 0, so gosa cannot see the corner shadows
# (the diagonal terms): -c makes each run first check one halo exchange of
# a known pattern, corners included, and exit with 1 if a shadow is wrong.
# Prints one line per run and "himeno_test: PASS" or "himeno_test: FAIL
# (...)"; the exit status is non-zero on any failure.  Takes a few seconds.
set -u

top=$(cd "$(dirname "$0")/.." && pwd)
run="$top/bin/fmplrun"
prog="$top/examples/himeno"
args="-x 35 -y 27 -z 20 -n 20 -c"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/himeno_test.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT

for f in "$run" "$prog"; do
    if [ ! -x "$f" ]; then
        echo "himeno_test: FAIL ($f is missing: run make first)"
        exit 1
    fi
done

# himeno NAME NPROCS [EXTRA ARGS...]: run it (killed after 60 s), print
# its gosa and leave it in $tmp/NAME.gosa.  Fails (status 1, output shown)
# on a non-zero exit status or a missing gosa line.
himeno() {
    name=$1 np=$2
    shift 2
    # shellcheck disable=SC2086  # $args is a list of words
    "$run" -n "$np" -t 60 "$prog" $args "$@" > "$tmp/$name.out" 2>&1
    rc=$?
    gosa=$(awk '$1 == "gosa" { print $2 }' "$tmp/$name.out")
    halo=$(awk '$1 == "halo" { $1 = ""; print }' "$tmp/$name.out")
    if [ $rc -ne 0 ] || [ -z "$gosa" ]; then
        echo "FAIL $name: fmplrun -n $np examples/himeno $args${1:+ $*}: exit status $rc," \
             "gosa '$gosa'; output:"
        sed 's/^/    /' "$tmp/$name.out"
        return 1
    fi
    printf '%-10s -n %s %-6s gosa %-24s halo%s\n' "$name" "$np" "$*" "$gosa" "$halo"
    echo "$gosa" > "$tmp/$name.gosa"
}

if ! himeno serial 1; then
    echo "himeno_test: FAIL (the 1-process reference run failed)"
    exit 1
fi
ref=$(cat "$tmp/serial.gosa")

nfail=0
while read -r name np extra; do
    [ -n "$name" ] || continue
    # shellcheck disable=SC2086
    if ! himeno "$name" "$np" $extra; then
        nfail=$((nfail + 1))
        continue
    fi
    got=$(cat "$tmp/$name.gosa")
    # Every point is computed with the same float operations whatever the
    # decomposition, so p is bitwise the same; only gosa's sum differs: each
    # rank sums its own points in double, and fmpl_allreduce adds those
    # partial sums in an order that depends on the process count.  Summing
    # some 10^4 positive terms in another order moves the result by a few
    # units in the last place (~1e-15 relative); 1e-12 leaves room for that
    # and for nothing else (a wrong or stale halo changes gosa at ~1e-3).
    if ! awk -v a="$ref" -v b="$got" 'BEGIN {
            d = a - b; if (d < 0) d = -d
            m = a < 0 ? -a : a
            exit !(d <= 1e-12 * m) }'; then
        echo "FAIL $name: gosa $got differs from the 1-process gosa $ref" \
             "by more than 1e-12 relative"
        nfail=$((nfail + 1))
    fi
done <<END_OF_CASES
np2       2
np3       3
np4       4
np4_1x4   4 -p 1
np4_4x1   4 -p 4
np6       6
np8       8
np2_alloc 2 -a
np4_alloc 4 -a
np1_overlap 1 -o
np4_overlap 4 -o
np6_overlap 6 -o -p 3
np4_1x4_overlap 4 -p 1 -o
END_OF_CASES

if [ $nfail -ne 0 ]; then
    echo "himeno_test: FAIL ($nfail multi-process runs failed or disagree with" \
         "the 1-process gosa $ref)"
    exit 1
fi
echo "himeno_test: PASS (every multi-process gosa matches the 1-process gosa $ref)"
exit 0
