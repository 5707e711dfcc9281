#!/bin/sh
# fuzz_test.sh - the libFuzzer harnesses in test/fuzz/, each for a bounded
# time from its committed corpus.
#
#   test/fuzz_test.sh [NAME...]          from any directory
#
# Every harness test/fuzz/fuzz_NAME.c is built with clang's
# -fsanitize=fuzzer,address,undefined (Debian's clang and libclang-rt-14-dev)
# against the sources it tests, then run for FUZZ_SECONDS (default 20; half
# that for the parsers of short strings, env, fmplrun, mmsg, modex, pmix,
# which reach all of their code in a few seconds),
# as many harnesses at a time as there are CPUs,
# starting from test/fuzz/corpus/NAME/ (copied: what the run finds is not
# written into the tree).  A crash, a sanitizer report, a leak or a
# timeout fails it; the input that did it is kept under test/logs/fuzz/
# and belongs in test/fuzz/corpus/NAME/ once fixed (the corpus is replayed
# first on every run, so it is the regression test).
#   blacs   the BLACS entry points' arguments (blacs/), in a 1 x 1 grid of a
#           one-rank job: a refused call's fmpl_abort comes back as a
#           longjmp (-Wl,--wrap=fmpl_abort), every array is exactly what
#           its arguments allow, a matrix sent to oneself arrives whole
#   env     FMPL's settings: the number parsers (base/parse.c) against an
#           oracle, the environment readers (base/env.c), the emulated
#           machines' settings (tcw's crossbar and model, PEACH2's and
#           InfiniBand's models)
#   fmplrun fmplrun's command line and FMPL_KILL_GRACE (tools/fmplrun/options.c)
#   pmix    what the PMIx server gives the bootstrap (base/boot_pmix.c):
#           namespace, rank, job size, every value and status; the
#           harness is the PMIx library
#   mmsg    a peer's mailbox message (transport/mbox_msg.c: libfabric, verbs)
#   modex   another rank's modex entries in fmplrun's control memory
#           (base/boot_local.c)
#   p2p     the point-to-point records a peer writes into our matching
#           area (p2p/recv.c, send.c, cancel.c, matrix.c), against FMPL's
#           p2p code over a fake transport that checks the ops table's
#           contract
#   sig     the collective signals a peer writes (coll/signal.c): records
#           of any sequence, length and eager bit in the signal lines,
#           acknowledgements, the eager slots' bytes, against FMPL's
#           signal code on a communicator of two
#   shm     what a peer's segment tells the shared-memory transport: its
#           FIFO's chunks and acknowledgements, the keys of its headers
# A harness that runs FMPL's own layers (p2p, shm) is linked with the
# library's sources built the same way (once per run, in parallel: about
# 15 s).
# Prints one line per harness and "N passed, M failed".
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
secs=${FUZZ_SECONDS:-20}
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

