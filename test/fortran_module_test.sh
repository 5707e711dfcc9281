#!/bin/sh
# fortran_module_test.sh - the Fortran module `use fmpl`
# (src/fortran/fmpl_mod.f90; `make` writes build/fortran/fmpl.mod):
#
#   1. the interfaces: one for every Fortran binding libfmpl.so exports
#      and src/fortran/*.c defines, each bound to its own symbol, and with
#      the argument types of the C definition (gfortran -fc-prototypes of
#      the module against src/fortran/*.c: intent(in) is `const`); the
#      constants are fmplf.h's, with the same values; the module's object
#      defines no symbol (so nothing needs linking);
#   2. wrong calls: each of a set of one-line changes to a correct program
#      (a wrong type, kind or rank, a missing or extra argument, a
#      character for a count, a constant where FMPL stores a result) and
#      the program compiled with -fdefault-integer-8 must FAIL to compile
#      with the expected error; the correct program, which calls every
#      binding, compiles, links and passes under bin/fmplrun -n 2;
#   3. the module's make rule, in a copy of the tree: one short line, the
#      command with V=1, nothing with -s, FC and FFLAGS honoured, nothing
#      to do the second time;
#   4. `make install DESTDIR=... PREFIX=/usr` puts fmpl.mod in
#      /usr/lib/fortran/gfortran-mod-N (N: the module version of $FC), a
#      `use fmpl` program builds with nothing but `pkg-config --cflags
#      --libs fmpl` (the staged fmpl.pc, PKG_CONFIG_SYSROOT_DIR) and passes
#      under the staged fmplrun; `make uninstall` removes fmpl.mod.
#
# Needs a built tree (make).  Prints "N passed, M failed"; the exit status
# is non-zero when anything failed.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
FC=${FC:-gfortran}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fmpl-fmod.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
# gfortran's messages with plain quotes
LC_ALL=C
export LC_ALL
pass=0 fail=0
step() {
    name=$1; shift
    if "$@" > "$tmp/step.log" 2>&1; then
        pass=$((pass + 1)); echo "PASS $name"
    else
        fail=$((fail + 1)); echo "FAIL $name"; sed 's/^/    /' "$tmp/step.log"
    fi
}
mod="$top/build/fortran"
if [ ! -f "$mod/fmpl.mod" ] || [ ! -x "$top/bin/fmplrun" ] || [ ! -f "$top/lib/libfmpl.so" ]; then
    echo "FAIL: build/fortran/fmpl.mod, bin/fmplrun or lib/libfmpl.so missing (run make)"
    echo "0 passed, 1 failed"
    exit 1
fi

# ---- 1. interfaces against the library ---------------------------------
# binding symbols: exported by the library, defined in src/fortran/*.c,
# bound by the module (its source, continuation lines joined)
nm -D --defined-only "$top/lib/libfmpl.so" | awk '$2 == "T" && $3 ~ /^fmpl_.*_$/ { print $3 }' |
    sort > "$tmp/exported"
sed -n 's/^FMPLF_API void \(fmpl_[a-z0-9_]*_\)(.*/\1/p' "$top"/src/fortran/*.c | sort > "$tmp/defined"
sed -e ':a' -e '/&[ ]*$/{N;s/&[ ]*\n[ ]*//;ba' -e '}' "$top/src/fortran/fmpl_mod.f90" |
    sed -n 's/^ *subroutine \([a-z0-9_]*\)(.*bind(C, *name="\([a-z0-9_]*\)").*/\1 \2/p' \
    > "$tmp/bound"
cut -d' ' -f2 "$tmp/bound" | sort > "$tmp/labels"
step "bindings found (library, C, module)" sh -c "test \$(wc -l < '$tmp/exported') -ge 35 &&
    test \$(wc -l < '$tmp/defined') -ge 35 && test \$(wc -l < '$tmp/labels') -ge 35"
step "every binding libfmpl exports has an interface" diff "$tmp/exported" "$tmp/labels"
step "every binding src/fortran/*.c defines has an interface" diff "$tmp/defined" "$tmp/labels"
step "each interface binds its own name + _" sh -c "awk '\$2 != \$1 \"_\"' '$tmp/bound' | grep . && exit 1; exit 0"

