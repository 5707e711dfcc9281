#!/bin/bash
# isolation_test.sh - two jobs of two different users on one machine: neither
# can reach into the other's processes or segments.
#
#   test/isolation_test.sh        from any directory, after `make`, as root
#
# Makes two system users for the test (fmpl-iso-a, fmpl-iso-b; removed on
# exit, failure and interrupt, with every process they have), copies
# fmplrun and the test programs to a folder both can read, and then:
#   job A       user A runs a 2-rank job on the shm transport that holds its
#               segments for a while (test/progs/kill -d: the survivor
#               waits in fmpl_recv on the victim)
#   other user  user B, while job A runs, tries every door FMPL's own paths
#               use (test/progs/intrude): ptrace attach (what
#               PR_SET_PTRACER_ANY widens under Yama), cross-memory attach
#               (process_vm_readv), /proc/PID/mem, and the memfds of
#               /proc/PID/fd (the shm segments, fmplrun's control block),
#               on A's ranks and on A's fmplrun: every door must stay shut
#   own user    user A tries the same on its own job: cross-memory attach
#               and every segment must open (the proof that the probe can
#               tell a door that opens)
#   job B       user B's own job (pingpong to 1 MiB over shm) runs beside
#               job A and passes: the jobs share no name
#   no names    job A has no file in /dev/shm (FMPL's segments are memfds:
#               no name another user could try)
#   left        when both jobs have ended neither user has a process left
# Prints one PASS/FAIL line per check and "isolation_test: PASS" or
# "isolation_test: FAIL"; exits 1 on any failure, 2 when not root.
set -u

top=$(cd "$(dirname "$0")/.." && pwd)
UA=fmpl-iso-a
UB=fmpl-iso-b
pass=0 fail=0
dir=""
jobpid=""

say() { echo "isolation_test: $*"; }
check() { # NAME WHY (empty: pass) [DETAIL FILE]
    if [ -z "$2" ]; then
        echo "PASS $1"
        pass=$((pass + 1))
    else
        echo "FAIL $1: $2"
        [ -n "${3:-}" ] && [ -s "$3" ] && sed 's/^/  | /' "$3"
        fail=$((fail + 1))
    fi
}

# shellcheck disable=SC2317  # run by the traps
cleanup() {
    [ -n "$jobpid" ] && kill "$jobpid" 2>/dev/null
    for u in $UA $UB; do
        if id "$u" >/dev/null 2>&1; then
            pkill -KILL -u "$u" 2>/dev/null
            sleep 0.2
            userdel "$u" >/dev/null 2>&1
        fi
    done
    [ -n "$dir" ] && rm -rf -- "$dir"
}

[ "$(id -u)" = 0 ] || { say "must run as root (it makes two users)"; exit 2; }
for p in bin/fmplrun test/progs/kill test/progs/pingpong test/progs/intrude; do
    [ -x "$top/$p" ] || { say "no $top/$p: build first (make)"; exit 2; }
done
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# users of an earlier run that was SIGKILLed go first
for u in $UA $UB; do
    if id "$u" >/dev/null 2>&1; then
        pkill -KILL -u "$u" 2>/dev/null
        userdel "$u" >/dev/null 2>&1
    fi
    useradd --system --no-create-home --shell /usr/sbin/nologin "$u" ||
        { say "useradd $u failed"; exit 1; }
