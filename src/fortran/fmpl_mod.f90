! fmpl_mod.f90 - the Fortran module `fmpl`: explicit interfaces for the
! Fortran bindings of src/fortran/*.c, their constants and kinds.
!
!   use fmpl
!   gfortran prog.f90 $(pkg-config --cflags --libs fmpl)
!
! What `use mpi_f08` is to `include 'mpif.h'`: the same calls, the same
! library symbols, but the compiler checks every call.  A default INTEGER
! where a size must be INTEGER*8, an INTEGER*4 request array, a scalar for
! the halo extents, a constant where FMPL stores a result, or a missing
! `ier` is a compile error instead of a wrong byte count or a crash.  So is
! a caller compiled with -fdefault-integer-8: the integers here are C ints.
!
! Nothing here is code: the interfaces bind to the existing symbols
! (bind(C, name="fmpl_send_") ...) with the arguments by reference as the
! C side takes them, so the library's ABI does not change and programs
! that `include 'fmplf.h'` keep working; the object file of this module
! defines no symbol and is not linked anywhere (test/fortran_module_test.sh
! checks both, and that every binding libfmpl exports has an interface).
!
! The constants are fmplf.h's, included below: one list, so the module and
! the header cannot disagree (and fmpl_fortran*.c assert fmplf.h against
! fmpl.h).  A program uses either the module or the header, not both.
!
! Choice buffers (the data of send, recv, bcast, reduce ...) are
!     !GCC$ ATTRIBUTES NO_ARG_CHECK :: buf
!     type(*), dimension(*) :: buf
! as Open MPI's `mpi` module declares them for gfortran.  Why:
! - assumed type and assumed size is interoperable with the C side's
!   `void *`: the caller passes the address of the first element, exactly
!   what the implicit interface of fmplf.h passed, so the existing symbols
!   serve both.  Assumed rank (`dimension(..)`, mpi_f08's choice) would
!   pass a descriptor (CFI_cdesc_t under bind(C)) instead and need new C
!   entry points: an ABI change;
! - type(*), dimension(*) alone rejects scalars (`call fmpl_bcast(n, 4_8,
!   ...)` with an INTEGER n), which the header's users pass all the time;
!   NO_ARG_CHECK lifts gfortran's type-kind-rank check for that argument
!   only.  Other compilers read the directive as a comment and see
!   standard assumed-size buffers (arrays and array elements only).
! Buffers of different types may now be passed to one call in one file
! (no -fallow-argument-mismatch).  An array section that is not
! contiguous (a(1:n:2)) is still copied in and out by the compiler: fine
! for blocking calls, wrong for fmpl_isend/irecv, the nonblocking
! collectives (fmpl_ibcast ...), fmpl_ineighbor_alltoallv,
! fmpl_neighbor_init, fmpl_sendbuff_set and fmpl_halo_init, whose
! buffers FMPL keeps using after the call (they are ASYNCHRONOUS
! here; declare the actual arrays ASYNCHRONOUS too).
!
! Kinds: FMPL_SIZE_KIND for byte counts (and fmpl_halo_init's
! elem_size), FMPL_REQUEST_KIND for the words of a request array
! integer(FMPL_REQUEST_KIND) :: req(FMPL_REQUEST_WORDS), FMPL_ADDRESS_KIND
! for a halo or neighbour-exchange handle.  All three are C's int64_t,
! which the C side takes.
!
! fmpl_reduce and fmpl_allreduce take `work` as an optional argument:
! leave it out (call fmpl_allreduce(x, n, fmpl_dsum, comm, ier=ier)) and
! the library allocates it, as with NULL in C.  Every other argument is
! required; `ier` always, because the C side always stores it.
!
! The module source needs gfortran's default standard (type(*) is Fortran
! 2018/TS 29113); programs that use it may be compiled with -std=f2008.
! The meaning of every call and argument: src/fortran/fmpl_fortran.c,
! src/fortran/fmpl_fortran_coll.c and include/fmpl.h.
module fmpl
  use, intrinsic :: iso_c_binding, only: c_int, c_int64_t, c_double
  implicit none
  private :: c_int, c_int64_t, c_double

  integer, parameter :: FMPL_SIZE_KIND = c_int64_t
  integer, parameter :: FMPL_REQUEST_KIND = c_int64_t
  integer, parameter :: FMPL_ADDRESS_KIND = c_int64_t

  include 'fmplf.h'

  interface

    ! ---- environment (fmpl_fortran.c) ---------------------------------

    subroutine fmpl_init(count, ier) bind(C, name="fmpl_init_")
      import :: c_int
      integer(c_int), intent(in) :: count
      integer(c_int), intent(out) :: ier
    end subroutine fmpl_init

    subroutine fmpl_finalize(ier) bind(C, name="fmpl_finalize_")
      import :: c_int
      integer(c_int), intent(out) :: ier
    end subroutine fmpl_finalize

    ! never returns
    subroutine fmpl_abort(code) bind(C, name="fmpl_abort_")
      import :: c_int
      integer(c_int), intent(in) :: code
    end subroutine fmpl_abort

    subroutine fmpl_rank(rank, ier) bind(C, name="fmpl_rank_")
      import :: c_int
      integer(c_int), intent(out) :: rank
      integer(c_int), intent(out) :: ier
    end subroutine fmpl_rank

    subroutine fmpl_size(size, ier) bind(C, name="fmpl_size_")
      import :: c_int
      integer(c_int), intent(out) :: size
      integer(c_int), intent(out) :: ier
    end subroutine fmpl_size

    subroutine fmpl_wtime(t) bind(C, name="fmpl_wtime_")
      import :: c_double
      real(c_double), intent(out) :: t
    end subroutine fmpl_wtime

    subroutine fmpl_wtime_emulated(flag) bind(C, name="fmpl_wtime_emulated_")
      import :: c_int
      integer(c_int), intent(out) :: flag
    end subroutine fmpl_wtime_emulated

    subroutine fmpl_compute(seconds, ier) bind(C, name="fmpl_compute_")
      import :: c_int, c_double
      real(c_double), intent(in) :: seconds
      integer(c_int), intent(out) :: ier
    end subroutine fmpl_compute

    ! ---- point-to-point (fmpl_fortran.c) ------------------------------

    subroutine fmpl_send(buf, size, dst, mai, ier) bind(C, name="fmpl_send_")
      import :: c_int, FMPL_SIZE_KIND
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: buf
      type(*), dimension(*), intent(in) :: buf
      integer(FMPL_SIZE_KIND), intent(in) :: size
      integer(c_int), intent(in) :: dst, mai
      integer(c_int), intent(out) :: ier
    end subroutine fmpl_send

    subroutine fmpl_recv(buf, size, src, mai, ier) bind(C, name="fmpl_recv_")
      import :: c_int, FMPL_SIZE_KIND
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: buf
      type(*), dimension(*), intent(inout) :: buf
      integer(FMPL_SIZE_KIND), intent(in) :: size
      integer(c_int), intent(in) :: src, mai
      integer(c_int), intent(out) :: ier
    end subroutine fmpl_recv

    subroutine fmpl_isend(buf, size, dst, mai, req, ier) bind(C, name="fmpl_isend_")
      import :: c_int, FMPL_SIZE_KIND, FMPL_REQUEST_KIND, FMPL_REQUEST_WORDS
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: buf
      type(*), dimension(*), intent(in), asynchronous :: buf
      integer(FMPL_SIZE_KIND), intent(in) :: size
      integer(c_int), intent(in) :: dst, mai
      integer(FMPL_REQUEST_KIND), intent(inout) :: req(FMPL_REQUEST_WORDS)
      integer(c_int), intent(out) :: ier
    end subroutine fmpl_isend

    subroutine fmpl_irecv(buf, size, src, mai, req, ier) bind(C, name="fmpl_irecv_")
      import :: c_int, FMPL_SIZE_KIND, FMPL_REQUEST_KIND, FMPL_REQUEST_WORDS
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: buf
      type(*), dimension(*), intent(inout), asynchronous :: buf
      integer(FMPL_SIZE_KIND), intent(in) :: size
      integer(c_int), intent(in) :: src, mai
      integer(FMPL_REQUEST_KIND), intent(inout) :: req(FMPL_REQUEST_WORDS)
      integer(c_int), intent(out) :: ier
    end subroutine fmpl_irecv

    subroutine fmpl_wait_isend(req, ier) bind(C, name="fmpl_wait_isend_")
      import :: c_int, FMPL_REQUEST_KIND, FMPL_REQUEST_WORDS
      integer(FMPL_REQUEST_KIND), intent(inout) :: req(FMPL_REQUEST_WORDS)
      integer(c_int), intent(out) :: ier
    end subroutine fmpl_wait_isend

    subroutine fmpl_wait_irecv(req, ier) bind(C, name="fmpl_wait_irecv_")
      import :: c_int, FMPL_REQUEST_KIND, FMPL_REQUEST_WORDS
      integer(FMPL_REQUEST_KIND), intent(inout) :: req(FMPL_REQUEST_WORDS)
      integer(c_int), intent(out) :: ier
    end subroutine fmpl_wait_irecv

    ! done: 1 when the request has completed, else 0
    subroutine fmpl_test(req, done, ier) bind(C, name="fmpl_test_")
      import :: c_int, FMPL_REQUEST_KIND, FMPL_REQUEST_WORDS
      integer(FMPL_REQUEST_KIND), intent(inout) :: req(FMPL_REQUEST_WORDS)
      integer(c_int), intent(out) :: done
      integer(c_int), intent(out) :: ier
    end subroutine fmpl_test

    ! any request: a send, a receive or a nonblocking collective
    subroutine fmpl_wait(req, ier) bind(C, name="fmpl_wait_")
      import :: c_int, FMPL_REQUEST_KIND, FMPL_REQUEST_WORDS
      integer(FMPL_REQUEST_KIND), intent(inout) :: req(FMPL_REQUEST_WORDS)
      integer(c_int), intent(out) :: ier
    end subroutine fmpl_wait

    subroutine fmpl_cancel_irecv(req, ier) bind(C, name="fmpl_cancel_irecv_")
      import :: c_int, FMPL_REQUEST_KIND, FMPL_REQUEST_WORDS
      integer(FMPL_REQUEST_KIND), intent(inout) :: req(FMPL_REQUEST_WORDS)
      integer(c_int), intent(out) :: ier
    end subroutine fmpl_cancel_irecv

    ! the spill buffer is FMPL's until it is removed (size 0)
    subroutine fmpl_sendbuff_set(buf, size, timeout_us, ier) &
        bind(C, name="fmpl_sendbuff_set_")
      import :: c_int, c_double, FMPL_SIZE_KIND
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: buf
      type(*), dimension(*), intent(inout), asynchronous :: buf
      integer(FMPL_SIZE_KIND), intent(in) :: size
      real(c_double), intent(in) :: timeout_us
      integer(c_int), intent(out) :: ier
    end subroutine fmpl_sendbuff_set

    subroutine fmpl_sendbuff_check(nsend, nspool, ier) bind(C, name="fmpl_sendbuff_check_")
      import :: c_int
      integer(c_int), intent(out) :: nsend, nspool
      integer(c_int), intent(out) :: ier
    end subroutine fmpl_sendbuff_check

    ! ---- communicators (fmpl_fortran_coll.c) --------------------------

    ! the paper's argument order: comm first
    subroutine fmpl_comm_create(comm, key, ier) bind(C, name="fmpl_comm_create_")
      import :: c_int
      integer(c_int), intent(out) :: comm
      integer(c_int), intent(in) :: key
      integer(c_int), intent(out) :: ier
    end subroutine fmpl_comm_create

    subroutine fmpl_comm_split(comm, color, key, newcomm, ier) bind(C, name="fmpl_comm_split_")
      import :: c_int
      integer(c_int), intent(in) :: comm, color, key
      integer(c_int), intent(out) :: newcomm
      integer(c_int), intent(out) :: ier
    end subroutine fmpl_comm_split

    subroutine fmpl_comm_rank(comm, rank, ier) bind(C, name="fmpl_comm_rank_")
      import :: c_int
      integer(c_int), intent(in) :: comm
      integer(c_int), intent(out) :: rank
      integer(c_int), intent(out) :: ier
    end subroutine fmpl_comm_rank

    subroutine fmpl_comm_size(comm, size, ier) bind(C, name="fmpl_comm_size_")
      import :: c_int
      integer(c_int), intent(in) :: comm
      integer(c_int), intent(out) :: size
      integer(c_int), intent(out) :: ier
    end subroutine fmpl_comm_size

    ! comm becomes FMPL_COMM_NULL
    subroutine fmpl_comm_free(comm, ier) bind(C, name="fmpl_comm_free_")
      import :: c_int
      integer(c_int), intent(inout) :: comm
      integer(c_int), intent(out) :: ier
    end subroutine fmpl_comm_free

    ! ---- collectives (fmpl_fortran_coll.c) ----------------------------

    subroutine fmpl_barrier(comm, ier) bind(C, name="fmpl_barrier_")
      import :: c_int
      integer(c_int), intent(in) :: comm
      integer(c_int), intent(out) :: ier
    end subroutine fmpl_barrier

    subroutine fmpl_bcast(buf, size, root, comm, ier) bind(C, name="fmpl_bcast_")
      import :: c_int, FMPL_SIZE_KIND
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: buf
      type(*), dimension(*), intent(inout) :: buf
      integer(FMPL_SIZE_KIND), intent(in) :: size
      integer(c_int), intent(in) :: root, comm
      integer(c_int), intent(out) :: ier
    end subroutine fmpl_bcast

    subroutine fmpl_hbcast(buf, size, root, ier) bind(C, name="fmpl_hbcast_")
      import :: c_int, FMPL_SIZE_KIND
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: buf
      type(*), dimension(*), intent(inout) :: buf
      integer(FMPL_SIZE_KIND), intent(in) :: size
      integer(c_int), intent(in) :: root
      integer(c_int), intent(out) :: ier
    end subroutine fmpl_hbcast

    ! count in elements; func one of the fmpl_[iscdz]{sum,max,min}
    ! constants or an fmpl_op_create handle; work optional (see above)
    subroutine fmpl_reduce(buf, count, func, root, comm, work, ier) bind(C, name="fmpl_reduce_")
      import :: c_int
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: buf
      type(*), dimension(*), intent(inout) :: buf
      integer(c_int), intent(in) :: count, func, root, comm
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: work
      type(*), dimension(*), intent(inout), optional :: work
      integer(c_int), intent(out) :: ier
    end subroutine fmpl_reduce

    subroutine fmpl_allreduce(buf, count, func, comm, work, ier) bind(C, name="fmpl_allreduce_")
      import :: c_int
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: buf
      type(*), dimension(*), intent(inout) :: buf
      integer(c_int), intent(in) :: count, func, comm
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: work
      type(*), dimension(*), intent(inout), optional :: work
      integer(c_int), intent(out) :: ier
    end subroutine fmpl_allreduce

    subroutine fmpl_allgather(sendbuf, size, recvbuf, comm, ier) bind(C, name="fmpl_allgather_")
      import :: c_int, FMPL_SIZE_KIND
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf, recvbuf
      type(*), dimension(*), intent(in) :: sendbuf
      integer(FMPL_SIZE_KIND), intent(in) :: size
      type(*), dimension(*), intent(inout) :: recvbuf
      integer(c_int), intent(in) :: comm
      integer(c_int), intent(out) :: ier
    end subroutine fmpl_allgather

    subroutine fmpl_gather(sendbuf, size, recvbuf, root, comm, ier) bind(C, name="fmpl_gather_")
      import :: c_int, FMPL_SIZE_KIND
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf, recvbuf
      type(*), dimension(*), intent(in) :: sendbuf
      integer(FMPL_SIZE_KIND), intent(in) :: size
      type(*), dimension(*), intent(inout) :: recvbuf
      integer(c_int), intent(in) :: root, comm
      integer(c_int), intent(out) :: ier
    end subroutine fmpl_gather

    subroutine fmpl_scatter(sendbuf, size, recvbuf, root, comm, ier) bind(C, name="fmpl_scatter_")
      import :: c_int, FMPL_SIZE_KIND
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf, recvbuf
      type(*), dimension(*), intent(in) :: sendbuf
      integer(FMPL_SIZE_KIND), intent(in) :: size
      type(*), dimension(*), intent(inout) :: recvbuf
      integer(c_int), intent(in) :: root, comm
      integer(c_int), intent(out) :: ier
    end subroutine fmpl_scatter

    ! the v-variants: sizes and displacements in bytes, one per member of
    ! comm; those read at the root only may be any array elsewhere
    subroutine fmpl_allgatherv(sendbuf, size, recvbuf, sizes, displs, comm, ier) &
        bind(C, name="fmpl_allgatherv_")
      import :: c_int, FMPL_SIZE_KIND
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf, recvbuf
      type(*), dimension(*), intent(in) :: sendbuf
      integer(FMPL_SIZE_KIND), intent(in) :: size
      type(*), dimension(*), intent(inout) :: recvbuf
      integer(FMPL_SIZE_KIND), intent(in) :: sizes(*), displs(*)
      integer(c_int), intent(in) :: comm
      integer(c_int), intent(out) :: ier
    end subroutine fmpl_allgatherv

    subroutine fmpl_gatherv(sendbuf, size, recvbuf, sizes, displs, root, comm, ier) &
        bind(C, name="fmpl_gatherv_")
      import :: c_int, FMPL_SIZE_KIND
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf, recvbuf
      type(*), dimension(*), intent(in) :: sendbuf
      integer(FMPL_SIZE_KIND), intent(in) :: size
      type(*), dimension(*), intent(inout) :: recvbuf
      integer(FMPL_SIZE_KIND), intent(in) :: sizes(*), displs(*)
      integer(c_int), intent(in) :: root, comm
      integer(c_int), intent(out) :: ier
    end subroutine fmpl_gatherv

    subroutine fmpl_scatterv(sendbuf, sizes, displs, recvbuf, size, root, comm, ier) &
        bind(C, name="fmpl_scatterv_")
      import :: c_int, FMPL_SIZE_KIND
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf, recvbuf
      type(*), dimension(*), intent(in) :: sendbuf
      integer(FMPL_SIZE_KIND), intent(in) :: sizes(*), displs(*)
      type(*), dimension(*), intent(inout) :: recvbuf
      integer(FMPL_SIZE_KIND), intent(in) :: size
      integer(c_int), intent(in) :: root, comm
      integer(c_int), intent(out) :: ier
    end subroutine fmpl_scatterv

    subroutine fmpl_alltoall(sendbuf, size, recvbuf, comm, ier) bind(C, name="fmpl_alltoall_")
      import :: c_int, FMPL_SIZE_KIND
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf, recvbuf
      type(*), dimension(*), intent(in) :: sendbuf
      integer(FMPL_SIZE_KIND), intent(in) :: size
      type(*), dimension(*), intent(inout) :: recvbuf
      integer(c_int), intent(in) :: comm
      integer(c_int), intent(out) :: ier
    end subroutine fmpl_alltoall

    subroutine fmpl_alltoallv(sendbuf, sendsizes, sdispls, recvbuf, recvsizes, rdispls, &
                              comm, ier) bind(C, name="fmpl_alltoallv_")
      import :: c_int, FMPL_SIZE_KIND
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf, recvbuf
      type(*), dimension(*), intent(in) :: sendbuf
      integer(FMPL_SIZE_KIND), intent(in) :: sendsizes(*), sdispls(*)
      type(*), dimension(*), intent(inout) :: recvbuf
      integer(FMPL_SIZE_KIND), intent(in) :: recvsizes(*), rdispls(*)
      integer(c_int), intent(in) :: comm
      integer(c_int), intent(out) :: ier
    end subroutine fmpl_alltoallv

    ! counts in elements, one per member of comm
    subroutine fmpl_reduce_scatter(sendbuf, recvbuf, counts, func, comm, ier) &
        bind(C, name="fmpl_reduce_scatter_")
      import :: c_int
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf, recvbuf
      type(*), dimension(*), intent(in) :: sendbuf
      type(*), dimension(*), intent(inout) :: recvbuf
      integer(c_int), intent(in) :: counts(*)
      integer(c_int), intent(in) :: func, comm
      integer(c_int), intent(out) :: ier
    end subroutine fmpl_reduce_scatter

    subroutine fmpl_scan(sendbuf, recvbuf, count, func, comm, ier) bind(C, name="fmpl_scan_")
      import :: c_int
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf, recvbuf
      type(*), dimension(*), intent(in) :: sendbuf
      type(*), dimension(*), intent(inout) :: recvbuf
      integer(c_int), intent(in) :: count, func, comm
      integer(c_int), intent(out) :: ier
    end subroutine fmpl_scan

    subroutine fmpl_exscan(sendbuf, recvbuf, count, func, comm, ier) bind(C, name="fmpl_exscan_")
      import :: c_int
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf, recvbuf
      type(*), dimension(*), intent(in) :: sendbuf
      type(*), dimension(*), intent(inout) :: recvbuf
      integer(c_int), intent(in) :: count, func, comm
      integer(c_int), intent(out) :: ier
    end subroutine fmpl_exscan

    ! ---- nonblocking collectives (fmpl_fortran_coll.c) ----------------
    ! the blocking calls' arguments (no work) and a request, ended by
    ! fmpl_wait; the buffers are FMPL's until then (asynchronous)

    subroutine fmpl_ibarrier(comm, req, ier) bind(C, name="fmpl_ibarrier_")
      import :: c_int, FMPL_REQUEST_KIND, FMPL_REQUEST_WORDS
      integer(c_int), intent(in) :: comm
      integer(FMPL_REQUEST_KIND), intent(inout) :: req(FMPL_REQUEST_WORDS)
      integer(c_int), intent(out) :: ier
    end subroutine fmpl_ibarrier

    subroutine fmpl_ibcast(buf, size, root, comm, req, ier) bind(C, name="fmpl_ibcast_")
      import :: c_int, FMPL_SIZE_KIND, FMPL_REQUEST_KIND, FMPL_REQUEST_WORDS
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: buf
      type(*), dimension(*), intent(inout), asynchronous :: buf
      integer(FMPL_SIZE_KIND), intent(in) :: size
      integer(c_int), intent(in) :: root, comm
      integer(FMPL_REQUEST_KIND), intent(inout) :: req(FMPL_REQUEST_WORDS)
      integer(c_int), intent(out) :: ier
    end subroutine fmpl_ibcast

    subroutine fmpl_ireduce(buf, count, func, root, comm, req, ier) &
        bind(C, name="fmpl_ireduce_")
      import :: c_int, FMPL_REQUEST_KIND, FMPL_REQUEST_WORDS
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: buf
      type(*), dimension(*), intent(inout), asynchronous :: buf
      integer(c_int), intent(in) :: count, func, root, comm
      integer(FMPL_REQUEST_KIND), intent(inout) :: req(FMPL_REQUEST_WORDS)
      integer(c_int), intent(out) :: ier
    end subroutine fmpl_ireduce

    subroutine fmpl_iallreduce(buf, count, func, comm, req, ier) &
        bind(C, name="fmpl_iallreduce_")
      import :: c_int, FMPL_REQUEST_KIND, FMPL_REQUEST_WORDS
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: buf
      type(*), dimension(*), intent(inout), asynchronous :: buf
      integer(c_int), intent(in) :: count, func, comm
      integer(FMPL_REQUEST_KIND), intent(inout) :: req(FMPL_REQUEST_WORDS)
      integer(c_int), intent(out) :: ier
    end subroutine fmpl_iallreduce

    subroutine fmpl_iallgather(sendbuf, size, recvbuf, comm, req, ier) &
        bind(C, name="fmpl_iallgather_")
      import :: c_int, FMPL_SIZE_KIND, FMPL_REQUEST_KIND, FMPL_REQUEST_WORDS
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf, recvbuf
      type(*), dimension(*), intent(in), asynchronous :: sendbuf
      integer(FMPL_SIZE_KIND), intent(in) :: size
      type(*), dimension(*), intent(inout), asynchronous :: recvbuf
      integer(c_int), intent(in) :: comm
      integer(FMPL_REQUEST_KIND), intent(inout) :: req(FMPL_REQUEST_WORDS)
      integer(c_int), intent(out) :: ier
    end subroutine fmpl_iallgather

    subroutine fmpl_igather(sendbuf, size, recvbuf, root, comm, req, ier) &
        bind(C, name="fmpl_igather_")
      import :: c_int, FMPL_SIZE_KIND, FMPL_REQUEST_KIND, FMPL_REQUEST_WORDS
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf, recvbuf
      type(*), dimension(*), intent(in), asynchronous :: sendbuf
      integer(FMPL_SIZE_KIND), intent(in) :: size
      type(*), dimension(*), intent(inout), asynchronous :: recvbuf
      integer(c_int), intent(in) :: root, comm
      integer(FMPL_REQUEST_KIND), intent(inout) :: req(FMPL_REQUEST_WORDS)
      integer(c_int), intent(out) :: ier
    end subroutine fmpl_igather

    subroutine fmpl_iscatter(sendbuf, size, recvbuf, root, comm, req, ier) &
        bind(C, name="fmpl_iscatter_")
      import :: c_int, FMPL_SIZE_KIND, FMPL_REQUEST_KIND, FMPL_REQUEST_WORDS
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf, recvbuf
      type(*), dimension(*), intent(in), asynchronous :: sendbuf
      integer(FMPL_SIZE_KIND), intent(in) :: size
      type(*), dimension(*), intent(inout), asynchronous :: recvbuf
      integer(c_int), intent(in) :: root, comm
      integer(FMPL_REQUEST_KIND), intent(inout) :: req(FMPL_REQUEST_WORDS)
      integer(c_int), intent(out) :: ier
    end subroutine fmpl_iscatter

    subroutine fmpl_ialltoall(sendbuf, size, recvbuf, comm, req, ier) &
        bind(C, name="fmpl_ialltoall_")
      import :: c_int, FMPL_SIZE_KIND, FMPL_REQUEST_KIND, FMPL_REQUEST_WORDS
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf, recvbuf
      type(*), dimension(*), intent(in), asynchronous :: sendbuf
      integer(FMPL_SIZE_KIND), intent(in) :: size
      type(*), dimension(*), intent(inout), asynchronous :: recvbuf
      integer(c_int), intent(in) :: comm
      integer(FMPL_REQUEST_KIND), intent(inout) :: req(FMPL_REQUEST_WORDS)
      integer(c_int), intent(out) :: ier
    end subroutine fmpl_ialltoall

    ! ---- neighbour exchanges (fmpl_fortran_coll.c) --------------------
    ! ranks dsts(ndst) and srcs(nsrc) of comm, from 0; byte counts and
    ! displacements one per list entry (sendsizes(ndst), recvsizes(nsrc)
    ! ...); the nonblocking and persistent forms' buffers are FMPL's until
    ! the wait (fmpl_ineighbor_alltoallv) or fmpl_neighbor_free

    subroutine fmpl_neighbor_alltoallv(sendbuf, ndst, dsts, sendsizes, sdispls, recvbuf, &
                                       nsrc, srcs, recvsizes, rdispls, comm, ier) &
        bind(C, name="fmpl_neighbor_alltoallv_")
      import :: c_int, FMPL_SIZE_KIND
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf, recvbuf
      type(*), dimension(*), intent(in) :: sendbuf
      integer(c_int), intent(in) :: ndst
      integer(c_int), intent(in) :: dsts(*)
      integer(FMPL_SIZE_KIND), intent(in) :: sendsizes(*), sdispls(*)
      type(*), dimension(*), intent(inout) :: recvbuf
      integer(c_int), intent(in) :: nsrc
      integer(c_int), intent(in) :: srcs(*)
      integer(FMPL_SIZE_KIND), intent(in) :: recvsizes(*), rdispls(*)
      integer(c_int), intent(in) :: comm
      integer(c_int), intent(out) :: ier
    end subroutine fmpl_neighbor_alltoallv

    subroutine fmpl_ineighbor_alltoallv(sendbuf, ndst, dsts, sendsizes, sdispls, recvbuf, &
                                        nsrc, srcs, recvsizes, rdispls, comm, req, ier) &
        bind(C, name="fmpl_ineighbor_alltoallv_")
      import :: c_int, FMPL_SIZE_KIND, FMPL_REQUEST_KIND, FMPL_REQUEST_WORDS
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf, recvbuf
      type(*), dimension(*), intent(in), asynchronous :: sendbuf
      integer(c_int), intent(in) :: ndst
      integer(c_int), intent(in) :: dsts(*)
      integer(FMPL_SIZE_KIND), intent(in) :: sendsizes(*), sdispls(*)
      type(*), dimension(*), intent(inout), asynchronous :: recvbuf
      integer(c_int), intent(in) :: nsrc
      integer(c_int), intent(in) :: srcs(*)
      integer(FMPL_SIZE_KIND), intent(in) :: recvsizes(*), rdispls(*)
      integer(c_int), intent(in) :: comm
      integer(FMPL_REQUEST_KIND), intent(inout) :: req(FMPL_REQUEST_WORDS)
      integer(c_int), intent(out) :: ier
    end subroutine fmpl_ineighbor_alltoallv

    ! local (not collective): the lists are copied, the buffers kept
    subroutine fmpl_neighbor_init(sendbuf, ndst, dsts, sendsizes, sdispls, recvbuf, &
                                  nsrc, srcs, recvsizes, rdispls, comm, nb, ier) &
        bind(C, name="fmpl_neighbor_init_")
      import :: c_int, FMPL_SIZE_KIND, FMPL_ADDRESS_KIND
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf, recvbuf
      type(*), dimension(*), intent(in), asynchronous :: sendbuf
      integer(c_int), intent(in) :: ndst
      integer(c_int), intent(in) :: dsts(*)
      integer(FMPL_SIZE_KIND), intent(in) :: sendsizes(*), sdispls(*)
      type(*), dimension(*), intent(inout), asynchronous :: recvbuf
      integer(c_int), intent(in) :: nsrc
      integer(c_int), intent(in) :: srcs(*)
      integer(FMPL_SIZE_KIND), intent(in) :: recvsizes(*), rdispls(*)
      integer(c_int), intent(in) :: comm
      integer(FMPL_ADDRESS_KIND), intent(out) :: nb
      integer(c_int), intent(out) :: ier
    end subroutine fmpl_neighbor_init

    ! one exchange with the buffers' current contents, ended by fmpl_wait
    subroutine fmpl_neighbor_start(nb, req, ier) bind(C, name="fmpl_neighbor_start_")
      import :: c_int, FMPL_ADDRESS_KIND, FMPL_REQUEST_KIND, FMPL_REQUEST_WORDS
      integer(FMPL_ADDRESS_KIND), intent(in) :: nb
      integer(FMPL_REQUEST_KIND), intent(inout) :: req(FMPL_REQUEST_WORDS)
      integer(c_int), intent(out) :: ier
    end subroutine fmpl_neighbor_start

    ! nb becomes 0
    subroutine fmpl_neighbor_free(nb, ier) bind(C, name="fmpl_neighbor_free_")
      import :: c_int, FMPL_ADDRESS_KIND
      integer(FMPL_ADDRESS_KIND), intent(inout) :: nb
      integer(c_int), intent(out) :: ier
    end subroutine fmpl_neighbor_free

    ! ---- halo exchange (fmpl_fortran_coll.c) --------------------------

    ! dimensions in Fortran order: extent(ndims), shadow(ndims),
    ! nbr(2 * ndims); FMPL writes the array's shadows in every
    ! fmpl_halo_do until fmpl_halo_free
    subroutine fmpl_halo_init(array, elem_size, ndims, extent, shadow, nbr, flags, comm, &
                              halo, ier) bind(C, name="fmpl_halo_init_")
      import :: c_int, FMPL_SIZE_KIND, FMPL_ADDRESS_KIND
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: array
      type(*), dimension(*), intent(inout), asynchronous :: array
      integer(FMPL_SIZE_KIND), intent(in) :: elem_size
      integer(c_int), intent(in) :: ndims
      integer(c_int), intent(in) :: extent(*), shadow(*), nbr(*)
      integer(c_int), intent(in) :: flags, comm
      integer(FMPL_ADDRESS_KIND), intent(out) :: halo
      integer(c_int), intent(out) :: ier
    end subroutine fmpl_halo_init

    subroutine fmpl_halo_do(halo, ier) bind(C, name="fmpl_halo_do_")
      import :: c_int, FMPL_ADDRESS_KIND
      integer(FMPL_ADDRESS_KIND), intent(in) :: halo
      integer(c_int), intent(out) :: ier
    end subroutine fmpl_halo_do

    ! fmpl_halo_do in parts: start, then test (done: 1 when the exchange
    ! is over, no wait then) or wait
    subroutine fmpl_halo_start(halo, ier) bind(C, name="fmpl_halo_start_")
      import :: c_int, FMPL_ADDRESS_KIND
      integer(FMPL_ADDRESS_KIND), intent(in) :: halo
      integer(c_int), intent(out) :: ier
    end subroutine fmpl_halo_start

    subroutine fmpl_halo_test(halo, done, ier) bind(C, name="fmpl_halo_test_")
      import :: c_int, FMPL_ADDRESS_KIND
      integer(FMPL_ADDRESS_KIND), intent(in) :: halo
      integer(c_int), intent(out) :: done
      integer(c_int), intent(out) :: ier
    end subroutine fmpl_halo_test

    subroutine fmpl_halo_wait(halo, ier) bind(C, name="fmpl_halo_wait_")
      import :: c_int, FMPL_ADDRESS_KIND
      integer(FMPL_ADDRESS_KIND), intent(in) :: halo
      integer(c_int), intent(out) :: ier
    end subroutine fmpl_halo_wait

    ! d = 1 .. ndims; kind FMPL_HALO_BLOCK ...
    subroutine fmpl_halo_kind(halo, d, kind, ier) bind(C, name="fmpl_halo_kind_")
      import :: c_int, FMPL_ADDRESS_KIND
      integer(FMPL_ADDRESS_KIND), intent(in) :: halo
      integer(c_int), intent(in) :: d
      integer(c_int), intent(out) :: kind
      integer(c_int), intent(out) :: ier
    end subroutine fmpl_halo_kind

    ! halo becomes 0
    subroutine fmpl_halo_free(halo, ier) bind(C, name="fmpl_halo_free_")
      import :: c_int, FMPL_ADDRESS_KIND
      integer(FMPL_ADDRESS_KIND), intent(inout) :: halo
      integer(c_int), intent(out) :: ier
    end subroutine fmpl_halo_free

  end interface

end module fmpl