# The interfaces as C prototypes (gfortran -fc-prototypes) against the C
# definitions: a binding whose arguments differ in number, type or const
# (intent(in)) is a "conflicting types" error.  gfortran 12 cannot print
# TYPE(*); a choice buffer is passed as its address, so the copy declares
# buffers type(c_ptr), value (void *), and the C copies drop const on void *.
mkdir -p "$tmp/proto"
sed -e 's/!GCC\$ ATTRIBUTES NO_ARG_CHECK.*//' \
    -e 's/type(\*), dimension(\*)[^:]*::/type(c_ptr), value ::/' \
    -e 's/import :: /import :: c_ptr, /' \
    -e 's/only: c_int,/only: c_ptr, c_int,/' \
    "$top/src/fortran/fmpl_mod.f90" > "$tmp/proto/proto.f90"
proto() {
    cd "$tmp/proto" &&
    $FC -fc-prototypes -fsyntax-only -I"$top/include" proto.f90 > proto.h &&
    test "$(grep -c '^void fmpl_.*_ (' proto.h)" = "$(wc -l < "$tmp/labels")" &&
    for f in "$top"/src/fortran/*.c; do
        sed 's/\bconst void \*/void */g' "$f" > "${f##*/}" &&
        cc -fsyntax-only -Wall -I"$top/include" -I"$top/src" -include proto.h "${f##*/}" || return 1
    done
}
step "interfaces have the C definitions' argument types" proto

# the constants: every name of fmplf.h, through the module and through
# the header, same values; the kinds are C's int64_t
names=$(sed -n 's/^ *integer, parameter :: //p' "$top/include/fmplf.h" | tr ',' '\n' |
        sed 's/=.*//; s/ //g')
nnames=$(echo "$names" | wc -l)
{
    echo "program consts_mod"
    echo "  use fmpl"
    echo "  implicit none"
    echo "  if (storage_size(0_FMPL_SIZE_KIND) /= 64) error stop 'FMPL_SIZE_KIND'"
    echo "  if (storage_size(0_FMPL_REQUEST_KIND) /= 64) error stop 'FMPL_REQUEST_KIND'"
    echo "  if (storage_size(0_FMPL_ADDRESS_KIND) /= 64) error stop 'FMPL_ADDRESS_KIND'"
    for n in $names; do echo "  print '(a,1x,i0)', '$n', $n"; done
    echo "end program"
} > "$tmp/consts_mod.f90"
{
    echo "program consts_inc"
    echo "  implicit none"
    echo "  include 'fmplf.h'"
    for n in $names; do echo "  print '(a,1x,i0)', '$n', $n"; done
    echo "end program"
} > "$tmp/consts_inc.f90"
consts() {
    cd "$tmp" &&
    test "$nnames" -ge 40 &&
    $FC -I"$mod" consts_mod.f90 -o consts_mod && $FC -I"$top/include" consts_inc.f90 -o consts_inc &&
    ./consts_mod > consts_mod.out && ./consts_inc > consts_inc.out &&
    test "$(wc -l < consts_mod.out)" = "$nnames" &&
    diff consts_inc.out consts_mod.out
}
step "constants: fmplf.h's, same values; 64-bit kinds" consts
step "the module's object defines no symbol (nothing to link)" sh -c "mkdir '$tmp/obj' &&
    $FC -I'$top/include' -J'$tmp/obj' -c '$top/src/fortran/fmpl_mod.f90' -o '$tmp/obj/fmpl_mod.o' &&
    test -z \"\$(nm --defined-only '$tmp/obj/fmpl_mod.o')\""

