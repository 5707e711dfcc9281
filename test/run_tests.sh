#!/bin/bash
# run_tests.sh - run every FMPL test (what `make check` runs after `make all`).
#
#   test/run_tests.sh [NAME...]     from any directory
#
# Runs, in order:
#   1. every test/check_* driver (Check; each prints its own summary), then
#      with FMPL_TRANSPORT=ofi (libfabric's tcp provider: its suites, and
#      the net and shm providers' p2p suites, only when named), and check_p2p, check_coll and check_blacs
#      again routed: FMPL_TEST_RANKS_PER_HOST=2 gives every two ranks a
#      host name of their own (route transport, node-leader collectives);
#      and on the emulated SR8000 (FMPL_TRANSPORT=tcw), the emulated
#      PEACH2 sub-cluster (FMPL_TRANSPORT=peach2) and emulated HA-PACS/TCA
#      (FMPL_TRANSPORT=tca: PEACH2 and InfiniBand), each with its timing
#      model (check_errors too) and without it (check_coll; check_p2p
#      only when named; tca: the router's other policies and the model
#      off only when named);
#      and over real InfiniBand
#      verbs (FMPL_TRANSPORT=dcfa, soft-RoCE in one and two qemu guests:
#      test/dcfa_test.sh);
#   2. test/progs/fortran_pingpong (fmplrun -n 2) and fortran_coll (-n 3),
#      if built, both through the module `use fmpl`; fortran_include (-n 2)
#      through `include 'fmplf.h'`; test/fortran_module_test.sh (the
#      module: an interface for every binding, with the C types; wrong
#      calls fail to compile; a `use fmpl` program built from a staged
#      install with pkg-config alone runs); test/himeno_test.sh (Himeno on 2..8 processes must give
#      the one-process residual), also on tcw, peach2 and tca, and Himeno on
#      16 tcw nodes;
#      sanitizers (test/sanitizer_test.sh: a copy of the tree built with
#      one; no report allowed): ThreadSanitizer on shm and libfabric jobs
#      with FMPL's threads (tsan_test), AddressSanitizer, LeakSanitizer
#      and UndefinedBehaviorSanitizer on the point-to-point, collective,
#      halo and BLACS workers over shm, libfabric and routed (asan_test);
#      libFuzzer harnesses of what peers write (test/fuzz_test.sh);
#   3. a valgrind (memcheck) subset: each rank of a 2-rank job under
#      valgrind --error-exitcode=9;
#   4. test/pmix_test.sh, if it exists and mpirun is installed;
#   5. FMPL jobs (pingpong, random, collectives, halo exchange, MPI beside
#      FMPL) under mpirun, some of them also on the libfabric transport;
#      then test/multihost_test.sh (steps multihost_*): the same jobs and the
#      ScaLAPACK solve across network namespaces ("hosts") with mpirun's
#      agent entering them, over libfabric's tcp provider and in the
#      default mode, and a rank killed on one host.  Needs root: where the
#      machine refuses namespaces the step FAILS (never skips);
#      then the fault matrix (test/fault_test.sh, 30 trials), a
#      minute of soak (test/soak_test.sh) and two users' jobs side by
#      side, neither reaching into the other (test/isolation_test.sh);
#      then test/slurm_test.sh: a private Slurm (munged, slurmctld, a
#      slurmd on each of two namespace hosts) running FMPL jobs of 1-4
#      tasks under srun --mpi=pmix, ScaLAPACK on fmpl-blacs, MPI beside
#      FMPL, srun -N 2 routed shm/libfabric, a task killed on one host
#      and across two;
#   6. fmpl-blacs: its exports against Debian's libscalapack-openmpi, the
#      pdgesv examples, Debian's BLACS testers (xCbtest, xFbtest under
#      mpirun) and ScaLAPACK testers (under fmplrun), fmpl-blacs preloaded;
#      pdgetrf on 2 x 8 tcw nodes, xdlu and xdllt on 4;
#   7. make install into a scratch prefix, pkg-config build, run; the man
#      pages (test/man_test.sh): a page for every exported function, each
#      renders without a warning with its sections and existing SEE ALSO,
#      fmpl.7 names every FMPL_* variable the code reads, and they install
#      where man -M finds them;
#   8. bench/compare -p on a short run (test/bench_plots_test.sh): the data
#      files and gnuplot's plots that `make bench` leaves in bench/out.
# With NAME arguments only the steps whose name contains one of them run
# (e.g. `test/run_tests.sh check_launch valgrind`).
#
# Counts: a Check driver adds its passed and failed tests; every other step
# is one test.  The last line is "N passed, M failed"; the exit status is
# non-zero when anything failed.  Logs go to test/logs/.
set -u

