/*
 * libvfdswmr: the small client library applications link with to select the
 * drivers from C (include/vfdswmr.h). The drivers themselves are plugins that
 * HDF5 loads; this library only makes sure HDF5 can find them.
 */
#include "vfdswmr.h"

#include <H5FDdevelop.h>
#include <H5PLpublic.h>
#include <H5VLnative.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#ifndef VFDSWMR_PLUGIN_DIR
#error "VFDSWMR_PLUGIN_DIR must name the directory the plugins are installed into"
#endif

/* Append the install directory to HDF5's plugin search path (after
 * HDF5_PLUGIN_PATH and anything the application set), once. */
static herr_t
ensure_plugin_dir(void)
{
    unsigned n = 0;
    char buf[4096];

    if (H5PLsize(&n) < 0)
        return -1;
    for (unsigned i = 0; i < n; i++) {
        ssize_t len = H5PLget(i, buf, sizeof buf);
        if (len > 0 && (size_t)len < sizeof buf && strcmp(buf, VFDSWMR_PLUGIN_DIR) == 0)
            return 0;
    }
    return H5PLappend(VFDSWMR_PLUGIN_DIR);
}

static herr_t
set_driver(hid_t fapl_id, const char *name, const char *config)
{
    if (ensure_plugin_dir() < 0)
        return -1;
    return H5Pset_driver_by_name(fapl_id, name, (config && *config) ? config : NULL);
}

herr_t
vfdswmr_set_fapl_writer(hid_t fapl_id, const char *config)
{
    return set_driver(fapl_id, VFDSWMR_WRITER_NAME, config);
}

herr_t
vfdswmr_set_fapl_reader(hid_t fapl_id, const char *config)
{
    return set_driver(fapl_id, VFDSWMR_READER_NAME, config);
}

/* The outermost vfd-swmr driver of an open file, through the marker FAPL,
 * which our drivers acknowledge (VFDSWMR_HANDLE_ACK); NULL with a message
 * when the file is open through another driver, whose handle is something
 * else (sec2: a pointer to its descriptor). `release`: file_id is the
 * caller's own reference (H5Iget_file_id), closed here -- the object it
 * came from keeps the file open -- so that no API call, which would clear
 * the error stack, follows the message or the ctl operation. */
static H5FD_t *
our_handle(hid_t file_id, bool release)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    int marker = 0;
    void *handle = NULL;
    bool foreign = false;

    if (fapl < 0)
        return NULL;
    if (H5Pinsert2(fapl, VFDSWMR_HANDLE_PROPERTY, sizeof marker, &marker, NULL, NULL, NULL, NULL, NULL, NULL) < 0 ||
        H5Fget_vfd_handle(file_id, fapl, &handle) < 0 || H5Pget(fapl, VFDSWMR_HANDLE_PROPERTY, &marker) < 0)
        handle = NULL;
    else if (marker != VFDSWMR_HANDLE_ACK)
        foreign = true;
    H5Pclose(fapl);
    if (release)
        H5Fclose(file_id);
    if (foreign) { /* after the last API call, which would clear the stack */
        H5Epush2(H5E_DEFAULT, __FILE__, __func__, __LINE__, H5E_ERR_CLS, H5E_VFL, H5E_BADVALUE,
                 "the file is not open through vfd_swmr_writer, vfd_swmr_reader or vfd_chunk_cache");
        return NULL;
    }
    return handle;
}

static herr_t
ctl_out(hid_t file_id, bool release, uint64_t op, const void *in, void *out)
{
    H5FD_t *h = our_handle(file_id, release);

    if (h == NULL)
        return -1;
    return H5FDctl(h, op, H5FD_CTL_FAIL_IF_UNKNOWN_FLAG, in, &out);
}

static herr_t
ctl(hid_t file_id, uint64_t op, const void *in)
{
    return ctl_out(file_id, false, op, in, NULL);
}

herr_t
vfdswmr_end_tick(hid_t file_id)
{
    if (H5Fflush(file_id, H5F_SCOPE_LOCAL) < 0)
        return -1;
    return ctl(file_id, VFDSWMR_CTL_END_TICK, NULL);
}

herr_t
vfdswmr_disable_end_of_tick(hid_t file_id)
{
    return ctl(file_id, VFDSWMR_CTL_DISABLE_EOT, NULL);
}

herr_t
vfdswmr_enable_end_of_tick(hid_t file_id)
{
    return ctl(file_id, VFDSWMR_CTL_ENABLE_EOT, NULL);
}

herr_t
vfdswmr_refresh(hid_t file_id)
{
    return ctl(file_id, VFDSWMR_CTL_REFRESH, NULL);
}

herr_t
vfdswmr_get_status(hid_t file_id, vfdswmr_status_t *status)
{
    memset(status, 0, sizeof *status);
    return ctl_out(file_id, false, VFDSWMR_CTL_GET_STATUS, NULL, status);
}

/* ---- the shared chunk cache ---------------------------------------------- */

/* The file of obj_id, and the object header address of the dataset obj_id
 * (*dset NULL when obj_id is a file). The caller closes *file (ctl_out with
 * release does). */