# ---- 2. a correct program, and wrong calls ------------------------------
# Lines tagged `! @NAME` are what the wrong calls below replace.  Every
# binding is called (fmpl_abort only on failure), so linking checks every
# interface's symbol too.
cat > "$tmp/prog.f90" <<'EOF'
! modcheck - every binding through `use fmpl`, 2 ranks; rank 0 prints PASS
program modcheck
  use fmpl
  implicit none
  integer, parameter :: n = 64
  double precision :: a(n), s, sw(1), t
  double precision, asynchronous :: ra(n), h(0:5, 0:3)
  double precision, allocatable, asynchronous :: spill(:)
  integer :: ier, me, np, peer, i, j, k, done, flag, comm, wcomm, csize, crank
  integer :: nsend, nspool, hkind, nfail, other
  integer :: iv(2), g(2), ext(2), sh(2), nbr(4)
  integer :: ireq4(FMPL_REQUEST_WORDS), halo4
  integer(FMPL_SIZE_KIND) :: nbytes
  integer(FMPL_REQUEST_KIND) :: req(FMPL_REQUEST_WORDS), sreq(FMPL_REQUEST_WORDS)
  integer(FMPL_REQUEST_KIND) :: onereq, shortreq(4)
  integer(FMPL_ADDRESS_KIND) :: halo
  character(len=8) :: word

  nfail = 0
  ! (for the wrong calls only)
  ireq4 = 0
  halo4 = 0
  onereq = 0
  shortreq = 0

  call fmpl_init(4, ier)                                         ! @init
  call check(ier, 'init')
  call fmpl_rank(me, ier)                                        ! @rank
  call check(ier, 'rank')
  call fmpl_size(np, ier)
  call check(ier, 'size')
  if (np /= 2) error stop 'modcheck: run with 2 processes'
  peer = 1 - me
  call fmpl_wtime(t)                                             ! @wtime
  call fmpl_wtime_emulated(flag)
  if (flag /= 0 .and. flag /= 1) call wrong('wtime_emulated')
  call fmpl_compute(0d0, ier)                                    ! @compute
  call check(ier, 'compute')

  ! blocking: DOUBLE PRECISION, then an INTEGER scalar and a CHARACTER
  ! string as buffers, in one file
  nbytes = size(a, kind=FMPL_SIZE_KIND) * storage_size(a) / 8
  if (me == 0) then
    a = (/ (dble(i), i = 1, n) /)
    call fmpl_send(a, nbytes, 1, 0, ier)                         ! @send
    call check(ier, 'send')
    k = 42
    call fmpl_send(k, 4_FMPL_SIZE_KIND, 1, 1, ier)
    call check(ier, 'send scalar')
    word = 'use fmpl'
    call fmpl_send(word, 8_FMPL_SIZE_KIND, 1, 2, ier)
    call check(ier, 'send string')
  else
    a = 0
    call fmpl_recv(a, nbytes, 0, 0, ier)                         ! @recv
    call check(ier, 'recv')
    do i = 1, n
      if (a(i) /= dble(i)) call wrong('recv data')
    end do
    k = 0
    call fmpl_recv(k, 4_FMPL_SIZE_KIND, 0, 1, ier)
    call check(ier, 'recv scalar')
    if (k /= 42) call wrong('recv scalar')
    word = ''
    call fmpl_recv(word, 8_FMPL_SIZE_KIND, 0, 2, ier)
    call check(ier, 'recv string')
    if (word /= 'use fmpl') call wrong('recv string')
  end if

  ! nonblocking, test, wait, cancel
  req = 0
  sreq = 0
  ra = -1
  a = (/ (dble(100 * me + i), i = 1, n) /)
  call fmpl_irecv(ra, nbytes, peer, 3, req, ier)                 ! @irecv
  call check(ier, 'irecv')
  call fmpl_isend(a, nbytes, peer, 3, sreq, ier)                 ! @isend
  call check(ier, 'isend')
  done = 0
  do while (done == 0)
    call fmpl_test(req, done, ier)                               ! @test
    call check(ier, 'test')
  end do
  call fmpl_wait_isend(sreq, ier)                                ! @wait_isend
  call check(ier, 'wait_isend')
  call fmpl_wait_irecv(req, ier)
  call check(ier, 'wait_irecv')
  do i = 1, n
    if (ra(i) /= dble(100 * peer + i)) call wrong('irecv data')
  end do
  call fmpl_irecv(ra, nbytes, peer, 3, req, ier)
  call check(ier, 'irecv to cancel')
  call fmpl_cancel_irecv(req, ier)
  call check(ier, 'cancel_irecv')

  ! the spill buffer, set and removed
  allocate(spill(1024))
  call fmpl_sendbuff_set(spill, 8192_FMPL_SIZE_KIND, 1000d0, ier)
  call check(ier, 'sendbuff_set')
  call fmpl_sendbuff_check(nsend, nspool, ier)
  call check(ier, 'sendbuff_check')
  if (nsend /= 0 .or. nspool /= 0) call wrong('sendbuff_check counts')
  call fmpl_sendbuff_set(spill, 0_FMPL_SIZE_KIND, 0d0, ier)
  call check(ier, 'sendbuff_set removal')

  ! collectives
  call fmpl_barrier(FMPL_COMM_WORLD, ier)                        ! @barrier
  call check(ier, 'barrier')
  word = ''
  if (me == 1) word = 'from one'
  call fmpl_bcast(word, 8_FMPL_SIZE_KIND, 1, FMPL_COMM_WORLD, ier)   ! @bcast
  call check(ier, 'bcast')
  if (word /= 'from one') call wrong('bcast')
  k = 0
  if (me == 0) k = 7
  call fmpl_hbcast(k, 4_FMPL_SIZE_KIND, 0, ier)
  call check(ier, 'hbcast')
  if (k /= 7) call wrong('hbcast')
  ! without work: the library allocates it (NULL in C)
  s = dble(me + 1)
  call fmpl_allreduce(s, 1, fmpl_dsum, FMPL_COMM_WORLD, ier=ier)     ! @allreduce
  call check(ier, 'allreduce')
  if (s /= 3d0) call wrong('allreduce')
  s = dble(me + 1)
  call fmpl_reduce(s, 1, fmpl_dmax, 0, FMPL_COMM_WORLD, sw, ier)     ! @reduce
  call check(ier, 'reduce')
  if (me == 0 .and. s /= 2d0) call wrong('reduce')
  k = 10 + me
  iv = 0
  call fmpl_allgather(k, 4_FMPL_SIZE_KIND, iv, FMPL_COMM_WORLD, ier)
  call check(ier, 'allgather')
  if (iv(1) /= 10 .or. iv(2) /= 11) call wrong('allgather')
  g = 0
  call fmpl_gather(k, 4_FMPL_SIZE_KIND, g, 1, FMPL_COMM_WORLD, ier)
  call check(ier, 'gather')
  if (me == 1 .and. (g(1) /= 10 .or. g(2) /= 11)) call wrong('gather')
  g = (/ 20, 21 /)
  k = 0
  call fmpl_scatter(g, 4_FMPL_SIZE_KIND, k, 0, FMPL_COMM_WORLD, ier)
  call check(ier, 'scatter')
  if (k /= 20 + me) call wrong('scatter')

  ! communicators
  call fmpl_comm_create(wcomm, 1, ier)                           ! @comm_create
  call check(ier, 'comm_create')
  call fmpl_comm_size(wcomm, csize, ier)
  call check(ier, 'comm_size')
  if (csize /= 2) call wrong('comm_size')
  call fmpl_comm_split(wcomm, me, 0, comm, ier)
  call check(ier, 'comm_split')
  call fmpl_comm_rank(comm, crank, ier)
  call check(ier, 'comm_rank')
  if (crank /= 0) call wrong('comm_rank')
  call fmpl_comm_free(comm, ier)
  call check(ier, 'comm_free')
  if (comm /= FMPL_COMM_NULL) call wrong('comm_free handle')
  call fmpl_comm_free(wcomm, ier)
  call check(ier, 'comm_free')

  ! halo exchange: h(0:5, 0:3), 4 x 2 inside, shadow 1, a ring of 2 in y
  ext = (/ 4, 2 /)
  sh = (/ 1, 1 /)
  nbr = (/ -1, -1, peer, peer /)
  h = -1
  call fmpl_halo_init(h, 8_FMPL_SIZE_KIND, 2, ext, sh, nbr, 0, FMPL_COMM_WORLD, halo, ier) ! @halo_init
  call check(ier, 'halo_init')
  do j = 1, 2
    do i = 1, 4
      h(i, j) = 100 * me + 10 * j + i
    end do
  end do
  call fmpl_halo_do(halo, ier)                                   ! @halo_do
  call check(ier, 'halo_do')
  do i = 1, 4
    if (h(i, 0) /= 100 * peer + 20 + i) call wrong('lower shadow')
    if (h(i, 3) /= 100 * peer + 10 + i) call wrong('upper shadow')
  end do
  call fmpl_halo_kind(halo, 2, hkind, ier)
  call check(ier, 'halo_kind')
  if (hkind /= FMPL_HALO_BLOCK) call wrong('halo_kind')
  call fmpl_halo_free(halo, ier)
  call check(ier, 'halo_free')
  if (halo /= 0) call wrong('halo_free handle')

  ! rank 1's failures to rank 0
  if (me == 1) then
    call fmpl_send(nfail, 4_FMPL_SIZE_KIND, 0, 0, ier)
    call check(ier, 'send result')
  else
    call fmpl_recv(other, 4_FMPL_SIZE_KIND, 1, 0, ier)
    call check(ier, 'recv result')
    nfail = nfail + other
  end if
  if (nfail /= 0) call fmpl_abort(3)
  call fmpl_finalize(ier)                                        ! @finalize
  call check(ier, 'finalize')
  if (me == 0) print '(a)', 'PASS'

