! fpingpong.f90 - ping-pong between rank 0 and rank 1 from Fortran.
!
!   fmplrun -n 2 examples/fpingpong
!
! The FMPL Fortran calls are subroutines with the error code last;
! `use fmpl` declares them, so the compiler checks every call.  Sizes are
! byte counts of kind FMPL_SIZE_KIND (INTEGER*8).
!
!   gfortran fpingpong.f90 $(pkg-config --cflags --libs fmpl)
program fpingpong
  use fmpl
  implicit none
  integer, parameter :: n = 1000, niter = 100, mai = 0
  double precision :: buf(n), t0, t1
  integer :: rank, nproc, ier, i, it
  integer(FMPL_SIZE_KIND) :: nbytes

  call fmpl_init(1, ier)
  if (ier /= FMPL_SUCCESS) then
    print *, 'fmpl_init failed, ier =', ier
    error stop 1
  end if
  call fmpl_rank(rank, ier)
  call check(ier, 'fmpl_rank')
  call fmpl_size(nproc, ier)
  call check(ier, 'fmpl_size')
  if (nproc < 2) then
    print *, 'fpingpong: run with 2 processes'
    error stop 1
  end if

  ! the whole array, in bytes
  nbytes = size(buf, kind=FMPL_SIZE_KIND) * storage_size(buf) / 8
  do i = 1, n
    buf(i) = dble(i)
  end do

  call fmpl_wtime(t0)
  do it = 1, niter
    if (rank == 0) then
      call fmpl_send(buf, nbytes, 1, mai, ier)
      call check(ier, 'fmpl_send')
      call fmpl_recv(buf, nbytes, 1, mai, ier)
      call check(ier, 'fmpl_recv')
    else if (rank == 1) then
      call fmpl_recv(buf, nbytes, 0, mai, ier)
      call check(ier, 'fmpl_recv')
      ! send back the data plus one; rank 0 checks it
      buf = buf + 1d0
      call fmpl_send(buf, nbytes, 0, mai, ier)
      call check(ier, 'fmpl_send')
    end if
  end do
  call fmpl_wtime(t1)

  if (rank == 0) then
    do i = 1, n
      if (buf(i) /= dble(i + niter)) then
        print *, 'fpingpong: bad data at', i, buf(i)
        error stop 1
      end if
    end do
    print '(a,i0,a,f10.2,a)', 'fpingpong: ', nbytes, ' bytes, ', &
         (t1 - t0) / (2 * niter) * 1d6, ' us one way'
  end if

  call fmpl_finalize(ier)
  call check(ier, 'fmpl_finalize')
  if (rank == 0) print '(a)', 'fpingpong OK'

contains

  subroutine check(ier, what)
    integer, intent(in) :: ier
    character(*), intent(in) :: what
    if (ier /= FMPL_SUCCESS) then
      print *, 'fpingpong: ', what, ' failed, ier =', ier
      error stop 1
    end if
  end subroutine check

end program fpingpong
