#!/bin/bash
# run_tests.sh - run every FMPL test (what `make check` runs after `make all`).
#
#   test/run_tests.sh [NAME...]          run the steps, from any directory
#   test/run_tests.sh --list [NAME...]   print the steps (name, tier,
#                                        timeout, command), run nothing
#   test/run_tests.sh --help
#
# What runs, in order, is two tables below: CHECKS, every Check driver
# (test/check_*) on the transports' variants of VARIANTS, then STEPS, the
# other tests.  Each step has a tier:
#   default  runs in `make check`, and whenever it is selected;
#   named    runs only when a NAME selects it (left out of make check's 40
#            minutes: slow, or another setting of what a default step covers).
# With NAMEs only the steps whose name contains one of them run, of either
# tier (e.g. `test/run_tests.sh check_launch valgrind`); `mpirun_jobs`
# selects the mpirun_* steps, as it always has.
#
# Counts: a Check driver adds its passed and failed tests; every other step
# is one test.  The last line is "N passed, M failed"; the exit status is
# non-zero when anything failed.  Logs go to test/logs/NAME.log.
set -u

cd "$(dirname "$0")/.." || exit 2
TOP=$(pwd)

usage() {
    cat <<'EOF'
usage: test/run_tests.sh [NAME...]          run the steps of tier default, or
                                            (NAMEs) those whose name contains a
                                            NAME, of any tier
       test/run_tests.sh --list [NAME...]   print them, one a line: name, tier,
                                            timeout (s), environment and command,
                                            [requirements]; run nothing
       test/run_tests.sh --help             this text
Tiers: default (make check runs it), named (only when a NAME selects it).
EOF
}
LIST_ONLY=0
case "${1:-}" in
    --list|-l) LIST_ONLY=1; shift ;;
    --help|-h) usage; exit 0 ;;
    -?*) echo "run_tests.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
esac
PATTERNS=("$@")