contains

  subroutine check(code, what)
    integer, intent(in) :: code
    character(*), intent(in) :: what
    if (code /= FMPL_SUCCESS) then
      print '(a,i0,3a,i0)', 'FAIL rank ', me, ': ', what, ': ier = ', code
      nfail = nfail + 1
    end if
  end subroutine check

  subroutine wrong(what)
    character(*), intent(in) :: what
    print '(a,i0,2a)', 'FAIL rank ', me, ': wrong ', what
    nfail = nfail + 1
  end subroutine wrong

end program modcheck
EOF

step "correct program compiles and links" sh -c "cd '$tmp' && $FC -Wall -I'$mod' prog.f90 \
    -L'$top/lib' -lfmpl -Wl,-rpath,'$top/lib' -o prog"
step "correct program passes under fmplrun -n 2" sh -c "'$top/bin/fmplrun' -n 2 -t 60 '$tmp/prog' \
    > '$tmp/prog.out' 2>&1; rc=\$?; cat '$tmp/prog.out'; test \$rc = 0 && grep -qx PASS '$tmp/prog.out'"

# wrong TAG 'WHAT' 'LINE' 'ERROR': the program with the line tagged TAG
# replaced by LINE must fail to compile, with an error matching ERROR
nwrong=0
wrong() {
    tag=$1 what=$2 line=$3 err=$4
    nwrong=$((nwrong + 1))
    f="$tmp/wrong$nwrong.f90"
    step "compile error: $what" sh -c "
        awk -v tag='! @$tag' -v line=\"\$1\" 'index(\$0, tag) { print line; found = 1; next }
            { print } END { exit !found }' '$tmp/prog.f90' > '$f' || { echo 'no line $tag'; exit 1; }
        cd '$tmp' && if $FC -I'$mod' -c '$f' -o '$tmp/wrong.o' > '$tmp/wrong.log' 2>&1; then
            echo 'compiled:'; grep -F \"\$1\" '$f'; exit 1; fi
        cat '$tmp/wrong.log'
        grep -q '^Error: ' '$tmp/wrong.log' && grep -Eq \"\$2\" '$tmp/wrong.log'" sh "$line" "$err"
}
wrong init "REAL for the INTEGER count" \
    '  call fmpl_init(4.0, ier)' "Type mismatch in argument .count."
