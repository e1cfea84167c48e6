/*
 * One walk of a whole HDF5 file; see crash_walk.h.
 */
#include "crash_walk.h"

#include "../swmr/swmr_common.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    uint64_t seed;
    cw_obs_t *obs;
    cw_result_t rc;
    char *err;
    size_t errlen;
} ctx_t;

static void fail_ctx(ctx_t *c, cw_result_t rc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void
fail_ctx(ctx_t *c, cw_result_t rc, const char *fmt, ...)
{
    va_list ap;
    size_t len;

    if (c->rc != CW_OK)
        return;
    c->rc = rc;
    va_start(ap, fmt);
    vsnprintf(c->err, c->errlen, fmt, ap);
    va_end(ap);
    if (rc == CW_HDF5 && (len = strlen(c->err)) + 16 < c->errlen) {
        snprintf(c->err + len, c->errlen - len, " [HDF5: ");
        len = strlen(c->err);
        h5_error_string(c->err + len, c->errlen - len - 1);
        strcat(c->err, "]");
    }
}

static char *
add_line(cw_obs_t *obs)
{
    if (obs->nlines == obs->cap) {
        obs->cap = obs->cap ? 2 * obs->cap : 128;
        obs->lines = realloc(obs->lines, obs->cap * CM_LINELEN);
        if (!obs->lines)
            swmr_fail("out of memory");
    }
    return obs->lines[obs->nlines++];
}

static void
child_path(char *out, const char *parent, const char *name)
{
    snprintf(out, CM_PATHLEN, "%s%s%s", parent, strcmp(parent, "/") ? "/" : "", name);
}

/* The number N of a name "<prefix>N" (N > 0, no leading zeros), or -1. */
static int
name_id(const char *name, char prefix)
{
    char *end;
    long v;

    if (name[0] != prefix || name[1] < '1' || name[1] > '9')
        return -1;
    v = strtol(name + 1, &end, 10);
    return *end || v <= 0 || v > 100000000 ? -1 : (int)v;
}

/* --- attributes ------------------------------------------------------------------------- */

typedef struct {
    ctx_t *c;
    const char *path;
} attr_ctx_t;

static herr_t
attr_cb(hid_t loc, const char *name, const H5A_info_t *info, void *data)
{
    attr_ctx_t *ac = data;
    ctx_t *c = ac->c;
    int id = name_id(name, 'a'), version, len;
    hid_t aid = -1, space = -1, type = -1;
    hssize_t n;
    int64_t v[16];

    (void)info;
    if (id < 0) {
        fail_ctx(c, CW_VALUE, "attribute %s of %s: not a name the workload uses", name, ac->path);
        return -1;
    }
    if ((aid = H5Aopen(loc, name, H5P_DEFAULT)) < 0 || (space = H5Aget_space(aid)) < 0 ||
        (type = H5Aget_type(aid)) < 0 || (n = H5Sget_simple_extent_npoints(space)) < 0) {
        fail_ctx(c, CW_HDF5, "cannot open attribute %s of %s", name, ac->path);
        goto out;
    }
    if (H5Tequal(type, H5T_STD_I64LE) <= 0 || n < 1 || n > 16) {
        fail_ctx(c, CW_VALUE, "attribute %s of %s: not an int64 array of 1..16 elements (%lld)", name, ac->path,
                 (long long)n);
        goto out;
    }
    if (H5Aread(aid, H5T_NATIVE_INT64, v) < 0) {
        fail_ctx(c, CW_HDF5, "cannot read attribute %s of %s", name, ac->path);
        goto out;
    }
    len = (int)n;
    version = value_step(v[0]);
    for (int k = 0; k < len; k++)
        if (version < 0 || v[k] != cm_avalue(c->seed, id, k, version)) {
            fail_ctx(c, CW_VALUE,
                     "attribute %s of %s: element %d is %" PRId64 ", not the value written by any operation "
                     "(element 0 claims operation %d)",
                     name, ac->path, k, v[k], version);
            goto out;
        }
    snprintf(add_line(c->obs), CM_LINELEN, "A %s %s n=%d v=%d", ac->path, name, len, version);
    c->obs->objects++;
    c->obs->elements += len;
out:
    if (type >= 0)
        H5Tclose(type);
    if (space >= 0)
        H5Sclose(space);
    if (aid >= 0)
        H5Aclose(aid);
    return c->rc == CW_OK ? 0 : -1;
}

static void
walk_attrs(ctx_t *c, hid_t obj, const char *path)
{
    attr_ctx_t ac = {c, path};

    if (H5Aiterate2(obj, H5_INDEX_NAME, H5_ITER_INC, NULL, attr_cb, &ac) < 0)
        fail_ctx(c, CW_HDF5, "cannot iterate over the attributes of %s", path);
}

/* --- datasets --------------------------------------------------------------------------- */

/* Was the file of `obj` written with HDF5's default bounds (crash_writer --earliest: a
 * version 2 superblock, as the file space strategy needs one; the latest bounds give
 * version 3)? Its chunked datasets then have version 1 B-tree indexes, whatever their kind. */
static bool
default_format(hid_t obj)
{
    hid_t fid = H5Iget_file_id(obj);
    H5F_info2_t info;
    bool dflt = fid >= 0 && H5Fget_info2(fid, &info) >= 0 && info.super.version < 3;

    if (fid >= 0)
        H5Fclose(fid);
    return dflt;
}

/* Which of the workload's dataset kinds this is, or -1 (message in why). */
static int
dataset_kind(hid_t did, hsize_t dims[2], char *why, size_t n)
{
    hid_t space = -1, dcpl = -1, type = -1;
    hsize_t maxdims[2] = {0, 0}, chunk[2] = {0, 0};
    H5D_chunk_index_t idx;
    int rank, nfilters, kind = -1;
    int64_t fill = 0;

    dims[0] = dims[1] = 1;
    if ((space = H5Dget_space(did)) < 0 || (dcpl = H5Dget_create_plist(did)) < 0 || (type = H5Dget_type(did)) < 0 ||
        (rank = H5Sget_simple_extent_ndims(space)) < 1 || rank > 2 ||
        H5Sget_simple_extent_dims(space, dims, maxdims) < 0 || H5Pget_layout(dcpl) != H5D_CHUNKED ||
        H5Pget_chunk(dcpl, 2, chunk) != rank || (nfilters = H5Pget_nfilters(dcpl)) < 0 ||
        H5Dget_chunk_index_type(did, &idx) < 0 || H5Pget_fill_value(dcpl, H5T_NATIVE_INT64, &fill) < 0) {
        snprintf(why, n, "not a chunked dataset of rank 1 or 2, or its properties cannot be read");
        goto out;
    }
    if (H5Tequal(type, H5T_STD_I64LE) <= 0 || fill != SWMR_FILL) {
        snprintf(why, n, "its type is not H5T_STD_I64LE or its fill value is not %" PRId64, SWMR_FILL);
        goto out;
    }
    if (rank == 1)
        dims[1] = maxdims[1] = chunk[1] = 1;
    if (idx == H5D_CHUNK_IDX_BTREE && default_format(did))
        idx = H5D_CHUNK_IDX_NTYPES; /* any kind's index */
    for (int k = 0; k < CM_NDKINDS; k++) {
        const cm_dkind_t *d = &cm_dkinds[k];

        if (d->rank == rank && d->cols == dims[1] && d->chunk[0] == chunk[0] && d->chunk[1] == chunk[1] &&
            (nfilters == 1) == d->deflate && nfilters <= 1 && (d->idx == idx || idx == H5D_CHUNK_IDX_NTYPES) &&
            maxdims[0] == (d->fixed ? CM_FIXED_ROWS : H5S_UNLIMITED) &&
            (rank == 1 || maxdims[1] == (d->unlim2 ? H5S_UNLIMITED : d->cols))) {
            kind = k;
            break;
        }
    }
    if (kind < 0)
        snprintf(why, n,
                 "its shape, chunking, filters or chunk index (rank %d, %llux%llu, chunk %llux%llu, %d filters, "
                 "index type %d) are those of no dataset kind of the workload",
                 rank, (unsigned long long)dims[0], (unsigned long long)dims[1], (unsigned long long)chunk[0],
                 (unsigned long long)chunk[1], nfilters, (int)idx);
out:
    if (type >= 0)
        H5Tclose(type);
    if (dcpl >= 0)
        H5Pclose(dcpl);
    if (space >= 0)
        H5Sclose(space);
    return kind;
}

static void
walk_dataset(ctx_t *c, hid_t did, const char *name, const char *path)
{
    int id = name_id(name, 'd'), kind;
    hsize_t dims[2];
    int64_t *buf = NULL;
    char why[300];
    cw_obs_t *obs = c->obs;
    cw_dset_t *ds;

    if (id < 0) {
        fail_ctx(c, CW_VALUE, "dataset %s: not a name the workload uses", path);
        return;
    }
    H5E_BEGIN_TRY
    {
        kind = dataset_kind(did, dims, why, sizeof why);
    }
    H5E_END_TRY
    if (kind < 0) {
        fail_ctx(c, CW_VALUE, "dataset %s: %s", path, why);
        return;
    }
    if (dims[0] > CM_MAX_ROWS) {
        fail_ctx(c, CW_VALUE, "dataset %s: %llu rows, more than the workload ever writes (%d)", path,
                 (unsigned long long)dims[0], CM_MAX_ROWS);
        return;
    }
    buf = xcalloc((size_t)(dims[0] * dims[1]), sizeof(int64_t));
    if (dims[0] && H5Dread(did, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0) {
        fail_ctx(c, CW_HDF5, "cannot read dataset %s (extent %llux%llu)", path, (unsigned long long)dims[0],
                 (unsigned long long)dims[1]);
        free(buf);
        return;
    }
    if (obs->ndsets == obs->dcap) {
        obs->dcap = obs->dcap ? 2 * obs->dcap : 32;
        obs->dsets = realloc(obs->dsets, obs->dcap * sizeof *obs->dsets);
        if (!obs->dsets)
            swmr_fail("out of memory");
    }
    ds = &obs->dsets[obs->ndsets++];
    memset(ds, 0, sizeof *ds);
    snprintf(ds->path, sizeof ds->path, "%s", path);
    ds->id = id;
    ds->rows = dims[0];
    ds->cols = dims[1];
    ds->cum = xcalloc((size_t)dims[0] + 1, sizeof(uint64_t));
    ds->cum[0] = cm_sum_init();
    for (hsize_t r = 0; r < dims[0]; r++) {
        const int64_t *row = buf + r * dims[1];

        for (hsize_t col = 0; col < dims[1]; col++) {
            int64_t want = cm_dvalue(c->seed, id, r, col);

            if (row[col] != want) {
                fail_ctx(c, CW_VALUE,
                         "dataset %s (%s, extent %llux%llu): element [%llu,%llu] is %" PRId64 ", expected %" PRId64
                         "%s",
                         path, cm_dkinds[kind].name, (unsigned long long)dims[0], (unsigned long long)dims[1],
                         (unsigned long long)r, (unsigned long long)col, row[col], want,
                         row[col] == SWMR_FILL ? " (the fill value: its data never reached the file)" : "");
                free(buf);
                return;
            }
        }
        ds->cum[r + 1] = cm_sum_row(ds->cum[r], row, dims[1]);
    }
    free(buf);
    snprintf(add_line(obs), CM_LINELEN, "D %s %s %llux%llu %016" PRIx64, path, cm_dkinds[kind].name,
             (unsigned long long)dims[0], (unsigned long long)dims[1], ds->cum[dims[0]]);
    obs->objects++;
    obs->elements += (long)(dims[0] * dims[1]);
}

/* --- groups ----------------------------------------------------------------------------- */

static void walk_group(ctx_t *c, hid_t gid, const char *path);

typedef struct {
    ctx_t *c;
    const char *path;
} link_ctx_t;

static herr_t
link_cb(hid_t g, const char *name, const H5L_info2_t *info, void *data)
{
    link_ctx_t *lc = data;
    ctx_t *c = lc->c;
    char path[CM_PATHLEN];
    hid_t oid;

    child_path(path, lc->path, name);
    if (info->type != H5L_TYPE_HARD) {
        fail_ctx(c, CW_VALUE, "%s: not a hard link (type %d)", path, (int)info->type);
        return -1;
    }
    if ((oid = H5Oopen(g, name, H5P_DEFAULT)) < 0) {
        fail_ctx(c, CW_HDF5, "%s: the link exists, but the object cannot be opened", path);
        return -1;
    }
    switch (H5Iget_type(oid)) {
    case H5I_GROUP:
        if (name_id(name, 'g') < 0)
            fail_ctx(c, CW_VALUE, "group %s: not a name the workload uses", path);
        else
            walk_group(c, oid, path);
        break;
    case H5I_DATASET:
        walk_dataset(c, oid, name, path);
        if (c->rc == CW_OK)
            walk_attrs(c, oid, path);
        break;
    default:
        fail_ctx(c, CW_VALUE, "%s: neither a group nor a dataset", path);
        break;
    }
    if (H5Oclose(oid) < 0)
        fail_ctx(c, CW_HDF5, "cannot close %s", path);
    return c->rc == CW_OK ? 0 : -1;
}

static void
walk_group(ctx_t *c, hid_t gid, const char *path)
{
    link_ctx_t lc = {c, path};

    snprintf(add_line(c->obs), CM_LINELEN, "G %s", path);
    c->obs->objects++;
    walk_attrs(c, gid, path);
    if (c->rc == CW_OK && H5Literate2(gid, H5_INDEX_NAME, H5_ITER_INC, NULL, link_cb, &lc) < 0)
        fail_ctx(c, CW_HDF5, "cannot iterate over the links of %s", path);
}

/* --- the walk --------------------------------------------------------------------------- */

void
cw_free(cw_obs_t *obs)
{
    for (size_t i = 0; i < obs->ndsets; i++)
        free(obs->dsets[i].cum);
    free(obs->dsets);
    free(obs->lines);
    memset(obs, 0, sizeof *obs);
}

cw_result_t
cw_walk(hid_t root, uint64_t seed, cw_obs_t *obs, char *err, size_t errlen)
{
    ctx_t c = {seed, obs, CW_OK, err, errlen};

    for (size_t i = 0; i < obs->ndsets; i++)
        free(obs->dsets[i].cum);
    obs->nlines = obs->ndsets = 0;
    obs->objects = obs->elements = 0;
    err[0] = '\0';
    walk_group(&c, root, "/");
    if (c.rc == CW_OK)
        cm_sort_lines(obs->lines, obs->nlines);
    return c.rc;
}

const cw_dset_t *
cw_find_dset(const cw_obs_t *obs, const char *path)
{
    for (size_t i = 0; i < obs->ndsets; i++)
        if (!strcmp(obs->dsets[i].path, path))
            return &obs->dsets[i];
    return NULL;
}

size_t
cw_diff(char (*got)[CM_LINELEN], size_t ngot, char (*want)[CM_LINELEN], size_t nwant, char *buf, size_t n,
        int max_lines)
{
    size_t i = 0, j = 0, ndiff = 0, len = 0;

    if (n)
        buf[0] = '\0';
    while (i < ngot || j < nwant) {
        int c = i == ngot ? 1 : j == nwant ? -1 : strcmp(got[i], want[j]);
        const char *tag, *line;

        if (!c) {
            i++, j++;
            continue;
        }
        if (c < 0)
            tag = "unexpected: ", line = got[i++];
        else
            tag = "missing:    ", line = want[j++];
        if ((int)ndiff++ < max_lines && len < n) {
            int w = snprintf(buf + len, n - len, "\n    %s%s", tag, line);

            if (w > 0)
                len += (size_t)w;
        }
    }
    if ((int)ndiff > max_lines && len < n)
        snprintf(buf + len, n - len, "\n    ... %zu differences in all", ndiff);
    return ndiff;
}