# ---- the Check drivers ------------------------------------------------------
# A variant: a transport and its settings.  Its steps are named
# VARIANT_DRIVER (plain: DRIVER alone); requires: see STEPS.
VARIANTS='
# variant       requires           environment
plain           -                  -
# libfabric, every peer through it on one host: the tcp provider
# (tcp;ofi_rxm), the net provider (the tcp rewrite FMPL picks by itself
# where libfabric has it), the shm provider (manual progress, driven by the
# transport thread)
ofi_tcp         libfabric          FMPL_TRANSPORT=ofi FI_PROVIDER=tcp
ofi_net         libfabric,fi:net   FMPL_TRANSPORT=ofi FI_PROVIDER=net
ofi_shm         libfabric          FMPL_TRANSPORT=ofi FI_PROVIDER=shm
# routed: every two ranks a fake host (test/fakehost.sh), so jobs of 3 and
# more ranks run on the route transport (shm inside a host, libfabric
# between hosts, the provider FMPL picks) and collectives on node leaders
route           libfabric          -u FI_PROVIDER FMPL_TEST_RANKS_PER_HOST=2
# the emulated SR8000 (2 x 8 nodes), with its timing model (virtual time,
# no remote atomics or read, no progress thread) and without it
tcw             -                  FMPL_TRANSPORT=tcw
tcw_nomodel     -                  FMPL_TRANSPORT=tcw FMPL_TCW_MODEL=0
# the emulated PEACH2 sub-cluster of HA-PACS/TCA (up to 16 nodes)
peach2          -                  FMPL_TRANSPORT=peach2
peach2_nomodel  -                  FMPL_TRANSPORT=peach2 FMPL_TCA_MODEL=0
# emulated HA-PACS/TCA, PEACH2 and InfiniBand: sub-clusters of 2 (near and
# far peers), writes above 4 KiB to near peers on InfiniBand; the other
# policies of its router (InfiniBand alone; PEACH2 alone, sub-clusters of
# 4); the model off, sub-clusters of 3
tca             -                  FMPL_TRANSPORT=tca FMPL_TCA_SUBCLUSTER=2 FMPL_TCA_SWITCH_BYTES=4096
tca_ib          -                  FMPL_TRANSPORT=tca FMPL_TCA_SUBCLUSTER=2 FMPL_TCA_ROUTE=ib
tca_peach2      -                  FMPL_TRANSPORT=tca FMPL_TCA_SUBCLUSTER=4 FMPL_TCA_ROUTE=peach2
tca_nomodel     -                  FMPL_TRANSPORT=tca FMPL_TCA_SUBCLUSTER=3 FMPL_TCA_SWITCH_BYTES=4096 FMPL_TCA_MODEL=0
# an emulated InfiniBand cluster, a fat tree of 2-node leaves and 2 spines
# (so a 4-rank job crosses spines)
ib              -                  FMPL_TRANSPORT=ib FMPL_IB_TOPO=fattree FMPL_IB_LEAF=2 FMPL_IB_SPINES=2
'
# Which driver runs on which variant, in this order.  A driver the table
# names runs only where its rows say; `*` stands for every other driver
# (test/check_*.c or a built test/check_*), so a new one runs by default
# on each transport and, when named, on the other settings.
# check_launch, check_memmon, check_peer_index and what only tcw, peach2 or tca has
# (check_tcw, check_peach2, check_tca) run plain: they set up their jobs.
CHECKS='
# variant       tier     drivers
plain           default  check_blacs check_coll check_errors check_launch check_memmon check_p2p check_peach2 check_peer_index check_tca check_tcw *
# ofi_tcp_check_p2p about 200 s, _coll 230 s, _blacs 60 s (each process
# loading libfabric spends half a second in libinfinipath start-up); the
# route_* suites, asan_test, the forgery, fault and soak tests run these
# paths in make check, the multi-host jobs the net provider
ofi_tcp         named    check_p2p check_coll check_blacs
ofi_tcp         default  *
ofi_net         named    check_p2p *                  # 70 s
ofi_shm         named    check_p2p *                  # 85 s
route           default  check_p2p check_coll check_blacs *
# the BLACS sit on p2p and coll: with the model only; without it, p2p
# (about 55 s) and the collectives of tcw (60 s) only when named: the engine
# runs without its model under peach2_nomodel_check_coll
tcw             default  check_p2p check_coll check_blacs check_errors *
tcw_nomodel     named    check_p2p check_coll *
# The point-to-point suite and the collectives on PEACH2 alone (40 and
# 130 s), and the collectives on the InfiniBand fat tree (110 s), when
# named: tca_check_p2p and tca_check_coll run both engines (PEACH2 inside
# sub-clusters, InfiniBand between), check_peach2 what only PEACH2 has,
# and the ib steps below (fft3d_ib, ib_bcast_scatter, scale_quick) the
# choices of ib at 8-256 nodes
peach2          default  check_blacs check_errors
peach2          named    check_p2p check_coll *
peach2_nomodel  named    check_p2p
peach2_nomodel  default  check_coll
peach2_nomodel  named    *
tca             default  check_p2p check_coll check_blacs check_errors *
# 70 s each; tca_nomodel_check_coll 40 s (peach2_nomodel_check_coll runs
# the same PEACH2 engine without its model)
tca_ib          named    check_p2p check_coll *
tca_peach2      named    check_coll *
tca_nomodel     named    check_p2p check_coll *
ib              default  check_p2p check_errors
ib              named    check_coll check_blacs *
'

