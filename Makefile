# FMPL - top-level Makefile (GNU make, no autotools).
#
#   make                 library, fmplrun, examples, benchmarks, tests
#   make check           install missing Debian packages, build, run every test
#   make bench           install missing packages, build and run the benchmarks
#                        on a local 2-process job (the README's first command);
#                        QUICK=1: every table with few iterations (CI's)
#   make install PREFIX=/usr/local [DESTDIR=...]
#   make help            every target and variable
#
# One short line per file (CC src/p2p/send.c); `make V=1` shows the
# commands.  CC, CFLAGS, CPPFLAGS, LDFLAGS, FC, FFLAGS are honoured as GNU
# make's conventions say (make CFLAGS=--coverage LDFLAGS=--coverage works).
#
# Outputs (a contract): lib/libfmpl.a lib/libfmpl.so bin/fmplrun
# examples/<name> bench/<name> test/<name>
# fmpl-blacs (the BLACS on FMPL, blacs/*.c): lib/libfmpl_blacs.a
# lib/libfmpl_blacs.so fmpl-blacs.pc include/fmpl_blacs.h
# the Fortran module (`use fmpl`): build/fortran/fmpl.mod

PREFIX  ?= /usr/local
BINDIR  ?= $(PREFIX)/bin
LIBDIR  ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
# find_package(FMPL): FMPLConfig.cmake, FMPLConfigVersion.cmake
CMAKEDIR ?= $(LIBDIR)/cmake/FMPL
# fmpl.mod where gfortran's modules go (Debian's gfortran 12: 15); see
# FMOD_VERSION
FMODDIR ?= $(LIBDIR)/fortran/gfortran-mod-$(FMOD_VERSION)
CC      ?= cc
# make predefines FC=f77; only an explicit FC overrides gfortran
ifeq ($(origin FC),default)
FC      = gfortran
endif
MPICC   ?= mpicc
# MPICH's compiler wrapper beside Open MPI's (Debian's alternatives keep
# mpicc Open MPI's): the same bench/mpi sources, built into bench/mpich
MPICC_MPICH ?= mpicc.mpich
OPT     ?= -O2
CFLAGS  ?= $(OPT) -g
FFLAGS  ?= $(OPT) -g
ALLCFLAGS = $(CPPFLAGS) $(CFLAGS) -std=gnu11 -Wall -Wextra -fPIC -pthread \
            -Iinclude -Isrc -fvisibility=hidden -DFMPL_BUILD
SOVERSION = 0
SONAME  = libfmpl.so.$(SOVERSION)
# the version is the header's (include/fmpl.h: FMPL_VERSION_*)
VERSION := $(shell sed -n 's/^\#define FMPL_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\)$$/\2/p' \
                     include/fmpl.h | paste -sd.)

# V=1: the whole commands; otherwise one short line per file (none with
# make -s, as kbuild does)
V ?= 0
ifeq ($(V),1)
Q   =
say = @:
else
Q   = @
ifneq ($(findstring s,$(firstword -$(MAKEFLAGS))),)
say = @:
else
say = @printf '  %-7s %s\n'
endif
endif

# Debian packages the build and the tests need (installed by `make deps`).
DEB_PKGS = gcc gfortran make pkg-config check libsubunit-dev libpmix-dev \
           openmpi-bin libopenmpi-dev valgrind \
           libscalapack-openmpi-dev scalapack-mpi-test scalapack-test-common \
           liblapack-dev libblas-dev libfabric-dev libfabric-bin iproute2 \
           libibverbs-dev ibverbs-providers rdma-core perftest \
           slurmctld slurmd slurm-client slurm-wlm-basic-plugins munge \
           clang libclang-rt-14-dev \
           pandoc man-db groff-base gnuplot-nox cmake nftables ethtool \
           iptables libnetfilter-queue-dev

# libpmix, libfabric and libibverbs are not linked: each is loaded at run
# time by the first job that needs it (src/base/dlib.h says why); their
# headers decide what is built.
# PMIx bootstrap when libpmix is there (it is after `make deps`).
PMIX_CFLAGS := $(shell pkg-config --cflags pmix 2>/dev/null)
PMIX_LIBS   := $(shell pkg-config --libs pmix 2>/dev/null)
ifneq ($(PMIX_LIBS),)
ALLCFLAGS += -DFMPL_HAVE_PMIX $(PMIX_CFLAGS) \
             -DFMPL_PMIX_LIBDIR='"$(shell pkg-config --variable=libdir pmix)"'
