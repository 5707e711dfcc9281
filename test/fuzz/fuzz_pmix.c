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
 *   - dead_rank is -1 or a rank of the job, never the caller's own,
 *     whatever deaths the server's events and process table report
 *     (any code, any process of any namespace, arrays of any type and
 *     size, missing ones).
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
/* PMIx_Init's answer: the processes of events and tables are mostly ours */
static pmix_proc_t init_nspace;
/* the death handler the bootstrap registered, or NULL */
static pmix_notification_fn_t death_handler;

/* a process: of our namespace or another, any rank */
static void pick_proc(pmix_proc_t *pr)
{
    memset(pr, 0, sizeof *pr);
    if (byte() & 3)
        memcpy(pr->nspace, init_nspace.nspace, sizeof pr->nspace);
    else
        bytes(pr->nspace, byte() % (sizeof pr->nspace + 1));
    unsigned b = byte();
    pr->rank = b & 0x80 ? in32() : b % 9;
}

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
    init_nspace = *proc;
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
    else if (type == PMIX_STRING)
        info->value.data.string = strdup(data);   /* the table query's namespace */
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

pmix_status_t PMIx_Register_event_handler(pmix_status_t codes[], size_t ncodes,
                                          pmix_info_t info[], size_t ninfo,
                                          pmix_notification_fn_t evhdlr,
                                          pmix_hdlr_reg_cbfunc_t cbfunc, void *cbdata)
{
    (void)codes;
    (void)ncodes;
    (void)info;
    (void)ninfo;
    if (cbfunc != NULL || cbdata != NULL)
        abort();                   /* the bootstrap registers blocking */
    if (byte() % 8 == 0)
        return PMIX_ERR_NOT_SUPPORTED;
    death_handler = evhdlr;
    return (pmix_status_t)(byte() % 4);
}

pmix_status_t PMIx_Deregister_event_handler(size_t ref, pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    (void)ref;
    (void)cbfunc;
    (void)cbdata;
    death_handler = NULL;
    return PMIX_SUCCESS;
}

/* a table's entries: heap blocks of exactly their size, freed by table_free */
struct table {
    pmix_info_t *info;
    size_t ninfo;
};

static void table_free(void *cbdata)
{
    struct table *t = cbdata;
    for (size_t i = 0; i < t->ninfo; i++) {
        pmix_data_array_t *d = t->info[i].value.data.darray;
        if (t->info[i].value.type != PMIX_DATA_ARRAY || d == NULL)
            continue;
        if (d->type == PMIX_INFO)
            for (size_t k = 0; d->array && k < d->size; k++)
                free(((pmix_info_t *)d->array)[k].value.data.pinfo);
        free(d->array);
        free(d);
    }
    free(t->info);
    free(t);
}

/* The process table, answered at once: states of every kind, the array
 * of pmix_proc_info_t of the standard or Open MPI 4.1's of pmix_info_t,
 * or of a type nobody uses; sometimes an error instead. */
