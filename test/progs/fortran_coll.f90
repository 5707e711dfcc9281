! fortran_coll - the Fortran bindings of the collectives (blocking and
! nonblocking), the neighbour exchanges (blocking, nonblocking and
! persistent), communicators and halo exchange (whole and in parts),
! checked against values every rank can compute.  Exits non-zero (stop 1)
! on any mismatch.  Through `use fmpl`.
program fortran_coll
  use fmpl
  implicit none
  integer :: ier, me, np, i, j, root, comm, crank, csize, r, halo8_kind
  integer(FMPL_ADDRESS_KIND) :: halo
  double precision :: d(100), w(100)
  double precision, asynchronous :: a(0:9, 0:7)
  integer :: iv(3), ext(2), sh(2), nbr(4)
  integer :: all(64), one(1)
  integer :: k, m, off, nfail
  integer(FMPL_SIZE_KIND) :: dummy8(1)
  integer(FMPL_SIZE_KIND), allocatable :: sz(:), dp(:), rsz(:), rdp(:)
  integer, allocatable :: isend(:), irecv(:), cnt(:)
  double precision, allocatable :: dsend(:), drecv(:)
  ! the nonblocking collectives' buffers are FMPL's until the wait
  integer(FMPL_REQUEST_KIND) :: req(FMPL_REQUEST_WORDS), req2(FMPL_REQUEST_WORDS)
  integer(FMPL_REQUEST_KIND), allocatable :: reqs(:, :)
  double precision, allocatable, asynchronous :: xv(:), bc(:, :), ds(:), dr(:)
  integer, allocatable, asynchronous :: ir(:, :), is(:), irr(:)
  integer, asynchronous :: sub(2)
  double precision, asynchronous :: hsum(1)
  double precision :: s
  integer :: nv, done, round, comm2, c2size, c2rank
  ! the neighbour exchanges on a ring: to the right and to the left
  integer :: nbdst(2), nbsrc(2)
  integer(FMPL_SIZE_KIND) :: nbssz(2), nbsdp(2), nbrsz(2), nbrdp(2)
  integer(FMPL_ADDRESS_KIND) :: nbh
  double precision, asynchronous :: nbs(5), nbv(7)

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

  ! ---- nonblocking collectives -----------------------------------------
  nfail = 0
  ! ibarrier: tested until done, then waited for (a completed request
  ! still needs its wait); after it the request is inactive
  req = 0
  call fmpl_ibarrier(FMPL_COMM_WORLD, req, ier)
  call check(ier, 'ibarrier')
  call test_until_done(req, 'ibarrier')
  call fmpl_wait(req, ier)
  call check(ier, 'wait ibarrier')
  call fmpl_wait(req, ier)
  if (ier /= FMPL_ERR_REQUEST) call fail('wait of a finished request: not FMPL_ERR_REQUEST')
  call fmpl_test(req, done, ier)
  if (ier /= FMPL_ERR_REQUEST) call fail('test of a finished request: not FMPL_ERR_REQUEST')

  ! iallreduce of a vector: start, compute (testing now and then), wait
  nv = 5000
  allocate(xv(nv))
  xv = (/ (dble(me + i), i = 1, nv) /)
  call fmpl_iallreduce(xv, nv, fmpl_dsum, FMPL_COMM_WORLD, req, ier)
  call check(ier, 'iallreduce')
  s = 0
  done = 0
  do k = 1, 100
    do i = 1, 1000
      s = s + sqrt(dble(i + k))
    end do
    if (done == 0) then
      call fmpl_test(req, done, ier)
      call check(ier, 'test iallreduce')
    end if
  end do
  if (s <= 0) call fail('the computation')
  call fmpl_wait(req, ier)
  call check(ier, 'wait iallreduce')
  do i = 1, nv
    call expect_d('iallreduce', i, xv(i), dble(np * i + np * (np - 1) / 2))
  end do
  deallocate(xv)

  ! an ibcast from every root, all under way at once, a blocking
  ! allreduce started after them, the waits in reverse order
  allocate(bc(100, np), reqs(FMPL_REQUEST_WORDS, np))
  reqs = 0
  bc = -1
  do root = 0, np - 1
    if (me == root) bc(:, root + 1) = (/ (dble(1000 * root + i), i = 1, 100) /)
    call fmpl_ibcast(bc(1, root + 1), 800_8, root, FMPL_COMM_WORLD, reqs(1, root + 1), ier)
    call check(ier, 'ibcast')
  end do
  one(1) = 1
  call fmpl_allreduce(one, 1, fmpl_isum, FMPL_COMM_WORLD, all, ier)
  call check(ier, 'allreduce among ibcasts')
  if (one(1) /= np) call fail('allreduce among ibcasts')
  do root = np - 1, 0, -1
    call fmpl_wait(reqs(1, root + 1), ier)
    call check(ier, 'wait ibcast')
  end do
  do root = 0, np - 1
    do i = 1, 100
      call expect_d('ibcast', 100 * root + i, bc(i, root + 1), dble(1000 * root + i))
    end do
  end do
  deallocate(bc)

  ! ireduce to every root, all under way, waited for in order:
  ! element k of member m is 10 * m + k + root
  allocate(ir(50, np))
  do root = 0, np - 1
    ir(:, root + 1) = (/ (10 * me + k + root, k = 1, 50) /)
    call fmpl_ireduce(ir(1, root + 1), 50, fmpl_isum, root, FMPL_COMM_WORLD, &
                      reqs(1, root + 1), ier)
    call check(ier, 'ireduce')
  end do
  do root = 0, np - 1
    call fmpl_wait(reqs(1, root + 1), ier)
    call check(ier, 'wait ireduce')
  end do
  do k = 1, 50
    call expect_i('ireduce', k, ir(k, me + 1), 10 * (np * (np - 1) / 2) + np * (k + me))
  end do
  deallocate(ir, reqs)

  ! iallgather and igather of 3 integers 100 * member + k
  allocate(is(3), irr(3 * np))
  is = (/ (100 * me + k, k = 1, 3) /)
  irr = -1
  call fmpl_iallgather(is, 12_8, irr, FMPL_COMM_WORLD, req, ier)
  call check(ier, 'iallgather')
  call fmpl_wait(req, ier)
  call check(ier, 'wait iallgather')
  do r = 0, np - 1
    do k = 1, 3
      call expect_i('iallgather', 3 * r + k, irr(3 * r + k), 100 * r + k)
    end do
  end do
  root = np - 1
  irr = -1
  call fmpl_igather(is, 12_8, irr, root, FMPL_COMM_WORLD, req, ier)
  call check(ier, 'igather')
  call test_until_done(req, 'igather')
  call fmpl_wait(req, ier)
  call check(ier, 'wait igather')
  do r = 0, np - 1
    do k = 1, 3
      if (me == root) then
        call expect_i('igather', 3 * r + k, irr(3 * r + k), 100 * r + k)
      else
        call expect_i('igather (not the root)', 3 * r + k, irr(3 * r + k), -1)
      end if
    end do
  end do
  deallocate(is, irr)

  ! iscatter from root 0 of 2 doubles 10 * member + k
  allocate(ds(2 * np), dr(2))
  ds = -1
  if (me == 0) ds = (/ ((dble(10 * r + k), k = 1, 2), r = 0, np - 1) /)
  dr = -1
  call fmpl_iscatter(ds, 16_8, dr, 0, FMPL_COMM_WORLD, req, ier)
  call check(ier, 'iscatter')
  call fmpl_wait(req, ier)
  call check(ier, 'wait iscatter')
  do k = 1, 2
    call expect_d('iscatter', k, dr(k), dble(10 * me + k))
  end do
  deallocate(ds, dr)

  ! ialltoall: 2 doubles to each member, 100 * from + 10 * to + k
  allocate(ds(2 * np), dr(2 * np))
  do j = 0, np - 1
    do k = 1, 2
      ds(2 * j + k) = dble(100 * me + 10 * j + k)
    end do
  end do
  dr = -1
  call fmpl_ialltoall(ds, 16_8, dr, FMPL_COMM_WORLD, req, ier)
  call check(ier, 'ialltoall')
  call fmpl_wait(req, ier)
  call check(ier, 'wait ialltoall')
  do i = 0, np - 1
    do k = 1, 2
      call expect_d('ialltoall', 2 * i + k, dr(2 * i + k), dble(100 * i + 10 * me + k))
    end do
  end do
  deallocate(ds, dr)

  ! two communicators at once: an iallreduce (absolute max) on the odd
  ! and even ranks and an ibarrier on the world, the later one waited
  ! for first
  call fmpl_comm_split(FMPL_COMM_WORLD, mod(me, 2), me, comm2, ier)
  call check(ier, 'comm_split for the nonblocking collectives')
  call fmpl_comm_size(comm2, c2size, ier)
  call fmpl_comm_rank(comm2, c2rank, ier)
  sub = (/ -me, me /)
  req2 = 0
  call fmpl_iallreduce(sub, 2, fmpl_imax, comm2, req, ier)
  call check(ier, 'iallreduce on a split communicator')
  call fmpl_ibarrier(FMPL_COMM_WORLD, req2, ier)
  call check(ier, 'ibarrier on the world')
  call fmpl_wait(req2, ier)
  call check(ier, 'wait ibarrier on the world')
  call fmpl_wait(req, ier)
  call check(ier, 'wait iallreduce on a split communicator')
  ! the largest rank of this parity: negated in element 1, as it is
  r = mod(me, 2) + 2 * (c2size - 1)
  call expect_i('iallreduce imax on a split communicator', 1, sub(1), -r)
  call expect_i('iallreduce imax on a split communicator', 2, sub(2), r)
  call fmpl_comm_free(comm2, ier)
  call check(ier, 'comm_free after the nonblocking collectives')

  ! argument errors: returned by the call, nothing started
  req = 0
  call fmpl_ibcast(d, -8_8, 0, FMPL_COMM_WORLD, req, ier)
  if (ier /= FMPL_ERR_ARG) call fail('ibcast with a negative size: not FMPL_ERR_ARG')
  call fmpl_ireduce(d, -1, fmpl_dsum, 0, FMPL_COMM_WORLD, req, ier)
  if (ier /= FMPL_ERR_ARG) call fail('ireduce with a negative count: not FMPL_ERR_ARG')
  call fmpl_ibcast(d, 8_8, np, FMPL_COMM_WORLD, req, ier)
  if (ier /= FMPL_ERR_RANK) call fail('ibcast from rank np: not FMPL_ERR_RANK')
  call fmpl_iallreduce(d, 1, 0, FMPL_COMM_WORLD, req, ier)
  if (ier /= FMPL_ERR_OP) call fail('iallreduce with operation 0: not FMPL_ERR_OP')
  call fmpl_ibarrier(FMPL_COMM_NULL, req, ier)
  if (ier /= FMPL_ERR_COMM) call fail('ibarrier on FMPL_COMM_NULL: not FMPL_ERR_COMM')
  call fmpl_wait(req, ier)
  if (ier /= FMPL_ERR_REQUEST) call fail('a failed start made the request active')
  if (nfail > 0) call fail('the nonblocking collectives (above)')

  ! ---- neighbour exchanges ---------------------------------------------
  ! A ring: each member sends 3 doubles to its right neighbour (k = 1..3)
  ! and 2 to its left one (k = 4, 5), 100 * from + 10 * to + k (+ 1000 *
  ! the pass); it receives the left one's block (3 doubles) at
  ! nbv(4:6) and the right one's (2) at nbv(1:2): nbv(3) and nbv(7)
  ! stay -1.  With 2 members both neighbours are one member named twice,
  ! with 1 itself: the k-th block to a peer is the k-th from it.
  nfail = 0
  nbdst = (/ mod(me + 1, np), mod(me - 1 + np, np) /)
  nbssz = (/ 24_8, 16_8 /)
  nbsdp = (/ 0_8, 24_8 /)
  nbsrc = (/ mod(me - 1 + np, np), mod(me + 1, np) /)
  nbrsz = (/ 24_8, 16_8 /)
  nbrdp = (/ 24_8, 0_8 /)

  call nb_fill(0)
  call fmpl_neighbor_alltoallv(nbs, 2, nbdst, nbssz, nbsdp, nbv, 2, nbsrc, nbrsz, nbrdp, &
                               FMPL_COMM_WORLD, ier)
  call check(ier, 'neighbor_alltoallv')
  call nb_expect('neighbor_alltoallv', 0)

  call nb_fill(1)
  req = 0
  call fmpl_ineighbor_alltoallv(nbs, 2, nbdst, nbssz, nbsdp, nbv, 2, nbsrc, nbrsz, nbrdp, &
                                FMPL_COMM_WORLD, req, ier)
  call check(ier, 'ineighbor_alltoallv')
  call fmpl_wait(req, ier)
  call check(ier, 'wait ineighbor_alltoallv')
  call nb_expect('ineighbor_alltoallv', 1)

  ! persistent: the lists are copied (changed here after init, unused
  ! since), every start sends the buffers' contents of the moment
  call fmpl_neighbor_init(nbs, 2, nbdst, nbssz, nbsdp, nbv, 2, nbsrc, nbrsz, nbrdp, &
                          FMPL_COMM_WORLD, nbh, ier)
  call check(ier, 'neighbor_init')
  if (nbh == 0) call fail('neighbor_init handle')
  nbdst = -5
  nbrsz = 0
  do round = 2, 3
    call nb_fill(round)
    call fmpl_neighbor_start(nbh, req, ier)
    call check(ier, 'neighbor_start')
    call fmpl_wait(req, ier)
    call check(ier, 'wait neighbor_start')
    call nb_expect('neighbor_start', round)
  end do
  call fmpl_neighbor_free(nbh, ier)
  call check(ier, 'neighbor_free')
  if (nbh /= 0) call fail('neighbor_free handle')
  call fmpl_neighbor_free(nbh, ier)
  if (ier /= FMPL_ERR_ARG) call fail('neighbor_free of 0: not FMPL_ERR_ARG')
  call fmpl_neighbor_start(nbh, req, ier)
  if (ier /= FMPL_ERR_ARG) call fail('neighbor_start of 0: not FMPL_ERR_ARG')

  ! argument errors, on every member alike, nothing started: a negative
  ! byte count (the binding), a rank outside the communicator (C)
  nbdst = (/ mod(me + 1, np), mod(me - 1 + np, np) /)
  nbrsz = (/ 24_8, 16_8 /)
  nbssz(2) = -16
  call fmpl_ineighbor_alltoallv(nbs, 2, nbdst, nbssz, nbsdp, nbv, 2, nbsrc, nbrsz, nbrdp, &
                                FMPL_COMM_WORLD, req, ier)
  if (ier /= FMPL_ERR_ARG) call fail('ineighbor_alltoallv with a negative size: not FMPL_ERR_ARG')
  call fmpl_neighbor_init(nbs, 2, nbdst, nbssz, nbsdp, nbv, 2, nbsrc, nbrsz, nbrdp, &
                          FMPL_COMM_WORLD, nbh, ier)
  if (ier /= FMPL_ERR_ARG .or. nbh /= 0) &
    call fail('neighbor_init with a negative size: not FMPL_ERR_ARG and handle 0')
  nbssz(2) = 16
  nbdst(1) = np
  call fmpl_neighbor_alltoallv(nbs, 2, nbdst, nbssz, nbsdp, nbv, 2, nbsrc, nbrsz, nbrdp, &
                               FMPL_COMM_WORLD, ier)
  if (ier /= FMPL_ERR_RANK) call fail('neighbor_alltoallv to rank np: not FMPL_ERR_RANK')
  call fmpl_wait(req, ier)
  if (ier /= FMPL_ERR_REQUEST) call fail('a failed neighbour start made the request active')
  if (nfail > 0) call fail('the neighbour exchanges (above)')

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

  ! the same exchange in parts: start, compute on the rows that are not
  ! sent (2 .. 5), then wait (round 1) or test until done (round 2, with
  ! an iallreduce under way too; no wait after done)
  do round = 1, 2
    do j = 1, 6
      do i = 1, 8
        a(i, j) = 1000 * (me * 6 + j) + i + 100000 * round
      end do
    end do
    a(1:8, 0) = -1
    a(1:8, 7) = -1
    call fmpl_halo_start(halo, ier)
    call check(ier, 'halo_start')
    call fmpl_halo_start(halo, ier)
    if (ier /= FMPL_ERR_BUSY) call fail('halo_start under way: not FMPL_ERR_BUSY')
    a(1:8, 2:5) = a(1:8, 2:5) + 0.5d0
    if (round == 1) then
      call fmpl_halo_wait(halo, ier)
      call check(ier, 'halo_wait')
    else
      hsum(1) = dble(me + 1)
      call fmpl_iallreduce(hsum, 1, fmpl_dsum, FMPL_COMM_WORLD, req, ier)
      call check(ier, 'iallreduce during a halo exchange')
      done = 0
      do while (done == 0)
        call fmpl_halo_test(halo, done, ier)
        call check(ier, 'halo_test')
      end do
      call fmpl_halo_wait(halo, ier)
      if (ier /= FMPL_ERR_REQUEST) call fail('halo_wait after done: not FMPL_ERR_REQUEST')
      call fmpl_wait(req, ier)
      call check(ier, 'wait iallreduce during a halo exchange')
      if (hsum(1) /= dble(np * (np + 1) / 2)) call fail('iallreduce during a halo exchange')
    end if
    do i = 1, 8
      if (a(i, 0) /= 1000 * (mod(me - 1 + np, np) * 6 + 6) + i + 100000 * round) &
        call fail('halo lower (in parts)')
      if (a(i, 7) /= 1000 * (mod(me + 1, np) * 6 + 1) + i + 100000 * round) &
        call fail('halo upper (in parts)')
      do j = 2, 5
        if (a(i, j) /= 1000 * (me * 6 + j) + i + 100000 * round + 0.5d0) &
          call fail('interior computed during the exchange')
      end do
    end do
    if (a(0, 3) /= -1 .or. a(9, 3) /= -1) call fail('halo boundary touched (in parts)')
  end do
  call fmpl_halo_test(halo, done, ier)
  if (ier /= FMPL_ERR_REQUEST) call fail('halo_test not started: not FMPL_ERR_REQUEST')

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

  ! the neighbour exchange's send buffer for a pass, receive buffer -1
  subroutine nb_fill(pass)
    integer, intent(in) :: pass
    integer :: k
    do k = 1, 3
      nbs(k) = dble(1000 * pass + 100 * me + 10 * mod(me + 1, np) + k)
    end do
    do k = 4, 5
      nbs(k) = dble(1000 * pass + 100 * me + 10 * mod(me - 1 + np, np) + k)
    end do
    nbv = -1
  end subroutine nb_fill

  ! every element of the receive buffer after a pass
  subroutine nb_expect(what, pass)
    character(*), intent(in) :: what
    integer, intent(in) :: pass
    integer :: k, left, right
    left = mod(me - 1 + np, np)
    right = mod(me + 1, np)
    do k = 1, 2
      call expect_d(what // ' (from the right)', k, nbv(k), &
                    dble(1000 * pass + 100 * right + 10 * me + 3 + k))
    end do
    call expect_d(what // ' (gap)', 3, nbv(3), -1d0)
    do k = 1, 3
      call expect_d(what // ' (from the left)', 3 + k, nbv(3 + k), &
                    dble(1000 * pass + 100 * left + 10 * me + k))
    end do
    call expect_d(what // ' (past the blocks)', 7, nbv(7), -1d0)
  end subroutine nb_expect

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

  ! one element of DOUBLE PRECISION (small integers: exact)
  subroutine expect_d(what, idx, got, want)
    character(*), intent(in) :: what
    integer, intent(in) :: idx
    double precision, intent(in) :: got, want
    if (got /= want) then
      print '(a,i0,a,a,a,i0,a,f0.1,a,f0.1)', 'rank ', me, ': ', what, ' element ', idx, &
        ': ', got, ' instead of ', want
      nfail = nfail + 1
    end if
  end subroutine expect_d

  ! fmpl_test until the request has completed (it still needs its wait)
  subroutine test_until_done(rq, what)
    integer(FMPL_REQUEST_KIND), intent(inout) :: rq(FMPL_REQUEST_WORDS)
    character(*), intent(in) :: what
    integer :: fin, code
    fin = 0
    do while (fin == 0)
      call fmpl_test(rq, fin, code)
      call check(code, 'test ' // what)
    end do
  end subroutine test_until_done

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
