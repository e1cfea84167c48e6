/*
 * libvfdswmr: the small client library applications link with to select the
 * drivers from C (include/vfdswmr.h). The drivers themselves are plugins that
 * HDF5 loads; this library only makes sure HDF5 can find them.
 */
#include "vfdswmr.h"

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

const char *
vfdswmr_version(void)
{
    return PACKAGE_VERSION;
}
