#include "stack.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "forked.h"
#include "h5err.h"
#include "io.h"
#include "vfdswmr.h"

#define LOWER(file) (((const vfdswmr_file_t *)(file))->lower)

int
vfdswmr_config_from_fapl(hid_t fapl, const char *drv_name, vfdswmr_config_t *cfg)
{
    char errbuf[VFDSWMR_CONFIG_ERRLEN];
    char *text = NULL;
    ssize_t len;
    int rc;

    len = VFDSWMR_GUARDED(ssize_t, H5Pget_driver_config_str(fapl, NULL, 0), _r < 0);
    if (len < 0) {
        VFDSWMR_ERR(H5E_CANTGET, "%s: cannot read the driver configuration string", drv_name);
        return -1;
    }
    if (len > 0) {
        if (NULL == (text = malloc((size_t)len + 1))) {
            VFDSWMR_ERR(H5E_CANTALLOC, "%s: out of memory", drv_name);
            return -1;
        }
        if (VFDSWMR_GUARDED(ssize_t, H5Pget_driver_config_str(fapl, text, (size_t)len + 1), _r < 0) < 0) {
            free(text);
            VFDSWMR_ERR(H5E_CANTGET, "%s: cannot read the driver configuration string", drv_name);
            return -1;
        }
    }
    rc = vfdswmr_config_parse(text, cfg, errbuf, sizeof errbuf);
    free(text);
    if (rc < 0) {
        VFDSWMR_ERR(H5E_BADVALUE, "%s: bad configuration (HDF5_DRIVER_CONFIG): %s", drv_name, errbuf);
        return -1;
    }
    return 0;
}

/*
 * HDF5 registers its built-in drivers lazily, and H5Pset_driver_by_name()
 * finds only registered drivers or plugins: evaluating a built-in driver's
 * ID macro registers it. Each is then used with its default settings (core:
 * 1 MiB increments, backing store on).
 */
static void
register_builtin(const char *name)
{
    vfdswmr_eguard_t g;
    hid_t id = H5I_INVALID_HID;

    vfdswmr_eguard_enter(&g);
    if (!strcmp(name, "core"))
        id = H5FD_CORE;
    else if (!strcmp(name, "sec2"))
        id = H5FD_SEC2;
    else if (!strcmp(name, "stdio"))
        id = H5FD_STDIO;
    else if (!strcmp(name, "log"))
        id = H5FD_LOG;
    else if (!strcmp(name, "family"))
        id = H5FD_FAMILY;
    vfdswmr_eguard_leave(&g, false); /* only the registration matters; failure shows later */
    (void)id;
}

hid_t
vfdswmr_lower_fapl(const vfdswmr_config_t *cfg, const char *drv_name)
{
    hid_t fapl;
    herr_t rc;

    fapl = VFDSWMR_GUARDED(hid_t, H5Pcreate(H5P_FILE_ACCESS), _r < 0);
    if (fapl < 0) {
        VFDSWMR_ERR(H5E_CANTCREATE, "%s: cannot create a property list for the lower driver", drv_name);
        return H5I_INVALID_HID;
    }
    register_builtin(cfg->under_name);
    rc = VFDSWMR_GUARDED(
        herr_t, H5Pset_driver_by_name(fapl, cfg->under_name, cfg->under_has_config ? cfg->under_config : NULL), _r < 0);
    if (rc < 0) {
        VFDSWMR_GUARDED(herr_t, H5Pclose(fapl), _r < 0);
        VFDSWMR_ERR(H5E_CANTINIT,
                    "%s: cannot select the lower driver \"%s\" (under=): is it built in or on HDF5_PLUGIN_PATH?",
                    drv_name, cfg->under_name);
        return H5I_INVALID_HID;
    }
    return fapl;
}