endif
# The libfabric transport (src/transport/ofi) when libfabric's headers are
# there.
ifneq ($(shell pkg-config --exists libfabric 2>/dev/null && echo yes),)
ALLCFLAGS += -DFMPL_HAVE_OFI $(shell pkg-config --cflags libfabric)
OFI_SRC := $(wildcard src/transport/ofi/*.c) src/transport/route/route.c
endif
# The InfiniBand verbs transport (src/transport/dcfa) when rdma-core's
# libibverbs is there (it is after `make deps`).
ifneq ($(shell pkg-config --exists libibverbs 2>/dev/null && echo yes),)
ALLCFLAGS += -DFMPL_HAVE_VERBS
VERBS_SRC := $(wildcard src/transport/dcfa/*.c)
endif
# libfmpl itself needs no libm (one process less to map it in: 1024
# emulated ranks); programs that do get it
LIBS_PRIVATE = -ldl -lpthread -lrt
LIBS = $(LIBS_PRIVATE) -Wl,--as-needed -lm -Wl,--no-as-needed

LIB_SRC := $(wildcard src/base/*.c src/transport/*.c src/p2p/*.c src/coll/*.c src/api/*.c \
                      src/transport/shm/*.c src/transport/emu/*.c \
                      src/transport/tcw/*.c src/transport/peach2/*.c \
                      src/transport/ib/*.c src/transport/tca/*.c \
                      src/transport/route/route_core.c src/fortran/*.c) $(OFI_SRC) \
           $(VERBS_SRC)
LIB_OBJ := $(LIB_SRC:%.c=build/%.o)
HDRS    := $(wildcard include/*.h src/*/*.h src/transport/*/*.h)

TOOLS      := bin/fmplrun
EX_C       := $(patsubst %.c,%,$(wildcard examples/*.c))
EX_F       := $(patsubst %.f90,%,$(wildcard examples/*.f90))
BENCH      := $(patsubst %.c,%,$(filter-out bench/bench_util.c,$(wildcard bench/*.c)))
BENCH_MPI_SRC := $(wildcard bench/mpi/*.c)
HAVE_MPICC := $(shell command -v $(MPICC) 2>/dev/null)
ifneq ($(HAVE_MPICC),)
BENCH_MPI  := $(patsubst %.c,%,$(filter-out bench/mpi/bench_util.c,$(BENCH_MPI_SRC)))
endif
HAVE_MPICH := $(shell command -v $(MPICC_MPICH) 2>/dev/null)
ifneq ($(HAVE_MPICH),)
BENCH_MPICH := $(patsubst bench/mpi/%.c,bench/mpich/%,$(filter-out \
               bench/mpi/blacs.c bench/mpi/scale_coll.c bench/mpi/tcp_floor.c,$(BENCH_MPI_SRC)))
endif
TEST_UNIT  := $(patsubst %.c,%,$(wildcard test/check_*.c))
# test/progs/mpi_*.c use MPI: built with mpicc, and only when it exists
TEST_PROGS := $(patsubst %.c,%,$(filter-out test/progs/mpi_%,$(wildcard test/progs/*.c)))
# test/progs/pmix_serve is a PMIx server: only where libpmix is
ifeq ($(PMIX_LIBS),)
TEST_PROGS := $(filter-out test/progs/pmix_serve,$(TEST_PROGS))
endif
# test/progs/nfq_delay holds packets of a netfilter queue: only where
# libnetfilter_queue is
NFQ_LIBS := $(shell pkg-config --libs libnetfilter_queue 2>/dev/null)
ifeq ($(NFQ_LIBS),)
TEST_PROGS := $(filter-out test/progs/nfq_delay,$(TEST_PROGS))
endif
ifneq ($(HAVE_MPICC),)
TEST_PROGS += $(patsubst %.c,%,$(wildcard test/progs/mpi_*.c))
endif
TEST_FPROGS:= $(patsubst %.f90,%,$(wildcard test/progs/*.f90))
# the Fortran module `use fmpl` (its rule is below bin/fmplrun's)
FMOD_BUILD := build/fortran
FMOD       := $(FMOD_BUILD)/fmpl.mod
CHECK_CFLAGS := $(shell pkg-config --cflags check 2>/dev/null)
CHECK_LIBS   := $(shell pkg-config --libs check 2>/dev/null)

# fmpl-blacs: its own library beside libfmpl, same flags (hidden
# visibility: only BLACS_API names leave it).
BLACS_SRC    := $(wildcard blacs/*.c)
BLACS_OBJ    := $(BLACS_SRC:%.c=build/%.o)
BLACS_SONAME  = libfmpl_blacs.so.$(SOVERSION)
BLACS_LIBS    = lib/libfmpl_blacs.a lib/libfmpl_blacs.so fmpl-blacs.pc
# Programs that run ScaLAPACK on fmpl-blacs need Debian's ScaLAPACK: the
# fmpl-blacs library comes first, so its BLACS replace the MPI-BLACS
# inside libscalapack-openmpi.
HAVE_SCALAPACK := $(wildcard /usr/lib/*/libscalapack-openmpi.so /usr/lib/libscalapack-openmpi.so)
SCALAPACK_LIBS  = -lscalapack-openmpi -llapack -lblas -lgfortran -lm
# the ScaLAPACK examples have rules of their own (below)
EX_C := $(filter-out examples/pdgesv,$(EX_C))
EX_F := $(filter-out examples/pdgesv_f,$(EX_F))
EX_SCALAPACK = examples/pdgesv examples/pdgesv_f
ifeq ($(HAVE_SCALAPACK),)
BENCH     := $(filter-out bench/blacs,$(BENCH))
BENCH_MPI := $(filter-out bench/mpi/blacs,$(BENCH_MPI))
EX_SCALAPACK =
endif

