! fortran_pingpong.f90 - test of the Fortran bindings (2 or more ranks).
!
!   fmplrun -n 2 test/progs/fortran_pingpong
!
! Ranks 0 and 1 exchange messages; other ranks only run the local checks.
! Covered: init/rank/size/wtime/finalize and their errors, blocking
! ping-pong of 0, 8, 1000 and 100000 doubles (with a shorter message
! than the buffer), irecv/isend/test/wait on the same sizes, errors of
! bad arguments (rank, index, negative size, overlapping receives,
! inactive requests, negative timeout), cancel_irecv, and a send that
! spills into the sendbuff_set buffer and is delivered by
! sendbuff_check.  Rank 1 reports its failures to rank 0; rank 0 prints
! PASS when neither failed.  Any failure ends in `error stop 1`.
!
! Through `use fmpl` (src/fortran/fmpl_mod.f90); test/progs/fortran_include
! keeps the `include 'fmplf.h'` path tested.
program fortran_pingpong
  use fmpl
  implicit none
  integer, parameter :: nidx = 16, maxn = 100000, nspill = 131072
  integer, parameter :: sizes(4) = (/ 0, 8, 1000, 100000 /)
  double precision, allocatable, asynchronous :: sbuf(:), rbuf(:)
  double precision, allocatable :: spill(:)
  double precision :: msg(1), t0, t1
  integer(FMPL_REQUEST_KIND) :: sreq(FMPL_REQUEST_WORDS), rreq(FMPL_REQUEST_WORDS)
  integer(FMPL_REQUEST_KIND) :: xreq(FMPL_REQUEST_WORDS)
  integer :: rank, nproc, ier, peer, k, n, done, ntest
  integer :: nsend, nspool, totsend, nfail, other

  nfail = 0

  ! ---- before fmpl_init -----------------------------------------------
  call fmpl_rank(rank, ier)
  call expect(ier, FMPL_ERR_NOT_INIT, 'fmpl_rank before init')
  if (rank /= -1) call fail('fmpl_rank before init is not -1')

  call fmpl_init(nidx, ier)
  call expect(ier, FMPL_SUCCESS, 'fmpl_init')
  if (ier /= FMPL_SUCCESS) error stop 1
  call fmpl_init(nidx, ier)
  call expect(ier, FMPL_ERR_INIT, 'second fmpl_init')

  call fmpl_rank(rank, ier)
  call expect(ier, FMPL_SUCCESS, 'fmpl_rank')
  call fmpl_size(nproc, ier)
  call expect(ier, FMPL_SUCCESS, 'fmpl_size')
  if (nproc < 2) then
    print *, 'fortran_pingpong: needs 2 processes, got', nproc
    error stop 1
  end if
  if (rank < 0 .or. rank >= nproc) call fail('rank out of range')
  peer = 1 - rank

  call fmpl_wtime(t0)
  call fmpl_wtime(t1)
  if (t1 < t0) call fail('fmpl_wtime not monotonic')

  allocate(sbuf(maxn + 1), rbuf(maxn + 1), spill(nspill))
  sreq = 0
  rreq = 0
  xreq = 0

  ! ---- local argument errors (every rank) -------------------------------
  sbuf = 1d0
  call fmpl_send(sbuf, 8_8, nproc, 0, ier)
  call expect(ier, FMPL_ERR_RANK, 'send to rank nproc')
  call fmpl_send(sbuf, 8_8, -1, 0, ier)
  call expect(ier, FMPL_ERR_RANK, 'send to rank -1')
  call fmpl_recv(rbuf, 8_8, nproc, 0, ier)
  call expect(ier, FMPL_ERR_RANK, 'recv from rank nproc')
  call fmpl_send(sbuf, 8_8, 0, nidx, ier)
  call expect(ier, FMPL_ERR_INDEX, 'send on index count')
  call fmpl_recv(rbuf, 8_8, 0, -1, ier)
  call expect(ier, FMPL_ERR_INDEX, 'recv on index -1')
  call fmpl_send(sbuf, -8_8, 0, 0, ier)
  call expect(ier, FMPL_ERR_ARG, 'send of negative size')
  call fmpl_irecv(rbuf, -1_8, 0, 0, xreq, ier)
  call expect(ier, FMPL_ERR_ARG, 'irecv of negative size')
  call fmpl_isend(sbuf, 8_8, nproc, 0, xreq, ier)
  call expect(ier, FMPL_ERR_RANK, 'isend to rank nproc')
  xreq = 0
  call fmpl_wait_isend(xreq, ier)
  call expect(ier, FMPL_ERR_REQUEST, 'wait_isend on inactive request')
  call fmpl_wait_irecv(xreq, ier)
  call expect(ier, FMPL_ERR_REQUEST, 'wait_irecv on inactive request')
  call fmpl_test(xreq, done, ier)
  call expect(ier, FMPL_ERR_REQUEST, 'test on inactive request')
  call fmpl_sendbuff_set(spill, 8_8 * nspill, -1d0, ier)
  call expect(ier, FMPL_ERR_ARG, 'sendbuff_set with negative timeout')
  call fmpl_sendbuff_set(spill, -1_8, 0d0, ier)
  call expect(ier, FMPL_ERR_ARG, 'sendbuff_set with negative size')
  call fmpl_sendbuff_check(nsend, nspool, ier)
  call expect(ier, FMPL_SUCCESS, 'sendbuff_check without buffer')
  if (nsend /= 0 .or. nspool /= 0) call fail('sendbuff_check counts')

  if (rank <= 1) then
    ! overlapping receives from one peer on one index: FMPL_ERR_BUSY
    call fmpl_irecv(rbuf, 8_8, peer, 9, rreq, ier)
    call expect(ier, FMPL_SUCCESS, 'irecv on index 9')
    call fmpl_irecv(sbuf, 8_8, peer, 9, xreq, ier)
    call expect(ier, FMPL_ERR_BUSY, 'second irecv on index 9')
    call fmpl_cancel_irecv(rreq, ier)
    call expect(ier, FMPL_SUCCESS, 'cancel_irecv on index 9')

    ! ---- blocking ping-pong ---------------------------------------------
    do k = 1, size(sizes)
      n = sizes(k)
      if (rank == 0) then
        call fill(sbuf, n, 1d0)
        call fmpl_send(sbuf, 8_8 * n, 1, 1, ier)
        call expect(ier, FMPL_SUCCESS, 'send (ping)')
        ! the buffer holds one element more than the message
        rbuf = -7d0
        call fmpl_recv(rbuf, 8_8 * (n + 1), 1, 1, ier)
        call expect(ier, FMPL_SUCCESS, 'recv (pong)')
        call verify(rbuf, n, 2d0, 'pong data')
        if (rbuf(n + 1) /= -7d0) call fail('pong wrote past the message')
      else
        rbuf = -7d0
        call fmpl_recv(rbuf, 8_8 * (n + 1), 0, 1, ier)
        call expect(ier, FMPL_SUCCESS, 'recv (ping)')
        call verify(rbuf, n, 1d0, 'ping data')
        if (rbuf(n + 1) /= -7d0) call fail('ping wrote past the message')
        call fill(sbuf, n, 2d0)
        call fmpl_send(sbuf, 8_8 * n, 0, 1, ier)
        call expect(ier, FMPL_SUCCESS, 'send (pong)')
      end if
    end do

    ! ---- nonblocking exchange: irecv, isend, test, wait -------------------
    do k = 1, size(sizes)
      n = sizes(k)
      rbuf = -7d0
      call fill(sbuf, n, dble(10 + rank))
      call fmpl_irecv(rbuf, 8_8 * n, peer, 2, rreq, ier)
      call expect(ier, FMPL_SUCCESS, 'irecv')
      call fmpl_isend(sbuf, 8_8 * n, peer, 2, sreq, ier)
      call expect(ier, FMPL_SUCCESS, 'isend')
      done = 0
      ntest = 0
      call fmpl_wtime(t0)
      t1 = t0
      do while (done == 0 .and. t1 - t0 < 60d0)
        call fmpl_test(rreq, done, ier)
        call expect(ier, FMPL_SUCCESS, 'test')
        if (ier /= FMPL_SUCCESS) exit
        if (done /= 0 .and. done /= 1) call fail('test: done is not 0/1')
        ntest = ntest + 1
        call fmpl_wtime(t1)
      end do
      if (done /= 1) call fail('irecv did not complete within 60 s')
      call fmpl_wait_isend(sreq, ier)
      call expect(ier, FMPL_SUCCESS, 'wait_isend')
      call fmpl_wait_irecv(rreq, ier)
      call expect(ier, FMPL_SUCCESS, 'wait_irecv')
      call verify(rbuf, n, dble(10 + peer), 'irecv data')
      if (rbuf(n + 1) /= -7d0) call fail('irecv wrote past the message')
      ! the requests are inactive again
      call fmpl_wait_irecv(rreq, ier)
      call expect(ier, FMPL_ERR_REQUEST, 'second wait_irecv')
      call fmpl_test(sreq, done, ier)
      call expect(ier, FMPL_ERR_REQUEST, 'test after wait_isend')
    end do

    ! ---- cancel_irecv: the next receive takes the cancelled one's place ---
    if (rank == 0) then
      rbuf = -7d0
      call fmpl_irecv(rbuf, 8_8 * 8, 1, 5, rreq, ier)
      call expect(ier, FMPL_SUCCESS, 'irecv to cancel')
      call fmpl_cancel_irecv(rreq, ier)
      call expect(ier, FMPL_SUCCESS, 'cancel_irecv')
      msg(1) = 1d0
      call fmpl_send(msg, 8_8, 1, 6, ier)
      call expect(ier, FMPL_SUCCESS, 'send go (cancel)')
      sbuf = -7d0
      call fmpl_recv(sbuf, 8_8 * 8, 1, 5, ier)
      call expect(ier, FMPL_SUCCESS, 'recv after cancel')
      call verify(sbuf, 8, 5d0, 'data after cancel')
      if (any(rbuf(1:8) /= -7d0)) call fail('cancelled receive got data')
    else
      call fmpl_recv(msg, 8_8, 0, 6, ier)
      call expect(ier, FMPL_SUCCESS, 'recv go (cancel)')
      call fill(sbuf, 8, 5d0)
      call fmpl_send(sbuf, 8_8 * 8, 0, 5, ier)
      call expect(ier, FMPL_SUCCESS, 'send after cancel')
    end if

    ! ---- spill buffer: a send before its receive is posted --------------
    ! Rank 0's send on index 3 cannot be matched until rank 1 gets the go
    ! message on index 4, so it must spill after 1 ms and return.
    ! (A broken spill path hangs here: flush what was printed so far.)
    flush(6)
    n = 1000
    if (rank == 0) then
      call fmpl_sendbuff_set(spill, 8_8 * nspill, 1000d0, ier)
      call expect(ier, FMPL_SUCCESS, 'sendbuff_set')
      call fill(sbuf, n, 3d0)
      call fmpl_send(sbuf, 8_8 * n, 1, 3, ier)
      call expect(ier, FMPL_SUCCESS, 'send into the spill buffer')
      sbuf = -1d0        ! the spilled copy must be what arrives
      call fmpl_sendbuff_check(nsend, nspool, ier)
      call expect(ier, FMPL_SUCCESS, 'sendbuff_check (spooled)')
      if (nsend /= 0 .or. nspool /= 1) then
        print *, 'nsend, nspool =', nsend, nspool
        call fail('sendbuff_check: expected 0 sent, 1 spooled')
      end if
      totsend = nsend
      msg(1) = 2d0
      call fmpl_send(msg, 8_8, 1, 4, ier)
      call expect(ier, FMPL_SUCCESS, 'send go (spill)')
      call fmpl_wtime(t0)
      t1 = t0
      do while (nspool > 0 .and. t1 - t0 < 60d0)
        call fmpl_sendbuff_check(nsend, nspool, ier)
        call expect(ier, FMPL_SUCCESS, 'sendbuff_check')
        if (ier /= FMPL_SUCCESS) exit
        totsend = totsend + nsend
        call fmpl_wtime(t1)
      end do
      if (nspool /= 0 .or. totsend /= 1) then
        print *, 'delivered, spooled =', totsend, nspool
        call fail('spilled message not delivered')
      end if
      ! wait for rank 1 to have it, then remove the buffer
      call fmpl_recv(msg, 8_8, 1, 4, ier)
      call expect(ier, FMPL_SUCCESS, 'recv ack (spill)')
      call fmpl_sendbuff_set(spill, 0_8, 0d0, ier)
      call expect(ier, FMPL_SUCCESS, 'sendbuff_set removal')
    else
      call fmpl_recv(msg, 8_8, 0, 4, ier)
      call expect(ier, FMPL_SUCCESS, 'recv go (spill)')
      rbuf = -7d0
      call fmpl_recv(rbuf, 8_8 * n, 0, 3, ier)
      call expect(ier, FMPL_SUCCESS, 'recv of the spilled message')
      call verify(rbuf, n, 3d0, 'spilled data')
      call fmpl_send(msg, 8_8, 0, 4, ier)
      call expect(ier, FMPL_SUCCESS, 'send ack (spill)')
    end if

    ! ---- rank 1 tells rank 0 how it went ----------------------------------
    ! (a scalar INTEGER buffer beside the DOUBLE PRECISION arrays above:
    ! the module's buffers take any type, scalars too)
    if (rank == 0) then
      other = -1
      call fmpl_recv(other, 4_8, 1, 7, ier)
      call expect(ier, FMPL_SUCCESS, 'recv result')
      if (other /= 0) then
        print *, 'rank 1 had', other, 'failures'
        nfail = nfail + 1
      end if
    else
      call fmpl_send(nfail, 4_8, 0, 7, ier)
      call expect(ier, FMPL_SUCCESS, 'send result')
    end if
  end if

  call fmpl_finalize(ier)
  call expect(ier, FMPL_SUCCESS, 'fmpl_finalize')
  call fmpl_finalize(ier)
  call expect(ier, FMPL_ERR_NOT_INIT, 'second fmpl_finalize')

  if (nfail /= 0) then
    print *, 'fortran_pingpong: rank', rank, ':', nfail, 'failures'
    error stop 1
  end if
  if (rank == 0) print '(a)', 'PASS'

contains

  subroutine fail(what)
    character(*), intent(in) :: what
    print '(a,i0,2a)', 'FAIL rank ', rank, ': ', what
    nfail = nfail + 1
  end subroutine fail

  subroutine expect(got, want, what)
    integer, intent(in) :: got, want
    character(*), intent(in) :: what
    if (got /= want) then
      print '(a,i0,3a,i0,a,i0)', 'FAIL rank ', rank, ': ', what, &
           ': ier = ', got, ', expected ', want
      nfail = nfail + 1
    end if
  end subroutine expect

  ! element i of a message with key x is x * 1d6 + i
  subroutine fill(b, m, x)
    double precision, intent(inout) :: b(:)
    integer, intent(in) :: m
    double precision, intent(in) :: x
    integer :: i
    do i = 1, m
      b(i) = x * 1d6 + dble(i)
    end do
  end subroutine fill

  subroutine verify(b, m, x, what)
    double precision, intent(in) :: b(:)
    integer, intent(in) :: m
    double precision, intent(in) :: x
    character(*), intent(in) :: what
    integer :: i
    do i = 1, m
      if (b(i) /= x * 1d6 + dble(i)) then
        print '(a,i0,3a,i0,a,i0,a,es14.6)', 'FAIL rank ', rank, ': ', what, &
             ' (', m, ' doubles) at ', i, ': ', b(i)
        nfail = nfail + 1
        return
      end if
    end do
  end subroutine verify

end program fortran_pingpong
