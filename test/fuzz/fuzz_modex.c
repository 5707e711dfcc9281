/*
 * fuzz_modex - libFuzzer harness for the job control memory fmplrun
 * shares with the ranks, as a rank reads it (base/boot_local.c): the
 * modex entries another rank wrote, and the dead-rank word.
 *
 * Every rank maps that memory writable, so a broken or hostile rank can
 * write anything into its own entries.  Input: the bytes of rank 1's
 * entries in a 2-rank job (the rest of the memory as fmplrun makes it),
 * then look-ups of the keys FMPL uses and of a key made of input bytes,
 * into a buffer of the caller's size.  The memory is a heap block of
 * exactly fmpl_ctl_bytes(2): AddressSanitizer catches a reader that runs
 * past an entry at the end of it; a value longer than the caller's
 * buffer must come back as FMPL_ERR_TRUNCATE, never be copied.
 *
 * The harness includes boot_local.c to reach its static look-up.
 */
#include "base/boot_local.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
    size_t bytes = fmpl_ctl_bytes(2);
    struct fmpl_ctl *c = calloc(1, bytes);
    if (!c)
        return 0;
    c->magic = FMPL_CTL_MAGIC;
    c->version = FMPL_CTL_VERSION;
    c->size = 2;
    c->bytes = bytes;
    atomic_store(&c->first_dead, -1);
    struct fmpl_ctl_kv *kv = fmpl_ctl_kv(c, 1);
    size_t area = FMPL_CTL_NKEYS * sizeof *kv;
    memcpy(kv, data, n < area ? n : area);

    struct local_priv p = { .ctl = c, .bytes = bytes };
    fmpl_boot_t b = { .rank = 0, .size = 2, .ops = &local_ops, .priv = &p };
    static const char *keys[] = { "shm", "ofi", "dcfa", "host", "route", "x" };
    unsigned char val[64];
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        size_t len = sizeof val;
        int rc = local_get(&b, 1, keys[i], val, &len);
        if (rc == FMPL_SUCCESS && len > sizeof val)
            abort();
    }
    /* a key from the input (at most FMPL_CTL_KEY_MAX - 1 bytes) */
    if (n > area) {
        char key[FMPL_CTL_KEY_MAX];
        size_t k = n - area < sizeof key - 1 ? n - area : sizeof key - 1;
        memcpy(key, data + area, k);
        key[k] = '\0';
        size_t len = sizeof val;
        if (local_get(&b, 1, key, val, &len) == FMPL_SUCCESS && len > sizeof val)
            abort();
    }
    free(c);
    return 0;
}