/*
 * The lower FAPL of the default stack (HDF5's sec2, no configuration), made
 * once per library lifetime and lent to every open and delete: H5Pcreate of
 * a FAPL and its H5Pclose were a twentieth of a short writer session, which
 * opens the lower driver twice. Any other lower driver gets a list of its
 * own each time (a plugin's list would keep the plugin registered).
 *
 * Invariants, under lent_mu: `lent` is H5I_INVALID_HID or a FAPL this code
 * made that selects sec2 without configuration, valid in the running
 * library (H5atclose forgets it before HDF5 shuts down: IDs restart after
 * H5close, so an old number could name someone else's list; none is lent
 * once the library is closing). Only forget_lent closes it: lower_fapl_put
 * closes the lists that were not lent (H5Iis_valid is checked all the
 * same, in case an application closed every list by type).
 */
static pthread_mutex_t lent_mu = PTHREAD_MUTEX_INITIALIZER;
static hid_t lent = H5I_INVALID_HID;

static bool
is_default_lower(const vfdswmr_config_t *cfg)
{
    return !cfg->under_has_config && strcmp(cfg->under_name, "sec2") == 0;
}

/* Is HDF5 closing? Its H5atclose callbacks run newest first, so one
 * registered before ours may open a file after forget_lent ran: a list made
 * then would outlive the library (a callback registered then is never
 * called). Unsure counts as closing: the caller then gets a list of its own. */
static bool
terminating(void)
{
    hbool_t t = true;

    return VFDSWMR_GUARDED(herr_t, H5is_library_terminating(&t), _r < 0) < 0 || t;
}

static void
forget_lent(void *ctx)
{
    (void)ctx;
    pthread_mutex_lock(&lent_mu);
    if (lent >= 0)
        VFDSWMR_GUARDED(herr_t, H5Pclose(lent), _r < 0);
    lent = H5I_INVALID_HID;
    pthread_mutex_unlock(&lent_mu);
}

/* A FAPL for the lower driver of *cfg: the lent one or a new one; give it
 * back with lower_fapl_put. */
static hid_t
lower_fapl_get(const vfdswmr_config_t *cfg, const char *drv_name)
{
    hid_t fapl;

    if (!is_default_lower(cfg) || terminating())
        return vfdswmr_lower_fapl(cfg, drv_name);
    pthread_mutex_lock(&lent_mu);
    if (lent >= 0 && VFDSWMR_GUARDED(htri_t, H5Iis_valid(lent), _r < 0) <= 0)
        lent = H5I_INVALID_HID;
    if (lent < 0 && (fapl = vfdswmr_lower_fapl(cfg, drv_name)) >= 0) {
        if (VFDSWMR_GUARDED(herr_t, H5atclose(forget_lent, NULL), _r < 0) >= 0)
            lent = fapl;
        else { /* not lent: closed after this use */
            pthread_mutex_unlock(&lent_mu);
            return fapl;
        }
    }
    fapl = lent;
    pthread_mutex_unlock(&lent_mu);
    return fapl;
}

static void
lower_fapl_put(hid_t fapl)
{
    pthread_mutex_lock(&lent_mu);
    bool owned = fapl != lent;
    pthread_mutex_unlock(&lent_mu);
    if (owned)
        VFDSWMR_GUARDED(herr_t, H5Pclose(fapl), _r < 0);
}

vfdswmr_file_t *
vfdswmr_stack_new(hid_t fapl, size_t size, const char *drv_name, vfdswmr_config_check_t check)
{
    vfdswmr_file_t *f;
    char errbuf[VFDSWMR_CONFIG_ERRLEN];

    if (NULL == (f = calloc(1, size))) {
        VFDSWMR_ERR(H5E_CANTALLOC, "%s: out of memory", drv_name);
        return NULL;
    }
    f->drv_name = drv_name;
    f->fork_gen = vfdswmr_fork_gen();
    if (vfdswmr_config_from_fapl(fapl, drv_name, &f->cfg) < 0)
        goto fail;
    if (check && check(&f->cfg, errbuf, sizeof errbuf) < 0) {
        VFDSWMR_ERR(H5E_BADVALUE, "%s: bad configuration (HDF5_DRIVER_CONFIG): %s", drv_name, errbuf);
        goto fail;
    }
    return f;
fail:
    free(f);
    return NULL;
}

