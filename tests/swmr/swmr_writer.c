/*
 * swmr_writer: the writer of the SWMR integration tests. An ordinary HDF5 program: its file
 * access property list comes from H5Pcreate(H5P_FILE_ACCESS) with only the library version
 * bounds set, so the driver is whatever HDF5_DRIVER / HDF5_DRIVER_CONFIG select.
 *
 * Workloads (--workload):
 *   append  appends rows to one dataset per --dsets entry (chunk index types single,
 *           implicit, farray, earray, btree2, btree1; ':z' adds deflate)
 *   grow    grows, shrinks and regrows two- and three-dimensional datasets
 *   zoo     creates and deletes groups, datasets, attributes, links and a committed
 *           datatype, one scripted stage per step
 *
 * After each step it flushes (H5Fflush, or H5Dflush per dataset with --flush dset), then
 * rewrites FILE.progress atomically with the step and the CLOCK_MONOTONIC time of every
 * flush so far; readers use it as the handshake and for latency. With --acks N (zoo) it then
 * waits until readers 0..N-1 have acknowledged the step. With --file2 it writes two files
 * in lockstep (the second with seed+1). With --existing it opens FILE read-write, checks
 * that it holds exactly the state after step first-step - 1, and continues from there.
 *
 * Exit status 0 on success; 1 with a message on stderr otherwise.
 */
#include "swmr_common.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    opts_t o; /* a copy with this file's seed */
    int index;
    hid_t fid;
    hid_t dids[SWMR_MAX_DSETS];
    int64_t *pub_ns;
} wfile_t;

/* --- data workloads -------------------------------------------------------------------------- */

static hid_t
create_dataset(wfile_t *w, const dspec_t *d)
{
    hsize_t dims[3];
    int64_t fill = SWMR_FILL;
    hid_t space, dcpl, did;
    char err[512];

    sched_shape(&w->o, d, -1, dims);
    if ((space = H5Screate_simple(d->rank, dims, d->maxdims)) < 0 || (dcpl = H5Pcreate(H5P_DATASET_CREATE)) < 0 ||
        H5Pset_chunk(dcpl, d->rank, d->chunk) < 0 || H5Pset_fill_value(dcpl, H5T_NATIVE_INT64, &fill) < 0 ||
        (d->alloc != H5D_ALLOC_TIME_DEFAULT && H5Pset_alloc_time(dcpl, d->alloc) < 0) ||
        (d->deflate && H5Pset_deflate(dcpl, 6) < 0))
        swmr_h5fail("%s: cannot set up dataset %s", w->o.file[w->index], d->name);
    if ((did = H5Dcreate2(w->fid, d->name, H5T_STD_I64LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT)) < 0)
        swmr_h5fail("%s: cannot create dataset %s", w->o.file[w->index], d->name);
    if (check_dataset(did, d, err, sizeof err) < 0)
        swmr_fail("%s: %s", w->o.file[w->index], err);
    H5Pclose(dcpl);
    H5Sclose(space);
    return did;
}

