! fmplf.h - FMPL constants for Fortran: include 'fmplf.h'
! Fixed- and free-form.  The values are those of fmpl.h.
! The module `use fmpl` (src/fortran/fmpl_mod.f90) includes this file and
! adds explicit interfaces: use one or the other in a program unit.
! Sizes are INTEGER*8 byte counts; requests are INTEGER*8 arrays
! of FMPL_REQUEST_WORDS elements; see src/fortran/fmpl_fortran.c.
      integer, parameter :: FMPL_SUCCESS = 0
      integer, parameter :: FMPL_ERR_NOT_INIT = -1
      integer, parameter :: FMPL_ERR_INIT = -2
      integer, parameter :: FMPL_ERR_ARG = -3
      integer, parameter :: FMPL_ERR_RANK = -4
      integer, parameter :: FMPL_ERR_INDEX = -5
      integer, parameter :: FMPL_ERR_BUFFER = -6
      integer, parameter :: FMPL_ERR_BUSY = -7
      integer, parameter :: FMPL_ERR_TRUNCATE = -8
      integer, parameter :: FMPL_ERR_PEER = -9
      integer, parameter :: FMPL_ERR_NOMEM = -10
      integer, parameter :: FMPL_ERR_REQUEST = -11
      integer, parameter :: FMPL_ERR_SPILL = -12
      integer, parameter :: FMPL_ERR_UNSUPPORTED = -13
      integer, parameter :: FMPL_ERR_SYSTEM = -14
      integer, parameter :: FMPL_ERR_CANCELED = -15
      integer, parameter :: FMPL_ERR_INTERNAL = -16
      integer, parameter :: FMPL_ERR_COMM = -17
      integer, parameter :: FMPL_ERR_OP = -18
      integer, parameter :: FMPL_ERR_LIMIT = -19
      integer, parameter :: FMPL_ERR_SHAPE = -20
      integer, parameter :: FMPL_REQUEST_WORDS = 11
! communicators, collectives, halo exchange (fmpl_fortran_coll.c)
      integer, parameter :: FMPL_COMM_WORLD = 0
      integer, parameter :: FMPL_COMM_NULL = -1
      integer, parameter :: FMPL_UNDEFINED = -32766
      integer, parameter :: fmpl_isum = 1, fmpl_ssum = 2
      integer, parameter :: fmpl_dsum = 3, fmpl_csum = 4
      integer, parameter :: fmpl_zsum = 5
      integer, parameter :: fmpl_imax = 6, fmpl_smax = 7
      integer, parameter :: fmpl_dmax = 8, fmpl_cmax = 9
      integer, parameter :: fmpl_zmax = 10
      integer, parameter :: fmpl_imin = 11, fmpl_smin = 12
      integer, parameter :: fmpl_dmin = 13, fmpl_cmin = 14
      integer, parameter :: fmpl_zmin = 15
      integer, parameter :: FMPL_HALO_FACES = 1
      integer, parameter :: FMPL_HALO_NONE = 0
      integer, parameter :: FMPL_HALO_BLOCK = 1
      integer, parameter :: FMPL_HALO_BLOCK_STRIDE = 2
      integer, parameter :: FMPL_HALO_STRIDE = 3
