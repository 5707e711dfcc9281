#!/bin/bash
# rxe_run.sh - run one FMPL job where it has real InfiniBand verbs: in a qemu
# guest whose kernel has soft-RoCE (rdma_rxe).  This machine's own kernel has
# no RDMA at all, so this is how the verbs transport (FMPL_TRANSPORT=dcfa) is
# tested here and in CI.
#
#   test/rxe_run.sh [-g GUESTS] [-t SECONDS] [-v] -n N PROG [ARGS...]
#   test/rxe_run.sh [-g GUESTS] [-t SECONDS] [-v] -c CMD [ARGS...]
#   test/rxe_run.sh -h
#
# -c runs CMD itself instead of a job (a script that starts several jobs
# with bin/fmplrun: one boot for all of them - the boot is most of a
# short job's time here).
# With one guest (-g 1, the default) runs `bin/fmplrun -n N -- PROG
# ARGS...` (the fmplrun of the tree this script lives in); with two (-g 2)
# `mpirun --map-by node -n N PROG ARGS...` over both guests, so that ranks
# 0, 2, 4... run on guest 1 and 1, 3, 5... on guest 2 and every pair of
# neighbours crosses the link: FMPL bootstraps through PMIx there, as on a
# cluster.  Either runs in the caller's current directory inside guest 1,
# under
# timeout(1) SECONDS (default 240), with standard input /dev/null.  The job's
# standard output and error are files in the run's work folder, printed on
# this script's standard output and error once the guest has stopped (so
# they come at the end, not as the job writes them, and the order between
# the two is lost).  One line on stderr tells how long the guest took to boot
# and bring up the devices.  -v also shows, on stderr and as they come, the
# package installs, the cache build and the whole guest console.
#
# Exit status:
#   0..255 but 125  the job's: fmplrun's status (fmplrun -h; mpirun's with
#                   -g 2), or timeout's 124 when SECONDS ran out (126/127:
#                   fmplrun could not run)
#   125             the test bed failed - packages, guest kernel, boot, no
#                   rxe devices, a directory the guest cannot see, qemu's own
#                   time limit, an interrupt - never the job: then the job
#                   did not run to an exit status, and "rxe_run: ERROR" on
#                   stderr, with the tail of the guest console, says why.
#                   (A job that itself exits 125 is passed on as it is; only
#                   that ERROR line tells the two apart.)
#   2               usage error (ours; fmplrun's own usage error is a job
#                   status 2 as well)
#
# The guests: Debian's own kernel (linux-image-amd64's) under qemu's software
# emulation, TCG - 5-10x slower than native; the host's KVM cannot run that
# kernel, so never -enable-kvm - booted with a small busybox initramfs whose
# /init mounts the host's / read-only over 9p and runs test/rxe_guest.sh
# chrooted into it.  So the job runs the host's binaries and libraries at
# their host paths, and nothing needs copying into the guest.  One guest:
#   veth0 <-> veth1   a veth pair; veth0 has 169.254.78.1/24 (exists only in
#                     the guest: the guest has no other network at all)
#   rxe0, rxe1        soft-RoCE devices on veth0 and veth1 (ibv_devices must
#                     list both, or the run fails with 125)
# Two guests, named fmpl-rxe-g1 and fmpl-rxe-g2:
#   eth0              a virtio NIC on a qemu UDP socket link between the two
#                     qemus (127.0.0.1, the only traffic on the host), with
#                     169.254.79.1/24 and .2/24: nothing else is on that wire
#   rxe0              a soft-RoCE device on it in each guest
#   remote shell      guest 2 serves the command lines mpirun's remote agent
#                     (test/rxe_guest.sh --rsh) sends on TCP port 7070; a -c
#                     script finds the mpirun that uses it in $RXE_MPIRUN
#                     (with --host for both guests: add -n and --map-by)
#   RXE_GUESTS        the number of guests, in the job's environment
#   /tmp, /var/tmp    the host's (CI clones the project under /tmp), each
#                     exported as a 9p share of its own and made writable by
#                     an overlay whose writes stay in the guest
#   /run, /dev/shm    empty tmpfs (FMPL's shm transport needs /dev/shm)
#   the rest          the host's, read-only: a job that writes files beside
#                     itself fails loudly (EROFS) rather than losing them.
#                     Cached as a local disk would be (9p cache=loose): a
#                     file the host changes during the run may be seen stale
# The job's environment is only PATH and the caller's FMPL_*, FI_* and
# OMPI_* variables (on guest 2: FMPL_* and FI_*, passed by mpirun -x),
# plus HOME=/run/home and FMPL_TRANSPORT=dcfa unless the caller set
# FMPL_TRANSPORT.
#
# Needs root (apt-get, and 9p reading any file of /).  Missing Debian
# packages are installed.  The guest kernel and initramfs are built once
# into a cache, FMPL_RXE_CACHE (default /var/tmp/fmpl-rxe), under an flock,
# and rebuilt when missing or when this script changes (its sha256 is kept
# there as stamp).  Each run works in a folder of its own (mktemp -d,
# fmpl-rxe.XXXXXX in TMPDIR or /tmp), removed on exit, failure and
# interrupt alike; only a SIGKILLed run leaves it, and its qemu runs on to
# its own time limit.
# FMPL_RXE_BOOT (default 300) is how many seconds beyond -t qemu may run
# before the guest is taken as hung.
set -u