cd "$(dirname "$0")/.." || exit 2
TOP=$(pwd)
export FMPL_TOP="$TOP"
LOGS="$TOP/test/logs"
mkdir -p "$LOGS"
# Check's own defaults, unless the caller chose
export CK_VERBOSITY="${CK_VERBOSITY:-normal}"
# mpirun refuses root without these (pmix_test.sh)
if [ "$(id -u)" = 0 ]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi

passed=0
failed=0
failures=()
suite_t0=$(date +%s)

selected() {
    [ $# -ge 1 ] || return 0
    local name=$1 pat
    shift
    [ $# -eq 0 ] && return 0
    for pat in "$@"; do
        case "$name" in *"$pat"*) return 0 ;; esac
    done
    return 1
}

# record NAME RESULT(0 = pass)
record() {
    if [ "$2" = 0 ]; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        failures+=("$1")
    fi
}

# run_step NAME TIMEOUT CMD... : one test, output to the log and the screen
run_step() {
    local name=$1 limit=$2 rc t0 t1
    shift 2
    echo "=== $name: $*"
    t0=$(date +%s)
    timeout -k 10 "$limit" "$@" > "$LOGS/$name.log" 2>&1
    rc=$?
    t1=$(date +%s)
    tail -n 20 "$LOGS/$name.log" | sed 's/^/    /'
    if [ $rc = 0 ]; then
        echo "--- $name: PASS ($((t1 - t0)) s)"
    else
        echo "--- $name: FAIL, exit status $rc ($((t1 - t0)) s), log $LOGS/$name.log"
    fi
    record "$name" $rc
}

# run_check NAME DRIVER [VAR=VALUE...] : one Check driver, in the given
# environment; adds its passed and failed tests
run_check() {
    local name=$1 t=$2 rc t0 t1 summary n f e bad good
    shift 2
    echo "=== $name${*:+ ($*)}"
    t0=$(date +%s)
    env "$@" "$TOP/$t" 2>&1 | tee "$LOGS/$name.log"
    rc=${PIPESTATUS[0]}
    t1=$(date +%s)
    summary=$(grep -E '^[0-9]+%: Checks: [0-9]+, Failures: [0-9]+, Errors: [0-9]+' \
              "$LOGS/$name.log" | tail -n 1)
    if [ -n "$summary" ]; then
        n=$(echo "$summary" | sed -E 's/.*Checks: ([0-9]+).*/\1/')
        f=$(echo "$summary" | sed -E 's/.*Failures: ([0-9]+).*/\1/')
        e=$(echo "$summary" | sed -E 's/.*Errors: ([0-9]+).*/\1/')
        bad=$((f + e))
        good=$((n - bad))
        if [ $rc != 0 ] && [ $bad = 0 ]; then
            bad=1   # crashed after its summary
        fi
        passed=$((passed + good))
        failed=$((failed + bad))
        [ $bad = 0 ] || failures+=("$name ($bad)")
    else
        record "$name (no summary, exit status $rc)" 1
    fi
    echo "--- $name: exit status $rc ($((t1 - t0)) s)"
}

# ---- 1. Check drivers ------------------------------------------------
for t in test/check_*; do
    case "$t" in *.c|*.o|*.log) continue ;; esac
    [ -f "$t" ] && [ -x "$t" ] || continue
    name=$(basename "$t")
    selected "$name" "$@" || continue
    run_check "$name" "$t"
done

