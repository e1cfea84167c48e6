/*
 * vfd_latency: sec2 with a fixed sleep before every read and write call,
 * the slow storage of the tests and benchmarks (latency.h documents the
 * keys and the call counters). Lives next to vfd_fault: both inject storage
 * behaviour underneath the real drivers through `under=`, both are built
 * only for `make check` and `make bench`, never installed, and the tests
 * already have this directory on HDF5_PLUGIN_PATH.
 *
 * The sleep is per call, not per byte: what it models is a round trip.
 * Everything but read, write, query, ctl and delete passes through to sec2
 * (common/stack.c); get_handle returns sec2's descriptor and the
 * POSIX-compatible feature flag is kept, as vfd_fault does.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "h5err.h"
#include "kv.h"
#include "on_sec2.h"
#include "latency.h"
#include "plugin.h"

typedef struct {
    vfdswmr_file_t base;                  /* first: the pass-through callbacks of common/stack.c work on it */
    unsigned long long read_us, write_us; /* accessed atomically: SET_LATENCY may change them */
    vfd_latency_counts_t n;               /* updated atomically: the writer's tick thread writes too */
} latency_t;

#define LAT(file) ((latency_t *)(file))

/* Parse the configuration into *f. Returns 0, or -1 with a message in err. */
static int
parse(const char *text, latency_t *f, char *err, size_t errlen)
{
    const char *p = text ? text : "";
    char key[64], val[64];
    bool seen[2] = {false, false};
    int rc;

    while ((rc = kv_next(&p, key, sizeof key, val, sizeof val, err, errlen)) != 0) {
        unsigned long long v;
        char *end;
        int k;

        if (rc < 0)
            return -1;
        if (!key[0])
            continue; /* empty segment */
        if (!strcmp(key, "read_latency_us"))
            k = 0;
        else if (!strcmp(key, "write_latency_us"))
            k = 1;
        else {
            snprintf(err, errlen, "unknown key \"%s\"; accepted keys: read_latency_us, write_latency_us", key);
            return -1;
        }
        if (seen[k]) {
            snprintf(err, errlen, "duplicate key \"%s\"", key);
            return -1;
        }
        seen[k] = true;
        errno = 0;
        v = strtoull(val, &end, 10);
        if (val[0] < '0' || val[0] > '9' || errno || *end || v > VFD_LATENCY_MAX_US) {
            snprintf(err, errlen, "%s=%s: expected an integer from 0 to %llu (microseconds)", key, val,
                     VFD_LATENCY_MAX_US);
            return -1;
        }
        *(k ? &f->write_us : &f->read_us) = v;
    }
    return 0;
}

static H5FD_t *
latency_open(const char *name, unsigned flags, hid_t fapl, haddr_t maxaddr)
{
    latency_t *f;
    char *text = NULL, err[256];
    int rc;

    if (NULL == (f = calloc(1, sizeof *f))) {
        VFDSWMR_ERR(H5E_CANTALLOC, "%s: out of memory", VFD_LATENCY_NAME);
        return NULL;
    }
    f->base.drv_name = VFD_LATENCY_NAME;
    if ((text = on_sec2_config(fapl, VFD_LATENCY_NAME)) == NULL)
        goto fail;
    rc = parse(text, f, err, sizeof err);
    free(text);
    text = NULL;
    if (rc < 0) {
        VFDSWMR_ERR(H5E_BADVALUE, "%s: bad configuration: %s", VFD_LATENCY_NAME, err);
        goto fail;
    }
    if (on_sec2_open(&f->base, name, flags, maxaddr) < 0)
        goto fail;
    return &f->base.pub;
fail:
    free(text);
    free(f);
    return NULL;
}

static herr_t
latency_query(const H5FD_t *file, unsigned long *flags)
{
    (void)file;
    *flags = VFDSWMR_FEATURES | H5FD_FEAT_POSIX_COMPAT_HANDLE;
    return 0;
}

static void
count(unsigned long long *calls, unsigned long long *bytes, size_t size)
{
    __atomic_fetch_add(calls, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(bytes, (unsigned long long)size, __ATOMIC_RELAXED);
}

static herr_t
latency_read(H5FD_t *file, H5FD_mem_t type, hid_t dxpl, haddr_t addr, size_t size, void *buf)
{
    latency_t *f = LAT(file);

    vfdswmr_sleep((double)__atomic_load_n(&f->read_us, __ATOMIC_RELAXED) * 1e-6);
    count(&f->n.reads, &f->n.read_bytes, size);
    if (type == H5FD_MEM_DRAW)
        count(&f->n.raw_reads, &f->n.raw_read_bytes, size);
    return vfdswmr_pt_read(file, type, dxpl, addr, size, buf);
}

static herr_t
latency_write(H5FD_t *file, H5FD_mem_t type, hid_t dxpl, haddr_t addr, size_t size, const void *buf)
{
    latency_t *f = LAT(file);

    vfdswmr_sleep((double)__atomic_load_n(&f->write_us, __ATOMIC_RELAXED) * 1e-6);
    count(&f->n.writes, &f->n.write_bytes, size);
    return vfdswmr_pt_write(file, type, dxpl, addr, size, buf);
}

static herr_t
latency_ctl(H5FD_t *file, uint64_t op, uint64_t flags, const void *in, void **out)
{
    latency_t *f = LAT(file);

    if (op == VFD_LATENCY_CTL_SET_LATENCY) {
        const unsigned long long *us = in;
        if (us == NULL || us[0] > VFD_LATENCY_MAX_US || us[1] > VFD_LATENCY_MAX_US) {
            VFDSWMR_ERR(H5E_BADVALUE, "%s: SET_LATENCY needs two values from 0 to %llu (microseconds)",
                        VFD_LATENCY_NAME, VFD_LATENCY_MAX_US);
            return -1;
        }
        __atomic_store_n(&f->read_us, us[0], __ATOMIC_RELAXED);
        __atomic_store_n(&f->write_us, us[1], __ATOMIC_RELAXED);
        return 0;
    }
    if (op != VFD_LATENCY_CTL_GET_COUNTS)
        return vfdswmr_pt_ctl(file, op, flags, in, out);
    if (out == NULL || *out == NULL) {
        VFDSWMR_ERR(H5E_BADVALUE, "%s: the call counters need somewhere to go", VFD_LATENCY_NAME);
        return -1;
    }
    vfd_latency_counts_t *n = *out;
    n->reads = __atomic_load_n(&f->n.reads, __ATOMIC_RELAXED);
    n->read_bytes = __atomic_load_n(&f->n.read_bytes, __ATOMIC_RELAXED);
    n->raw_reads = __atomic_load_n(&f->n.raw_reads, __ATOMIC_RELAXED);
    n->raw_read_bytes = __atomic_load_n(&f->n.raw_read_bytes, __ATOMIC_RELAXED);
    n->writes = __atomic_load_n(&f->n.writes, __ATOMIC_RELAXED);
    n->write_bytes = __atomic_load_n(&f->n.write_bytes, __ATOMIC_RELAXED);
    return 0;
}

static herr_t
latency_delete(const char *name, hid_t fapl)
{
    (void)fapl;
    return on_sec2_delete(name, VFD_LATENCY_NAME);
}

static const H5FD_class_t latency_class = {
    VFDSWMR_CLASS_BASE((H5FD_class_value_t)VFD_LATENCY_VALUE, VFD_LATENCY_NAME),
    .open = latency_open,
    .query = latency_query,
    .read = latency_read,
    .write = latency_write,
    .ctl = latency_ctl,
    .del = latency_delete,
};

VFDSWMR_PLUGIN_EXPORT(latency_class)