pmix_status_t PMIx_Query_info_nb(pmix_query_t queries[], size_t nqueries,
                                 pmix_info_cbfunc_t cbfunc, void *cbdata)
{
    if (nqueries != 1 || queries[0].keys == NULL || queries[0].keys[0] == NULL)
        abort();
    unsigned how = byte() % 8;
    if (how == 0)
        return PMIX_ERR_NOT_SUPPORTED;
    if (how == 1)
        return PMIX_ERROR;
    struct table *t = calloc(1, sizeof *t);
    if (!t)
        abort();
    t->ninfo = byte() % 3;
    t->info = calloc(t->ninfo ? t->ninfo : 1, sizeof *t->info);
    if (!t->info)
        abort();
    for (size_t i = 0; i < t->ninfo; i++) {
        snprintf(t->info[i].key, sizeof t->info[i].key, "%s",
                 byte() & 7 ? PMIX_QUERY_PROC_TABLE : "pmix.qry.other");
        t->info[i].value.type = byte() & 7 ? PMIX_DATA_ARRAY : PMIX_INT;
        if (t->info[i].value.type != PMIX_DATA_ARRAY)
            continue;
        pmix_data_array_t *d = calloc(1, sizeof *d);
        if (!d)
            abort();
        t->info[i].value.data.darray = d;
        unsigned k = byte() % 3;
        d->type = k == 0 ? PMIX_PROC_INFO : k == 1 ? PMIX_INFO : PMIX_INT;
        d->size = byte() % 7;
        if (d->size == 0 || d->type == PMIX_INT || (byte() & 15) == 0) {
            d->array = NULL;        /* absent, with a size or without */
            continue;
        }
        if (d->type == PMIX_PROC_INFO) {
            pmix_proc_info_t *pi = calloc(d->size, sizeof *pi);
            if (!pi)
                abort();
            for (size_t e = 0; e < d->size; e++) {
                pick_proc(&pi[e].proc);
                pi[e].state = (pmix_proc_state_t)(byte() % 70);
            }
            d->array = pi;
        } else {
            pmix_info_t *ii = calloc(d->size, sizeof *ii);
            if (!ii)
                abort();
            for (size_t e = 0; e < d->size; e++) {
                if (byte() & 7) {
                    pmix_proc_info_t *pi = calloc(1, sizeof *pi);
                    if (!pi)
                        abort();
                    pick_proc(&pi->proc);
                    pi->state = (pmix_proc_state_t)(byte() % 70);
                    ii[e].value.type = PMIX_PROC_INFO;
                    ii[e].value.data.pinfo = pi;
                } else {
                    ii[e].value.type = PMIX_BOOL;
                }
            }
            d->array = ii;
        }
    }
    cbfunc(pick_status(), t->info, t->ninfo, cbdata, table_free, t);
    return PMIX_SUCCESS;
}

/* A death event to the registered handler: a code, a source, and the
 * affected process(es) named, named wrongly or not at all. */
static void deliver_event(void)
{
    static const pmix_status_t codes[] = {
        PMIX_ERR_PROC_ABORTED_BY_SIG, PMIX_ERR_PROC_TERM_WO_SYNC, PMIX_ERR_JOB_ABORTED,
        PMIX_EVENT_PROC_TERMINATED, -9999,
    };
    pmix_proc_t source, one, many[4];
    pmix_data_array_t arr = { .type = PMIX_PROC, .size = 0, .array = many };
    pmix_info_t info[3];
    size_t ninfo = 0;

    if (death_handler == NULL)
        return;
    pick_proc(&source);
    memset(info, 0, sizeof info);
    for (unsigned k = byte() % 4; k > 0 && ninfo < 3; k--) {
        pmix_info_t *i = &info[ninfo++];
        switch (byte() % 3) {
        case 0:
            snprintf(i->key, sizeof i->key, "%s", PMIX_EVENT_AFFECTED_PROC);
            pick_proc(&one);
            i->value.type = byte() & 7 ? PMIX_PROC : PMIX_INT;
            i->value.data.proc = &one;
            break;
        case 1:
            snprintf(i->key, sizeof i->key, "%s", PMIX_EVENT_AFFECTED_PROCS);
            arr.size = byte() % 5;
            for (size_t e = 0; e < arr.size; e++)
                pick_proc(&many[e]);
            arr.type = byte() & 7 ? PMIX_PROC : PMIX_INFO;
            i->value.type = PMIX_DATA_ARRAY;
            i->value.data.darray = &arr;
            break;
        default:
            snprintf(i->key, sizeof i->key, "pmix.fuzz.other");
            i->value.type = PMIX_INT;
        }
    }
    death_handler(0, codes[byte() % (sizeof codes / sizeof codes[0])],
                  byte() & 1 ? &source : NULL, info, ninfo, NULL, 0, NULL, NULL);
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
    b.launcher_poll = byte() & 1 ? 1e-9 : 0;   /* ask the table at every idle wait, or never */
    death_handler = NULL;
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
        switch (byte() % 5) {
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
        case 3:
            deliver_event();
            break;
        default: {
            int d = b.ops->dead_rank(&b);
            if (d < -1 || d >= b.size || d == b.rank)
                abort();
            break;
        }
        }
    }
    b.ops->close(&b);
    return 0;
}
