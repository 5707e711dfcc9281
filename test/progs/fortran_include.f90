! fortran_include.f90 - the bindings through `include 'fmplf.h'` and
! implicit interfaces, the way programs used them before `use fmpl` (and
! still may): the other Fortran programs use the module, this one keeps
! the header path tested.  2 ranks or more (ranks past 1 only take part
! in the collectives).
!
!   fmplrun -n 2 test/progs/fortran_include
!
! Covered: init, rank, size, an error code from the header, a blocking
! ping-pong, isend/irecv/wait with an INTEGER*8 request array, a sum over
! everybody with a work array, barrier, finalize.  Rank 0 prints PASS.
! Every buffer is DOUBLE PRECISION: without explicit interfaces gfortran
! rejects one external subroutine called with different argument types
! in a file.
program fortran_include
  implicit none
  include 'fmplf.h'
  integer, parameter :: n = 100
  double precision :: a(n), b(n), s(1), sw(1)
  double precision, asynchronous :: ra(n)
  integer(8) :: req(FMPL_REQUEST_WORDS), sreq(FMPL_REQUEST_WORDS)
  integer :: ier, me, np, i, peer

  call fmpl_init(4, ier)
  call check(ier, FMPL_SUCCESS, 'fmpl_init')
  call fmpl_rank(me, ier)
  call check(ier, FMPL_SUCCESS, 'fmpl_rank')
  call fmpl_size(np, ier)
  call check(ier, FMPL_SUCCESS, 'fmpl_size')
  if (np < 2) then
    print '(a)', 'fortran_include: run with 2 processes or more'
    error stop 1
  end if

  ! an error code of the header
  a = 0
  call fmpl_send(a, 8_8, np, 0, ier)
  call check(ier, FMPL_ERR_RANK, 'send to rank np')

  if (me <= 1) then
    peer = 1 - me
    ! blocking ping-pong: rank 1 returns the data plus one
    if (me == 0) then
      a = (/ (dble(i), i = 1, n) /)
      call fmpl_send(a, 8_8 * n, 1, 1, ier)
      call check(ier, FMPL_SUCCESS, 'send')
      b = 0
      call fmpl_recv(b, 8_8 * n, 1, 1, ier)
      call check(ier, FMPL_SUCCESS, 'recv')
      do i = 1, n
        if (b(i) /= dble(i + 1)) call wrong('pong data')
      end do
    else
      call fmpl_recv(b, 8_8 * n, 0, 1, ier)
      call check(ier, FMPL_SUCCESS, 'recv')
      b = b + 1
      call fmpl_send(b, 8_8 * n, 0, 1, ier)
      call check(ier, FMPL_SUCCESS, 'send')
    end if

    ! nonblocking exchange with INTEGER*8 request arrays
    req = 0
    sreq = 0
    ra = -1
    a = (/ (dble(1000 * me + i), i = 1, n) /)
    call fmpl_irecv(ra, 8_8 * n, peer, 2, req, ier)
    call check(ier, FMPL_SUCCESS, 'irecv')
    call fmpl_isend(a, 8_8 * n, peer, 2, sreq, ier)
    call check(ier, FMPL_SUCCESS, 'isend')
    call fmpl_wait_isend(sreq, ier)
    call check(ier, FMPL_SUCCESS, 'wait_isend')
    call fmpl_wait_irecv(req, ier)
    call check(ier, FMPL_SUCCESS, 'wait_irecv')
    do i = 1, n
      if (ra(i) /= dble(1000 * peer + i)) call wrong('irecv data')
    end do
    call fmpl_wait_irecv(req, ier)
    call check(ier, FMPL_ERR_REQUEST, 'second wait_irecv')
  end if

  ! a sum over everybody (the paper's work array)
  s(1) = dble(me + 1)
  call fmpl_allreduce(s, 1, fmpl_dsum, FMPL_COMM_WORLD, sw, ier)
  call check(ier, FMPL_SUCCESS, 'allreduce')
  if (s(1) /= dble(np * (np + 1) / 2)) call wrong('allreduce sum')
  call fmpl_barrier(FMPL_COMM_WORLD, ier)
  call check(ier, FMPL_SUCCESS, 'barrier')

  call fmpl_finalize(ier)
  call check(ier, FMPL_SUCCESS, 'fmpl_finalize')
  if (me == 0) print '(a)', 'PASS'

contains

  subroutine check(got, want, what)
    integer, intent(in) :: got, want
    character(*), intent(in) :: what
    if (got /= want) then
      print '(a,i0,3a,i0,a,i0)', 'FAIL rank ', me, ': ', what, ': ier = ', got, &
           ', expected ', want
      error stop 1
    end if
  end subroutine check

  subroutine wrong(what)
    character(*), intent(in) :: what
    print '(a,i0,2a)', 'FAIL rank ', me, ': wrong ', what
    error stop 1
  end subroutine wrong

end program fortran_include
