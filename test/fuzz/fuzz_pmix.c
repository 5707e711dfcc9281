/*
 * fuzz_pmix - libFuzzer harness for what FMPL's PMIx bootstrap
 * (base/boot_pmix.c) takes from the PMIx server: the namespace and rank
 * of PMIx_Init, the job size's value, every value PMIx_Get returns (of
 * any type, a modex value of any size), and the status of every call.
 *
 * The harness is the PMIx library: it defines the ten PMIx functions the
 * bootstrap calls (no libpmix is linked, only its headers) and answers
 * them from the input, as a server of another version or a broken one
 * might.  Values are heap blocks of exactly their size, released through
 * the harness's PMIx_Value_destruct, so AddressSanitizer and
 * LeakSanitizer see a value read past its end, freed twice or kept.
 * Then the input drives puts, fences and gets.  What must hold:
 *   - open succeeds only with a rank inside a size of 1 to 2^31-1 and a
 *     job id of [A-Za-z0-9_-] that fits FMPL_BOOT_JOBID_MAX;
 *   - every key handed to PMIx fits PMIX_MAX_KEYLEN;
 *   - a get that succeeds copied exactly the value into the caller's
 *     buffer, within its size; FMPL_ERR_TRUNCATE says the size needed;
 *   - dead_rank is -1 or a rank of the job.
 *
 * The harness includes boot_pmix.c to reach its static operations.
 */
/* the PMIx_* below are called directly, not through the loaded library */
#define FMPL_PMIX_DIRECT
#include "base/boot_pmix.c"

#include "fuzz_input.h"

/* ---- the PMIx library, from the input ---------------------------------------- */

static uint32_t in32(void)
{
    uint32_t v;
    bytes(&v, sizeof v);
    return v;
}

/* a status: mostly success */
static pmix_status_t pick_status(void)
{
    static const pmix_status_t any[] = {
        PMIX_ERROR, PMIX_ERR_NOT_FOUND, PMIX_ERR_TIMEOUT, PMIX_ERR_PARTIAL_SUCCESS,
        PMIX_ERR_PROC_ABORTED, PMIX_ERR_UNREACH, PMIX_ERR_INIT, -9999,
    };
    unsigned b = byte();
    return b < 0xd0 ? PMIX_SUCCESS : any[b % (sizeof any / sizeof any[0])];
}

/* the last modex value handed out, to check what get() copied */
static uint8_t last_bytes[4096];
static size_t last_size;
static int last_is_bo;

pmix_status_t PMIx_Init(pmix_proc_t *proc, pmix_info_t info[], size_t ninfo)
{
    (void)info;
    (void)ninfo;
    pmix_status_t rc = pick_status();
    memset(proc, 0, sizeof *proc);
    /* any bytes, NUL-terminated or not within the array */
    size_t n = byte() % (sizeof proc->nspace + 1);
    bytes(proc->nspace, n);
    proc->rank = byte() & 0x80 ? in32() : byte() % 6;
    return rc;
}

pmix_status_t PMIx_Get(const pmix_proc_t *proc, const char key[], const pmix_info_t info[],
                       size_t ninfo, pmix_value_t **val)
{
    (void)proc;
    (void)info;
    (void)ninfo;
    if (strnlen(key, PMIX_MAX_KEYLEN + 1) > PMIX_MAX_KEYLEN)
        abort();                   /* a key PMIx would cut */
    last_is_bo = 0;
    *val = NULL;
    /* a spent input is a server that has nothing more (so a job size of
     * 2^31 - 1 is not two billion look-ups of markers) */
    if (spent())
        return PMIX_ERR_NOT_FOUND;
    pmix_status_t rc = pick_status();
    /* a value with a failure now and then: the caller must release it */
    if (rc != PMIX_SUCCESS && !(byte() & 1))
        return rc;
    pmix_value_t *v = calloc(1, sizeof *v);
    if (!v)
        abort();
    unsigned t = byte();
    int modex = strncmp(key, KEY_PREFIX, sizeof KEY_PREFIX - 1) == 0;
    if (modex && t < 0xe0) {
        v->type = PMIX_BYTE_OBJECT;
        size_t n = byte() & 1 ? byte() : (byte() << 8 | byte()) % sizeof last_bytes;
        v->data.bo.size = n;
        v->data.bo.bytes = n ? malloc(n) : NULL;
        if (n && !v->data.bo.bytes)
            abort();
        if (n) {
            bytes(v->data.bo.bytes, n);
            memcpy(last_bytes, v->data.bo.bytes, n);
        }
        last_size = n;
        last_is_bo = rc == PMIX_SUCCESS;
    } else if (t & 1) {
        v->type = PMIX_STRING;
        v->data.string = strdup("not a number");
    } else {
        /* a number of any type, or a type number nobody defined */
        static const pmix_data_type_t types[] = {
            PMIX_UINT32, PMIX_UINT64, PMIX_UINT16, PMIX_INT, PMIX_UINT, PMIX_INT32,
            PMIX_INT64, PMIX_SIZE, PMIX_INT8, PMIX_BOOL, PMIX_DOUBLE, 250,
        };
        v->type = types[byte() % (sizeof types / sizeof types[0])];
        bytes(&v->data, 8);
    }
    *val = v;
    return rc;
}

