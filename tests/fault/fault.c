/*
 * vfd_fault: a test-only HDF5 driver plugin that forwards to sec2 and makes
 * writes fail the way a full or broken disk does, so the tests can give the
 * vfd-swmr drivers write errors on the HDF5 file through `under=`:
 *
 *   HDF5_DRIVER_CONFIG='under=vfd_fault(max_eof=2000000)'
 *
 * Configuration string: key=value pairs separated by ';' (blanks around
 * keys and values ignored, '\' escapes the next character of a value):
 *
 *   max_eof=BYTES        a write that would end past BYTES writes the bytes
 *                        below BYTES (as a filling disk does) and fails
 *   fail_after_writes=N  the first N writes succeed, every later one fails
 *   fail_errno=NAME      the error of a failed write: ENOSPC (default), EIO,
 *                        EDQUOT or EFBIG
 *   split_write_us=N     a raw-data write (H5FD_MEM_DRAW) of two bytes or
 *                        more is written as two halves N microseconds apart,
 *                        as the kernel may write a large one piecewise: a
 *                        reader reading meanwhile sees half of it
 *   state_file=PATH      read at every write while it exists: a string of
 *                        the three keys above that replaces them, so a test
 *                        can move the limit while a writer runs (write it
 *                        to PATH.tmp and rename it over PATH)
 *   trace_file=PATH      append one line per read and write that reaches
 *                        this driver: "read|write TYPE ADDRESS SIZE"
 *
 * A failed write sets errno and pushes one message on the HDF5 error stack:
 *   vfd_fault: cannot write SIZE bytes at address ADDR of "NAME": <strerror>
 *   (injected: max_eof=BYTES | after N writes)
 * Reads and every other callback pass through to sec2; get_handle returns
 * sec2's file descriptor and the POSIX-compatible feature flag is kept, so
 * the writer's flush_raw_data (fsync) works above it.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "h5err.h"
#include "kv.h"
#include "on_sec2.h"
#include "plugin.h"

#define FAULT_NAME      "vfd_fault"
#define FAULT_VALUE     ((H5FD_class_value_t)31099)
#define FAULT_MAX_STATE 512

typedef struct {
    unsigned long long max_eof;           /* ULLONG_MAX: no limit */
    unsigned long long fail_after_writes; /* ULLONG_MAX: no limit */
    int fail_errno;
    unsigned long long split_write_us; /* 0: writes are one call */
} fault_limits_t;

typedef struct {
    vfdswmr_file_t base; /* first: the pass-through callbacks of common/stack.c work on it */
    fault_limits_t limits;
    char state_file[PATH_MAX];
    char name[PATH_MAX];
    FILE *trace;               /* trace_file, or NULL */
    unsigned long long writes; /* writes so far, failed ones included */
} fault_t;

static const struct {
    const char *name;
    int value;
} errnos[] = {{"ENOSPC", ENOSPC}, {"EIO", EIO}, {"EDQUOT", EDQUOT}, {"EFBIG", EFBIG}};

static int
parse_count(const char *v, unsigned long long *out)
{
    char *end;

    if (*v < '0' || *v > '9')
        return -1;
    errno = 0;
    *out = strtoull(v, &end, 10);
    return errno || *end ? -1 : 0;
}

/*
 * Parse `text` into *lim (and *state_file when not NULL; a state file may
 * not name another). Returns 0, or -1 with a message in err.
 */