# ---- every other step -------------------------------------------------------
# requires: what the step needs, comma-separated, `-` none; when one is
# missing the step is skipped with a note, or, marked `!`, FAILS.
#   x:FILE executable  f:FILE  cmd:COMMAND  libfabric (pkg-config)
#   fi:PROVIDER (fi_info -p)  verbs (lib/libfmpl.so has the dcfa transport)
#   scalapack (Debian's ScaLAPACK testers)
# for the commands of STEPS (expanded by eval)
VG="valgrind -q --error-exitcode=9 --leak-check=full --errors-for-leak-kinds=definite"
VG="$VG --track-origins=no --fair-sched=yes"
# shellcheck disable=SC2034
VGRUN="bin/fmplrun -n 2 -t 500 $VG"
# shellcheck disable=SC2034
MR="mpirun --allow-run-as-root --oversubscribe"
# shellcheck disable=SC2034
OFI="-x FMPL_TRANSPORT=ofi -x FI_PROVIDER=tcp"
STEPS='
# name                      tier     timeout requires                   command
# a peer writing into the mailbox of another as a third rank: dropped on
# every provider (FI_SOURCE says who sent); with the check off it lands
ofi_tcp_forge               default  120  libfabric,x:test/progs/forge  env FMPL_TRANSPORT=ofi FI_PROVIDER=tcp bin/fmplrun -n 3 -t 100 test/progs/forge
ofi_net_forge               default  120  libfabric,x:test/progs/forge,fi:net  env FMPL_TRANSPORT=ofi FI_PROVIDER=net bin/fmplrun -n 3 -t 100 test/progs/forge
ofi_shm_forge               default  120  libfabric,x:test/progs/forge  env FMPL_TRANSPORT=ofi FI_PROVIDER=shm bin/fmplrun -n 3 -t 100 test/progs/forge
ofi_forge_unchecked         default  120  libfabric,x:test/progs/forge  env FMPL_TRANSPORT=ofi FI_PROVIDER=tcp FMPL_OFI_CHECK_SOURCE=0 bin/fmplrun -n 3 -t 100 test/progs/forge -e
# InfiniBand verbs (FMPL_TRANSPORT=dcfa) on soft-RoCE in one qemu guest,
# then across two (mpirun, PMIx); where qemu cannot run here: FAIL.  _full:
# with the two-guest runs make check leaves out (80 s)
dcfa_test                   default 1500  x:bin/fmplrun,!verbs          test/dcfa_test.sh
dcfa_test_full              named   1800  x:bin/fmplrun,!verbs          test/dcfa_test.sh -f
# Fortran: through the module (use fmpl) and the include file fmplf.h; the
# module against its C types (wrong calls fail to compile), from an install
fortran_pingpong            default  300  x:test/progs/fortran_pingpong bin/fmplrun -n 2 -t 240 test/progs/fortran_pingpong
fortran_coll                default  300  x:test/progs/fortran_coll     bin/fmplrun -n 3 -t 240 test/progs/fortran_coll
fortran_include             default  300  x:test/progs/fortran_include  bin/fmplrun -n 2 -t 240 test/progs/fortran_include
fortran_module_test         default  300  -                             sh test/fortran_module_test.sh
# a 3-D FFT by slabs and one all-to-all transpose, checked against the
# serial transform: shm, and 8 emulated InfiniBand nodes by ialltoall
fft3d                       default  120  x:examples/fft3d              bin/fmplrun -n 4 -t 100 examples/fft3d -i 2
fft3d_ib                    default  120  x:examples/fft3d              env FMPL_TRANSPORT=ib bin/fmplrun -n 8 -t 100 examples/fft3d -b -i 1
# Himeno on 2..8 processes gives the one-process residual; also on the
# emulated machines, and on the 16 tcw nodes
himeno_test                 default  120  x:examples/himeno             test/himeno_test.sh
himeno_peach2               default  120  x:examples/himeno             env FMPL_TRANSPORT=peach2 test/himeno_test.sh
himeno_tca                  default  120  x:examples/himeno             env FMPL_TRANSPORT=tca FMPL_TCA_SUBCLUSTER=2 test/himeno_test.sh
himeno_tcw                  default  120  x:examples/himeno             env FMPL_TRANSPORT=tcw test/himeno_test.sh
himeno_tcw16                default  300  x:examples/himeno             env FMPL_TRANSPORT=tcw bin/fmplrun -n 16 -t 240 examples/himeno S -n 20
# a copy of the tree built with a sanitizer, no report allowed: threads
# (shm, libfabric); address, leaks, undefined behaviour (p2p, collective,
# halo, BLACS workers on shm, libfabric, routed); libFuzzer harnesses of
# what peers, the PMIx server and users write
# the small sizes of bench/scale: tcw 16 and 64 nodes and ib 64 and 256, each
# job twice with the same modeled figures, and the halo and all-to-all
# traffic on shm and ib at 16 and 64 ranks (the long sweeps: make bench-scale)
scale_quick                 default  600  x:bench/scale_coll           bench/scale -q -m tcw,ib,traffic -p test/logs/scale
# scatter + allgather of large broadcasts, forced on shm (8 ranks: powers of two and not,
# sizes around the chunking) and on 37 emulated InfiniBand nodes (the ring)
bcast_scatter               default  300  x:test/progs/coll_ops          env FMPL_BCAST=scatter bin/fmplrun -n 8 -t 240 test/progs/coll_ops -M 1M -R 20
ib_bcast_scatter            default  300  x:test/progs/coll_ops          env FMPL_TRANSPORT=ib FMPL_BCAST=scatter bin/fmplrun -n 37 -t 240 test/progs/coll_ops -M 20000 -R 0 -c w -A 0
# the broadcast and allgather of the hybrid paper (FMPL_COLL=paper): every collective checked on
# shm (8 ranks, every root) and on emulated HA-PACS/TCA, 8 nodes in two sub-clusters, on GPU memory
coll_paper                  default  300  x:test/progs/coll_ops          env FMPL_COLL=paper bin/fmplrun -n 8 -t 240 test/progs/coll_ops -M 1M -R 20
tca_coll_paper              default  300  x:test/progs/coll_ops          env FMPL_COLL=paper FMPL_TRANSPORT=tca FMPL_TCA_SUBCLUSTER=4 FMPL_TCA_IB_HOPS=0 FMPL_TCA_MV2=qpi bin/fmplrun -n 8 -t 240 test/progs/coll_ops -M 256K -R 20
tsan_test                   default  600  -                             sh test/sanitizer_test.sh thread
asan_test                   default  600  -                             sh test/sanitizer_test.sh address
fuzz_test                   default  600  -                             env FUZZ_SECONDS=5 sh test/fuzz_test.sh
# memcheck on each rank of small 2-rank jobs
valgrind_pingpong           default  600  cmd:valgrind                  $VGRUN test/progs/pingpong -m 65536
valgrind_pingpong_nocma     default  600  cmd:valgrind                  env FMPL_SHM_CMA=0 $VGRUN test/progs/pingpong -i -m 65536
valgrind_selfsend           default  600  cmd:valgrind                  $VGRUN test/progs/selfsend -m 1M
valgrind_random             default  600  cmd:valgrind,x:test/progs/random     $VGRUN test/progs/random -M 64K -R 3 -k 12
valgrind_spill              default  600  cmd:valgrind,x:test/progs/spill      $VGRUN test/progs/spill
valgrind_cancel             default  600  cmd:valgrind,x:test/progs/cancel     $VGRUN test/progs/cancel -R 6
valgrind_truncate           default  600  cmd:valgrind,x:test/progs/truncate   $VGRUN test/progs/truncate
valgrind_badargs            default  600  cmd:valgrind,x:test/progs/badargs    $VGRUN test/progs/badargs
valgrind_sync               default  600  cmd:valgrind,x:test/progs/sync       $VGRUN test/progs/sync -m 256K -r 1
valgrind_coll_ops           default  600  cmd:valgrind,x:test/progs/coll_ops   $VGRUN test/progs/coll_ops -M 8K -A 64
valgrind_coll_comm          default  600  cmd:valgrind,x:test/progs/coll_comm  $VGRUN test/progs/coll_comm -F 20
valgrind_coll_args          default  600  cmd:valgrind,x:test/progs/coll_args  $VGRUN test/progs/coll_args
valgrind_coll_halo_2d       default  600  cmd:valgrind,x:test/progs/coll_halo  $VGRUN test/progs/coll_halo -g 2x1 -m -w 2 -e 24
valgrind_coll_halo_3d       default  600  cmd:valgrind,x:test/progs/coll_halo  $VGRUN test/progs/coll_halo -g 1x2x1 -m -e 1
valgrind_progress_thread    default  600  cmd:valgrind                  env FMPL_PROGRESS_THREAD=1 $VGRUN test/progs/pingpong -i -m 65536
pmix_test                   default  600  f:test/pmix_test.sh,cmd:mpirun  bash test/pmix_test.sh
# whole jobs under Open MPI mpirun (PMIx bootstrap), some on libfabric;
# NAME mpirun_jobs selects them all (ALIASES)
mpirun_pingpong             default  300  cmd:mpirun                    $MR -n 2 test/progs/pingpong -m 4M
mpirun_random               default  300  cmd:mpirun                    $MR -n 4 test/progs/random
mpirun_coll_ops             default  300  cmd:mpirun                    $MR -n 3 test/progs/coll_ops -M 64K
mpirun_coll_halo            default  300  cmd:mpirun                    $MR -n 4 test/progs/coll_halo -g 2x2x1 -m
mpirun_mpi_fmpl_2           default  300  cmd:mpirun,x:test/progs/mpi_fmpl  $MR -n 2 test/progs/mpi_fmpl
mpirun_mpi_fmpl_3           default  300  cmd:mpirun,x:test/progs/mpi_fmpl  $MR -n 3 test/progs/mpi_fmpl
mpirun_ofi_pingpong         default  300  cmd:mpirun,libfabric          $MR $OFI -n 3 test/progs/pingpong -m 1M
mpirun_ofi_random           default  300  cmd:mpirun,libfabric          $MR $OFI -n 4 test/progs/random
mpirun_ofi_coll_ops         default  300  cmd:mpirun,libfabric          $MR $OFI -n 4 test/progs/coll_ops -M 64K
mpirun_ofi_mpi_fmpl         default  300  cmd:mpirun,libfabric,x:test/progs/mpi_fmpl  $MR $OFI -n 3 test/progs/mpi_fmpl
# hosts made of network namespaces, the agent of mpirun entering them: the
# jobs and ScaLAPACK over libfabric tcp and the default mode, a rank
# killed on one host; needs root (where namespaces are refused: FAIL)
multihost_ofi               default  600  !cmd:mpirun,!cmd:ip           bash test/multihost_test.sh ofi/
multihost_default           default  600  !cmd:mpirun,!cmd:ip           bash test/multihost_test.sh default/
multihost_3hosts            default  600  !cmd:mpirun,!cmd:ip           bash test/multihost_test.sh 3hosts/
multihost_kill              default  600  !cmd:mpirun,!cmd:ip           bash test/multihost_test.sh kill/
# links broken under jobs across those hosts (nftables): 1 % loss and
# duplication, 0.1 % corruption, a 2-s cut, a cut past FMPL_PEER_TIMEOUT;
# make faults NET=1 runs every condition, job and provider
netfault_test               default  600  !cmd:mpirun,!cmd:ip,!cmd:nft,!cmd:ethtool,!cmd:iptables-legacy,!x:test/progs/nfq_delay  bash test/netfault_test.sh -q
# a rank killed, stopped or gone at a random moment, 30 seeded trials
# (make faults: more); a minute of random jobs (make soak: longer);
# another user cannot reach into a job, nor a rank past its records
fault_matrix                default  900  x:test/progs/fault            bash test/fault_test.sh -n 30 -s 1
soak_test                   default  600  -                             bash test/soak_test.sh -S 40 -s 1
isolation_test              default  300  -                             bash test/isolation_test.sh
shm_forge                   default  120  x:test/progs/shm_forge        bin/fmplrun -n 2 -t 100 test/progs/shm_forge
# a private Slurm (munged, slurmctld, a slurmd per namespace host), srun
# --mpi=pmix; where it cannot start here: FAIL
slurm_test                  default  900  -                             bash test/slurm_test.sh
# fmpl-blacs: exports against Debian libscalapack-openmpi, pdgesv,
# pdgetrf on 2 x 8 tcw nodes, Debian BLACS testers (mpirun) and
# ScaLAPACK testers (fmplrun; xdlu and xdllt on 4 tcw nodes)
blacs_exports               default  120  f:lib/libfmpl_blacs.so        bash test/blacs_exports.sh
blacs_pdgesv                default  300  f:lib/libfmpl_blacs.so,x:examples/pdgesv  bash test/pdgesv_test.sh
blacs_getrf_tcw             default  600  f:lib/libfmpl_blacs.so,x:bench/blacs      env FMPL_TRANSPORT=tcw bin/fmplrun -n 16 -t 500 bench/blacs -T getrf -g 2x8 -N 1000 -r 1
blacs_debian_testers        default  900  f:lib/libfmpl_blacs.so,!cmd:mpirun,!scalapack  bash test/blacs_debian.sh
blacs_scalapack_testers     default 1200  f:lib/libfmpl_blacs.so,!cmd:mpirun,!scalapack  bash test/scalapack_testers.sh
blacs_scalapack_testers_tcw default  600  f:lib/libfmpl_blacs.so,!cmd:mpirun,!scalapack  env FMPL_TRANSPORT=tcw bash test/scalapack_testers.sh -n 4 xdlu xdllt
# make install into a scratch prefix, a pkg-config build, run; the man
# pages (one per export, no warning, SEE ALSO exists, every FMPL_*
# variable in fmpl.7, man -M finds them); cmake_test; docs_test (the
# links of the documentation); layers_test (the layers of src/ run one way)
install_test                default  300  -                             sh test/install_test.sh
cmake_test                  default  600  f:test/cmake_test.sh          bash test/cmake_test.sh
man_test                    default  300  -                             bash test/man_test.sh
docs_test                   default  300  f:test/docs_test.sh           bash test/docs_test.sh
layers_test                 default   60  -                             sh test/layers_test.sh
# bench/compare -p on a short run: the data files and plots of make bench
bench_plots                 default  300  -                             bash test/bench_plots_test.sh
'
# NAME also selects these steps when the group name contains it
ALIASES='mpirun_jobs=mpirun_'

