#!/bin/sh
# blacs_exports.sh - does lib/libfmpl_blacs.so export exactly the BLACS?
#
#   test/blacs_exports.sh [LIB [REFLIB]]
#
# Compares the dynamic symbols LIB (default lib/libfmpl_blacs.so of this
# tree) defines with the BLACS names REFLIB (default Debian's
# /usr/lib/x86_64-linux-gnu/libscalapack-openmpi.so.2.2) exports: the C
# names Cblacs_*, C?{ge,tr}{sd,rv,bs,br}2d, C?g{sum,amx,amn}2d,
# Csys2blacs_handle, Cblacs2sys_handle, Cfree_blacs_system_handle,
# Cdcputime00, Cdwalltime00, Ck{send,recv,bs,br}id and their Fortran
# twins (lower case, no leading C, trailing underscore) - 156 names; not
# the REDIST p?gemr2d / p?trmr2d names, not the BI_* internals.
# Fails when one is missing or when LIB exports anything else (besides
# the linker's _init, _fini and friends).  Exit status 0 or 1; 2 when a
# library or nm is not there.
set -u

TOP=$(cd "$(dirname "$0")/.." && pwd)
LIB=${1:-$TOP/lib/libfmpl_blacs.so}
REF=${2:-/usr/lib/x86_64-linux-gnu/libscalapack-openmpi.so.2.2}

for f in "$LIB" "$REF"; do
    [ -r "$f" ] || { echo "blacs_exports: $f not found" >&2; exit 2; }
done
command -v nm >/dev/null || { echo "blacs_exports: nm not found" >&2; exit 2; }

tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT

# defined dynamic symbols, names only (version suffixes dropped)
defined() { nm -D --defined-only "$1" | awk 'NF >= 3 { sub(/@.*/, "", $3); print $3 }' | sort -u; }

BLACS_RE='^C?blacs_[a-z]+_?$|^C[isdcz](ge|tr)(sd|rv|bs|br)2d$|^[isdcz](ge|tr)(sd|rv|bs|br)2d_$'
BLACS_RE="$BLACS_RE"'|^C[isdcz]g(sum|amx|amn)2d$|^[isdcz]g(sum|amx|amn)2d_$'
BLACS_RE="$BLACS_RE"'|^(Csys2blacs_handle|sys2blacs_handle_|Cblacs2sys_handle|blacs2sys_handle_)$'
BLACS_RE="$BLACS_RE"'|^(Cfree_blacs_system_handle|free_blacs_system_handle_)$'
BLACS_RE="$BLACS_RE"'|^(Cdcputime00|dcputime00_|Cdwalltime00|dwalltime00_)$'
BLACS_RE="$BLACS_RE"'|^(Ck(send|recv|bs|br)id|k(send|recv|bs|br)id_)$'
# what every shared object may define besides its interface
LINKER_RE='^(_init|_fini|_edata|_end|__bss_start|_DYNAMIC|_GLOBAL_OFFSET_TABLE_)$'
# and what gcov's run-time adds to a --coverage build (make coverage)
LINKER_RE="$LINKER_RE"'|^__gcov_|^mangle_path$'

defined "$REF" | grep -E "$BLACS_RE" > "$tmp/want"
defined "$LIB" | grep -v -E "$LINKER_RE" > "$tmp/have"

nwant=$(wc -l < "$tmp/want")
comm -23 "$tmp/want" "$tmp/have" > "$tmp/missing"
comm -13 "$tmp/want" "$tmp/have" > "$tmp/extra"
nmiss=$(wc -l < "$tmp/missing")
nextra=$(wc -l < "$tmp/extra")

rc=0
if [ "$nwant" -ne 156 ]; then
    echo "blacs_exports: expected 156 BLACS names in $REF, found $nwant" >&2
    rc=1
fi
if [ "$nmiss" -gt 0 ]; then
    echo "blacs_exports: $nmiss BLACS name(s) missing from $LIB:" >&2
    sed 's/^/  /' "$tmp/missing" >&2
    rc=1
fi
if [ "$nextra" -gt 0 ]; then
    echo "blacs_exports: $LIB exports $nextra name(s) that are not BLACS:" >&2
    sed 's/^/  /' "$tmp/extra" >&2
    rc=1
fi
if [ $rc -eq 0 ]; then
    echo "blacs_exports: OK - $(basename "$LIB") exports exactly the $nwant BLACS names of $(basename "$REF")"
else
    echo "blacs_exports: FAILED" >&2
fi
exit $rc