static herr_t
file_and_dataset(hid_t obj_id, hid_t *file, unsigned long long *addr, const unsigned long long **dset)
{
    H5O_info2_t info;
    haddr_t a;

    H5I_type_t type = H5Iget_type(obj_id);

    *dset = NULL;
    if ((type != H5I_FILE && type != H5I_DATASET) || (*file = H5Iget_file_id(obj_id)) < 0)
        return -1; /* only a file or a dataset names what to act on */
    if (type != H5I_DATASET)
        return 0;
    if (H5Oget_info3(obj_id, &info, H5O_INFO_BASIC) < 0 || H5VLnative_token_to_addr(*file, info.token, &a) < 0) {
        H5Fclose(*file);
        return -1;
    }
    *addr = a;
    *dset = addr;
    return 0;
}

herr_t
vfdswmr_chunk_cache_configure(hid_t file_id, unsigned long long size, unsigned long long max_entry,
                              unsigned long long dset_min)
{
    vfdswmr_chunk_cache_config_t c = {size, max_entry, dset_min};

    return ctl(file_id, VFDSWMR_CTL_CC_CONFIGURE, &c);
}

herr_t
vfdswmr_chunk_cache_get_stats(hid_t obj_id, vfdswmr_chunk_cache_stats_t *stats)
{
    const unsigned long long *dset;
    unsigned long long addr;
    hid_t file;

    memset(stats, 0, sizeof *stats);
    if (file_and_dataset(obj_id, &file, &addr, &dset) < 0)
        return -1;
    return ctl_out(file, true, VFDSWMR_CTL_CC_GET_STATS, dset, stats);
}

herr_t
vfdswmr_chunk_cache_reset_stats(hid_t file_id)
{
    return ctl(file_id, VFDSWMR_CTL_CC_RESET_STATS, NULL);
}

herr_t
vfdswmr_chunk_cache_set_dataset(hid_t dset_id, unsigned long long min_bytes, int nocache)
{
    const unsigned long long *dset;
    unsigned long long addr;
    hid_t file;
    vfdswmr_chunk_cache_dataset_t d;

    if (file_and_dataset(dset_id, &file, &addr, &dset) < 0)
        return -1;
    if (dset == NULL) {
        H5Fclose(file);
        return -1; /* a dataset's setting */
    }
    d = (vfdswmr_chunk_cache_dataset_t){addr, min_bytes, nocache};
    return ctl_out(file, true, VFDSWMR_CTL_CC_SET_DATASET, &d, NULL);
}

struct chunk_list {
    unsigned long long *v;
    size_t n, cap;
};

static int
add_chunk(const hsize_t *offset, unsigned filter_mask, haddr_t addr, hsize_t size, void *op_data)
{
    struct chunk_list *l = op_data;

    (void)offset;
    (void)filter_mask;
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 64;
        unsigned long long *v = realloc(l->v, cap * 2 * sizeof *v);
        if (v == NULL)
            return H5_ITER_ERROR;
        l->v = v;
        l->cap = cap;
    }
    l->v[2 * l->n] = addr;
    l->v[2 * l->n + 1] = size;
    l->n++;
    return H5_ITER_CONT;
}

herr_t
vfdswmr_chunk_cache_register(hid_t dset_id)
{
    const unsigned long long *dset;
    unsigned long long addr;
    struct chunk_list l = {NULL, 0, 0};
    hid_t file, dcpl;
    herr_t rc = -1;

    if (file_and_dataset(dset_id, &file, &addr, &dset) < 0)
        return -1;
    if (dset && (dcpl = H5Dget_create_plist(dset_id)) >= 0) {
        /* Only chunked datasets have chunks to register. */
        bool listed = H5Pget_layout(dcpl) != H5D_CHUNKED || H5Dchunk_iter(dset_id, H5P_DEFAULT, add_chunk, &l) >= 0;
        H5Pclose(dcpl);
        if (listed) {
            vfdswmr_chunk_cache_chunks_t c = {addr, l.n, l.v};
            rc = ctl_out(file, true, VFDSWMR_CTL_CC_REGISTER, &c, NULL);
            free(l.v);
            return rc;
        }
    }
    free(l.v);
    H5Fclose(file);
    return rc;
}

herr_t
vfdswmr_chunk_cache_evict(hid_t obj_id)
{
    const unsigned long long *dset;
    unsigned long long addr;
    hid_t file;

    if (file_and_dataset(obj_id, &file, &addr, &dset) < 0)
        return -1;
    return ctl_out(file, true, VFDSWMR_CTL_CC_EVICT, dset, NULL);
}

herr_t
vfdswmr_chunk_cache_flush_dataset(hid_t dset_id, int evict)
{
    if (H5Iget_type(dset_id) != H5I_DATASET || H5Dflush(dset_id) < 0)
        return -1;
    return evict ? vfdswmr_chunk_cache_evict(dset_id) : 0;
}

const char *
vfdswmr_version(void)
{
    return PACKAGE_VERSION;
}