# ---- the plan: every step, in order ---------------------------------------
S_NAME=() S_TIER=() S_LIMIT=() S_REQ=() S_KIND=() S_ENV=() S_CMD=()

die() { echo "run_tests.sh: $*" >&2; exit 2; }

# rows TABLE: its rows, without comments and blank lines
rows() { printf '%s\n' "$1" | sed -e 's/[[:space:]]*#.*//' -e '/^[[:space:]]*$/d'; }

# add NAME TIER TIMEOUT REQUIRES KIND ENVIRONMENT COMMAND (KIND: check, a
# Check driver in ENVIRONMENT, or step, a COMMAND of the table, unexpanded)
add() {
    case "$2" in default|named) ;; *) die "step $1: unknown tier $2" ;; esac
    S_NAME+=("$1") S_TIER+=("$2") S_LIMIT+=("$3") S_REQ+=("$4") S_KIND+=("$5")
    S_ENV+=("$6") S_CMD+=("$7")
}

# the drivers: sources and built programs, so that --list needs no build
drivers=$(for f in test/check_*; do
              case "$f" in
                  *.c) echo "${f%.c}" ;;
                  *.o|*.d|*.log) ;;
                  *) [ -f "$f" ] && [ -x "$f" ] && echo "$f" ;;
              esac
          done | sed 's|^test/||' | LC_ALL=C sort -u)
