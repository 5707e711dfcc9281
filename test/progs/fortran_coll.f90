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
  integer :: k, m, off, nfail
  integer(FMPL_SIZE_KIND) :: dummy8(1)
  integer(FMPL_SIZE_KIND), allocatable :: sz(:), dp(:), rsz(:), rdp(:)
  integer, allocatable :: isend(:), irecv(:), cnt(:)
  double precision, allocatable :: dsend(:), drecv(:)

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

  ! ---- the v-variants, alltoall, reduce_scatter, scan, exscan ----------
  ! Member r's block is r + 1 integers 10 * r + k (k = 1 .. r + 1); in
  ! the gathered buffer one unused integer (-1) lies before each block.
  nfail = 0
  allocate(sz(np), dp(np), rsz(np), rdp(np), cnt(np))
  allocate(isend(np + 1), irecv(np * (np + 3) / 2 + np))
  off = 0
  do r = 0, np - 1
    sz(r + 1) = 4_8 * (r + 1)
    dp(r + 1) = 4_8 * (off + 1)
    off = off + r + 2
  end do
  isend = (/ (10 * me + k, k = 1, np + 1) /)

  irecv = -1
  call fmpl_allgatherv(isend, sz(me + 1), irecv, sz, dp, FMPL_COMM_WORLD, ier)
  call check(ier, 'allgatherv')
  call check_gathered('allgatherv')

  ! at the root only; the others pass arrays of one element
  root = np - 1
  irecv = -1
  if (me == root) then
    call fmpl_gatherv(isend, sz(me + 1), irecv, sz, dp, root, FMPL_COMM_WORLD, ier)
  else
    call fmpl_gatherv(isend, sz(me + 1), one, dummy8, dummy8, root, FMPL_COMM_WORLD, ier)
  end if
  call check(ier, 'gatherv')
  if (me == root) call check_gathered('gatherv')

  ! root 0 sends member r the r + 1 integers of block r; every member
  ! receives into np + 1 integers (a shorter block is allowed)
  if (me == 0) then
    irecv = -1
    do r = 0, np - 1
      do k = 1, r + 1
        irecv(dp(r + 1) / 4 + k) = 10 * r + k
      end do
    end do
  end if
  isend = -2
  if (me == 0) then
    call fmpl_scatterv(irecv, sz, dp, isend, 4_8 * (np + 1), 0, FMPL_COMM_WORLD, ier)
  else
    call fmpl_scatterv(one, dummy8, dummy8, isend, 4_8 * (np + 1), 0, FMPL_COMM_WORLD, ier)
  end if
  call check(ier, 'scatterv')
  do k = 1, np + 1
    if (k <= me + 1) then
      call expect_i('scatterv', k, isend(k), 10 * me + k)
    else
      call expect_i('scatterv (past the block)', k, isend(k), -2)
    end if
  end do

  ! a negative byte count: FMPL_ERR_ARG from the binding, on every member
  ! alike (sizes are the same everywhere), before any message
  sz(1) = -4
  call fmpl_allgatherv(isend, 4_8, irecv, sz, dp, FMPL_COMM_WORLD, ier)
  if (ier /= FMPL_ERR_ARG) call fail('allgatherv with a negative size: not FMPL_ERR_ARG')
  sz(1) = 4
  deallocate(isend, irecv)

  ! alltoall: 2 doubles to each member, 100 * from + 10 * to + k
  allocate(dsend(2 * np), drecv(2 * np))
  do j = 0, np - 1
    do k = 1, 2
      dsend(2 * j + k) = dble(100 * me + 10 * j + k)
    end do
  end do
  drecv = -1
  call fmpl_alltoall(dsend, 16_8, drecv, FMPL_COMM_WORLD, ier)
  call check(ier, 'alltoall')
  do i = 0, np - 1
    do k = 1, 2
      if (drecv(2 * i + k) /= dble(100 * i + 10 * me + k)) then
        print '(a,i0,a,i0,a,f0.1,a,i0)', 'rank ', me, ': alltoall element ', &
          2 * i + k, ': ', drecv(2 * i + k), ' instead of ', 100 * i + 10 * me + k
        nfail = nfail + 1
      end if
    end do
  end do
  deallocate(dsend, drecv)

  ! alltoallv: j + 1 integers to member j, 1000 * from + 10 * to + k;
  ! the blocks from the members land in reverse rank order
  allocate(isend(np * (np + 1) / 2), irecv(np * (me + 1) + 1))
  off = 0
  do j = 0, np - 1
    sz(j + 1) = 4_8 * (j + 1)
    dp(j + 1) = 4_8 * off
    do k = 1, j + 1
      isend(off + k) = 1000 * me + 10 * j + k
    end do
    off = off + j + 1
  end do
  do i = 0, np - 1
    rsz(i + 1) = 4_8 * (me + 1)
    rdp(i + 1) = 4_8 * (me + 1) * (np - 1 - i)
  end do
  irecv = -1
  call fmpl_alltoallv(isend, sz, dp, irecv, rsz, rdp, FMPL_COMM_WORLD, ier)
  call check(ier, 'alltoallv')
  do i = 0, np - 1
    do k = 1, me + 1
      call expect_i('alltoallv', int(rdp(i + 1) / 4) + k, irecv(rdp(i + 1) / 4 + k), &
                    1000 * i + 10 * me + k)
    end do
  end do
  call expect_i('alltoallv (past the blocks)', np * (me + 1) + 1, &
                irecv(np * (me + 1) + 1), -1)
  deallocate(isend, irecv)

  ! reduce_scatter: member r gets r + 1 elements; element e of the vector
  ! is 1000 * member + e, so the sum is 1000 * np(np-1)/2 + np * e
  do r = 0, np - 1
    cnt(r + 1) = r + 1
  end do
  m = np * (np + 1) / 2
  allocate(isend(m), irecv(me + 2))
  isend = (/ (1000 * me + k, k = 1, m) /)
  irecv = -1
  call fmpl_reduce_scatter(isend, irecv, cnt, fmpl_isum, FMPL_COMM_WORLD, ier)
  call check(ier, 'reduce_scatter')
  off = me * (me + 1) / 2
  do k = 1, me + 1
    call expect_i('reduce_scatter', k, irecv(k), 1000 * (np * (np - 1) / 2) + np * (off + k))
  end do
  call expect_i('reduce_scatter (past the block)', me + 2, irecv(me + 2), -1)
  do k = 1, m
    call expect_i('reduce_scatter changed sendbuf', k, isend(k), 1000 * me + k)
  end do
  deallocate(isend, irecv)

  ! scan and exscan of 3 doubles me + k (small integers: exact sums)
  allocate(dsend(3), drecv(3))
  dsend = (/ (dble(me + k), k = 1, 3) /)
  drecv = -1
  call fmpl_scan(dsend, drecv, 3, fmpl_dsum, FMPL_COMM_WORLD, ier)
  call check(ier, 'scan')
  do k = 1, 3
    if (drecv(k) /= dble(me * (me + 1) / 2 + (me + 1) * k)) then
      print '(a,i0,a,i0,a,f0.1)', 'rank ', me, ': scan element ', k, ': ', drecv(k)
      nfail = nfail + 1
    end if
  end do
  drecv = -7
  call fmpl_exscan(dsend, drecv, 3, fmpl_dsum, FMPL_COMM_WORLD, ier)
  call check(ier, 'exscan')
  do k = 1, 3
    ! member 0's recvbuf is left as it was
    if ((me == 0 .and. drecv(k) /= -7d0) .or. &
        (me > 0 .and. drecv(k) /= dble(me * (me - 1) / 2 + me * k))) then
      print '(a,i0,a,i0,a,f0.1)', 'rank ', me, ': exscan element ', k, ': ', drecv(k)
      nfail = nfail + 1
    end if
  end do
  deallocate(dsend, drecv)
  deallocate(sz, dp, rsz, rdp, cnt)
  if (nfail > 0) call fail('the new collectives (above)')

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

  ! the gathered buffer of allgatherv and gatherv: block r at its place,
  ! the integer before each block untouched
  subroutine check_gathered(what)
    character(*), intent(in) :: what
    integer :: r, k, at
    do r = 0, np - 1
      at = int(dp(r + 1) / 4)
      call expect_i(what // ' (gap)', at, irecv(at), -1)
      do k = 1, r + 1
        call expect_i(what, at + k, irecv(at + k), 10 * r + k)
      end do
    end do
  end subroutine check_gathered

  ! one element: printed and counted when wrong
  subroutine expect_i(what, idx, got, want)
    character(*), intent(in) :: what
    integer, intent(in) :: idx, got, want
    if (got /= want) then
      print '(a,i0,a,a,a,i0,a,i0,a,i0)', 'rank ', me, ': ', what, ' element ', idx, &
        ': ', got, ' instead of ', want
      nfail = nfail + 1
    end if
  end subroutine expect_i

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