SELF=$(readlink -f -- "${BASH_SOURCE[0]}")
TOP=$(dirname -- "$(dirname -- "$SELF")")
FMPLRUN=$TOP/bin/fmplrun
GUEST_SCRIPT=$TOP/test/rxe_guest.sh
CACHE=${FMPL_RXE_CACHE:-/var/tmp/fmpl-rxe}
PACKAGES="qemu-system-x86 busybox-static kmod cpio iproute2 ibverbs-utils
          ibverbs-providers libibverbs-dev rdma-core"
# Guest modules in load order (busybox insmod: no modprobe, no automatic
# loading), each with its dependencies put before it.  "?" marks those a
# kernel may lack or have built in.  crc32_generic and crc32_pclmul must be
# in before rdma_rxe: it asks the crypto API for crc32, which nothing
# would load on demand in this guest.  sch_netem: test/netfault_test.sh
# breaks the guests' link with tc's netem (the host's kernel has none).
MODULES="virtio_pci virtio_net 9pnet_virtio 9p overlay veth crc32_generic? crc32_pclmul?
         rdma_rxe ib_uverbs rdma_ucm? sch_netem?"
GUEST_MEM=2048          # MiB a guest: the job, its /dev/shm and the overlays
GUEST_CPUS=2            # the machine has 2 cores; TCG runs one thread each
# qemu's own limit is SECONDS plus this: boot and set-up take 10-15 s on an
# idle machine, several times that on a loaded one.  Past it the guest is
# taken as hung (125).
BOOT_ALLOWANCE=${FMPL_RXE_BOOT:-300}

secs=240
guests=1
verbose=0
nprocs=""
command_mode=0
W=""                    # the run's work folder, shared with the guest
QPIDS=()                # timeout(1) running each guest's qemu
TPIDS=()                # the -v console followers

say() { echo "rxe_run: $*" >&2; }

usage() {
    cat <<'EOF'
Usage: test/rxe_run.sh [-g GUESTS] [-t SECONDS] [-v] -n N PROG [ARGS...]
       test/rxe_run.sh [-g GUESTS] [-t SECONDS] [-v] -c CMD [ARGS...]
Run `bin/fmplrun -n N PROG ARGS...` inside a qemu guest with soft-RoCE
InfiniBand verbs devices (rxe0, rxe1), from the current directory, and
print the job's output.  With -g 2, run it as `mpirun --map-by node -n N`
over two guests joined by a qemu link, each with its rxe0.

  -g GUESTS   1 (default) or 2
  -n N        number of processes
  -c          run CMD ARGS... as it is, not through fmplrun (a script of
              several jobs: one boot for all; with -g 2, $RXE_MPIRUN is
              the mpirun for both guests)
  -t SECONDS  kill the job after SECONDS (default 240; status 124)
  -v          show package installs, cache build and the guest console
  -h          print this help

Passes PATH and every FMPL_*, FI_* and OMPI_* variable to the job, and
FMPL_TRANSPORT=dcfa unless set.  FMPL_RXE_GCOV=1 (make coverage): the
guests' gcov counts of a --coverage build are merged into the host's.  Cache: FMPL_RXE_CACHE (/var/tmp/fmpl-rxe).
FMPL_RXE_BOOT: seconds beyond SECONDS before the guest counts as hung (300).
Exit status: the job's; 125 when the test bed failed; 2 for a usage error.
EOF
}

