/*
 * dlib.c - load a library at run time (dlib.h).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>

#include "base/dlib.h"

static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;

/* dlopen with the signal dispositions as they were before it */
static void *open_keeping_signals(const char *file)
{
    struct sigaction saved[NSIG];
    for (int s = 1; s < NSIG; s++)
        sigaction(s, NULL, &saved[s]);
    void *h = dlopen(file, RTLD_NOW | RTLD_LOCAL);
    for (int s = 1; s < NSIG; s++) {
        struct sigaction now;
        if (s == SIGKILL || s == SIGSTOP || sigaction(s, NULL, &now) != 0)
            continue;
        if (now.sa_handler != saved[s].sa_handler)
            sigaction(s, &saved[s], NULL);
    }
    return h;
}

int fmpl_dlib_load(fmpl_dlib_t *lib, char *err, size_t errlen)
{
    int rc = 0;
    pthread_mutex_lock(&load_lock);
    if (lib->handle)
        goto out;
    void *h = NULL;
    const char *why = "no file to try";
    for (int i = 0; lib->files[i] && !h; i++)
        if (!(h = open_keeping_signals(lib->files[i])))
            why = dlerror();
    if (!h) {
        snprintf(err, errlen, "%s", why);
        rc = -1;
        goto out;
    }
    for (const fmpl_dlib_sym_t *s = lib->syms; s->name; s++) {
        dlerror();
        if (!(*s->slot = dlsym(h, s->name))) {
            snprintf(err, errlen, "%s lacks %s", lib->files[0], s->name);
            for (const fmpl_dlib_sym_t *t = lib->syms; t->name; t++)
                *t->slot = NULL;
            dlclose(h);
            rc = -1;
            goto out;
        }
    }
    lib->handle = h;
out:
    pthread_mutex_unlock(&load_lock);
    return rc;
}