all: lib/libfmpl.a lib/libfmpl.so $(FMOD) $(TOOLS) fmpl.pc $(BLACS_LIBS) examples bench-build tests

.PHONY: all examples bench-build tests check deps install uninstall clean bench bench-scale bench-smpi help faults soak \
        coverage man install-man uninstall-man

build/%.o: %.c $(HDRS)
	@mkdir -p $(dir $@)
	$(say) CC $<
	$(Q)$(CC) $(ALLCFLAGS) -c $< -o $@

lib/libfmpl.a: $(LIB_OBJ)
	@mkdir -p lib
	$(Q)rm -f $@
	$(say) AR $@
	$(Q)ar rcs $@ $^

lib/$(SONAME): $(LIB_OBJ)
	@mkdir -p lib
	$(say) CC $@
	$(Q)$(CC) $(LDFLAGS) -shared -Wl,-soname,$(SONAME) -Wl,--no-undefined -Wl,-Bsymbolic-functions \
	      -o $@ $^ $(LIBS)

lib/libfmpl.so: lib/$(SONAME)
	$(say) LN $@
	$(Q)ln -sf $(SONAME) $@

$(BLACS_OBJ): blacs/blacs.h
lib/libfmpl_blacs.a: $(BLACS_OBJ)
	@mkdir -p lib
	$(Q)rm -f $@
	$(say) AR $@
	$(Q)ar rcs $@ $^

# rpath $ORIGIN: LD_PRELOAD=/abs/lib/libfmpl_blacs.so finds libfmpl.so.0
# beside it, installed or not.
lib/$(BLACS_SONAME): $(BLACS_OBJ) lib/libfmpl.so
	$(say) CC $@
	$(Q)$(CC) $(LDFLAGS) -shared -Wl,-soname,$(BLACS_SONAME) -Wl,--no-undefined \
	      -Wl,-rpath,'$$ORIGIN' -o $@ $(BLACS_OBJ) -Llib -lfmpl

lib/libfmpl_blacs.so: lib/$(BLACS_SONAME)
	$(say) LN $@
	$(Q)ln -sf $(BLACS_SONAME) $@

# The Fortran module `fmpl` (src/fortran/fmpl_mod.f90): interfaces of
# the bindings in src/fortran/*.c and fmplf.h's constants, no code, so
# its object is linked nowhere.  fmpl.mod goes to FMOD_BUILD, which the
# Fortran programs get with -I.  gfortran leaves a .mod it would not change untouched:
# touch it, or make would run this rule every time.
$(FMOD): src/fortran/fmpl_mod.f90 include/fmplf.h
	@mkdir -p $(FMOD_BUILD)
	$(say) FC $<
	$(Q)$(FC) $(FFLAGS) -Wall -Iinclude -J$(FMOD_BUILD) -c $< -o $(FMOD_BUILD)/fmpl_mod.o
	@touch $@
# gfortran's module format version, from the header of our fmpl.mod (or
# of a probe module, when fmpl.mod is not built): computed once, on use.
FMOD_VERSION = $(eval FMOD_VERSION := $(shell { gzip -dc $(FMOD) 2>/dev/null || { \
    d=$$(mktemp -d) && printf 'module p\nend module p\n' > $$d/p.f90 && \
    $(FC) -J$$d -c $$d/p.f90 -o $$d/p.o >/dev/null 2>&1 && gzip -dc $$d/p.mod; rm -rf $$d; }; } | \
    sed -n "1s/^GFORTRAN module version '\([0-9]*\)'.*/\1/p"))$(FMOD_VERSION)