/* An existing file must hold exactly the state after step first_step - 1. */
static void
check_existing(wfile_t *w, const dspec_t *d, hid_t did)
{
    model_t mo, scratch = {0};
    mismatch_t mm;
    hsize_t dims[3] = {1, 1, 1};
    hid_t space = H5Dget_space(did);
    int64_t *buf;
    char msg[1024];
    int r;

    if (space < 0 || H5Sget_simple_extent_dims(space, dims, NULL) != d->rank)
        swmr_h5fail("cannot get the extent of %s", d->name);
    buf = xcalloc(box_elems(d->rank, dims), sizeof(int64_t));
    if (box_elems(d->rank, dims) && H5Dread(did, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0)
        swmr_h5fail("cannot read %s", d->name);
    model_init(&mo, &w->o, d);
    r = model_match(&mo, &scratch, dims, buf, w->o.first_step - 1, &mm);
    if (r < 0) {
        describe_mismatch(&mo, &mm, msg, sizeof msg);
        swmr_fail("existing file %s does not hold the state after step %d: %s", w->o.file[w->index],
                  w->o.first_step - 1, msg);
    }
    if (r == 0 || mo.m != w->o.first_step - 1)
        swmr_fail("existing file %s: dataset %s holds the state of step %d%s, expected step %d complete",
                  w->o.file[w->index], d->name, mo.m, r ? "" : " (incomplete)", w->o.first_step - 1);
    model_free(&mo);
    model_free(&scratch);
    free(buf);
    H5Sclose(space);
}

static void
data_step(wfile_t *w, int s)
{
    for (int i = 0; i < w->o.ndsets; i++) {
        const dspec_t *d = &w->o.dsets[i];
        hid_t did = w->dids[i];
        hsize_t old[3], now[3];
        box_t boxes[SWMR_MAX_BOXES];
        int nb;

        sched_shape(&w->o, d, s - 1, old);
        sched_shape(&w->o, d, s, now);
        if (memcmp(old, now, sizeof old) && H5Dset_extent(did, now) < 0)
            swmr_h5fail("step %d: H5Dset_extent of %s failed", s, d->name);
        nb = sched_writes(&w->o, d, s, boxes);
        for (int b = 0; b < nb; b++) {
            const box_t *x = &boxes[b];
            size_t n = box_elems(3, x->count), k = 0;
            int64_t *buf = xcalloc(n, sizeof(int64_t));
            hid_t mspace, fspace;

            for (hsize_t i0 = x->start[0]; i0 < x->start[0] + x->count[0]; i0++)
                for (hsize_t i1 = x->start[1]; i1 < x->start[1] + x->count[1]; i1++)
                    for (hsize_t i2 = x->start[2]; i2 < x->start[2] + x->count[2]; i2++) {
                        hsize_t idx[3] = {i0, i1, i2};

                        buf[k++] = swmr_value(w->o.seed, d->id, idx, s);
                    }
            if ((mspace = H5Screate_simple(d->rank, x->count, NULL)) < 0 || (fspace = H5Dget_space(did)) < 0 ||
                H5Sselect_hyperslab(fspace, H5S_SELECT_SET, x->start, NULL, x->count, NULL) < 0 ||
                H5Dwrite(did, H5T_NATIVE_INT64, mspace, fspace, H5P_DEFAULT, buf) < 0)
                swmr_h5fail("step %d: writing %s failed", s, d->name);
            H5Sclose(mspace);
            H5Sclose(fspace);
            free(buf);
        }
    }
}

/* --- the zoo ------------------------------------------------------------------------------------ */

static void
zoo_dataset(hid_t loc, const char *name, hid_t ftype, hid_t mtype, int rank, const hsize_t *dims,
            const hsize_t *maxdims, hid_t dcpl, const void *buf)
{
    hid_t space = H5Screate_simple(rank, dims, maxdims), did;

    if (space < 0 || (did = H5Dcreate2(loc, name, ftype, space, H5P_DEFAULT, dcpl, H5P_DEFAULT)) < 0 ||
        H5Dwrite(did, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0 || H5Dclose(did) < 0)
        swmr_h5fail("zoo: cannot create and write dataset %s", name);
    H5Sclose(space);
}

static void
zoo_attr(hid_t loc, const char *name, hid_t ftype, hid_t mtype, int rank, const hsize_t *dims, const void *buf)
{
    hid_t space = rank ? H5Screate_simple(rank, dims, NULL) : H5Screate(H5S_SCALAR), aid;

    if (space < 0 || (aid = H5Acreate2(loc, name, ftype, space, H5P_DEFAULT, H5P_DEFAULT)) < 0 ||
        H5Awrite(aid, mtype, buf) < 0 || H5Aclose(aid) < 0)
        swmr_h5fail("zoo: cannot create attribute %s", name);
    H5Sclose(space);
}

static hid_t
xopen_group(hid_t fid, const char *path)
{
    hid_t g = H5Gopen2(fid, path, H5P_DEFAULT);

    if (g < 0)
        swmr_h5fail("zoo: cannot open group %s", path);
    return g;
}

static void
xdelete(hid_t loc, const char *name)
{
    if (H5Ldelete(loc, name, H5P_DEFAULT) < 0)
        swmr_h5fail("zoo: cannot delete link %s", name);
}

/* Groups PREFIX00 .. PREFIX(n-1) in g (whose path is path). */
static void
zoo_children(hid_t g, const char *path, const char *prefix, int n)
{
    char name[32];

    for (int i = 0; i < n; i++) {
        hid_t c;

        snprintf(name, sizeof name, "%s%02d", prefix, i);
        if ((c = H5Gcreate2(g, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) < 0)
            swmr_h5fail("zoo: cannot create %s/%s", path, name);
        H5Gclose(c);
    }
}

static void
zoo_step(wfile_t *w, int k)
{
    hid_t fid = w->fid, g, dcpl, t;
    char name[32];
    int i;

    switch (k) {
    case 0: {
        int32_t zero = 0;

        zoo_attr(fid, "stage", H5T_STD_I32LE, H5T_NATIVE_INT32, 0, NULL, &zero);
        break;
    }
    case 1:
        if ((g = H5Gcreate2(fid, "g1", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) < 0)
            swmr_h5fail("zoo: cannot create /g1");
        H5Gclose(g);
        break;
    case 2:
        g = xopen_group(fid, "g1");
        zoo_children(g, "/g1", "c", ZOO_NCHILD);
        H5Gclose(g);
        break;
    case 3: {
        int32_t contig[ZOO_CONTIG_N];
        int16_t compact[ZOO_COMPACT_N];
        hsize_t n1 = ZOO_CONTIG_N, n2 = ZOO_COMPACT_N;

        for (i = 0; i < ZOO_CONTIG_N; i++)
            contig[i] = zoo_contig(i);
        for (i = 0; i < ZOO_COMPACT_N; i++)
            compact[i] = zoo_compact(i);
        zoo_dataset(fid, "d_contig", H5T_STD_I32LE, H5T_NATIVE_INT32, 1, &n1, NULL, H5P_DEFAULT, contig);
        if ((dcpl = H5Pcreate(H5P_DATASET_CREATE)) < 0 || H5Pset_layout(dcpl, H5D_COMPACT) < 0)
            swmr_h5fail("zoo: compact layout");
        zoo_dataset(fid, "d_compact", H5T_STD_I16LE, H5T_NATIVE_INT16, 1, &n2, NULL, dcpl, compact);
        H5Pclose(dcpl);
        break;
    }
    case 4: {
        hsize_t dims[2] = {ZOO_CHUNKED_0, ZOO_CHUNKED_1}, chunk[2] = {5, 6};
        int64_t buf[ZOO_CHUNKED_0 * ZOO_CHUNKED_1];

        for (hsize_t a = 0; a < dims[0]; a++)
            for (hsize_t b = 0; b < dims[1]; b++) {
                hsize_t idx[3] = {a, b, 0};

                buf[a * dims[1] + b] = swmr_value(w->o.seed, ZOO_ID_CHUNKED, idx, 4);
            }
        if ((dcpl = H5Pcreate(H5P_DATASET_CREATE)) < 0 || H5Pset_chunk(dcpl, 2, chunk) < 0 ||
            H5Pset_deflate(dcpl, 6) < 0 || H5Pset_attr_phase_change(dcpl, 6, 4) < 0)
            swmr_h5fail("zoo: chunked dcpl");
        zoo_dataset(fid, "d_chunked", H5T_STD_I64LE, H5T_NATIVE_INT64, 2, dims, NULL, dcpl, buf);
        H5Pclose(dcpl);
        break;
    }
    case 5: {
        hsize_t three = 3;
        const char *title = ZOO_TITLE;

        g = xopen_group(fid, "g1");
        for (int a = 0; a < 4; a++) {
            int32_t v[3];

            for (int j = 0; j < 3; j++)
                v[j] = zoo_attr_a(a, j);
            snprintf(name, sizeof name, "a%d", a);
            zoo_attr(g, name, H5T_STD_I32LE, H5T_NATIVE_INT32, 1, &three, v);
        }
        if ((t = H5Tcopy(H5T_C_S1)) < 0 || H5Tset_size(t, H5T_VARIABLE) < 0)
            swmr_h5fail("zoo: string type");
        zoo_attr(g, "title", t, t, 0, NULL, &title);
        H5Tclose(t);
        H5Gclose(g);
        break;
    }
    case 6: {
        hid_t d = H5Dopen2(fid, "d_chunked", H5P_DEFAULT);
        hsize_t two = 2;

        if (d < 0)
            swmr_h5fail("zoo: open /d_chunked");
        for (int a = 0; a < ZOO_NBATTR; a++) {
            double v[2] = {a, a * 0.5};

            snprintf(name, sizeof name, "b%02d", a);
            zoo_attr(d, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 1, &two, v);
        }
        H5Dclose(d);
        break;
    }
    case 7:
        if (H5Lcreate_soft("/d_contig", fid, "g1/soft_contig", H5P_DEFAULT, H5P_DEFAULT) < 0 ||
            H5Lcreate_soft("/nowhere", fid, "g1/dangling", H5P_DEFAULT, H5P_DEFAULT) < 0 ||
            H5Lcreate_hard(fid, "g1/c00", fid, "hard_c00", H5P_DEFAULT, H5P_DEFAULT) < 0)
            swmr_h5fail("zoo: cannot create links");
        break;
    case 8: {
        hid_t ft = zoo_pair_file_type(), mt = zoo_pair_type();
        zoo_pair_t v[ZOO_TYPED_N], one = {7, 0.5};
        hsize_t n = ZOO_TYPED_N;

        if (H5Tcommit2(fid, "dtype", ft, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT) < 0)
            swmr_h5fail("zoo: cannot commit /dtype");
        for (i = 0; i < ZOO_TYPED_N; i++) {
            v[i].a = i;
            v[i].b = i * 1.5;
        }
        zoo_dataset(fid, "d_typed", ft, mt, 1, &n, NULL, H5P_DEFAULT, v);
        g = xopen_group(fid, "g1");
        zoo_attr(g, "t", ft, mt, 0, NULL, &one);
        H5Gclose(g);
        H5Tclose(ft);
        H5Tclose(mt);
        break;
    }
    case 9:
        g = xopen_group(fid, "g1");
        for (i = ZOO_NKEEP; i < ZOO_NCHILD; i++) {
            snprintf(name, sizeof name, "c%02d", i);
            xdelete(g, name);
        }
        H5Gclose(g);
        break;
    case 10: {
        hid_t d = H5Dopen2(fid, "d_chunked", H5P_DEFAULT);

        if (d < 0)
            swmr_h5fail("zoo: open /d_chunked");
        for (int a = ZOO_NBKEEP; a < ZOO_NBATTR; a++) {
            snprintf(name, sizeof name, "b%02d", a);
            if (H5Adelete(d, name) < 0)
                swmr_h5fail("zoo: cannot delete attribute %s", name);
        }
        H5Dclose(d);
        if (H5Adelete_by_name(fid, "g1", "a1", H5P_DEFAULT) < 0)
            swmr_h5fail("zoo: cannot delete /g1@a1");
        break;
    }
    case 11:
        xdelete(fid, "d_compact");
        xdelete(fid, "g1/soft_contig");
        xdelete(fid, "hard_c00");
        break;
    case 12:
        if (H5Adelete_by_name(fid, "g1", "t", H5P_DEFAULT) < 0)
            swmr_h5fail("zoo: cannot delete /g1@t");
        xdelete(fid, "d_typed");
        xdelete(fid, "dtype");
        xdelete(fid, "g1/dangling");
        break;
    case 13:
        xdelete(fid, "g1");
        break;
    case 14: {
        hsize_t n = ZOO_G2D_N, max = H5S_UNLIMITED, chunk = 10;
        int64_t buf[ZOO_G2D_N];

        if ((g = H5Gcreate2(fid, "g2", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) < 0)
            swmr_h5fail("zoo: cannot create /g2");
        zoo_children(g, "/g2", "e", ZOO_NG2);
        for (i = 0; i < ZOO_G2D_N; i++) {
            hsize_t idx[3] = {(hsize_t)i, 0, 0};

            buf[i] = swmr_value(w->o.seed, ZOO_ID_G2D, idx, 14);
        }
        if ((dcpl = H5Pcreate(H5P_DATASET_CREATE)) < 0 || H5Pset_chunk(dcpl, 1, &chunk) < 0)
            swmr_h5fail("zoo: g2/d dcpl");
        zoo_dataset(g, "d", H5T_STD_I64LE, H5T_NATIVE_INT64, 1, &n, &max, dcpl, buf);
        H5Pclose(dcpl);
        H5Gclose(g);
        break;
    }
    default:
        swmr_fail("zoo: no stage %d", k);
    }
    /* the stage marker, last */
    {
        int32_t v = k;
        hid_t aid = H5Aopen(fid, "stage", H5P_DEFAULT);

        if (aid < 0 || H5Awrite(aid, H5T_NATIVE_INT32, &v) < 0 || H5Aclose(aid) < 0)
            swmr_h5fail("zoo: cannot update the stage marker");
    }
}

/* --- main ----------------------------------------------------------------------------------------- */

static void
wait_acks(const opts_t *o, int s)
{
    int64_t deadline = now_ns() + (int64_t)(o->timeout_s * 1e9);

    for (int i = 0; i < o->acks; i++) {
        for (;;) {
            bool failed;
            int a = ack_read(o->file[0], i, &failed);

            if (failed)
                swmr_fail("reader %d reported a failure while the writer waited at step %d", i, s);
            if (a >= s)
                break;
            if (now_ns() > deadline)
                swmr_fail("reader %d did not acknowledge step %d within %.0f s (its last acknowledgement: %d)", i, s,
                          o->timeout_s, a);
            vfdswmr_sleep(0.0005);
        }
    }
}

int
main(int argc, char **argv)
{
    opts_t o;
    wfile_t w[2];
    int64_t t_start = now_ns();

    swmr_parse(&o, argc, argv, true);
    if (o.existing && o.first_step == 0)
        swmr_fail("--existing needs --first-step K > 0 (the file holds steps 0..K-1)");
    if (!o.existing && o.first_step != 0)
        swmr_fail("--first-step needs --existing");
    for (int f = 0; f < o.nfiles; f++) {
        hid_t fapl;
        unsigned flags;

        memset(&w[f], 0, sizeof w[f]);
        w[f].o = o;
        w[f].o.seed += (uint64_t)f;
        w[f].index = f;
        w[f].pub_ns = xcalloc((size_t)o.steps, sizeof(int64_t));
        if ((fapl = H5Pcreate(H5P_FILE_ACCESS)) < 0 ||
            H5Pset_libver_bounds(fapl, o.earliest ? H5F_LIBVER_EARLIEST : H5F_LIBVER_LATEST, H5F_LIBVER_LATEST) < 0)
            swmr_h5fail("cannot set up the file access property list");
        if (o.existing) {
            flags = H5F_ACC_RDWR | (o.swmr ? H5F_ACC_SWMR_WRITE : 0);
            w[f].fid = H5Fopen(o.file[f], flags, fapl);
        }
        else {
            hid_t fcpl = H5Pcreate(H5P_FILE_CREATE);
            /* Never reuse freed space (README, "Rewriting chunks"): HDF5 would otherwise put a
             * rewritten compressed chunk where readers with an older snapshot look for another. */
            if (fcpl < 0 || (o.no_space_reuse && H5Pset_file_space_strategy(fcpl, H5F_FSPACE_STRATEGY_NONE, 0, 1) < 0))
                swmr_h5fail("cannot set up the file creation property list");
            flags = H5F_ACC_TRUNC | (o.swmr ? H5F_ACC_SWMR_WRITE : 0);
            w[f].fid = H5Fcreate(o.file[f], flags, fcpl, fapl);
            H5Pclose(fcpl);
        }
        if (w[f].fid < 0)
            swmr_h5fail("cannot %s %s (flags 0x%x)", o.existing ? "open" : "create", o.file[f], flags);
        H5Pclose(fapl);
        for (int i = 0; i < o.ndsets; i++) {
            if (o.existing) {
                char err[512];

                if ((w[f].dids[i] = H5Dopen2(w[f].fid, o.dsets[i].name, H5P_DEFAULT)) < 0)
                    swmr_h5fail("%s: cannot open dataset %s", o.file[f], o.dsets[i].name);
                if (check_dataset(w[f].dids[i], &w[f].o.dsets[i], err, sizeof err) < 0)
                    swmr_fail("%s: %s", o.file[f], err);
                check_existing(&w[f], &w[f].o.dsets[i], w[f].dids[i]);
            }
            else
                w[f].dids[i] = create_dataset(&w[f], &w[f].o.dsets[i]);
        }
        if (H5Fflush(w[f].fid, H5F_SCOPE_GLOBAL) < 0)
            swmr_h5fail("cannot flush %s after setup", o.file[f]);
        if (!o.existing) /* a reader may start before or with us: it must not see an old file */
            progress_write(o.progress[f], -1, false, w[f].pub_ns, o.steps);
    }
    for (int f = 0; f < o.nfiles && o.existing; f++)
        progress_write(o.progress[f], o.first_step - 1, false, w[f].pub_ns, o.steps);

    for (int s = o.first_step; s <= o.last_step; s++) {
        int64_t t;

        for (int f = 0; f < o.nfiles; f++) {
            if (o.workload == W_ZOO)
                zoo_step(&w[f], s);
            else
                data_step(&w[f], s);
        }
        for (int f = 0; f < o.nfiles; f++) {
            if (o.flush_dset && o.workload != W_ZOO) {
                for (int i = 0; i < o.ndsets; i++)
                    if (H5Dflush(w[f].dids[i]) < 0)
                        swmr_h5fail("step %d: H5Dflush of %s failed", s, o.dsets[i].name);
            }
            else if (H5Fflush(w[f].fid, H5F_SCOPE_GLOBAL) < 0)
                swmr_h5fail("step %d: H5Fflush of %s failed", s, o.file[f]);
        }
        t = now_ns();
        for (int f = 0; f < o.nfiles; f++) {
            w[f].pub_ns[s] = t;
            progress_write(o.progress[f], s, false, w[f].pub_ns, o.steps);
        }
        if (o.acks)
            wait_acks(&o, s);
        if (o.interval_ms && s < o.last_step)
            vfdswmr_sleep(o.interval_ms * 1e-3);
    }

    for (int f = 0; f < o.nfiles; f++) {
        for (int i = 0; i < o.ndsets; i++)
            if (H5Dclose(w[f].dids[i]) < 0)
                swmr_h5fail("cannot close dataset %s", o.dsets[i].name);
        if (H5Fclose(w[f].fid) < 0)
            swmr_h5fail("cannot close %s", o.file[f]);
        progress_write(o.progress[f], o.last_step, true, w[f].pub_ns, o.steps);
        free(w[f].pub_ns);
    }
    printf("writer %s: %s steps %d..%d of %d on %d file(s), %d dataset(s) each, %.2f s\n", o.name,
           o.workload == W_ZOO    ? "zoo"
           : o.workload == W_GROW ? "grow"
                                  : "append",
           o.first_step, o.last_step, o.steps, o.nfiles, o.ndsets, (double)(now_ns() - t_start) / 1e9);
    return 0;
}
