! fmplf.h - FMPL constants for Fortran: include 'fmplf.h'
! Fixed- and free-form.  The values are those of fmpl.h.
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
      integer, parameter :: FMPL_REQUEST_WORDS = 9