named_drivers=" $(rows "$CHECKS" | awk '{ for (i = 3; i <= NF; i++) if ($i != "*") print $i }' |
                  tr '\n' ' ') "
declare -A V_REQ V_ENV
while read -r v req env; do
    [ "$env" = - ] && env=
    V_REQ[$v]=$req V_ENV[$v]=$env
done < <(rows "$VARIANTS")
while read -r v tier row; do
    [ -n "${V_REQ[$v]+set}" ] || die "CHECKS: unknown variant $v"
    read -ra ds <<< "$row"
    for d in "${ds[@]}"; do
        if [ "$d" = '*' ]; then
            others=()
            for o in $drivers; do
                case "$named_drivers" in *" $o "*) ;; *) others+=("$o") ;; esac
            done
        else
            others=("$d")
        fi
        for o in "${others[@]}"; do
            name=$o
            [ "$v" = plain ] || name=${v}_$o
            add "$name" "$tier" - "${V_REQ[$v]}" check "${V_ENV[$v]}" "test/$o"
        done
    done
done < <(rows "$CHECKS")
while read -r name tier limit req cmd; do
    add "$name" "$tier" "$limit" "$req" step "" "$cmd"
done < <(rows "$STEPS")

# selected NAME: a NAME argument is in NAME (or in a group of ALIASES
# that NAME belongs to), or there are no NAME arguments
selected() {
    local pat a
    [ ${#PATTERNS[@]} = 0 ] && return 0
    for pat in "${PATTERNS[@]}"; do
        case "$1" in *"$pat"*) return 0 ;; esac
        for a in $ALIASES; do
            case "${a%%=*}" in *"$pat"*) case "$1" in "${a#*=}"*) return 0 ;; esac ;; esac
        done
    done
    return 1
}