/* HDF5's own sec2, not a plugin of that name: HDF5 keeps the values below
 * 256 for its drivers (H5FDpublic.h) */
static bool
is_hdf5_sec2(const H5FD_t *lower)
{
    return lower->cls->value == H5_VFD_SEC2 && lower->cls->name && strcmp(lower->cls->name, "sec2") == 0;
}

int
vfdswmr_stack_open_lower(vfdswmr_file_t *f, const char *name, unsigned flags, haddr_t maxaddr)
{
    hid_t lower_fapl;

    if ((lower_fapl = lower_fapl_get(&f->cfg, f->drv_name)) < 0)
        return -1;
    f->lower = VFDSWMR_GUARDED(H5FD_t *, H5FDopen(name, flags, lower_fapl, maxaddr), _r == NULL);
    lower_fapl_put(lower_fapl);
    if (f->lower == NULL) {
        VFDSWMR_ERR(H5E_CANTOPENFILE, "%s: the lower driver \"%s\" cannot open \"%s\"", f->drv_name, f->cfg.under_name,
                    name);
        return -1;
    }
    if (is_hdf5_sec2(f->lower))
        f->on_sec2 = (f->sec2_fd = vfdswmr_lower_fd(f->lower)) >= 0;
    return 0;
}

/* HDF5's FAPL property that asks the core driver for its backing store's
 * descriptor rather than its memory image (HDF5 sets it itself when it
 * wants a descriptor; 1.14 and 2.x have it). */
#define WANT_POSIX_FD "want_posix_fd"

/*
 * A driver's get_handle passes back a POSIX descriptor only when the driver
 * says so (H5FD_FEAT_POSIX_COMPAT_HANDLE) -- and core, which says so when it
 * has a backing store, passes back its memory image unless the FAPL asks
 * for the descriptor (WANT_POSIX_FD): read as an int, that is a number that
 * may name any descriptor of the process. Without the property (not an
 * HDF5 this was checked with) core has no descriptor here.
 */
int
vfdswmr_lower_fd(H5FD_t *lower)
{
    unsigned long flags = 0;
    void *handle = NULL;
    hid_t fapl;
    bool want = true;
    int fd = -1;

    if (VFDSWMR_GUARDED(herr_t, H5FDquery(lower, &flags), _r < 0) < 0 || !(flags & H5FD_FEAT_POSIX_COMPAT_HANDLE))
        return -1;
    /* HDF5's sec2 passes back its descriptor whatever the FAPL says: no
     * property list of our own (a short session's H5Pcreate and H5Pclose) */
    if (is_hdf5_sec2(lower))
        return VFDSWMR_GUARDED(herr_t, H5FDget_vfd_handle(lower, H5P_FILE_ACCESS_DEFAULT, &handle), _r < 0) >= 0 &&
                       handle != NULL && *(int *)handle >= 0
                   ? *(int *)handle
                   : -1;
    if ((fapl = VFDSWMR_GUARDED(hid_t, H5Pcreate(H5P_FILE_ACCESS), _r < 0)) < 0)
        return -1;
    if (VFDSWMR_GUARDED(htri_t, H5Pexist(fapl, WANT_POSIX_FD), _r < 0) > 0
            ? VFDSWMR_GUARDED(herr_t, H5Pset(fapl, WANT_POSIX_FD, &want), _r < 0) >= 0
            : strcmp(lower->cls->name, "core") != 0)
        if (VFDSWMR_GUARDED(herr_t, H5FDget_vfd_handle(lower, fapl, &handle), _r < 0) >= 0 && handle != NULL)
            fd = *(int *)handle;
    VFDSWMR_GUARDED(herr_t, H5Pclose(fapl), _r < 0);
    return fd < 0 ? -1 : fd;
}

