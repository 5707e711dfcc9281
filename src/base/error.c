/*
 * error.c - messages and names of the error codes, from the one table in
 * fmpl.h (FMPL_ERRNO_MAP); the library's version.
 */
#include "fmpl.h"

const char *fmpl_version(int *major, int *minor, int *patch)
{
    if (major)
        *major = FMPL_VERSION_MAJOR;
    if (minor)
        *minor = FMPL_VERSION_MINOR;
    if (patch)
        *patch = FMPL_VERSION_PATCH;
    return FMPL_VERSION_STRING;
}

const char *fmpl_strerror(int code)
{
    switch (code) {
#define FMPL_MSG_(name, c, msg) case c: return msg;
        FMPL_ERRNO_MAP(FMPL_MSG_)
#undef FMPL_MSG_
    }
    return "unknown FMPL error code";
}

const char *fmpl_error_name(int code)
{
    switch (code) {
#define FMPL_NAME_(name, c, msg) case c: return "FMPL_" #name;
        FMPL_ERRNO_MAP(FMPL_NAME_)
#undef FMPL_NAME_
    }
    return "FMPL_ERR_UNKNOWN";
}
