/*
 * dlib.h - a library FMPL calls only in some jobs, loaded by the first
 * job that needs it (libpmix under a PMIx launcher, libfabric for ofi,
 * libibverbs for dcfa).
 *
 * libfmpl does not link them: a shared-memory or emulated job never maps
 * them, nor what they pull in (libpmix: libevent, hwloc, munge, udev;
 * libibverbs: libnl), which is about 1.2 MiB resident in every process of
 * a 1024-rank job, and their relocations at every start.  Loading also
 * puts back the signal dispositions a library's constructors changed
 * (libfabric's PSM provider installs a SIGTERM handler, so a rank killed
 * by SIGTERM would exit 1 instead of dying by the signal).
 *
 * A user of a library lists its entry points once, as an X-macro over
 * their names, and gets a table of pointers typed from the library's own
 * declarations (__typeof__), so a call through the table is checked as a
 * direct call would be.  The library stays loaded until the process ends.
 */
#ifndef FMPL_DLIB_H
#define FMPL_DLIB_H

#include <stddef.h>

typedef struct fmpl_dlib_sym {
    const char *name;
    void **slot;                   /* where the address goes */
} fmpl_dlib_sym_t;

typedef struct fmpl_dlib {
    const char *const *files;      /* tried in order, NULL-terminated */
    const fmpl_dlib_sym_t *syms;   /* NULL-terminated by name */
    void *handle;                  /* set once loaded */
} fmpl_dlib_t;

/* A table's field and its entry for one name: X(name) in a list. */
#define FMPL_DLIB_FIELD(f) __typeof__(f) *f;
#define FMPL_DLIB_SYM(tbl, f) { #f, (void **)&(tbl).f },

/* Load the library and resolve every symbol (once; later calls return
 * at once).  0, or -1 with why in err (the loader's words). */
int fmpl_dlib_load(fmpl_dlib_t *lib, char *err, size_t errlen);

#endif