herr_t
vfdswmr_stack_close(vfdswmr_file_t *f)
{
    herr_t rc = VFDSWMR_GUARDED(herr_t, H5FDclose(f->lower), _r < 0);

    if (rc < 0)
        VFDSWMR_ERR(H5E_CANTCLOSEFILE, "%s: the lower driver failed to close the file", f->drv_name);
    free(f);
    return rc < 0 ? -1 : 0;
}

herr_t
vfdswmr_pt_close(H5FD_t *file)
{
    return vfdswmr_stack_close((vfdswmr_file_t *)file);
}

/* A fork child's copy of a parent's file is never the file the child opens
 * now (forked.h): HDF5 would share the refused copy. */
int
vfdswmr_pt_cmp(const H5FD_t *f1, const H5FD_t *f2)
{
    unsigned g = vfdswmr_fork_gen();

    if (((const vfdswmr_file_t *)f1)->fork_gen != g || ((const vfdswmr_file_t *)f2)->fork_gen != g)
        return f1 < f2 ? -1 : 1;
    return VFDSWMR_GUARDED(int, H5FDcmp(LOWER(f1), LOWER(f2)), false);
}

herr_t
vfdswmr_pt_query(const H5FD_t *file, unsigned long *flags)
{
    (void)file;
    *flags = VFDSWMR_FEATURES;
    return 0;
}

haddr_t
vfdswmr_pt_get_eoa(const H5FD_t *file, H5FD_mem_t type)
{
    return VFDSWMR_GUARDED(haddr_t, H5FDget_eoa(LOWER(file), type), _r == HADDR_UNDEF);
}

herr_t
vfdswmr_pt_set_eoa(H5FD_t *file, H5FD_mem_t type, haddr_t addr)
{
    return VFDSWMR_GUARDED(herr_t, H5FDset_eoa(LOWER(file), type, addr), _r < 0);
}

haddr_t
vfdswmr_pt_get_eof(const H5FD_t *file, H5FD_mem_t type)
{
    return VFDSWMR_GUARDED(haddr_t, H5FDget_eof(LOWER(file), type), _r == HADDR_UNDEF);
}

herr_t
vfdswmr_pt_get_handle(H5FD_t *file, hid_t fapl, void **handle)
{
    /* The client library asks for our own handle (to call H5FDctl on it)
     * with a FAPL that carries the marker property; an int marker is set
     * to VFDSWMR_HANDLE_ACK, so that the caller knows the handle is ours. */
    if (VFDSWMR_GUARDED(htri_t, H5Pexist(fapl, VFDSWMR_HANDLE_PROPERTY), false) > 0) {
        size_t size = 0;
        int ack = VFDSWMR_HANDLE_ACK;

        if (VFDSWMR_GUARDED(herr_t, H5Pget_size(fapl, VFDSWMR_HANDLE_PROPERTY, &size), _r < 0) >= 0 &&
            size == sizeof ack && VFDSWMR_GUARDED(herr_t, H5Pset(fapl, VFDSWMR_HANDLE_PROPERTY, &ack), _r < 0) < 0)
            return -1;
        *handle = file;
        return 0;
    }
    return VFDSWMR_GUARDED(herr_t, H5FDget_vfd_handle(LOWER(file), fapl, handle), _r < 0);
}

