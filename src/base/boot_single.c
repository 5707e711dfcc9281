/*
 * boot_single.c - no launcher: a job of one process.  The modex is a small
 * table in this process.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fmpl.h"
#include "base/boot.h"

#define SINGLE_KEYS 16

typedef struct single_kv {
    char key[32];
    size_t len;
    unsigned char val[FMPL_BOOT_VALUE_MAX];
} single_kv_t;

static int single_put(fmpl_boot_t *b, const char *key, const void *val, size_t len)
{
    single_kv_t *kv = b->priv;
    if (len > FMPL_BOOT_VALUE_MAX || strlen(key) >= sizeof kv->key)
        return FMPL_ERR_ARG;
    for (int i = 0; i < SINGLE_KEYS; i++)
        if (!kv[i].key[0] || strcmp(kv[i].key, key) == 0) {
            strcpy(kv[i].key, key);
            memcpy(kv[i].val, val, len);
            kv[i].len = len;
            return FMPL_SUCCESS;
        }
    return FMPL_ERR_NOMEM;
}

static int single_fence(fmpl_boot_t *b) { (void)b; return FMPL_SUCCESS; }

static int single_get(fmpl_boot_t *b, int rank, const char *key, void *val, size_t *len)
{
    single_kv_t *kv = b->priv;
    if (rank != 0)
        return FMPL_ERR_RANK;
    for (int i = 0; i < SINGLE_KEYS; i++)
        if (strcmp(kv[i].key, key) == 0) {
            if (kv[i].len > *len)
                return FMPL_ERR_TRUNCATE;
            memcpy(val, kv[i].val, kv[i].len);
            *len = kv[i].len;
            return FMPL_SUCCESS;
        }
    return FMPL_ERR_ARG;
}

static int single_dead_rank(fmpl_boot_t *b) { (void)b; return -1; }
static void single_mark_finalized(fmpl_boot_t *b) { (void)b; }

static void single_abort(fmpl_boot_t *b, int code)
{
    (void)b;
    fflush(NULL);
    _exit(code ? code : 1);
}

static void single_close(fmpl_boot_t *b)
{
    free(b->priv);
    b->priv = NULL;
}

static const struct fmpl_boot_ops single_ops = {
    .name = "single",
    .put = single_put,
    .fence = single_fence,
    .get = single_get,
    .dead_rank = single_dead_rank,
    .mark_finalized = single_mark_finalized,
    .abort = single_abort,
    .close = single_close,
};

int fmpl_boot_single_open(fmpl_boot_t *b)
{
    b->priv = calloc(SINGLE_KEYS, sizeof(single_kv_t));
    if (!b->priv)
        return FMPL_ERR_NOMEM;
    b->rank = 0;
    b->size = 1;
    snprintf(b->jobid, sizeof b->jobid, "s%d", (int)getpid());
    b->ops = &single_ops;
    return FMPL_SUCCESS;
}