done
dir=$(mktemp -d /tmp/fmpl-iso.XXXXXX) || exit 1
chmod 755 "$dir"
cp "$top/bin/fmplrun" "$top/test/progs/kill" "$top/test/progs/pingpong" \
    "$top/test/progs/intrude" "$dir/" && chmod 755 "$dir"/* || exit 1
as() { # USER CMD...: run as that user, no groups of root's
    local u=$1
    shift
    setpriv --reuid="$u" --regid="$u" --clear-groups --reset-env "$@"
}

# ---- job A holds its segments ------------------------------------------------
as $UA "$dir/fmplrun" -n 2 -t 60 "$dir/kill" -w recv -d 12 >"$dir/a.out" 2>&1 </dev/null &
jobpid=$!
# its ranks (the processes of user A whose parent is fmplrun) with their
# shm segments mapped
runpid="" ranks=""
for _ in $(seq 1 100); do
    runpid=$(pgrep -u $UA -x fmplrun | head -n 1)
    [ -n "$runpid" ] && ranks=$(pgrep -u $UA -P "$runpid" | tr '\n' ' ')
    n=0
    for r in $ranks; do
        ls -l "/proc/$r/fd" 2>/dev/null | grep -q "memfd:fmpl-shm" && n=$((n + 1))
    done
    [ "$n" = 2 ] && break
    sleep 0.1
done
if [ "$n" != 2 ]; then
    check "job A started" "its 2 ranks did not map their segments within 10 s (ranks: $ranks)" "$dir/a.out"
    exit 1
fi
check "job A started (fmplrun $runpid, ranks $ranks)" ""

# ---- user B at user A's doors --------------------------------------------
# shellcheck disable=SC2086  # the pids are words
as $UB "$dir/intrude" "$runpid" $ranks >"$dir/b.txt" 2>&1
opened=$(grep -c ": OPEN$" "$dir/b.txt")
refused=$(grep -c ": refused " "$dir/b.txt")
why=""
[ "$opened" = 0 ] || why="$opened doors opened"
# 4 doors a process (attach, vmread, mem, the fd folder)
[ "$refused" -ge 12 ] || why="${why:+$why; }only $refused doors tried (want 12)"
check "another user: every door of job A shut ($refused refused)" "$why" "$dir/b.txt"

# ---- user A at its own doors: the probe can tell -------------------------
# shellcheck disable=SC2086
as $UA "$dir/intrude" "$runpid" $ranks >"$dir/a.txt" 2>&1
why=""
for r in $ranks; do
    grep -q "^intrude: $r vmread: OPEN$" "$dir/a.txt" || why="$why rank pid $r: no cross-memory attach;"
    grep -q "^intrude: $r fd .*memfd:fmpl-shm.*: OPEN$" "$dir/a.txt" ||
        why="$why rank pid $r: its segment did not open;"
done
grep -q "^intrude: $runpid fd .*memfd:fmpl-ctl.*: OPEN$" "$dir/a.txt" ||
    why="$why fmplrun's control block did not open;"
check "the job's own user: the same doors open" "$why" "$dir/a.txt"

# ---- job B beside job A --------------------------------------------------
as $UB "$dir/fmplrun" -n 2 -t 60 "$dir/pingpong" -m 1M >"$dir/b.out" 2>&1 </dev/null
st=$?
why=""
{ [ $st = 0 ] && grep -q "^OK pingpong" "$dir/b.out"; } || why="exit status $st"
kill -0 "$runpid" 2>/dev/null || why="${why:+$why; }job A ended before job B did (test too slow)"
check "job B of the other user beside job A" "$why" "$dir/b.out"

# ---- no names ---------------------------------------------------------------
named=$(find /dev/shm -user $UA 2>/dev/null | tr '\n' ' ')
check "job A has no file in /dev/shm" "${named:+files: $named}"

# ---- job A ends as planned (its victim's SIGKILL), nothing left -----------
wait "$jobpid"
st=$?
jobpid=""
why=""
grep -q "kill: rank 0: FMPL_ERR_PEER" "$dir/a.out" || why="job A (status $st) did not end as planned"
sleep 0.5
left=$(pgrep -u "$UA,$UB" | tr '\n' ' ')
[ -z "$left" ] || why="${why:+$why; }processes left: $left"
check "job A ended, no process of either user left" "$why" "$dir/a.out"

say "$pass passed, $fail failed"
if [ "$fail" != 0 ]; then
    say "FAIL"
    exit 1
fi
say "PASS"
