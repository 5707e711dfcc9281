! pdgesv_f.f90 - solve a distributed linear system A x = b with ScaLAPACK's
! PDGESV on a P x Q process grid made through the BLACS Fortran interface
! (the Fortran twin of pdgesv.c: same matrix, same checks, same output).
!
!   pdgesv_f [-n N] [-nb NB] [-p P] [-q Q]
!
!   N   order of the system (default 600)
!   NB  block size of the 2-D block-cyclic distribution (default 32)
!   P,Q the process grid (default: P x Q = every process, P <= Q, as
!       square as possible); processes beyond P*Q take no part
!
! Build and run on fmpl-blacs (fmpl_blacs before scalapack, so its BLACS
! replace the MPI-BLACS inside libscalapack-openmpi):
!   gfortran -O2 -o examples/pdgesv_f examples/pdgesv_f.f90 -Llib -lfmpl_blacs -lfmpl \
!      -Wl,-rpath,'$ORIGIN/../lib' -lscalapack-openmpi -llapack -lblas -lm
!   bin/fmplrun -n 4 examples/pdgesv_f -n 1000
! or on Debian's MPI-BLACS:
!   mpif90 -O2 -o pdgesv_f examples/pdgesv_f.f90 -lscalapack-openmpi -llapack -lblas
!   mpirun -np 4 ./pdgesv_f
!
! A(i, j) (0-based global indices) is a pseudo-random number in [-1, 1)
! from the indices plus N at (i, mod(i + N/2, N)): strictly diagonally
! dominant after a row permutation, hence well-conditioned, and partial
! pivoting must swap rows; every grid and block size solves the same system.  b = A x0 (PDGEMV),
! x0(i) = 1 + mod(i, 7) / 7.  After PDGESV the scaled residual
!     ||A x - b||_inf / (||A||_inf ||x||_inf N eps)      (PDGEMV, PDLANGE)
! must be below 10 and ||x - x0||_inf / ||x0||_inf below 1e-8.  Process
! {0,0} prints the result and PASS or FAIL; every process exits with
! status 0 on PASS and 1 on FAIL.
program pdgesv_f
    use, intrinsic :: iso_fortran_env, only: int64, real64, error_unit
    implicit none
    integer, parameter :: dp = real64
    integer :: n, nb, p, q, me, np, ctxt, nprow, npcol, myrow, mycol
    integer :: mloc, nloc, lld, info, il, jl, i, bad, ierr
    integer :: desca(9), descb(9)
    integer(int64) :: ig, jg
    real(dp), allocatable :: a(:, :), acopy(:, :), x0(:), b(:), r(:), work(:)
    integer, allocatable :: ipiv(:)
    real(dp) :: anorm, xnorm, rnorm, resid, err, eps
    integer :: dummy(1)
    character(len=64) :: arg, val
    integer, external :: numroc
    real(dp), external :: pdlange

    n = 600
    nb = 32
    p = 0
    q = 0
    call blacs_pinfo(me, np)

    i = 1
    do while (i <= command_argument_count())
        call get_command_argument(i, arg)
        if (i + 1 > command_argument_count()) then
            call usage()
        end if
        call get_command_argument(i + 1, val)
        select case (trim(arg))
        case ('-n')
            read (val, *, iostat=ierr) n
        case ('-nb')
            read (val, *, iostat=ierr) nb
        case ('-p')
            read (val, *, iostat=ierr) p
        case ('-q')
            read (val, *, iostat=ierr) q
        case default
            ierr = 1
        end select
        if (ierr /= 0) call usage()
        i = i + 2
    end do

    if (p <= 0 .and. q <= 0) then
        p = int(sqrt(real(np, dp)))
        do while (p > 1 .and. mod(np, p) /= 0)
            p = p - 1
        end do
        q = np / p
    else if (p <= 0) then
        p = np / q
    else if (q <= 0) then
        q = np / p
    end if
    if (n < 1 .or. nb < 1 .or. p < 1 .or. q < 1 .or. p * q > np) then
        if (me == 0) write (error_unit, '(a,i0,a,i0,a,i0,a)') &
            'pdgesv_f: need n, nb >= 1 and a ', p, ' x ', q, ' grid within ', np, ' processes'
        call blacs_exit(0)
        stop 2
    end if

    call blacs_get(0, 0, ctxt)
    call blacs_gridinit(ctxt, 'Row-major', p, q)
    call blacs_gridinfo(ctxt, nprow, npcol, myrow, mycol)
    if (myrow < 0 .or. myrow >= nprow .or. mycol < 0 .or. mycol >= npcol) then
        call blacs_exit(0)              ! not in the grid
        stop
    end if

    mloc = numroc(n, nb, myrow, 0, nprow)
    nloc = numroc(n, nb, mycol, 0, npcol)
    lld = max(1, mloc)
    call descinit(desca, n, n, nb, nb, 0, 0, ctxt, lld, info)
    if (info == 0) call descinit(descb, n, 1, nb, nb, 0, 0, ctxt, lld, info)
    if (info /= 0) then
        write (error_unit, '(a,i0)') 'pdgesv_f: descinit failed, info ', info
        call blacs_gridexit(ctxt)
        call blacs_exit(0)
        stop 1
    end if

    allocate (a(lld, max(1, nloc)), acopy(lld, max(1, nloc)), x0(lld), b(lld), r(lld), &
              work(mloc + nloc + 2 * nb + 16), ipiv(mloc + nb))
    x0 = 0
    b = 0
    do jl = 1, nloc
        jg = global_index(jl, mycol, npcol)
        do il = 1, mloc
            a(il, jl) = a_elem(global_index(il, myrow, nprow), jg)
        end do
    end do
    acopy = a
    if (mycol == 0) then                ! column 0 of the grid holds b and x
        do il = 1, mloc
            ig = global_index(il, myrow, nprow)
            x0(il) = 1.0_dp + real(mod(ig, 7_int64), dp) / 7.0_dp
        end do
    end if

    ! b = A x0, then solve A x = b (x overwrites b)
    call pdgemv('N', n, n, 1.0_dp, a, 1, 1, desca, x0, 1, 1, descb, 1, &
                0.0_dp, b, 1, 1, descb, 1)
    r = b
    call pdgesv(n, 1, a, 1, 1, desca, ipiv, b, 1, 1, descb, info)

    ! r = A x - b; norms
    call pdgemv('N', n, n, 1.0_dp, acopy, 1, 1, desca, b, 1, 1, descb, 1, &
                -1.0_dp, r, 1, 1, descb, 1)
    anorm = pdlange('I', n, n, acopy, 1, 1, desca, work)
    xnorm = pdlange('I', n, 1, b, 1, 1, descb, work)
    rnorm = pdlange('I', n, 1, r, 1, 1, descb, work)
    eps = epsilon(1.0_dp) / 2           ! LAPACK's dlamch('E')
    resid = rnorm / (anorm * xnorm * n * eps)

    ! forward error: max |x - x0| over the grid (dgamx2d, everybody gets it)
    err = 0
    if (mycol == 0 .and. mloc > 0) err = maxval(abs(b(1:mloc) - x0(1:mloc)))
    call dgamx2d(ctxt, 'All', ' ', 1, 1, err, 1, dummy, dummy, -1, -1, -1)
    err = err / (1.0_dp + 6.0_dp / 7.0_dp)

    ! every process's verdict, summed (igsum2d): all agree on the status
    bad = 0
    if (.not. (info == 0 .and. resid < 10.0_dp .and. err < 1.0e-8_dp)) bad = 1
    if (resid /= resid) bad = 1         ! NaN
    call igsum2d(ctxt, 'All', ' ', 1, 1, bad, 1, -1, -1)
    if (myrow == 0 .and. mycol == 0) then
        write (*, '(a,i0,a,i0,a,i0,a,i0,a,i0,a,i0,a,es10.4,a,es9.3,a,a)') &
            'pdgesv_f: n=', n, ' nb=', nb, ' grid ', nprow, 'x', npcol, ' (', np, &
            ' processes): info ', info, ', ||Ax-b||/(||A|| ||x|| n eps) = ', resid, &
            ', ||x-x0||/||x0|| = ', err, ': ', merge('FAIL', 'PASS', bad /= 0)
        flush (6)
    end if

    deallocate (a, acopy, x0, b, r, work, ipiv)
    call blacs_gridexit(ctxt)
    call blacs_exit(0)
    if (bad /= 0) stop 1

