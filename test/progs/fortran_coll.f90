! fortran_coll - the Fortran bindings of the collectives, communicators
! and halo exchange, checked against values every rank can compute.
! Exits non-zero (stop 1) on any mismatch.  Through `use fmpl`.
program fortran_coll
  use fmpl
  implicit none
  integer :: ier, me, np, i, j, root, comm, crank, csize, r, halo8_kind
  integer(FMPL_ADDRESS_KIND) :: halo
  double precision :: d(100), w(100), a(0:9, 0:7)
  integer :: iv(3), ext(2), sh(2), nbr(4)
  integer :: all(64), one(1)

  call fmpl_init(4, ier)
  call check(ier, 'init')
  call fmpl_rank(me, ier)
  call fmpl_size(np, ier)

  call fmpl_barrier(FMPL_COMM_WORLD, ier)
  call check(ier, 'barrier')

  do root = 0, np - 1
    d = 0
    if (me == root) d = (/ (dble(i + root), i = 1, 100) /)
    call fmpl_bcast(d, 800_8, root, FMPL_COMM_WORLD, ier)
    call check(ier, 'bcast')
    do i = 1, 100
      if (d(i) /= dble(i + root)) call fail('bcast data')
    end do
    d = (/ (dble(me + i), i = 1, 100) /)
    call fmpl_reduce(d, 100, fmpl_dsum, root, FMPL_COMM_WORLD, w, ier)
    call check(ier, 'reduce')
    if (me == root) then
      do i = 1, 100
        if (d(i) /= dble(np * i + np * (np - 1) / 2)) call fail('reduce data')
      end do
    end if
  end do

  ! absolute max of integers with alternating signs
  iv = (/ -me, me, 7 /)
  if (mod(me, 2) == 1) iv(1) = me
  call fmpl_allreduce(iv, 3, fmpl_imax, FMPL_COMM_WORLD, all, ier)
  call check(ier, 'allreduce')
  if (iv(2) /= np - 1 .or. iv(3) /= 7) call fail('allreduce imax')

  one(1) = me
  call fmpl_allgather(one, 4_8, all, FMPL_COMM_WORLD, ier)
  call check(ier, 'allgather')
  do r = 0, np - 1
    if (all(r + 1) /= r) call fail('allgather data')
  end do

  ! odd and even ranks, reversed order inside each
  call fmpl_comm_split(FMPL_COMM_WORLD, mod(me, 2), -me, comm, ier)
  call check(ier, 'comm_split')
  call fmpl_comm_rank(comm, crank, ier)
  call fmpl_comm_size(comm, csize, ier)
  if (csize /= (np - mod(me, 2) + 1) / 2) call fail('comm_size')
  ! key -me ranks the highest world rank of each parity first
  if (crank /= (np - 1 - me) / 2) call fail('comm_rank')
  one(1) = me
  call fmpl_allreduce(one, 1, fmpl_isum, comm, all, ier)
  call check(ier, 'allreduce on a split communicator')
  r = 0
  do j = mod(me, 2), np - 1, 2
    r = r + j
  end do
  if (one(1) /= r) call fail('allreduce on a split communicator')
  call fmpl_comm_free(comm, ier)
  call check(ier, 'comm_free')
  if (comm /= FMPL_COMM_NULL) call fail('comm_free handle')

  ! 2-D halo exchange on a 1 x np ring in y: a(0:9, 0:7) holds 8 x 6
  ! interior points, shadow 1, value = 1000 * global y + x
  ext = (/ 8, 6 /)
  sh = (/ 1, 1 /)
  nbr = (/ -1, -1, mod(me - 1 + np, np), mod(me + 1, np) /)
  call fmpl_halo_init(a, 8_8, 2, ext, sh, nbr, 0, FMPL_COMM_WORLD, halo, ier)
  call check(ier, 'halo_init')
  a = -1
  do j = 1, 6
    do i = 1, 8
      a(i, j) = 1000 * (me * 6 + j) + i
    end do
  end do
  call fmpl_halo_do(halo, ier)
  call check(ier, 'halo_do')
  do i = 1, 8
    if (a(i, 0) /= 1000 * (mod(me - 1 + np, np) * 6 + 6) + i) call fail('halo lower')
    if (a(i, 7) /= 1000 * (mod(me + 1, np) * 6 + 1) + i) call fail('halo upper')
  end do
  if (a(0, 3) /= -1 .or. a(9, 3) /= -1) call fail('halo boundary touched')
  call fmpl_halo_kind(halo, 2, halo8_kind, ier)
  call check(ier, 'halo_kind')
  if (halo8_kind /= FMPL_HALO_BLOCK) call fail('y faces of a Fortran array are blocks')
  call fmpl_halo_free(halo, ier)
  call check(ier, 'halo_free')

  call fmpl_finalize(ier)
  call check(ier, 'finalize')
  if (me == 0) print '(a,i0,a)', 'fortran_coll: ', np, ' ranks OK'

contains

  subroutine check(code, what)
    integer, intent(in) :: code
    character(*), intent(in) :: what
    if (code /= FMPL_SUCCESS) then
      print '(a,i0,a,a,a,i0)', 'rank ', me, ': ', what, ' failed: ', code
      stop 1
    end if
  end subroutine check

  subroutine fail(what)
    character(*), intent(in) :: what
    print '(a,i0,a,a)', 'rank ', me, ': wrong result: ', what
    stop 1
  end subroutine fail
end program fortran_coll