# The library without its optional transports (libfabric, verbs) and
# bootstraps (PMIx), built with the harnesses' flags into $work/lib once.
libobjs() {
    if [ ! -f "$work/lib/done" ]; then
        mkdir -p "$work/lib"
        # shellcheck disable=SC2086 # word lists
        (cd "$top" && ls src/base/*.c src/transport/*.c src/p2p/*.c src/coll/*.c src/api/*.c \
            src/transport/shm/*.c src/transport/emu/*.c src/transport/tcw/*.c \
            src/transport/peach2/*.c src/transport/ib/*.c src/transport/tca/*.c \
            src/transport/route/route_core.c) |
            xargs -P "$(nproc)" -I{} sh -c '"$1" $2 -c \
                -o "$3/lib/$(echo "$4" | tr / _).o" "$5/$4"' sh "$CLANG" \
                "$(echo "$flags" | sed 's/fuzzer,/fuzzer-no-link,/')" "$work" {} "$top" \
            > "$work/lib.log" 2>&1 || return 1
        touch "$work/lib/done"
    fi
    ls "$work"/lib/*.o
}
# sources each harness is built with, besides itself
srcs() {
    case $1 in
        mmsg) echo "$top/src/transport/mbox_msg.c" ;;
        fmplrun) echo "$top/tools/fmplrun/options.c $top/src/base/parse.c" ;;
        # PMIx's headers only: the harness is the library
        pmix) echo "-DFMPL_HAVE_PMIX $(pkg-config --cflags pmix)" ;;
        env|p2p|shm|sig) libobjs && echo "-lpthread -lrt -lm" ;;
        blacs) libobjs && echo "$top/blacs/*.c -Wl,--wrap=fmpl_abort -lpthread -lrt -lm" ;;
        *) echo "" ;;
    esac
}
# seconds each harness runs
secs_of() {
    case $1 in
        env|fmplrun|mmsg|modex|pmix) echo $(( (secs + 1) / 2 )) ;;
        *) echo "$secs" ;;
    esac
}
# more of libFuzzer's options: a refused BLACS call leaves what it had
# allocated (in a real job the refusal ends the process), so no leak
# checks there
opts_of() {
    case $1 in
        blacs) echo "-detect_leaks=0" ;;
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

# Build every harness first, then run them as many at a time as there are
# CPUs (each fuzzes on one core): the same fuzzing in less wall time.
built=""
for n in $names; do
    src=$top/test/fuzz/fuzz_$n.c
    if [ ! -f "$src" ]; then
        echo "FAIL $n: no $src"; fail=$((fail + 1)); continue
    fi
    if ! extra=$(srcs "$n"); then
        echo "FAIL $n: building the library"; tail -20 "$work/lib.log" | sed 's/^/  | /'
        fail=$((fail + 1)); continue
    fi
    # shellcheck disable=SC2086 # word lists
    if ! "$CLANG" $flags -o "$work/fuzz_$n" "$src" $extra > "$work/build.log" 2>&1; then
        echo "FAIL $n: the build"; sed 's/^/  | /' "$work/build.log" | tail -20
        fail=$((fail + 1)); continue
    fi
    mkdir -p "$work/corpus_$n"
    cp "$top/test/fuzz/corpus/$n/"* "$work/corpus_$n/" 2>/dev/null
    built="$built $n"
done

# run one harness; its status goes to $work/st_NAME
run() {
    # -close_fd_mask=3: the code under test may log; the verdict is the status
    # shellcheck disable=SC2046 # opts_of's words
    (cd "$work" && "./fuzz_$1" -max_total_time="$(secs_of "$1")" -max_len="$(maxlen "$1")" \
        -timeout=10 -rss_limit_mb=2048 -close_fd_mask=3 $(opts_of "$1") \
        -artifact_prefix="$logs/${1}-" "corpus_$1" > "$work/out_$1" 2>&1; echo $? > "$work/st_$1")
}
# One lane per CPU, each running its harnesses one after another: the
# longest first, each to the lane with the fewest seconds so far.
ncpu=$(nproc 2>/dev/null || echo 1)
i=0
while [ $i -lt "$ncpu" ]; do eval "lane_$i='' load_$i=0"; i=$((i + 1)); done
for n in $(for n in $built; do echo "$(secs_of "$n") $n"; done | sort -rn | cut -d' ' -f2); do
    best=0 i=1
    while [ $i -lt "$ncpu" ]; do
        eval "[ \$load_$i -lt \$load_$best ]" && best=$i
        i=$((i + 1))
    done
    eval "lane_$best=\"\$lane_$best $n\" load_$best=\$((load_$best + $(secs_of "$n")))"
done
i=0
while [ $i -lt "$ncpu" ]; do
    eval "l=\$lane_$i"
    # shellcheck disable=SC2154 # set by eval
    (for n in $l; do run "$n"; done) &
    i=$((i + 1))
done
wait

for n in $built; do
    st=$(cat "$work/st_$n" 2>/dev/null || echo lost)
    runs=$(sed -n 's/^Done \([0-9]*\) runs.*/\1/p' "$work/out_$n" | tail -n 1)
    if [ "$st" = 0 ] && [ -n "$runs" ]; then
        echo "PASS $n: $runs inputs in $(secs_of "$n") s, corpus $(ls "$work/corpus_$n" | wc -l) inputs"
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