static int
parse(const char *text, fault_limits_t *lim, char *state_file, size_t state_len, char *trace_file, char *err,
      size_t errlen)
{
    const char *p = text ? text : "";
    char key[64], val[PATH_MAX];
    int rc;

    while ((rc = kv_next(&p, key, sizeof key, val, sizeof val, err, errlen)) != 0) {
        if (rc < 0)
            return -1;
        if (!key[0])
            ; /* empty segment */
        else if (!strcmp(key, "max_eof") || !strcmp(key, "fail_after_writes") || !strcmp(key, "split_write_us")) {
            if (parse_count(val, key[0] == 'm'   ? &lim->max_eof
                                 : key[0] == 'f' ? &lim->fail_after_writes
                                                 : &lim->split_write_us) < 0) {
                snprintf(err, errlen, "%s=%s: expected a non-negative integer", key, val);
                return -1;
            }
        }
        else if (!strcmp(key, "fail_errno")) {
            size_t i;
            for (i = 0; i < sizeof errnos / sizeof errnos[0] && strcmp(val, errnos[i].name); i++)
                ;
            if (i == sizeof errnos / sizeof errnos[0]) {
                snprintf(err, errlen, "fail_errno=%s: expected ENOSPC, EIO, EDQUOT or EFBIG", val);
                return -1;
            }
            lim->fail_errno = errnos[i].value;
        }
        else if ((!strcmp(key, "state_file") && state_file) || (!strcmp(key, "trace_file") && trace_file)) {
            if (snprintf(key[0] == 's' ? state_file : trace_file, state_len, "%s", val) >= (int)state_len) {
                snprintf(err, errlen, "%s: path too long", key);
                return -1;
            }
        }
        else {
            snprintf(err, errlen,
                     "unknown key \"%s\"; accepted keys: max_eof, fail_after_writes, fail_errno, split_write_us%s", key,
                     state_file ? ", state_file, trace_file" : "");
            return -1;
        }
    }
    return 0;
}

static void
limits_default(fault_limits_t *lim)
{
    *lim = (fault_limits_t){.max_eof = ULLONG_MAX, .fail_after_writes = ULLONG_MAX, .fail_errno = ENOSPC};
}

/* The limits in force for this write: the state file's while it exists. */
static int
current_limits(const fault_t *f, fault_limits_t *lim)
{
    char text[FAULT_MAX_STATE + 1], err[256];
    ssize_t n;
    int fd;

    *lim = f->limits;
    if (!f->state_file[0])
        return 0;
    if ((fd = open(f->state_file, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)) < 0) {
        if (errno == ENOENT)
            return 0;
        VFDSWMR_ERR(H5E_CANTOPENFILE, "%s: cannot open the state file \"%s\": %s", FAULT_NAME, f->state_file,
                    strerror(errno));
        return -1;
    }
    n = read(fd, text, sizeof text);
    close(fd);
    if (n < 0 || n > FAULT_MAX_STATE) {
        VFDSWMR_ERR(H5E_READERROR, "%s: cannot read the state file \"%s\": %s", FAULT_NAME, f->state_file,
                    n < 0 ? strerror(errno) : "longer than 512 bytes");
        return -1;
    }
    text[n] = '\0';
    limits_default(lim);
    if (parse(text, lim, NULL, 0, NULL, err, sizeof err) < 0) {
        VFDSWMR_ERR(H5E_BADVALUE, "%s: bad state file \"%s\": %s", FAULT_NAME, f->state_file, err);
        return -1;
    }
    return 0;
}

static H5FD_t *
fault_open(const char *name, unsigned flags, hid_t fapl, haddr_t maxaddr)
{
    fault_t *f;
    char *text = NULL, err[PATH_MAX + 128], trace_file[PATH_MAX] = "";
    int rc;

    if (NULL == (f = calloc(1, sizeof *f))) {
        VFDSWMR_ERR(H5E_CANTALLOC, "%s: out of memory", FAULT_NAME);
        return NULL;
    }
    f->base.drv_name = FAULT_NAME;
    snprintf(f->name, sizeof f->name, "%s", name);
    limits_default(&f->limits);
    if ((text = on_sec2_config(fapl, FAULT_NAME)) == NULL)
        goto fail;
    rc = parse(text, &f->limits, f->state_file, sizeof f->state_file, trace_file, err, sizeof err);
    free(text);
    text = NULL;
    if (rc < 0) {
        VFDSWMR_ERR(H5E_BADVALUE, "%s: bad configuration: %s", FAULT_NAME, err);
        goto fail;
    }
    if (trace_file[0] && (f->trace = fopen(trace_file, "a")) == NULL) {
        VFDSWMR_ERR(H5E_CANTOPENFILE, "%s: cannot open the trace file \"%s\": %s", FAULT_NAME, trace_file,
                    strerror(errno));
        goto fail;
    }
    if (on_sec2_open(&f->base, name, flags, maxaddr) < 0)
        goto fail;
    return &f->base.pub;
fail:
    if (f->trace)
        fclose(f->trace);
    free(text);
    free(f);
    return NULL;
}

