/*
 * error.c - messages and names of the error codes, from the one table in
 * fmpl.h (FMPL_ERRNO_MAP).
 */
#include "fmpl.h"

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
