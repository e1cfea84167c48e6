/*
 * libvfdswmr: the small client library applications link with to select the
 * drivers from C (include/vfdswmr.h). The drivers themselves are plugins that
 * HDF5 loads; this library only makes sure HDF5 can find them.
 */
#include "vfdswmr.h"

#include <H5FDdevelop.h>
#include <H5PLpublic.h>
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

/* The outermost vfd-swmr driver of an open file, through the marker FAPL. */
static H5FD_t *
our_handle(hid_t file_id)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    int marker = 1;
    void *handle = NULL;

    if (fapl < 0)
        return NULL;
    if (H5Pinsert2(fapl, VFDSWMR_HANDLE_PROPERTY, sizeof marker, &marker, NULL, NULL, NULL, NULL, NULL, NULL) <
            0 ||
        H5Fget_vfd_handle(file_id, fapl, &handle) < 0)
        handle = NULL;
    H5Pclose(fapl);
    return handle;
}

static herr_t
ctl(hid_t file_id, uint64_t op, const void *in)
{
    H5FD_t *h = our_handle(file_id);
    void *out = NULL;

    if (h == NULL)
        return -1;
    return H5FDctl(h, op, H5FD_CTL_FAIL_IF_UNKNOWN_FLAG, in, &out);
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
    return ctl(file_id, VFDSWMR_CTL_GET_STATUS, status);
}

const char *
vfdswmr_version(void)
{
    return PACKAGE_VERSION;
}
