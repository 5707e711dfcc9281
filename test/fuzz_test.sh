#!/bin/sh
# fuzz_test.sh - the libFuzzer harnesses in test/fuzz/, each for a bounded
# time from its committed corpus.
#
#   test/fuzz_test.sh [NAME...]          from any directory
#
# Every harness test/fuzz/fuzz_NAME.c is built with clang's
# -fsanitize=fuzzer,address,undefined (Debian's clang and libclang-rt-14-dev)
# against the sources it tests, then run for FUZZ_SECONDS (default 30)
# starting from test/fuzz/corpus/NAME/ (copied: what the run finds is not
# written into the tree).  A crash, a sanitizer report, a leak or a
# timeout fails it; the input that did it is kept under test/logs/fuzz/
# and belongs in test/fuzz/corpus/NAME/ once fixed (the corpus is replayed
# first on every run, so it is the regression test).
#   mmsg    a peer's mailbox message (transport/mbox_msg.c: libfabric, verbs)
#   modex   another rank's modex entries in fmplrun's control memory
#           (core/boot_local.c)
# Prints one line per harness and "N passed, M failed".
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
secs=${FUZZ_SECONDS:-30}
CLANG=${CLANG:-clang}
if ! command -v "$CLANG" > /dev/null 2>&1; then
    echo "fuzz_test: FAIL: $CLANG is not installed (make deps installs clang, libclang-rt-14-dev)"
    exit 1
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/fmpl-fuzz.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
logs=$top/test/logs/fuzz
mkdir -p "$logs"
flags="-g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -std=gnu11"
flags="$flags -I$top/include -I$top/src -DFMPL_BUILD"
pass=0 fail=0

# sources each harness is built with, besides itself
srcs() {
    case $1 in
        mmsg) echo "$top/src/transport/mbox_msg.c" ;;
        *) echo "" ;;
    esac
}
# -max_len: the modex harness reads a whole rank's entries
maxlen() {
    case $1 in
        modex) echo 16700 ;;
        *) echo 4096 ;;
    esac
}

names="$*"
[ -n "$names" ] || names=$(cd "$top/test/fuzz" && ls fuzz_*.c | sed 's/^fuzz_//; s/\.c$//')
for n in $names; do
    src=$top/test/fuzz/fuzz_$n.c
    if [ ! -f "$src" ]; then
        echo "FAIL $n: no $src"; fail=$((fail + 1)); continue
    fi
    # shellcheck disable=SC2046,SC2086 # word lists
    if ! "$CLANG" $flags -o "$work/fuzz_$n" "$src" $(srcs "$n") > "$work/build.log" 2>&1; then
        echo "FAIL $n: the build"; sed 's/^/  | /' "$work/build.log" | tail -20
        fail=$((fail + 1)); continue
    fi
    mkdir -p "$work/corpus_$n"
    cp "$top/test/fuzz/corpus/$n/"* "$work/corpus_$n/" 2>/dev/null
    # -close_fd_mask=3: the code under test may log; the verdict is the status
    (cd "$work" && "./fuzz_$n" -max_total_time="$secs" -max_len="$(maxlen "$n")" \
        -timeout=10 -rss_limit_mb=2048 -close_fd_mask=3 -artifact_prefix="$logs/${n}-" \
        "corpus_$n" > "$work/out_$n" 2>&1)
    st=$?
    runs=$(sed -n 's/^Done \([0-9]*\) runs.*/\1/p' "$work/out_$n" | tail -n 1)
    if [ $st = 0 ] && [ -n "$runs" ]; then
        echo "PASS $n: $runs inputs in $secs s, corpus $(ls "$work/corpus_$n" | wc -l) inputs"
        pass=$((pass + 1))
    else
        echo "FAIL $n: exit status $st"
        grep -E "ERROR|SUMMARY|runtime error|Test unit written" "$work/out_$n" | head -10 |
            sed 's/^/  | /'
        fail=$((fail + 1))
    fi
done
echo "fuzz_test: $pass passed, $fail failed"
[ $fail = 0 ]