bad_usage() {
    say "$*"
    echo "usage: test/rxe_run.sh [-g GUESTS] [-t SECONDS] [-v] {-n N PROG | -c CMD} [ARGS...]  (-h: help)" >&2
    exit 2
}

# console_text G: guest G's console without the terminal escapes and
# firmware chatter.
console_text() {
    [ -f "$W/console.$1.log" ] || return 0
    tr -d '\r' <"$W/console.$1.log" |
        sed -e 's/\x1b\[[0-9;?]*[A-Za-z]//g' -e 's/\x1bc//g' |
        grep -v -e '^$' -e 'SeaBIOS' -e '^Booting from' -e '^iPXE'
}

# bed_failed MESSAGE: the test bed, not the job, failed: say why, with what
# the set-up, qemu and the guest said last, and exit 125.
bed_failed() {
    say "ERROR: $*"
    if [ "$verbose" = 0 ] && [ -s "$W/setup.log" ]; then
        say "last lines of the set-up log:"
        tail -n 20 "$W/setup.log" | sed 's/^/  | /' >&2
    fi
    local g
    for g in $(seq "$guests"); do
        if [ -s "$W/qemu.$g.log" ]; then
            say "qemu of guest $g said:"
            tail -n 20 "$W/qemu.$g.log" | sed 's/^/  | /' >&2
        fi
        if [ -s "$W/console.$g.log" ] && [ "$verbose" = 0 ]; then
            say "last lines of guest $g's console:"
            console_text "$g" | tail -n 40 | sed 's/^/  | /' >&2
        fi
    done
    say "the job did not run to an exit status: exit 125"
    exit 125
}

# shellcheck disable=SC2317  # run by the EXIT trap
cleanup() {
    # timeout(1) passes the TERM on to qemu and waits for it: qemu is gone
    # (and writes nothing more into the work folder) once this returns.
    local p
    for p in "${QPIDS[@]}" "${TPIDS[@]}"; do kill "$p" 2>/dev/null; done
    for p in "${QPIDS[@]}" "${TPIDS[@]}"; do wait "$p" 2>/dev/null; done
    gcov_merge
    if [ -n "$W" ]; then rm -rf -- "$W"; fi
}