# ---- 1b. the same suites on the libfabric transport ------------------
# One host, every peer through libfabric: the tcp provider (tcp;ofi_rxm,
# automatic progress), only when named for make check's 40 minutes
# (ofi_tcp_check_p2p about 200 s, ofi_tcp_check_coll 230 s, on a machine
# where each process that loads libfabric spends half a second in
# libinfinipath's start-up).  Point-to-point, collectives and the BLACS
# over libfabric run in make check between fake hosts (route_check_*,
# below), and on the tcp provider under AddressSanitizer (asan_test), in
# the forgery, fault and soak tests.  The net
# provider (the tcp rewrite FMPL picks by itself where libfabric has it)
# runs the multi-host jobs (multihost_default, multihost_3hosts) and the
# forgery test.  Only when named, for make check's 40 minutes: the tcp
# provider's BLACS suite (ofi_tcp_check_blacs, about 60 s), the net
# provider's point-to-point suite (ofi_net_check_p2p, 70 s) and the shm
# provider's (ofi_shm_check_p2p, 85 s: manual progress, driven by the
# transport's own thread).
if [ -n "$(pkg-config --libs libfabric 2>/dev/null)" ]; then
    for t in check_p2p check_coll check_blacs; do
        [ -x "test/$t" ] || continue
        [ $# = 0 ] && continue
        selected "ofi_tcp_$t" "$@" || continue
        run_check "ofi_tcp_$t" "test/$t" FMPL_TRANSPORT=ofi FI_PROVIDER=tcp
    done
    if [ -x test/check_p2p ] && fi_info -p net > /dev/null 2>&1 &&
       [ $# -gt 0 ] && selected ofi_net_check_p2p "$@"; then
        run_check ofi_net_check_p2p test/check_p2p FMPL_TRANSPORT=ofi FI_PROVIDER=net
    fi
    if [ -x test/check_p2p ] && [ $# -gt 0 ] && selected ofi_shm_check_p2p "$@"; then
        run_check ofi_shm_check_p2p test/check_p2p FMPL_TRANSPORT=ofi FI_PROVIDER=shm
    fi
    # A peer writing into another's mailbox as a third rank: dropped on
    # every provider (libfabric says who sent each message: FI_SOURCE);
    # with the check off the forgery lands, so the test can see one.
    for p in tcp net shm; do
        [ -x test/progs/forge ] && selected "ofi_${p}_forge" "$@" || continue
        [ $p = net ] && ! fi_info -p net > /dev/null 2>&1 && continue
        run_step "ofi_${p}_forge" 120 env FMPL_TRANSPORT=ofi FI_PROVIDER=$p \
            bin/fmplrun -n 3 -t 100 test/progs/forge
    done
    if [ -x test/progs/forge ] && selected ofi_forge_unchecked "$@"; then
        run_step ofi_forge_unchecked 120 env FMPL_TRANSPORT=ofi FI_PROVIDER=tcp \
            FMPL_OFI_CHECK_SOURCE=0 bin/fmplrun -n 3 -t 100 test/progs/forge -e
    fi
    # Routed: every two ranks a host of their own (test/fakehost.sh), so
    # jobs of 3 and more ranks run on the route transport (shm inside a
    # fake host, libfabric between them, the provider FMPL picks) and
    # their collectives on node leaders; 2-rank jobs share one host (shm).
    for t in check_p2p check_coll check_blacs; do
        [ -x "test/$t" ] || continue
        selected "route_$t" "$@" || continue
        run_check "route_$t" "test/$t" -u FI_PROVIDER FMPL_TEST_RANKS_PER_HOST=2
    done
fi

# ---- 1c. the same suites on the emulated SR8000 ----------------------
# FMPL_TRANSPORT=tcw: the Hitachi SR8000's remote DMA, emulated (every
# rank a node of the 2 x 8 partition), with its timing model - virtual
# time, conservative synchronisation, no remote atomics, no remote read,
# no progress thread - and without it (functional: the collectives, which
# send and receive through the same point-to-point code; the
# point-to-point suite without the model, tcw_nomodel_check_p2p, about
# 55 s, only when named, for make check's 40 minutes; the BLACS sit on
# those two, and run on every fabric with its model).  test/check_tcw (in
# step 1) tests what only tcw has.
for t in check_p2p check_coll check_blacs check_errors; do
    [ -x "test/$t" ] || continue
    selected "tcw_$t" "$@" || continue
    run_check "tcw_$t" "test/$t" FMPL_TRANSPORT=tcw
done
for t in check_p2p check_coll; do
    [ -x "test/$t" ] || continue
    [ $t = check_p2p ] && [ $# = 0 ] && continue
    selected "tcw_nomodel_$t" "$@" || continue
    run_check "tcw_nomodel_$t" "test/$t" FMPL_TRANSPORT=tcw FMPL_TCW_MODEL=0
done

# ---- 1d. ... and on the emulated PEACH2 sub-cluster ---------------------
# FMPL_TRANSPORT=peach2: PCIe stores and the DMA controller of HA-PACS/TCA
# (every rank a node of one sub-cluster, up to 16), no remote atomics, no
# remote read, block-stride puts; with its timing model and without (as
# tcw: the BLACS with the model only, peach2_nomodel_check_p2p only when
# named).
# test/check_peach2 (in step 1) tests what only peach2 has.
for t in check_p2p check_coll check_blacs check_errors; do
    [ -x "test/$t" ] || continue
    selected "peach2_$t" "$@" || continue
    run_check "peach2_$t" "test/$t" FMPL_TRANSPORT=peach2
done
for t in check_p2p check_coll; do
    [ -x "test/$t" ] || continue
    [ $t = check_p2p ] && [ $# = 0 ] && continue
    selected "peach2_nomodel_$t" "$@" || continue
    run_check "peach2_nomodel_$t" "test/$t" FMPL_TRANSPORT=peach2 FMPL_TCA_MODEL=0
done

# ---- 1e. ... and on emulated HA-PACS/TCA: PEACH2 and InfiniBand ------------
# FMPL_TRANSPORT=tca: sub-clusters of 2 nodes (so a 4-rank job has near
# and far peers), contiguous writes above 4 KiB to near peers on
# InfiniBand (so the suites' messages take both networks, and a peer's
# records follow its data across them).  Only when named, for make
# check's 40 minutes: the router's other policies over the same two
# engines, InfiniBand alone (tca_ib_check_coll, tca_ib_check_p2p, 70 s
# each) and PEACH2 alone inside sub-clusters of 4
# (tca_peach2_check_coll, 70 s), and the model off with sub-clusters of
# 3 (tca_nomodel_check_coll, 40 s, tca_nomodel_check_p2p:
# peach2_nomodel_check_coll runs the same PEACH2 engine without its
# model).  test/check_tca tests what only tca has: every policy, with
# 16-node jobs, and bench/tca's figures.
TCA="FMPL_TRANSPORT=tca FMPL_TCA_SUBCLUSTER=2 FMPL_TCA_SWITCH_BYTES=4096"
for t in check_p2p check_coll check_blacs check_errors; do
    [ -x "test/$t" ] || continue
    selected "tca_$t" "$@" || continue
    run_check "tca_$t" "test/$t" $TCA
done
for t in check_p2p check_coll; do
    [ -x "test/$t" ] || continue
    [ $# = 0 ] && continue
    selected "tca_ib_$t" "$@" || continue
    run_check "tca_ib_$t" "test/$t" FMPL_TRANSPORT=tca FMPL_TCA_SUBCLUSTER=2 FMPL_TCA_ROUTE=ib
done
if [ -x test/check_coll ] && [ $# -gt 0 ] && selected tca_peach2_check_coll "$@"; then
    run_check tca_peach2_check_coll test/check_coll FMPL_TRANSPORT=tca FMPL_TCA_SUBCLUSTER=4 \
        FMPL_TCA_ROUTE=peach2
fi
for t in check_p2p check_coll; do
    [ -x "test/$t" ] || continue
    [ $# = 0 ] && continue
    selected "tca_nomodel_$t" "$@" || continue
    run_check "tca_nomodel_$t" "test/$t" FMPL_TRANSPORT=tca FMPL_TCA_SUBCLUSTER=3 \
        FMPL_TCA_SWITCH_BYTES=4096 FMPL_TCA_MODEL=0
done

# ---- 1f. ... and on real InfiniBand verbs ---------------------------------
# FMPL_TRANSPORT=dcfa on soft-RoCE devices in qemu guests (this machine's
# kernel has no RDMA): point-to-point, collective, halo, BLACS and
# ScaLAPACK jobs, a killed rank, bad device settings, in one boot of one
# guest; then jobs across two guests (mpirun, PMIx) in a second.  Where
# qemu or the guest kernel cannot run here the step FAILS (never skips).
if [ -x bin/fmplrun ] && selected dcfa_test "$@"; then
    if nm -D lib/libfmpl.so 2>/dev/null | grep -q " U ibv_"; then
        run_step dcfa_test 1500 test/dcfa_test.sh
    else
        echo "=== dcfa_test: FAIL: libfmpl was built without libibverbs (make deps)"
        record dcfa_test 1
    fi
fi

# ---- 2. Fortran --------------------------------------------------------
if [ -x test/progs/fortran_pingpong ] && selected fortran_pingpong "$@"; then
    run_step fortran_pingpong 300 bin/fmplrun -n 2 -t 240 test/progs/fortran_pingpong
fi
if [ -x test/progs/fortran_coll ] && selected fortran_coll "$@"; then
    run_step fortran_coll 300 bin/fmplrun -n 3 -t 240 test/progs/fortran_coll
fi
if [ -x test/progs/fortran_include ] && selected fortran_include "$@"; then
    run_step fortran_include 300 bin/fmplrun -n 2 -t 240 test/progs/fortran_include
fi
if selected fortran_module_test "$@"; then
    run_step fortran_module_test 300 sh test/fortran_module_test.sh
fi

# ---- 2b. Himeno: the halo exchange in a real stencil -------------------
if [ -x examples/himeno ] && selected himeno_test "$@"; then
    run_step himeno_test 120 test/himeno_test.sh
fi
# ... and on the emulated SR8000: the same gosa on 1 to 8 nodes, and a run
# on the 16 nodes of the 2 x 8 partition (its modeled time per iteration)
if [ -x examples/himeno ] && selected himeno_peach2 "$@"; then
    run_step himeno_peach2 120 env FMPL_TRANSPORT=peach2 test/himeno_test.sh
fi
if [ -x examples/himeno ] && selected himeno_tca "$@"; then
    run_step himeno_tca 120 env FMPL_TRANSPORT=tca FMPL_TCA_SUBCLUSTER=2 test/himeno_test.sh
fi
if [ -x examples/himeno ] && selected himeno_tcw "$@"; then
    run_step himeno_tcw 120 env FMPL_TRANSPORT=tcw test/himeno_test.sh
    run_step himeno_tcw16 300 env FMPL_TRANSPORT=tcw bin/fmplrun -n 16 -t 240 \
        examples/himeno S -n 20
fi

# ---- 2c. sanitizers -------------------------------------------------------
# A copy of the tree built with a sanitizer (test/sanitizer_test.sh); any
# report fails the step.  Thread: every thread FMPL has (the progress
# thread, the transports' tickers) beside the application's, on shm and
# libfabric.  Address (with leaks) and undefined behaviour: the workers of
# point-to-point, collectives, halo exchange and the BLACS on shm,
# libfabric and routed.
if selected tsan_test "$@"; then
    run_step tsan_test 600 sh test/sanitizer_test.sh thread
fi
if selected asan_test "$@"; then
    run_step asan_test 600 sh test/sanitizer_test.sh address
fi
# libFuzzer: what peers, the PMIx server and users write (records, modex,
# settings, fmplrun's options, the BLACS' arguments), 6-12 s per harness
# from the committed corpus (test/fuzz_test.sh)
if selected fuzz_test "$@"; then
    run_step fuzz_test 600 env FUZZ_SECONDS=12 sh test/fuzz_test.sh
fi

# ---- 3. valgrind -------------------------------------------------------
if command -v valgrind > /dev/null 2>&1; then
    VG="valgrind -q --error-exitcode=9 --leak-check=full --errors-for-leak-kinds=definite"
    VG="$VG --track-origins=no --fair-sched=yes"
    if selected valgrind_pingpong "$@"; then
        run_step valgrind_pingpong 600 bin/fmplrun -n 2 -t 500 $VG \
            test/progs/pingpong -m 65536
    fi
    if selected valgrind_pingpong_nocma "$@"; then
        run_step valgrind_pingpong_nocma 600 env FMPL_SHM_CMA=0 \
            bin/fmplrun -n 2 -t 500 $VG test/progs/pingpong -i -m 65536
    fi
    if selected valgrind_selfsend "$@"; then
        run_step valgrind_selfsend 600 bin/fmplrun -n 2 -t 500 $VG \
            test/progs/selfsend -m 1M
    fi
    # the rest of the workers, small, 2 ranks
    for w in "random -M 64K -R 3 -k 12" "spill" "cancel -R 6" "truncate" "badargs" \
             "sync -m 256K -r 1"; do
        name="valgrind_${w%% *}"
        if [ -x "test/progs/${w%% *}" ] && selected "$name" "$@"; then
            run_step "$name" 600 bin/fmplrun -n 2 -t 500 $VG test/progs/$w
        fi
    done
    # communicators, collectives and the halo exchange, small, 2 ranks
    for w in "ops:coll_ops -M 8K -A 64" "comm:coll_comm -F 20" "args:coll_args" \
             "halo_2d:coll_halo -g 2x1 -m -w 2 -e 24" "halo_3d:coll_halo -g 1x2x1 -m -e 1"; do
        name="valgrind_coll_${w%%:*}"
        w=${w#*:}
        if [ -x "test/progs/${w%% *}" ] && selected "$name" "$@"; then
            run_step "$name" 600 bin/fmplrun -n 2 -t 500 $VG test/progs/$w
        fi
    done
    if selected valgrind_progress_thread "$@"; then
        run_step valgrind_progress_thread 600 env FMPL_PROGRESS_THREAD=1 \
            bin/fmplrun -n 2 -t 500 $VG test/progs/pingpong -i -m 65536
    fi
else
    echo "=== valgrind not installed: memcheck steps skipped"
fi

# ---- 4. PMIx -----------------------------------------------------------
if [ -f test/pmix_test.sh ] && selected pmix_test "$@"; then
    if command -v mpirun > /dev/null 2>&1; then
        run_step pmix_test 600 bash test/pmix_test.sh
    else
        echo "=== pmix_test: mpirun not installed, skipped"
    fi
fi

# ---- 5. whole FMPL jobs under Open MPI's mpirun (PMIx bootstrap) --------
if command -v mpirun > /dev/null 2>&1 && selected mpirun_jobs "$@"; then
    MR="mpirun --allow-run-as-root --oversubscribe"
    run_step mpirun_pingpong 300 $MR -n 2 test/progs/pingpong -m 4M
    run_step mpirun_random 300 $MR -n 4 test/progs/random
    run_step mpirun_coll_ops 300 $MR -n 3 test/progs/coll_ops -M 64K
    run_step mpirun_coll_halo 300 $MR -n 4 test/progs/coll_halo -g 2x2x1 -m
    if [ -x test/progs/mpi_fmpl ]; then
        run_step mpirun_mpi_fmpl_2 300 $MR -n 2 test/progs/mpi_fmpl
        run_step mpirun_mpi_fmpl_3 300 $MR -n 3 test/progs/mpi_fmpl
    fi
    # the libfabric transport, addresses exchanged through PMIx
    if [ -n "$(pkg-config --libs libfabric 2>/dev/null)" ]; then
        OFI="-x FMPL_TRANSPORT=ofi -x FI_PROVIDER=tcp"
        run_step mpirun_ofi_pingpong 300 $MR $OFI -n 3 test/progs/pingpong -m 1M
        run_step mpirun_ofi_random 300 $MR $OFI -n 4 test/progs/random
        run_step mpirun_ofi_coll_ops 300 $MR $OFI -n 4 test/progs/coll_ops -M 64K
        [ -x test/progs/mpi_fmpl ] &&
            run_step mpirun_ofi_mpi_fmpl 300 $MR $OFI -n 3 test/progs/mpi_fmpl
    fi
fi

# ---- 5b. several hosts: network namespaces, one mpirun job across them -------
# test/multihost_test.sh, one step per group of its cases; it says why it
# fails when the machine refuses namespaces (not root, no iproute2): a
# failure, not a skip.
for g in ofi default 3hosts kill; do
    selected "multihost_$g" "$@" || continue
    if ! command -v mpirun > /dev/null 2>&1 || ! command -v ip > /dev/null 2>&1; then
        echo "=== multihost_$g: needs mpirun (openmpi-bin) and ip (iproute2): FAILED"
        record "multihost_$g" 1
        continue
    fi
    run_step "multihost_$g" 600 bash test/multihost_test.sh "$g/"
done

# ---- 5b'. the fault matrix: a rank killed, stopped or gone without
# fmpl_finalize at a random moment of p2p, collectives, halo, init and
# finalize, on shm, ofi and routed; 30 seeded trials (test/fault_test.sh;
# `make faults TRIALS=N` runs more)
if [ -x test/progs/fault ] && selected fault_matrix "$@"; then
    run_step fault_matrix 900 bash test/fault_test.sh -n 30 -s 1
fi

# ---- 5b''. soak: a minute of random jobs, every byte checked
# (test/soak_test.sh; `make soak MINUTES=N` runs longer)
if selected soak_test "$@"; then
    run_step soak_test 600 bash test/soak_test.sh -m 1 -s 1
fi

# ---- 5b'''. isolation: another user's process cannot reach into a job
# (ptrace, cross-memory attach, /proc/PID/mem, the segments' memfds); the
# test makes two users and removes them
if selected isolation_test "$@"; then
    run_step isolation_test 300 bash test/isolation_test.sh
fi
# ... nor a rank of the same job, past what its records may name: a header
# larger than the region its key names, FIFO chunks aimed outside
if [ -x test/progs/shm_forge ] && selected shm_forge "$@"; then
    run_step shm_forge 120 bin/fmplrun -n 2 -t 100 test/progs/shm_forge
fi

# ---- 5c. Slurm: srun --mpi=pmix on a private Slurm over namespace hosts -------
# test/slurm_test.sh starts munged, slurmctld and a slurmd per host itself
# and stops them even when it fails; where Slurm cannot start here that
# is a failure, not a skip.
if selected slurm_test "$@"; then
    run_step slurm_test 900 bash test/slurm_test.sh
fi

# ---- 6. fmpl-blacs: exports, Debian's BLACS and ScaLAPACK testers --------
if [ -f lib/libfmpl_blacs.so ] && selected blacs "$@"; then
    run_step blacs_exports 120 bash test/blacs_exports.sh
    if [ -x examples/pdgesv ]; then
        run_step blacs_pdgesv 300 bash test/pdgesv_test.sh
    fi
    # ScaLAPACK's pdgetrf on the 2 x 8 nodes of the emulated SR8000, its
    # factors checked by solving with them (bench/blacs)
    if [ -x bench/blacs ]; then
        run_step blacs_getrf_tcw 600 env FMPL_TRANSPORT=tcw bin/fmplrun -n 16 -t 500 \
            bench/blacs -T getrf -g 2x8 -N 1000 -r 1
    fi
    if command -v mpirun > /dev/null 2>&1 && [ -d /usr/lib/x86_64-linux-gnu/scalapack ]; then
        run_step blacs_debian_testers 900 bash test/blacs_debian.sh
        run_step blacs_scalapack_testers 1200 bash test/scalapack_testers.sh
        # on 4 nodes of the emulated SR8000
        run_step blacs_scalapack_testers_tcw 600 env FMPL_TRANSPORT=tcw \
            bash test/scalapack_testers.sh -n 4 xdlu xdllt
    else
        echo "=== blacs testers: mpirun or Debian's ScaLAPACK testers missing: FAILED"
        record blacs_testers 1
    fi
fi

# ---- 7. make install, then build the way a user does --------------------
if selected install_test "$@"; then
    run_step install_test 300 sh test/install_test.sh
fi
if selected man_test "$@"; then
    run_step man_test 300 bash test/man_test.sh
fi

# ---- 8. the benchmarks' data files and plots (a check, not a measurement) --
if selected bench_plots "$@"; then
    run_step bench_plots 300 bash test/bench_plots_test.sh
fi

# ---- summary -----------------------------------------------------------
echo
echo "=== total time $(( $(date +%s) - suite_t0 )) s"
if [ ${#failures[@]} -gt 0 ]; then
    # what failed, again at the end: a CI log is often read from its tail
    for f in "${failures[@]}"; do
        log="$LOGS/${f%% *}.log"
        [ -f "$log" ] || continue
        echo "=== why ${f%% *} failed ($log):"
        if grep -qE ':[FE]:' "$log"; then
            # Check's failure lines and the output they quote
            grep -A 14 -E ':[FE]:' "$log" | head -n 60 | sed 's/^/    /'
        else
            tail -n 15 "$log" | sed 's/^/    /'
        fi
    done
    echo "=== failed: ${failures[*]}"
fi
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