herr_t
vfdswmr_stack_read(const vfdswmr_file_t *f, H5FD_mem_t type, hid_t dxpl, haddr_t addr, size_t size, void *buf)
{
    ssize_t n;

    if (!f->on_sec2)
        return VFDSWMR_GUARDED(herr_t, H5FDread(f->lower, type, dxpl, addr, size, buf), _r < 0);
    if (addr == HADDR_UNDEF || addr > f->lower->maxaddr || size > f->lower->maxaddr - addr) {
        VFDSWMR_ERR(H5E_OVERFLOW, "%s: read of %zu bytes at address %llu lies outside the file's address space",
                    f->drv_name, size, (unsigned long long)addr);
        return -1;
    }
    if ((n = vfdswmr_pread_upto(f->sec2_fd, buf, size, addr)) < 0) {
        VFDSWMR_ERR(H5E_READERROR, "%s: cannot read %zu bytes at address %llu of the HDF5 file: %s", f->drv_name, size,
                    (unsigned long long)addr, strerror(errno));
        return -1;
    }
    memset((char *)buf + n, 0, size - (size_t)n); /* past the end of file, as sec2 */
    return 0;
}

herr_t
vfdswmr_pt_read(H5FD_t *file, H5FD_mem_t type, hid_t dxpl, haddr_t addr, size_t size, void *buf)
{
    return vfdswmr_stack_read((const vfdswmr_file_t *)file, type, dxpl, addr, size, buf);
}

herr_t
vfdswmr_pt_write(H5FD_t *file, H5FD_mem_t type, hid_t dxpl, haddr_t addr, size_t size, const void *buf)
{
    return VFDSWMR_GUARDED(herr_t, H5FDwrite(LOWER(file), type, dxpl, addr, size, buf), _r < 0);
}

herr_t
vfdswmr_pt_flush(H5FD_t *file, hid_t dxpl, hbool_t closing)
{
    return VFDSWMR_GUARDED(herr_t, H5FDflush(LOWER(file), dxpl, closing), _r < 0);
}

herr_t
vfdswmr_pt_truncate(H5FD_t *file, hid_t dxpl, hbool_t closing)
{
    return VFDSWMR_GUARDED(herr_t, H5FDtruncate(LOWER(file), dxpl, closing), _r < 0);
}

herr_t
vfdswmr_pt_lock(H5FD_t *file, hbool_t rw)
{
    return VFDSWMR_GUARDED(herr_t, H5FDlock(LOWER(file), rw), _r < 0);
}

herr_t
vfdswmr_pt_unlock(H5FD_t *file)
{
    return VFDSWMR_GUARDED(herr_t, H5FDunlock(LOWER(file)), _r < 0);
}

/* No op codes of our own yet: route what asks for it to the lower driver. */
herr_t
vfdswmr_pt_ctl(H5FD_t *file, uint64_t op, uint64_t flags, const void *in, void **out)
{
    if (flags & H5FD_CTL_ROUTE_TO_TERMINAL_VFD_FLAG)
        return VFDSWMR_GUARDED(herr_t, H5FDctl(LOWER(file), op, flags, in, out), _r < 0);
    if (flags & H5FD_CTL_FAIL_IF_UNKNOWN_FLAG) {
        VFDSWMR_ERR(H5E_FCNTL, "%s: unknown ctl op code %llu", ((vfdswmr_file_t *)file)->drv_name,
                    (unsigned long long)op);
        return -1;
    }
    return 0;
}

herr_t
vfdswmr_stack_delete(const char *name, hid_t fapl, const char *drv_name)
{
    vfdswmr_config_t cfg;
    hid_t lower_fapl;
    herr_t rc;

    if (vfdswmr_config_from_fapl(fapl, drv_name, &cfg) < 0)
        return -1;
    if ((lower_fapl = lower_fapl_get(&cfg, drv_name)) < 0)
        return -1;
    rc = VFDSWMR_GUARDED(herr_t, H5FDdelete(name, lower_fapl), _r < 0);
    lower_fapl_put(lower_fapl);
    if (rc < 0)
        VFDSWMR_ERR(H5E_CANTDELETEFILE, "%s: the lower driver \"%s\" cannot delete \"%s\"", drv_name, cfg.under_name,
                    name);
    return rc;
}