# gcov_merge: under FMPL_RXE_GCOV=1, the gcov counts the guests' processes
# wrote under WORK/gcov.G (GCOV_PREFIX: the guest's /tmp and /var/tmp are
# overlays whose writes stay in the guest, and the rest is read-only)
# added to the host's files at the same paths (gcov-tool merge), so that
# make coverage counts what ran on rxe.
# shellcheck disable=SC2317  # run by the EXIT trap
gcov_merge() {
    [ "${FMPL_RXE_GCOV:-0}" = 1 ] && [ -n "$W" ] || return 0
    local d f host t n=0
    command -v gcov-tool >/dev/null ||
        { say "no gcov-tool: the guests' coverage is not counted"; return 0; }
    for d in "$W"/gcov.*; do
        [ -d "$d" ] || continue
        while IFS= read -r -d '' f; do
            host=${f#"$d"}
            [ -d "${host%/*}" ] || continue      # not a file of this host's tree
            if [ -f "$host" ]; then
                t=$(mktemp -d) || return 0
                mkdir "$t/h" "$t/g" && cp -- "$host" "$t/h/" && cp -- "$f" "$t/g/" &&
                    gcov-tool merge -o "$t/m" "$t/h" "$t/g" >/dev/null 2>&1 &&
                    cp -- "$t/m/${f##*/}" "$host" && n=$((n + 1))
                rm -rf -- "$t"
            else
                cp -- "$f" "$host" && n=$((n + 1))
            fi
        done < <(find "$d" -name '*.gcda' -print0)
    done
    [ "$verbose" = 1 ] && say "merged $n gcov files from the guests"
    return 0
}

# quietly CMD...: run a set-up command, its output in the set-up log (shown
# on failure), or on stderr with -v.
quietly() {
    if [ "$verbose" = 1 ]; then "$@" >&2; else "$@" >>"$W/setup.log" 2>&1; fi
}

# Paths the guest replaces with its own (tmpfs, proc, sys): a tree, a
# program or a current directory there cannot be seen from the guest.
hidden_in_guest() {
    case $(readlink -m -- "$1") in
        /run | /run/* | /dev | /dev/* | /proc | /proc/* | /sys | /sys/*) return 0 ;;
    esac
    return 1
}

# qemu option values end at a comma unless it is doubled.
qemu_path() { printf '%s' "${1//,/,,}"; }

ensure_packages() {
    local p missing=()
    for p in $PACKAGES; do
        [ "$(dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null)" = "ii " ] ||
            missing+=("$p")
    done
    [ ${#missing[@]} = 0 ] && return 0
    [ "$(id -u)" = 0 ] || bed_failed "missing packages ${missing[*]} (run as root to have them installed)"
    [ "$verbose" = 1 ] && say "installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    quietly apt-get update -q || bed_failed "apt-get update failed"
    quietly apt-get install -y -q --no-install-recommends "${missing[@]}" ||
        bed_failed "apt-get install ${missing[*]} failed"
}

# The versioned kernel package that linux-image-amd64 stands for.
kernel_package() {
    apt-cache depends linux-image-amd64 2>/dev/null |
        awk '/Depends: linux-image-[0-9]/ { print $2; exit }'
}

# build_cache: the guest kernel, its module list and the initramfs, into
# CACHE.  Called with CACHE's lock held.
build_cache() {
    local b=$CACHE/build kpkg deb kv m opt p name
    rm -rf -- "$b"          # a build killed half-way
    mkdir -p "$b/initramfs/bin" "$b/initramfs/mods" "$CACHE/debs" || return 1
    kpkg=$(kernel_package)
    if [ -z "$kpkg" ]; then
        quietly apt-get update -q
        kpkg=$(kernel_package)
    fi
    [ -n "$kpkg" ] || { say "no linux-image-amd64 in apt's lists"; return 1; }
    deb=$(find "$CACHE/debs" -name "${kpkg}_*.deb" | head -n 1)
    if [ -z "$deb" ]; then
        [ "$verbose" = 1 ] && say "downloading $kpkg"
        rm -f -- "$CACHE"/debs/*.deb          # an older kernel's
        (cd "$CACHE/debs" && quietly apt-get download -q "$kpkg") || return 1
        deb=$(find "$CACHE/debs" -name "${kpkg}_*.deb" | head -n 1)
        [ -n "$deb" ] || return 1
    fi
    dpkg-deb -x "$deb" "$b/kroot" || return 1
    # depmod and modprobe -d look under lib/modules; newer packages ship
    # usr/lib/modules only.
    [ -e "$b/kroot/lib" ] || ln -s usr/lib "$b/kroot/lib"
    kv=$(find "$b/kroot/lib/modules/" -mindepth 1 -maxdepth 1 -printf '%f\n' | head -n 1)
    if [ -z "$kv" ] || [ ! -f "$b/kroot/boot/vmlinuz-$kv" ]; then
        say "no kernel in $deb"
        return 1
    fi
    quietly depmod -b "$b/kroot" "$kv" || return 1

    # modprobe --show-depends lists "insmod PATH" for a module and, before
    # it, each dependency ("builtin NAME" for what the kernel has in).
    : >"$b/deps"
    for m in $MODULES; do
        opt=0
        case $m in *\?) opt=1; m=${m%\?} ;; esac
        if ! modprobe -d "$b/kroot" -S "$kv" --show-depends "$m" >>"$b/deps" 2>>"$W/setup.log"; then
            [ "$opt" = 1 ] && continue
            say "the guest kernel has no module $m"
            return 1
        fi
    done
    awk '$1 == "insmod" && !seen[$2]++ { print $2 }' "$b/deps" >"$b/paths" || return 1
    : >"$b/initramfs/modules.list"
    while read -r p; do
        # busybox's insmod may not read compressed modules
        name=$(basename "$p")
        case $p in
            *.ko.xz) name=${name%.xz}; xz -dc "$p" ;;
            *.ko.zst) name=${name%.zst}; zstd -qdc "$p" ;;
            *.ko.gz) name=${name%.gz}; gzip -dc "$p" ;;
            *) cat "$p" ;;
        esac >"$b/initramfs/mods/$name" || return 1
        echo "$name" >>"$b/initramfs/modules.list"
    done <"$b/paths"

    cp -L /bin/busybox "$b/initramfs/bin/busybox" || return 1
    mkdir -p "$b/initramfs/"{proc,sys,dev,newroot,w,lower,upper} || return 1
    write_init >"$b/initramfs/init" && chmod 755 "$b/initramfs/init" || return 1
    (cd "$b/initramfs" && find . | cpio -o -H newc -R 0:0 --quiet | gzip -1) \
        >"$b/initrd.gz" || return 1

    # The stamp goes last: a build killed before it is redone.
    rm -f -- "$CACHE/stamp"
    cp "$b/kroot/boot/vmlinuz-$kv" "$CACHE/vmlinuz" &&
        cp "$b/initrd.gz" "$CACHE/initrd.gz" &&
        cp "$b/initramfs/modules.list" "$CACHE/modules.list" &&
        echo "$kpkg $kv" >"$CACHE/kernel" || return 1
    echo "$HASH" >"$CACHE/stamp" || return 1
    rm -rf -- "$b"
}

# The guest's /init, run by busybox sh.  Everything the job needs mounted is
# mounted here, before the chroot, since test/rxe_guest.sh itself may lie
# under the host's /tmp.  Whatever happens it powers off, so that qemu
# exits; what went wrong goes to the work share's bedfail for the host.
write_init() {
    cat <<'EOF'
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mkdir -p /dev/pts /dev/shm
while read -r m; do
    insmod "/mods/$m" || echo "rxe-init: insmod $m failed"
done </modules.list

off() { sync; poweroff -f; }
fail() { echo "rxe-init: $*"; echo "guest /init: $*" >>/w/bedfail; off; }
P9=trans=virtio,version=9p2000.L,msize=262144
# The read-only views are cached as a local disk would be (cache=loose):
# uncached, every exec re-reads its binary and libraries over 9p, which
# doubled the guest's time.  A host file changed during the run may then
# be seen as it was when first read.
RO9=ro,cache=loose,$P9
mount -t 9p -o "$P9" work /w || { echo "rxe-init: cannot mount the work share"; off; }
mount -t 9p -o "$RO9" hostroot /newroot || fail "cannot mount the host's / over 9p"
mount -t tmpfs -o mode=755 run /newroot/run &&
    mkdir /newroot/run/fmpl-rxe && mount -o bind /w /newroot/run/fmpl-rxe ||
    fail "cannot lay tmpfs and the work share on /run"
# /tmp and /var/tmp: the host's files (the job may live there), writable,
# and the host's copy never written to.
mount -t tmpfs -o mode=755 upper /upper || fail "cannot mount tmpfs for the overlays"
for s in hosttmp:tmp hostvartmp:var/tmp; do
    tag=${s%%:*}
    dir=${s#*:}
    mkdir -p "/lower/$tag" "/upper/$tag/u" "/upper/$tag/w" && chmod 1777 "/upper/$tag/u" &&
        mount -t 9p -o "$RO9" "$tag" "/lower/$tag" &&
        mount -t overlay overlay \
            -o "lowerdir=/lower/$tag,upperdir=/upper/$tag/u,workdir=/upper/$tag/w" "/newroot/$dir" ||
        fail "cannot lay the host's /$dir on /$dir"
done
mount -o bind /proc /newroot/proc && mount -o bind /sys /newroot/sys &&
    mount -o bind /dev /newroot/dev && mount -t devpts devpts /newroot/dev/pts &&
    mount -t tmpfs -o mode=1777 shm /newroot/dev/shm ||
    fail "cannot mount proc, sys and dev in the chroot"

chroot /newroot /bin/bash /run/fmpl-rxe/start.sh
rc=$?
[ -e /w/status ] || [ -e /w/bedfail ] ||
    echo "rxe_guest.sh ended (status $rc) without a job status" >>/w/bedfail
off
EOF
}

# ---------------------------------------------------------------- arguments
while getopts ":g:t:vn:ch" opt; do
    case $opt in
        g) guests=$OPTARG ;;
        t) secs=$OPTARG ;;
        v) verbose=1 ;;
        c) command_mode=1 ;;
        n) nprocs=$OPTARG ;;
        h) usage; exit 0 ;;
        :) bad_usage "option -$OPTARG needs a value" ;;
        *) bad_usage "unknown option -$OPTARG" ;;
    esac
done
shift $((OPTIND - 1))
[[ $guests =~ ^[12]$ ]] || bad_usage "-g wants 1 or 2 guests, not '$guests'"
[[ $secs =~ ^[1-9][0-9]{0,6}$ ]] || bad_usage "-t wants a whole number of seconds > 0, not '$secs'"
if [ $command_mode = 1 ]; then
    [ -z "$nprocs" ] || bad_usage "-c and -n do not go together"
else
    [ -n "$nprocs" ] || bad_usage "-n N (or -c) is required"
    [[ $nprocs =~ ^[1-9][0-9]{0,5}$ ]] || bad_usage "-n wants a number of processes > 0, not '$nprocs'"
fi
[ $# -gt 0 ] || bad_usage "no PROG given"
[[ $BOOT_ALLOWANCE =~ ^[1-9][0-9]{0,5}$ ]] || bad_usage "FMPL_RXE_BOOT wants a whole number of seconds > 0"

# ------------------------------------------------------------- the host side
trap cleanup EXIT
trap 'say "interrupted"; exit 125' HUP INT TERM
W=$(mktemp -d -t fmpl-rxe.XXXXXX) || { W=""; say "ERROR: mktemp -d failed"; exit 125; }
: >"$W/setup.log"

[ -x "$FMPLRUN" ] || bed_failed "no $FMPLRUN: build the tree first (make)"
[ -f "$GUEST_SCRIPT" ] || bed_failed "no $GUEST_SCRIPT"
cwd=$(pwd -P)
for p in "$TOP" "$cwd"; do
    hidden_in_guest "$p" && bed_failed "$p lies where the guest has a file system of its own (/run, /dev, /proc, /sys)"
done
case $1 in
    */*) hidden_in_guest "$1" && bed_failed "$1 lies where the guest has a file system of its own (/run, /dev, /proc, /sys)" ;;
esac

ensure_packages
command -v qemu-system-x86_64 >/dev/null || bed_failed "no qemu-system-x86_64 after installing qemu-system-x86"

# The cache: build it if needed and take a copy of the kernel and initramfs,
# all under the lock.  The copy lets the lock go before the guest boots: a
# concurrent run of a different version of this script may rebuild the cache
# at once without pulling the files from under this run's qemu.
HASH=$(sha256sum <"$SELF" | cut -d' ' -f1)
mkdir -p -- "$CACHE" || bed_failed "cannot create the cache folder $CACHE"
CACHE=$(readlink -f -- "$CACHE")
exec 9>>"$CACHE/lock" || bed_failed "cannot open $CACHE/lock"
flock -w 1800 9 || bed_failed "$CACHE is locked by another run for 30 minutes"
if [ "$(cat "$CACHE/stamp" 2>/dev/null)" != "$HASH" ] ||
    [ ! -s "$CACHE/vmlinuz" ] || [ ! -s "$CACHE/initrd.gz" ]; then
    [ "$verbose" = 1 ] && say "building the guest kernel and initramfs in $CACHE"
    build_cache || bed_failed "cannot build the guest kernel and initramfs in $CACHE"
fi
cp "$CACHE/vmlinuz" "$CACHE/initrd.gz" "$W/" || bed_failed "cannot copy from $CACHE"
exec 9>&-

# What the guest runs: start.sh (for /init) and the job, as bash source.
{
    echo "# written by test/rxe_run.sh: run by the guest's /init, chrooted into the host's /"
    printf 'exec /bin/bash %q /run/fmpl-rxe\n' "$GUEST_SCRIPT"
} >"$W/start.sh"
[ -n "${FMPL_TRANSPORT+set}" ] || export FMPL_TRANSPORT=dcfa
{
    echo "# written by test/rxe_run.sh: the job for test/rxe_guest.sh"
    printf 'RXE_CWD=%q\n' "$cwd"
    printf 'RXE_TIMEOUT=%q\n' "$secs"
    # how long guest 1 waits for the others to come up after itself
    printf 'RXE_PEER_WAIT=%q\n' "$BOOT_ALLOWANCE"
    printf 'RXE_CMD=('
    if [ $command_mode = 1 ]; then
        printf ' %q' "$@"
    elif [ "$guests" = 1 ]; then
        printf ' %q' "$FMPLRUN" -n "$nprocs" -- "$@"
    else
        printf ' %q' /bin/bash "$GUEST_SCRIPT" --mpirun --map-by node -n "$nprocs" "$@"
    fi
    printf ' )\nRXE_ENV=('
    for v in $(compgen -e); do
        case $v in
            PATH | FMPL_* | FI_* | OMPI_*) printf ' %q' "$v=${!v}" ;;
        esac
    done
    printf ' )\n'
} >"$W/job.sh"