FMPLRUN_SRC := $(wildcard tools/fmplrun/*.c)
bin/fmplrun: $(FMPLRUN_SRC) tools/fmplrun/fmplrun.h src/base/parse.c $(HDRS)
	@mkdir -p bin
	$(say) CC $@
	$(Q)$(CC) $(LDFLAGS) $(ALLCFLAGS) -fvisibility=default -o $@ $(FMPLRUN_SRC) src/base/parse.c -lrt

# fmpl.pc for PREFIX; `make install` writes it again for its own PREFIX.
PC_SED = sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(VERSION)|g' \
             -e 's|@LIBDIR@|$(LIBDIR)|g' -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|g' \
             -e 's|@FMODDIR@|$(FMODDIR)|g' \
             -e 's|@LIBS_PRIVATE@|$(LIBS_PRIVATE)|g'
fmpl.pc: fmpl.pc.in Makefile
	$(say) GEN $@
	$(Q)$(PC_SED) $< > $@
fmpl-blacs.pc: fmpl-blacs.pc.in Makefile
	$(say) GEN $@
	$(Q)$(PC_SED) $< > $@
# the CMake package files (cmake/*.cmake.in), written by install only:
# they find the installed files from their own place, paths the same
# relative to CMAKEDIR as at install time.  SIZEOF_VOID_P (the version
# file turns a project of another pointer size away): computed once, on use.
CMAKE_SED = $(PC_SED) -e 's|@BINDIR@|$(BINDIR)|g' -e 's|@CMAKEDIR@|$(CMAKEDIR)|g' \
                      -e 's|@SOVERSION@|$(SOVERSION)|g' -e 's|@SIZEOF_VOID_P@|$(SIZEOF_VOID_P)|g'
SIZEOF_VOID_P = $(eval SIZEOF_VOID_P := $(shell echo __SIZEOF_POINTER__ | \
    $(CC) $(CPPFLAGS) $(CFLAGS) -E -P -x c - 2>/dev/null | tr -d ' '))$(SIZEOF_VOID_P)

# Man pages, libfabric's layout, written once in man/*.md and turned into
# roff by pandoc: man/PAGE.S.md -> build/man/manS/PAGE.S.  The other names
# on a page's NAME line get link pages (`.so manS/PAGE.S`, man/links.sh);
# tables the code keeps (model parameters, error codes) are expanded into
# the pages from the code (man/expand.sh).  Built when pandoc is installed
# (`make deps`).
MANDIR  ?= $(PREFIX)/share/man
PANDOC  ?= pandoc
HAVE_PANDOC := $(shell command -v $(PANDOC) 2>/dev/null)
MAN_SRC := $(wildcard man/*.md)
MAN_PAGES := $(foreach f,$(MAN_SRC:man/%.md=%),build/man/man$(subst .,,$(suffix $f))/$f)
MAN_LINK_PAIRS := $(if $(MAN_SRC),$(shell sh man/links.sh $(MAN_SRC)))
MAN_LINKS := $(foreach p,$(MAN_LINK_PAIRS),build/man/$(firstword $(subst =, ,$p)))
MAN_HEADER = FMPL Programmer's Manual
build/man/man1/%: MAN_HEADER = FMPL User Commands
MAN_FLAGS = -f markdown-smart -t man -s -M footer='FMPL $(VERSION)' \
            -M header="$(MAN_HEADER)" -M hyphenate=false
ifneq ($(HAVE_PANDOC),)
MAN_ALL := $(MAN_PAGES) $(MAN_LINKS)
endif
all: man
man: $(MAN_ALL)
ifeq ($(HAVE_PANDOC),)
	@echo "man pages: $(PANDOC) is not installed (make deps), skipped" >&2
endif
define MAN_PANDOC
	@mkdir -p $(@D) build/man/md
	$(say) PANDOC $@
	$(Q)sh man/expand.sh < $< > build/man/md/$(@F).md
	$(Q)$(PANDOC) $(MAN_FLAGS) -o $@ build/man/md/$(@F).md
endef
build/man/man1/%.1: man/%.1.md man/expand.sh
	$(MAN_PANDOC)
build/man/man3/%.3: man/%.3.md man/expand.sh
	$(MAN_PANDOC)
build/man/man7/%.7: man/%.7.md man/expand.sh
	$(MAN_PANDOC)
# what man/expand.sh reads into them
build/man/man7/fmpl.7: $(wildcard src/transport/*/*_model.c)
build/man/man3/fmpl_strerror.3: include/fmpl.h
$(foreach p,$(MAN_LINK_PAIRS),$(eval build/man/$(subst =,: build/man/,$p)))
$(MAN_LINKS):
	$(say) GEN $@
	$(Q)echo '.so $(<:build/man/%=%)' > $@