wrong send "default INTEGER for the INTEGER*8 byte count" \
    '  call fmpl_send(a, 512, 1, 0, ier)' "Type mismatch in argument .size.*INTEGER\(4\) to INTEGER\(8\)"
wrong recv "CHARACTER for the byte count" \
    "  call fmpl_recv(a, '512', 0, 0, ier)" "Type mismatch in argument .size."
wrong reduce "CHARACTER for the element count" \
    "  call fmpl_reduce(s, 'n', fmpl_dmax, 0, FMPL_COMM_WORLD, sw, ier)" "Type mismatch in argument .count."
wrong compute "REAL(4) for the DOUBLE PRECISION seconds" \
    '  call fmpl_compute(0.0, ier)' "Type mismatch in argument .seconds.*REAL\(4\) to REAL\(8\)"
wrong wtime "INTEGER for the DOUBLE PRECISION time" \
    '  call fmpl_wtime(flag)' "Type mismatch in argument .t."
wrong test "DOUBLE PRECISION for the INTEGER done flag" \
    '  call fmpl_test(req, s, ier)' "Type mismatch in argument .done."
wrong isend "a scalar for the request array (rank)" \
    '  call fmpl_isend(a, nbytes, peer, 3, onereq, ier)' "Rank mismatch in argument .req."