# The 9p shares: / read-only (multidevs=remap: it spans several host file
# systems, whose inode numbers would collide), /tmp and /var/tmp again on
# their own (the guest lays an overlay on them, and they may be file
# systems of their own), and the work folder read-write.
share() { # TAG PATH [readonly]
    printf -- '-virtfs\nlocal,path=%s,mount_tag=%s,security_model=none,multidevs=remap%s\n' \
        "$(qemu_path "$2")" "$1" "${3:+,readonly=on}"
}
mapfile -t shares < <(share hostroot / ro; share hosttmp /tmp ro
    share hostvartmp /var/tmp ro; share work "$W")

qlimit=$((secs + BOOT_ALLOWANCE))
# Two guests: a UDP socket link, each qemu sending to the other's port on
# 127.0.0.1 (the notes' lesson: qemu's TCP link makes RDMA crawl).  Ports
# from the ephemeral range, picked at random; a port taken makes qemu fail
# at once, which the loop below tells from a guest that booted.
link=()
if [ "$guests" = 2 ]; then
    port1=$((40000 + RANDOM % 20000))
    port2=$((port1 + 1))
fi
t0=${EPOCHREALTIME/[.,]/}     # microseconds, whatever the locale's decimal point
# -nodefaults: no VGA, NIC, parallel port or monitor, only what is listed;
# the console goes to a file (never the caller's terminal, which qemu would
# put in raw mode).  panic=-1 with -no-reboot: a kernel panic ends qemu.
# tsc=reliable: TCG's time stamp counter is the host's, one for every vCPU,
# but the guest's boot-time check calls it unsynchronised and falls back to
# the emulated HPET, where a clock_gettime costs 1-1.5 us (on the TSC: 0.1
# us, the host's 30 ns) - a cost a real machine does not have, which every
# wait that reads the clock paid here (issue 17's note).
for g in $(seq "$guests"); do
    if [ "$guests" = 2 ]; then
        me=$port1 peer=$port2
        [ "$g" = 2 ] && me=$port2 peer=$port1
        link=(-netdev "socket,id=n0,udp=127.0.0.1:$peer,localaddr=127.0.0.1:$me"
            -device "virtio-net-pci,netdev=n0,mac=52:54:00:4f:00:0$g,romfile=")
    fi
    timeout -k 10 "$qlimit" qemu-system-x86_64 -nodefaults -no-user-config \
        -display none -accel tcg,thread=multi -cpu max \
        -m "$GUEST_MEM" -smp "$GUEST_CPUS" -no-reboot \
        -kernel "$W/vmlinuz" -initrd "$W/initrd.gz" \
        -append "console=ttyS0 quiet loglevel=3 panic=-1 mitigations=off tsc=reliable fmpl_rxe fmpl_rxe_guest=$g fmpl_rxe_guests=$guests" \
        -serial "file:$W/console.$g.log" "${shares[@]}" "${link[@]}" \
        </dev/null >"$W/qemu.$g.log" 2>&1 &
    QPIDS+=($!)
    if [ "$verbose" = 1 ]; then
        tail -n +1 -F --pid="$!" "$W/console.$g.log" 2>/dev/null | tr -d '\r' | sed "s/^/[g$g] /" >&2 &
        TPIDS+=($!)
    fi