# step I: its tier and the NAME arguments let it run
wanted() {
    selected "${S_NAME[$1]}" &&
        { [ "${S_TIER[$1]}" = default ] || [ ${#PATTERNS[@]} -gt 0 ]; }
}

if [ "$LIST_ONLY" = 1 ]; then
    # every step (with NAMEs: those selected), whatever its tier
    for i in "${!S_NAME[@]}"; do
        selected "${S_NAME[i]}" || continue
        env=${S_ENV[i]} req=${S_REQ[i]}
        [ "$req" = - ] && req=
        printf '%-30s %-8s %5s  %s%s\n' "${S_NAME[i]}" "${S_TIER[i]}" "${S_LIMIT[i]}" \
            "${env:+$env }${S_CMD[i]}" "${req:+   [needs ${req//,/ }]}"
    done
    exit 0
fi

# ---- running ----------------------------------------------------------------
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

# have REQUIREMENT (see STEPS), each answer asked once
declare -A HAVE
have() {
    local r=${1#!}
    if [ -z "${HAVE[$r]+set}" ]; then
        case "$r" in
            x:*) [ -f "${r#x:}" ] && [ -x "${r#x:}" ] ;;
            f:*) [ -f "${r#f:}" ] ;;
            cmd:*) command -v "${r#cmd:}" > /dev/null 2>&1 ;;
            libfabric) [ -n "$(pkg-config --libs libfabric 2>/dev/null)" ] ;;
            fi:*) fi_info -p "${r#fi:}" > /dev/null 2>&1 ;;
            verbs) grep -q libibverbs.so.1 lib/libfmpl.so 2>/dev/null ;;
            scalapack) [ -d /usr/lib/x86_64-linux-gnu/scalapack ] ;;
            *) die "unknown requirement $r" ;;
        esac
        HAVE[$r]=$?
    fi
    return "${HAVE[$r]}"
}