contains

    subroutine usage()
        if (me == 0) write (error_unit, '(a)') 'usage: pdgesv_f [-n N] [-nb NB] [-p P] [-q Q]'
        call blacs_exit(0)
        stop 2
    end subroutine usage

    ! 0-based global index of 1-based local index l in a block-cyclic dimension
    integer(int64) function global_index(l, myproc, nprocs)
        integer, intent(in) :: l, myproc, nprocs
        global_index = (int((l - 1) / nb, int64) * nprocs + myproc) * nb + mod(l - 1, nb)
    end function global_index

    ! strictly diagonally dominant after a row permutation: n at
    ! (i, mod(i + n/2, n)), the rest of a row sums to less than n - 1
    real(dp) function a_elem(ig, jg)
        integer(int64), intent(in) :: ig, jg
        a_elem = urand(ig, jg)
        if (jg == mod(ig + n / 2, int(n, int64))) a_elem = a_elem + real(n, dp)
    end function a_elem

    ! A pseudo-random number in [-1, 1) from the indices: Park-Miller steps
    ! modulo 2^31 - 1, no product above 2^48 (the same bits as pdgesv.c).
    real(dp) function urand(ig, jg)
        integer(int64), intent(in) :: ig, jg
        integer(int64), parameter :: m = 2147483647_int64, g = 48271_int64
        integer(int64) :: h
        h = mod(ig + 1, m)
        h = mod(h * g, m)
        h = mod(mod(h + jg + 1, m) * g, m)
        h = mod(h * g, m)
        h = mod(h * g, m)
        urand = 2.0_dp * real(h, dp) / real(m, dp) - 1.0_dp
    end function urand

end program pdgesv_f