done

declare -A up=()
guests_up() {
    local g ds
    for g in $(seq "$guests"); do
        [ -z "${up[$g]:-}" ] && [ -s "$W/ready.$g" ] || continue
        up[$g]=1
        ds=$(((ready_at - t0) / 100000))
        if [ "$guests" = 1 ]; then
            say "guest up in $((ds / 10)).$((ds % 10)) s, devices $(cat "$W/ready.$g")"
        else
            say "guest $g up in $((ds / 10)).$((ds % 10)) s, devices $(cat "$W/ready.$g")"
        fi
    done
}
# Until every qemu has ended.  Guest 2 powers off once guest 1 has left a
# status or bedfail; if guest 1's qemu is gone without either, guest 2
# would wait for nothing: it is stopped 30 s later.
alone_since=""
while :; do
    ready_at=${EPOCHREALTIME/[.,]/}
    guests_up
    alive=0
    for p in "${QPIDS[@]}"; do kill -0 "$p" 2>/dev/null && alive=$((alive + 1)); done
    [ "$alive" = 0 ] && break
    if [ "$guests" = 2 ] && ! kill -0 "${QPIDS[0]}" 2>/dev/null; then
        [ -n "$alone_since" ] || alone_since=$SECONDS
        if [ $((SECONDS - alone_since)) -ge 30 ]; then
            kill "${QPIDS[1]}" 2>/dev/null
        fi
    fi
    sleep 0.2