install: install-man
uninstall: uninstall-man
install-man: man
	$(say) INSTALL '$(DESTDIR)$(MANDIR)/man[137]'
	$(Q)for f in $(MAN_ALL:build/man/%=%); do \
	    install -d '$(DESTDIR)$(MANDIR)'/$${f%/*} && \
	    install -m 644 build/man/$$f '$(DESTDIR)$(MANDIR)'/$$f || exit 1; \
	done
uninstall-man:
	$(say) RM '$(DESTDIR)$(MANDIR)/man[137]'
	$(Q)rm -f $(patsubst build/man/%,'$(DESTDIR)$(MANDIR)'/%,$(MAN_PAGES) $(MAN_LINKS))

# Programs link the static library (no PLT on the fast path) except the
# examples, which use the shared one the way an installed user would.
PROG_LDFLAGS = lib/libfmpl.a $(LIBS)
EX_LDFLAGS   = -Llib -lfmpl -Wl,-rpath,'$$ORIGIN/../lib' $(LIBS)

examples: $(EX_C) $(EX_F) $(EX_SCALAPACK)
# ScaLAPACK's pdgesv on fmpl-blacs: our BLACS before ScaLAPACK's own
examples/pdgesv: examples/pdgesv.c lib/libfmpl_blacs.so include/fmpl_blacs.h
	$(say) CC $@
	$(Q)$(CC) $(LDFLAGS) $(CPPFLAGS) $(CFLAGS) -std=gnu11 -Wall -Wextra -Iinclude -o $@ $< -Llib -lfmpl_blacs -lfmpl \
	    -Wl,-rpath,'$$ORIGIN/../lib' $(SCALAPACK_LIBS)
examples/pdgesv_f: examples/pdgesv_f.f90 lib/libfmpl_blacs.so
	$(say) FC $@
	$(Q)$(FC) $(LDFLAGS) $(FFLAGS) -Wall -o $@ $< -Llib -lfmpl_blacs -lfmpl \
	    -Wl,-rpath,'$$ORIGIN/../lib' $(SCALAPACK_LIBS)
examples/%: examples/%.c lib/libfmpl.so include/fmpl.h
	$(say) CC $@
	$(Q)$(CC) $(LDFLAGS) $(CPPFLAGS) $(CFLAGS) -std=gnu11 -Wall -Wextra -Iinclude -o $@ $< $(EX_LDFLAGS)
examples/%: examples/%.f90 lib/libfmpl.so include/fmplf.h $(FMOD)
	$(say) FC $@
	$(Q)$(FC) $(LDFLAGS) $(FFLAGS) -Wall -Iinclude -I$(FMOD_BUILD) -o $@ $< $(EX_LDFLAGS)

# bench-build: every program bench/run_local.sh and the scripts it calls
# run, examples/himeno among them (bench/tca)
bench-build: $(BENCH) $(BENCH_MPI) $(BENCH_MPICH) examples/himeno
bench/%: bench/%.c bench/bench_util.c bench/bench_util.h bench/bench_fmpl.h lib/libfmpl.a
	$(say) CC $@
	$(Q)$(CC) $(LDFLAGS) $(ALLCFLAGS) -fvisibility=default -Ibench -o $@ $< bench/bench_util.c $(PROG_LDFLAGS)
bench/himeno bench/mpi/himeno bench/mpich/himeno: bench/himeno_kernel.h
bench/overlap bench/mpi/overlap bench/mpich/overlap: bench/overlap_bench.h
bench/sr8000_p2p bench/sr8000_coll: bench/sr8000_mpi.h
COLL_BENCH := barrier bcast reduce allreduce allgather alltoall
$(addprefix bench/,$(COLL_BENCH)): bench/coll_bench.h bench/coll_fmpl.h
$(addprefix bench/mpi/,$(COLL_BENCH)): bench/coll_bench.h bench/mpi/coll_mpi.h
bench/mpi/%: bench/mpi/%.c bench/bench_util.c bench/bench_util.h
	$(say) MPICC $@
	$(Q)$(MPICC) $(LDFLAGS) $(CPPFLAGS) $(CFLAGS) -std=gnu11 -Wall -Wextra -Ibench -o $@ $< bench/bench_util.c -lm
$(addprefix bench/mpich/,$(COLL_BENCH)): bench/coll_bench.h bench/mpi/coll_mpi.h
# (MPICH defines MPI_STATUSES_IGNORE as (MPI_Status *)1, which gcc 12
# takes for an empty array)
bench/mpich/%: bench/mpi/%.c bench/bench_util.c bench/bench_util.h
	@mkdir -p bench/mpich
	$(say) MPICC.MPICH $@
	$(Q)$(MPICC_MPICH) $(LDFLAGS) $(CPPFLAGS) $(CFLAGS) -std=gnu11 -Wall -Wextra -Ibench \
	    -Wno-stringop-overflow -o $@ $< bench/bench_util.c -lm
# ScaLAPACK on fmpl-blacs, and the same source on Debian's MPI-BLACS
bench/blacs: bench/blacs.c bench/blacs_bench.h bench/blas_model.h bench/bench_util.c bench/bench_util.h \
             include/fmpl_blacs.h lib/libfmpl_blacs.so
	$(say) CC $@
	$(Q)$(CC) $(LDFLAGS) $(CPPFLAGS) $(CFLAGS) -std=gnu11 -Wall -Wextra -Iinclude -Ibench -o $@ bench/blacs.c \
	    bench/bench_util.c -Llib -lfmpl_blacs -lfmpl $(SCALAPACK_LIBS) \
	    -Wl,-rpath,'$$ORIGIN/../lib'
bench/mpi/blacs: bench/mpi/blacs.c bench/blacs_bench.h bench/bench_util.c bench/bench_util.h
	$(say) MPICC $@
	$(Q)$(MPICC) $(LDFLAGS) $(CPPFLAGS) $(CFLAGS) -std=gnu11 -Wall -Wextra -Ibench -o $@ bench/mpi/blacs.c \
	    bench/bench_util.c $(SCALAPACK_LIBS)

tests: $(TEST_UNIT) $(TEST_PROGS) $(TEST_FPROGS)
test/check_%: test/check_%.c test/testlib.h lib/libfmpl.a
	$(say) CC $@
	$(Q)$(CC) $(LDFLAGS) $(ALLCFLAGS) -fvisibility=default $(CHECK_CFLAGS) -Itest -o $@ $< $(PROG_LDFLAGS) $(CHECK_LIBS)
test/progs/%: test/progs/%.c test/progs/prog.h lib/libfmpl.a
	$(say) CC $@
	$(Q)$(CC) $(LDFLAGS) $(ALLCFLAGS) -fvisibility=default -Itest/progs -o $@ $< $(PROG_LDFLAGS)
# the fault programs' timer
test/progs/fault test/progs/blacs_fault: test/progs/fault_timer.h
test/progs/coll_ops test/progs/coll_vops test/progs/coll_nb: test/progs/coll_ref.h
# BLACS workers: the C BLACS interface only (shorter stem: this rule wins)
test/progs/blacs_%: test/progs/blacs_%.c test/progs/blacs_test.h lib/libfmpl_blacs.a \
                    lib/libfmpl.a
	$(say) CC $@
	$(Q)$(CC) $(LDFLAGS) $(CPPFLAGS) $(CFLAGS) -std=gnu11 -Wall -Wextra -Iinclude -Itest/progs -o $@ $< \
	    lib/libfmpl_blacs.a $(PROG_LDFLAGS)
# FMPL's PMIx bootstrap beside MPI in one process: needs mpicc.
ifneq ($(HAVE_MPICC),)
test/progs/boot_pmix_mpi: test/progs/boot_pmix_mpi.c src/base/boot_pmix.c src/base/boot.h
	$(say) MPICC $@
	$(Q)$(MPICC) $(LDFLAGS) $(CPPFLAGS) $(CFLAGS) -std=gnu11 -Wall -Wextra -DFMPL_HAVE_PMIX $(PMIX_CFLAGS) -Iinclude -Isrc \
	    -o $@ test/progs/boot_pmix_mpi.c src/base/boot_pmix.c src/base/dlib.c $(PMIX_LIBS)
endif
# a PMIx launcher for the tests (no FMPL in it)
test/progs/pmix_serve: test/progs/pmix_serve.c
	$(say) CC $@
	$(Q)$(CC) $(LDFLAGS) $(CPPFLAGS) $(CFLAGS) -std=gnu11 -Wall -Wextra $(PMIX_CFLAGS) -o $@ $< \
	    $(PMIX_LIBS) -lpthread
# the delayer of the broken-link tests (no FMPL in it)
test/progs/nfq_delay: test/progs/nfq_delay.c
	$(say) CC $@
	$(Q)$(CC) $(LDFLAGS) $(CPPFLAGS) $(CFLAGS) -std=gnu11 -Wall -Wextra -o $@ $< $(NFQ_LIBS)
test/progs/mpi_%: test/progs/mpi_%.c lib/libfmpl.a include/fmpl.h
	$(say) MPICC $@
	$(Q)$(MPICC) $(LDFLAGS) $(CPPFLAGS) $(CFLAGS) -std=gnu11 -Wall -Wextra -Iinclude -o $@ $< $(PROG_LDFLAGS)
test/progs/%: test/progs/%.f90 lib/libfmpl.a include/fmplf.h $(FMOD)
	$(say) FC $@
	$(Q)$(FC) $(LDFLAGS) $(FFLAGS) -Wall -Iinclude -I$(FMOD_BUILD) -o $@ $< $(PROG_LDFLAGS)

# Install the Debian packages that are missing (CI starts from a fresh
# Debian 12; as root apt-get works, otherwise say what is missing).
deps:
	@missing=""; for p in $(DEB_PKGS); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  if [ "$$(id -u)" = 0 ]; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	  else echo "run as root or install:$$missing" >&2; exit 1; fi; \
	fi

# `make check` re-enters make after deps so that pkg-config sees libpmix
# and check when they were just installed.
# the build in parallel (a minute less of make check on 2 cores)
NPROC := $(shell nproc 2>/dev/null || echo 2)
check: deps
	$(MAKE) -j$(NPROC) all
	./test/run_tests.sh

# the fault matrix beyond make check's 30 trials: make faults TRIALS=500 SEED=2;
# NET=1 then breaks links under jobs across hosts, every condition of
# test/netfault_test.sh: namespace hosts (libfabric tcp and net), then the
# soft-RoCE guests (dcfa)
TRIALS ?= 500
SEED   ?= 1
NET    ?= 0
faults: all
	./test/fault_test.sh -n $(TRIALS) -s $(SEED)
	@if [ "$(NET)" = 1 ]; then ./test/netfault_test.sh && ./test/netfault_test.sh -G; fi

# random traffic, every byte checked: make soak MINUTES=60
MINUTES ?= 60
soak: all
	./test/soak_test.sh -m $(MINUTES) -s $(SEED)

# gcov's instrumentation over make check's tests, or TESTS="NAME..." (as
# test/run_tests.sh takes them), then line and branch coverage per folder
# (test/coverage.sh, gcovr).  It rebuilds the tree at -O0 with --coverage
# and leaves it so: `make clean` before other work.  The tests see the
# flags in their environment, so that the make install of install_test,
# cmake_test and man_test builds alike (an object without gcov's counts
# beside one with them does not link).
TESTS ?=
COVFLAGS = -O0 -g --coverage -DFMPL_GCOV
coverage: deps
	$(MAKE) deps DEB_PKGS=gcovr
	$(MAKE) clean
	$(MAKE) -j$(NPROC) all CFLAGS="$(COVFLAGS)" FFLAGS="$(COVFLAGS)" LDFLAGS=--coverage
	-CFLAGS="$(COVFLAGS)" FFLAGS="$(COVFLAGS)" LDFLAGS=--coverage FMPL_RXE_GCOV=1 \
	    ./test/run_tests.sh $(TESTS)
	./test/coverage.sh -f build/coverage.csv

# make bench QUICK=1: every program and table with few iterations (CI
# runs it on a fresh clone: .ci/run)
QUICK ?=
bench: deps
	$(MAKE) -j$(NPROC) lib/libfmpl.a bin/fmplrun bench-build
	./bench/run_local.sh $(if $(filter-out 0,$(QUICK)),-q)

# the machines at their real sizes and beyond (bench/scale): modeled
# collectives on tcw, tca and ib up to 1024 nodes, and real ranks on shm
# beside Open MPI; not in make bench (it takes tens of minutes); QUICK=1:
# the small sizes only
bench-scale: deps
	$(MAKE) -j$(NPROC) lib/libfmpl.a bin/fmplrun bench-build
	./bench/scale $(if $(filter-out 0,$(QUICK)),-q)

# FMPL_TRANSPORT=ib beside SimGrid's SMPI on platforms of the same shape
# (bench/compare_smpi, bench/smpi/README.md); QUICK=1: 16 and 64 nodes
bench-smpi: deps
	$(MAKE) deps DEB_PKGS="libsimgrid-dev time"
	$(MAKE) -j$(NPROC) lib/libfmpl.a bin/fmplrun bench-build
	./bench/compare_smpi $(if $(filter-out 0,$(QUICK)),-q)

install: all
	install -d $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(PKGCONFIGDIR) \
	           $(DESTDIR)$(BINDIR)
	install -m 644 include/fmpl.h include/fmplf.h $(DESTDIR)$(INCLUDEDIR)/
	install -m 644 lib/libfmpl.a $(DESTDIR)$(LIBDIR)/
	install -m 755 lib/$(SONAME) $(DESTDIR)$(LIBDIR)/
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libfmpl.so
	$(PC_SED) fmpl.pc.in > $(DESTDIR)$(PKGCONFIGDIR)/fmpl.pc
	install -m 755 bin/fmplrun $(DESTDIR)$(BINDIR)/
	install -m 644 include/fmpl_blacs.h $(DESTDIR)$(INCLUDEDIR)/
	install -m 644 lib/libfmpl_blacs.a $(DESTDIR)$(LIBDIR)/
	install -m 755 lib/$(BLACS_SONAME) $(DESTDIR)$(LIBDIR)/
	ln -sf $(BLACS_SONAME) $(DESTDIR)$(LIBDIR)/libfmpl_blacs.so
	$(PC_SED) fmpl-blacs.pc.in > $(DESTDIR)$(PKGCONFIGDIR)/fmpl-blacs.pc
	@case '$(FMODDIR)' in *gfortran-mod-) \
	  echo "install: no gfortran module version in $(FMOD): set FMODDIR" >&2; exit 1;; esac
	install -d $(DESTDIR)$(FMODDIR)
	install -m 644 $(FMOD) $(DESTDIR)$(FMODDIR)/
	@case '$(SIZEOF_VOID_P)' in [1-9]*) ;; *) \
	  echo "install: $(CC) gave no __SIZEOF_POINTER__ for FMPLConfigVersion.cmake" >&2; exit 1;; esac
	install -d $(DESTDIR)$(CMAKEDIR)
	$(CMAKE_SED) cmake/FMPLConfig.cmake.in > $(DESTDIR)$(CMAKEDIR)/FMPLConfig.cmake
	$(CMAKE_SED) cmake/FMPLConfigVersion.cmake.in > $(DESTDIR)$(CMAKEDIR)/FMPLConfigVersion.cmake

uninstall:
	rm -f $(DESTDIR)$(INCLUDEDIR)/fmpl.h $(DESTDIR)$(INCLUDEDIR)/fmplf.h \
	      $(DESTDIR)$(LIBDIR)/libfmpl.a $(DESTDIR)$(LIBDIR)/$(SONAME) \
	      $(DESTDIR)$(LIBDIR)/libfmpl.so $(DESTDIR)$(PKGCONFIGDIR)/fmpl.pc \
	      $(DESTDIR)$(BINDIR)/fmplrun
	rm -f $(DESTDIR)$(INCLUDEDIR)/fmpl_blacs.h $(DESTDIR)$(LIBDIR)/libfmpl_blacs.a \
	      $(DESTDIR)$(LIBDIR)/$(BLACS_SONAME) $(DESTDIR)$(LIBDIR)/libfmpl_blacs.so \
	      $(DESTDIR)$(PKGCONFIGDIR)/fmpl-blacs.pc
	rm -f $(DESTDIR)$(FMODDIR)/fmpl.mod
	rm -f $(DESTDIR)$(CMAKEDIR)/FMPLConfig.cmake $(DESTDIR)$(CMAKEDIR)/FMPLConfigVersion.cmake
	rmdir $(DESTDIR)$(CMAKEDIR) 2>/dev/null || :

help:
	@echo "FMPL $(VERSION) - targets:"
	@echo "  all (default)  the libraries, fmplrun, examples, benchmarks, tests"
	@echo "  check          install missing Debian packages, build, run every test"
	@echo "                 (test/run_tests.sh --list: the steps; NAME...: runs some)"
	@echo "  bench          build and run the benchmarks on a local 2-process job"
	@echo "                 (QUICK=1: every table with few iterations, as CI runs it)"
	@echo "  bench-scale    the collectives on the emulated machines up to 1024 nodes, and"
	@echo "                 real ranks on shm beside Open MPI (bench/scale; QUICK=1: small)"
	@echo "  bench-smpi     the emulated InfiniBand cluster beside SimGrid's SMPI (QUICK=1: small)"
	@echo "  faults         the fault matrix: TRIALS (500) random failures, SEED (1);"
	@echo "                 NET=1: then links broken under jobs across hosts"
	@echo "  soak           MINUTES (60) of random jobs, every byte checked, SEED (1)"
	@echo "  coverage       rebuild with --coverage, run the tests (TESTS=\"NAME...\": some),"
	@echo "                 print line and branch coverage per folder (gcovr)"
	@echo "  deps           install the Debian packages the build and tests need"
	@echo "  install        install under DESTDIR PREFIX (BINDIR LIBDIR INCLUDEDIR"
	@echo "                 PKGCONFIGDIR CMAKEDIR MANDIR), with pkg-config files fmpl,"
	@echo "                 fmpl-blacs, CMake's find_package(FMPL) files (CMAKEDIR:"
	@echo "                 LIBDIR/cmake/FMPL; targets FMPL::fmpl, FMPL::fmpl_blacs)"
	@echo "                 and the man pages (MANDIR: PREFIX/share/man)"
	@echo "  man            the man pages from man/*.md with pandoc: build/man/man[137]"
	@echo "                 (part of all when pandoc is installed)"
	@echo "  uninstall      remove what install put there"
	@echo "  clean          remove everything built"
	@echo "  help           this list"
	@echo "Variables: CC CFLAGS CPPFLAGS LDFLAGS FC FFLAGS MPICC MPICC_MPICH OPT (default -O2)"
	@echo "  PREFIX (/usr/local) DESTDIR V=1 (show the commands)"
	@echo "  FMODDIR: where install puts the Fortran module fmpl.mod"
	@echo "  (LIBDIR/fortran/gfortran-mod-N, N the module version of FC's .mod files)"

# (the find: make coverage's programs leave gcov's notes and counts beside them)
clean:
	rm -rf build lib bin fmpl.pc fmpl-blacs.pc $(EX_C) $(EX_F) examples/pdgesv examples/pdgesv_f $(BENCH) $(BENCH_MPI) \
	       bench/mpich $(TEST_UNIT) $(TEST_PROGS) $(TEST_FPROGS) test/logs bench/out
	find . \( -name '*.gcno' -o -name '*.gcda' \) -delete