wrong irecv "an INTEGER*4 request array (kind)" \
    '  call fmpl_irecv(ra, nbytes, peer, 3, ireq4, ier)' "Type mismatch in argument .req."
wrong wait_isend "a request array of 4 words" \
    '  call fmpl_wait_isend(shortreq, ier)' "too few elements for dummy argument .req."
wrong barrier "ier missing" \
    '  call fmpl_barrier(FMPL_COMM_WORLD)' "Missing actual argument for argument .ier."
wrong bcast "comm missing" \
    '  call fmpl_bcast(word, 8_FMPL_SIZE_KIND, 1, ier)' "Missing actual argument for argument .ier."
wrong allreduce "work left out without ier= (C's five arguments)" \
    '  call fmpl_allreduce(s, 1, fmpl_dsum, FMPL_COMM_WORLD, ier)' "Missing actual argument for argument .ier."
wrong finalize "an extra argument" \
    '  call fmpl_finalize(ier, ier)' "More actual than formal arguments"
wrong rank "a constant where FMPL stores the rank" \
    '  call fmpl_rank(0, ier)' "variable definition context"
wrong comm_create "comm_create in C's order (key first)" \
    '  call fmpl_comm_create(1, wcomm, ier)' "variable definition context"
wrong halo_init "a scalar for the extent array" \
    '  call fmpl_halo_init(h, 8_FMPL_SIZE_KIND, 2, 4, sh, nbr, 0, FMPL_COMM_WORLD, halo, ier)' \
    "Rank mismatch in argument .extent."
wrong halo_init "default INTEGER for the INTEGER*8 element size" \
    '  call fmpl_halo_init(h, 8, 2, ext, sh, nbr, 0, FMPL_COMM_WORLD, halo, ier)' \
    "Type mismatch in argument .elem_size."
wrong halo_do "a default INTEGER halo handle" \
    '  call fmpl_halo_do(halo4, ier)' "Type mismatch in argument .halo."
wrong allreduce "a keyword the binding does not have" \
    '  call fmpl_allreduce(s, 1, fmpl_dsum, FMPL_COMM_WORLD, ierr=ier)' "Keyword argument .ierr."
# the whole correct program with 8-byte default integers (the C side's
# are 4): the module's C ints reject them
step "compile error: the program built with -fdefault-integer-8" sh -c "
    cd '$tmp' && if $FC -fdefault-integer-8 -I'$mod' -c prog.f90 -o wrong.o > wrong.log 2>&1;
    then echo compiled; exit 1; fi
    grep -q '^Error: Type mismatch in argument .count.* INTEGER(8) to INTEGER(4)' wrong.log"