done
wait "${QPIDS[0]}"
qrc=$?
[ "$guests" = 2 ] && wait "${QPIDS[1]}"
QPIDS=()
guests_up                # a job shorter than one poll
for p in "${TPIDS[@]}"; do wait "$p"; done
TPIDS=()
if [ "$verbose" = 1 ]; then
    for g in $(seq "$guests"); do
        [ -s "$W/qemu.$g.log" ] || continue
        say "qemu of guest $g said:"
        sed 's/^/  | /' "$W/qemu.$g.log" >&2
    done
fi

# The job's output first, also when the test bed failed afterwards.
[ -f "$W/stdout" ] && cat -- "$W/stdout"
[ -f "$W/stderr" ] && cat -- "$W/stderr" >&2
if [ -s "$W/bedfail" ]; then
    bed_failed "in the guest: $(cat "$W/bedfail")"
fi
status=$(cat "$W/status" 2>/dev/null)
[[ $status =~ ^[0-9]+$ ]] && exit "$status"
if [ "$qrc" = 124 ] || [ "$qrc" = 137 ]; then
    bed_failed "qemu killed after $qlimit s (-t $secs plus FMPL_RXE_BOOT=$BOOT_ALLOWANCE for the boot): the guest hung or booted too slowly"
fi
bed_failed "the guest stopped without a job status (qemu's status $qrc)"