void PMIx_Value_destruct(pmix_value_t *v)
{
    if (v->type == PMIX_BYTE_OBJECT)
        free(v->data.bo.bytes);
    else if (v->type == PMIX_STRING)
        free(v->data.string);
    memset(v, 0, sizeof *v);
}

pmix_status_t PMIx_Info_load(pmix_info_t *info, const char *key, const void *data,
                             pmix_data_type_t type)
{
    if (strnlen(key, PMIX_MAX_KEYLEN + 1) > PMIX_MAX_KEYLEN)
        abort();
    snprintf(info->key, sizeof info->key, "%s", key);
    info->value.type = type;
    if (type == PMIX_BOOL)
        memcpy(&info->value.data.flag, data, sizeof info->value.data.flag);
    else if (type == PMIX_INT)
        memcpy(&info->value.data.integer, data, sizeof info->value.data.integer);
    else
        abort();                   /* the bootstrap loads no other type */
    return PMIX_SUCCESS;
}

pmix_status_t PMIx_Put(pmix_scope_t scope, const pmix_key_t key, pmix_value_t *val)
{
    (void)scope;
    if (strnlen(key, PMIX_MAX_KEYLEN + 1) > PMIX_MAX_KEYLEN)
        abort();
    if (val->type == PMIX_BYTE_OBJECT && val->data.bo.size > FMPL_BOOT_VALUE_MAX)
        abort();                   /* put() promises no more */
    if (val->type == PMIX_BYTE_OBJECT && val->data.bo.size > 0) {
        /* PMIx copies the value: read all of it */
        volatile uint8_t sum = 0;
        for (size_t i = 0; i < val->data.bo.size; i++)
            sum += (uint8_t)val->data.bo.bytes[i];
        (void)sum;
    }
    return pick_status();
}

pmix_status_t PMIx_Commit(void) { return pick_status(); }

pmix_status_t PMIx_Fence(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t info[],
                         size_t ninfo)
{
    (void)procs;
    (void)nprocs;
    for (size_t i = 0; i < ninfo; i++)
        if (strnlen(info[i].key, PMIX_MAX_KEYLEN + 1) > PMIX_MAX_KEYLEN)
            abort();
    return pick_status();
}

pmix_status_t PMIx_Finalize(const pmix_info_t info[], size_t ninfo)
{
    (void)info;
    (void)ninfo;
    return pick_status();
}

pmix_status_t PMIx_Abort(int status_, const char msg[], pmix_proc_t procs[], size_t nprocs)
{
    (void)status_;
    (void)msg;
    (void)procs;
    (void)nprocs;
    abort();                       /* the harness never aborts a job */
}

const char *PMIx_Error_string(pmix_status_t status_)
{
    (void)status_;
    return "a status from the fuzzer";
}

/* ---- the bootstrap, driven ------------------------------------------------------- */

/* a key: a short string from the input, sometimes empty or too long */
static void key_from_input(char *key, size_t cap)
{
    size_t n = byte() % (cap - 1);
    bytes(key, n);
    key[n] = '\0';
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
    fuzz_start(data, n);
    setenv("PMIX_NAMESPACE", "fuzz", 0);
    setenv("PMIX_RANK", "0", 0);
    fmpl_boot_t b;
    memset(&b, 0, sizeof b);
    b.peer_timeout = byte() % 4 * 0.75;
    if (fmpl_boot_pmix_open(&b) != FMPL_SUCCESS)
        return 0;
    if (b.size < 1 || b.rank < 0 || b.rank >= b.size || b.ops == NULL)
        abort();
    size_t j = strnlen(b.jobid, sizeof b.jobid);
    if (j == 0 || j >= sizeof b.jobid)
        abort();
    for (size_t i = 0; i < j; i++)
        if (!jobid_char_ok((unsigned char)b.jobid[i]))
            abort();

    for (int k = 0; k < 8 && !spent(); k++) {
        char key[80];
        switch (byte() % 4) {
        case 0: {
            key_from_input(key, sizeof key);
            size_t len = byte() & 1 ? byte() : FMPL_BOOT_VALUE_MAX + byte() % 3;
            uint8_t *val = malloc(len ? len : 1);
            if (!val)
                abort();
            memset(val, 0x42, len ? len : 1);
            int rc = b.ops->put(&b, key, val, len);
            if (rc == FMPL_SUCCESS && (len > FMPL_BOOT_VALUE_MAX || !*key))
                abort();
            free(val);
            break;
        }
        case 1:
            (void)b.ops->fence(&b);
            break;
        case 2: {
            key_from_input(key, sizeof key);
            int rank = (int)(byte() % 8) - 1;
            size_t cap = byte() & 1 ? byte() : (byte() << 8 | byte()) % 5000;
            uint8_t *buf = malloc(cap ? cap : 1);
            if (!buf)
                abort();
            size_t len = cap;
            last_is_bo = 0;
            int rc = b.ops->get(&b, rank, key, buf, &len);
            if (rc == FMPL_SUCCESS &&
                (!last_is_bo || len != last_size || len > cap || memcmp(buf, last_bytes, len)))
                abort();
            if (rc == FMPL_ERR_TRUNCATE && (!last_is_bo || len != last_size || len <= cap))
                abort();
            free(buf);
            break;
        }
        default: {
            int d = b.ops->dead_rank(&b);
            if (d < -1 || d >= b.size)
                abort();
            break;
        }
        }
    }
    b.ops->close(&b);
    return 0;
}