# ---- 3. the module's make rule, in a copy of the tree --------------------
# (a make of our own: not the flags of a `make -s check` around us)
tree="$tmp/tree"
mkdir -p "$tree/src/fortran"
cp -r "$top/Makefile" "$top/include" "$tree/"
cp "$top/src/fortran/fmpl_mod.f90" "$tree/src/fortran/"
printf '#!/bin/sh\necho "$*" >> "%s/fc.log"\nexec %s "$@"\n' "$tmp" "$FC" > "$tmp/fc"
chmod +x "$tmp/fc"
mk() {
    env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$tree" FC="$tmp/fc" "$@"
}
# make TARGET... > mk.out, shown
mkout() {
    mk "$@" > "$tmp/mk.out" 2>&1
    rc=$?
    cat "$tmp/mk.out"
    return $rc
}
short() {
    mkout build/fortran/fmpl.mod && test -f "$tree/build/fortran/fmpl.mod" &&
    grep -qx '  FC      src/fortran/fmpl_mod.f90' "$tmp/mk.out"
}
step "make: one short line" short
step "make: FC honoured" grep -q -- "-c src/fortran/fmpl_mod.f90" "$tmp/fc.log"
# again: nothing to do; nor after a rebuild that found fmpl.mod unchanged
# (gfortran does not rewrite it then: the rule must touch it)
again() {
    mkout build/fortran/fmpl.mod && ! grep -q ' FC ' "$tmp/mk.out" &&
    touch -d @1000000000 "$tree/build/fortran/fmpl.mod" &&
    mkout build/fortran/fmpl.mod && grep -q ' FC ' "$tmp/mk.out" &&
    mkout build/fortran/fmpl.mod && ! grep -q ' FC ' "$tmp/mk.out"
}
step "make again: nothing to do (an unchanged fmpl.mod is touched)" again
verbose() {
    mkout -B V=1 FFLAGS='-O0 -fno-range-check' build/fortran/fmpl.mod &&
    grep -q -- '-O0 -fno-range-check .*-Jbuild/fortran -c src/fortran/fmpl_mod.f90 -o build/fortran/fmpl_mod.o' \
        "$tmp/mk.out"
}
step "make V=1: the command, FFLAGS honoured" verbose
silent() {
    out=$(mk -s -B build/fortran/fmpl.mod 2>&1) && echo "$out" && test -z "$out"
}
step "make -s: silent" silent

# ---- 4. installed: pkg-config only ---------------------------------------
# the module version of $FC, from a probe module's header
mkdir -p "$tmp/probe"
(cd "$tmp/probe" && printf 'module fmpl_probe\nend module fmpl_probe\n' > p.f90 && $FC -c p.f90)
N=$(gzip -dc "$tmp/probe/fmpl_probe.mod" 2>/dev/null |
    sed -n "1s/^GFORTRAN module version '\([0-9]*\)'.*/\1/p")
stage="$tmp/stage"
fmoddir="$stage/usr/lib/fortran/gfortran-mod-$N"
step "module version of $FC known ($N)" test -n "$N"
step "make install DESTDIR PREFIX=/usr" make -C "$top" -s install DESTDIR="$stage" PREFIX=/usr
step "fmpl.mod in /usr/lib/fortran/gfortran-mod-$N" sh -c "test -f '$fmoddir/fmpl.mod' &&
    gzip -dc '$fmoddir/fmpl.mod' | head -n 1 | grep -q \"^GFORTRAN module version '$N'\""
PKG_CONFIG_SYSROOT_DIR="$stage"
PKG_CONFIG_PATH="$stage/usr/lib/pkgconfig"
PKG_CONFIG_LIBDIR="$stage/usr/lib/pkgconfig"
export PKG_CONFIG_SYSROOT_DIR PKG_CONFIG_PATH PKG_CONFIG_LIBDIR
step "pkg-config --cflags names the module directory" sh -c "pkg-config --cflags fmpl |
    tr ' ' '\n' | grep -qx -- '-I$fmoddir'"
user="$tmp/user"
mkdir -p "$user"
cp "$tmp/prog.f90" "$user/"
step "without pkg-config's flags, no fmpl.mod is found" sh -c "cd '$user' &&
    ! $FC -c prog.f90 -o prog.o"
step "$FC with pkg-config only" sh -c "cd '$user' && $FC prog.f90 \$(pkg-config --cflags --libs fmpl) \
    -Wl,-rpath,'$stage/usr/lib' -o prog && ldd ./prog | grep -q '$stage/usr/lib/libfmpl.so.0'"
step "passes under the installed fmplrun" sh -c "'$stage/usr/bin/fmplrun' -n 2 -t 60 '$user/prog' \
    > '$user/out' 2>&1; rc=\$?; cat '$user/out'; test \$rc = 0 && grep -qx PASS '$user/out'"
step "make uninstall removes fmpl.mod" sh -c "make -C '$top' -s uninstall DESTDIR='$stage' \
    PREFIX=/usr && ! test -e '$fmoddir/fmpl.mod' && ! test -e '$stage/usr/lib/libfmpl.so'"

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