# what REQUIREMENT: its words for a note
what() {
    local r=${1#!}
    case "$r" in
        x:*) echo "${r#x:} (not built)" ;;
        f:*) echo "${r#f:} (no such file)" ;;
        cmd:*) echo "${r#cmd:} (not installed)" ;;
        libfabric) echo "libfabric (pkg-config libfabric)" ;;
        fi:*) echo "libfabric's ${r#fi:} provider (fi_info -p ${r#fi:})" ;;
        verbs) echo "libfmpl built with the dcfa transport (libibverbs-dev: make deps)" ;;
        scalapack) echo "Debian's ScaLAPACK testers (/usr/lib/x86_64-linux-gnu/scalapack)" ;;
    esac
}

for i in "${!S_NAME[@]}"; do
    wanted "$i" || continue
    name=${S_NAME[i]}
    reqs=()
    [ "${S_REQ[i]}" = - ] || IFS=, read -ra reqs <<< "${S_REQ[i]}"
    [ "${S_KIND[i]}" = check ] && reqs+=("x:${S_CMD[i]}")
    missing=
    for r in "${reqs[@]}"; do
        have "$r" || { missing=$r; break; }
    done
    if [ -n "$missing" ]; then
        if [ "${missing:0:1}" = '!' ]; then
            echo "=== $name: FAIL: needs $(what "$missing")"
            echo "needs $(what "$missing")" > "$LOGS/$name.log"
            record "$name" 1
        else
            echo "=== $name: skipped: needs $(what "$missing")"
        fi
    elif [ "${S_KIND[i]}" = check ]; then
        read -ra env <<< "${S_ENV[i]}"
        run_check "$name" "${S_CMD[i]}" "${env[@]}"
    else
        eval "cmd=(${S_CMD[i]})"
        run_step "$name" "${S_LIMIT[i]}" "${cmd[@]}"
    fi
done

# ---- summary ----------------------------------------------------------------
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
        elif grep -qE '^ *FAIL' "$log"; then
            # a script's own failed jobs (each says why below its line),
            # then how it ended
            grep -A 26 -E '^ *FAIL' "$log" | head -n 80 | sed 's/^/    /'
            echo "    ..."
            tail -n 4 "$log" | sed 's/^/    /'
        else
            tail -n 15 "$log" | sed 's/^/    /'
        fi
    done
    echo "=== failed: ${failures[*]}"
fi
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