static herr_t
fault_close(H5FD_t *file)
{
    fault_t *f = (fault_t *)file;

    if (f->trace)
        fclose(f->trace);
    return vfdswmr_pt_close(file);
}

static void
trace(fault_t *f, const char *what, H5FD_mem_t type, haddr_t addr, size_t size)
{
    if (f->trace)
        fprintf(f->trace, "%s %d %llu %zu\n", what, (int)type, (unsigned long long)addr, size);
}

static herr_t
fault_read(H5FD_t *file, H5FD_mem_t type, hid_t dxpl, haddr_t addr, size_t size, void *buf)
{
    trace((fault_t *)file, "read", type, addr, size);
    return vfdswmr_pt_read(file, type, dxpl, addr, size, buf);
}

/* sec2's feature flags, the POSIX-compatible handle included (file may be
 * NULL: HDF5 also asks the class). */
static herr_t
fault_query(const H5FD_t *file, unsigned long *flags)
{
    (void)file;
    *flags = VFDSWMR_FEATURES | H5FD_FEAT_POSIX_COMPAT_HANDLE;
    return 0;
}

static herr_t
fault_write(H5FD_t *file, H5FD_mem_t type, hid_t dxpl, haddr_t addr, size_t size, const void *buf)
{
    fault_t *f = (fault_t *)file;
    fault_limits_t lim;
    char why[96];
    size_t ok = size;

    if (current_limits(f, &lim) < 0)
        return -1;
    trace(f, "write", type, addr, size);
    f->writes++;
    if (f->writes > lim.fail_after_writes) {
        ok = 0;
        snprintf(why, sizeof why, "after %llu writes", lim.fail_after_writes);
    }
    else if (addr + size > lim.max_eof) {
        ok = addr < lim.max_eof ? (size_t)(lim.max_eof - addr) : 0;
        snprintf(why, sizeof why, "max_eof=%llu", lim.max_eof);
    }
    if (ok >= 2 && type == H5FD_MEM_DRAW && lim.split_write_us) {
        size_t half = ok / 2;
        if (vfdswmr_pt_write(file, type, dxpl, addr, half, buf) < 0)
            return -1;
        vfdswmr_sleep((double)lim.split_write_us * 1e-6);
        if (vfdswmr_pt_write(file, type, dxpl, addr + half, ok - half, (const char *)buf + half) < 0)
            return -1;
    }
    else if (ok > 0 && vfdswmr_pt_write(file, type, dxpl, addr, ok, buf) < 0)
        return -1;
    if (ok == size)
        return 0;
    VFDSWMR_ERR(H5E_WRITEERROR, "%s: cannot write %zu bytes at address %llu of \"%s\": %s (injected: %s)", FAULT_NAME,
                size, (unsigned long long)addr, f->name, strerror(lim.fail_errno), why);
    errno = lim.fail_errno;
    return -1;
}

static herr_t
fault_delete(const char *name, hid_t fapl)
{
    (void)fapl;
    return on_sec2_delete(name, FAULT_NAME);
}

static const H5FD_class_t fault_class = {
    VFDSWMR_CLASS_BASE(FAULT_VALUE, FAULT_NAME),
    .open = fault_open,
    .close = fault_close,
    .read = fault_read,
    .query = fault_query,
    .write = fault_write,
    .del = fault_delete,
};

VFDSWMR_PLUGIN_EXPORT(fault_class)
