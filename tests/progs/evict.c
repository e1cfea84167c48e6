/*
 * evict: consistency points under metadata cache pressure.
 *
 *   evict write FILE GROUPS PER_GROUP BATCH   the writer: a tiny metadata cache
 *       (so HDF5 evicts, writing parts of objects between flushes), GROUPS
 *       groups of PER_GROUP datasets each, every dataset with data and an
 *       attribute; H5Gflush of the group after every dataset (an object flush,
 *       which without SWMR-write mode is no consistency point: a driver must
 *       not publish there), H5Fflush after every BATCH datasets and at the
 *       end. It
 *       paces itself (3 ms per dataset) so that ticks end in the middle of
 *       batches: a writer driver that published anything but flushed states
 *       would be caught.
 *   evict read FILE GROUPS PER_GROUP BATCH    a reader: walks the whole file
 *       over and over until it has seen every dataset. Each walk sees one
 *       snapshot: it refreshes the root group, which stays open, once
 *       (adopting the newest snapshot) and opens everything below afresh
 *       (evict-on-close, no further refresh). A walk whose HDF5 calls fail
 *       because the reader fell behind (a loaded machine) proves nothing and
 *       is repeated (200 in a row fail). The number of datasets a walk sees must be a
 *       multiple of BATCH -- only flushed states may be published, never one
 *       in the middle of a batch -- and every dataset and attribute seen must
 *       hold exactly its values.
 *
 * Ordinary HDF5 programs: the driver comes from the environment. Exit 0 on
 * success, 1 with a message otherwise.
 */
#include <hdf5.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"

#define N 40 /* elements per dataset */

#define CHECK(cond, ...)                            \
    do {                                            \
        if (!(cond)) {                              \
            fprintf(stderr, "evict: " __VA_ARGS__); \
            fputc('\n', stderr);                    \
            exit(1);                                \
        }                                           \
    } while (0)

static int
value(int ds, int i)
{
    return ds * 1000 + i * 7 + 1;
}

static int
writer(const char *path, int groups, int per_group, int batch)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS), file, space, aspace;
    H5AC_cache_config_t mdc = {.version = H5AC__CURR_CACHE_CONFIG_VERSION};
    hsize_t n = N;
    int buf[N], count = 0;

    CHECK(H5Pget_mdc_config(fapl, &mdc) >= 0, "cannot read the cache configuration");
    mdc.set_initial_size = 1;
    mdc.initial_size = 16 * 1024;
    mdc.min_size = 16 * 1024;
    mdc.max_size = 16 * 1024;
    mdc.incr_mode = H5C_incr__off;
    mdc.flash_incr_mode = H5C_flash_incr__off;
    mdc.decr_mode = H5C_decr__off;
    CHECK(H5Pset_mdc_config(fapl, &mdc) >= 0, "cannot set a tiny metadata cache");
    file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    CHECK(file >= 0, "cannot create %s", path);
    space = H5Screate_simple(1, &n, NULL);
    aspace = H5Screate(H5S_SCALAR);
    CHECK(H5Fflush(file, H5F_SCOPE_GLOBAL) >= 0, "flush failed");
    for (int g = 0; g < groups; g++) {
        char name[32];
        snprintf(name, sizeof name, "g%03d", g);
        hid_t grp = H5Gcreate2(file, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        CHECK(grp >= 0, "cannot create group %s", name);
        for (int k = 0; k < per_group; k++, count++) {
            for (int i = 0; i < N; i++)
                buf[i] = value(count, i);
            snprintf(name, sizeof name, "d%05d", count);
            hid_t d = H5Dcreate2(grp, name, H5T_NATIVE_INT, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
            CHECK(d >= 0 && H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) >= 0, "cannot write %s",
                  name);
            hid_t a = H5Acreate2(d, "index", H5T_NATIVE_INT, aspace, H5P_DEFAULT, H5P_DEFAULT);
            CHECK(a >= 0 && H5Awrite(a, H5T_NATIVE_INT, &count) >= 0, "cannot write attribute of %s", name);
            H5Aclose(a);
            H5Dclose(d);
            CHECK(H5Gflush(grp) >= 0, "group flush failed");
            if ((count + 1) % batch == 0)
                CHECK(H5Fflush(file, H5F_SCOPE_GLOBAL) >= 0, "flush failed");
            vfdswmr_sleep(0.003);
        }
        H5Gclose(grp);
    }
    CHECK(H5Fflush(file, H5F_SCOPE_GLOBAL) >= 0, "flush failed");
    H5Sclose(space);
    H5Sclose(aspace);
    H5Pclose(fapl);
    CHECK(H5Fclose(file) >= 0, "close failed");
    printf("writer: %d datasets in %d groups\n", count, groups);
    return 0;
}

struct walk {
    int count;   /* datasets seen in this walk */
    bool behind; /* an HDF5 call failed because the reader fell behind */
    int buf[N];
};

static herr_t
find_behind(unsigned n, const H5E_error2_t *e, void *data)
{
    (void)n;
    if (e->desc && strstr(e->desc, "fell behind"))
        *(bool *)data = true;
    return 0;
}

/* Did the HDF5 call that just failed fail because the reader fell behind? */
static bool
fell_behind(void)
{
    bool behind = false;

    H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, find_behind, &behind);
    return behind;
}

/* CHECK for an HDF5 call of a walk: when it failed because the reader fell
 * behind, the walk stops (the iteration callback returns 1) instead. */
#define CHECK_CALL(w, cond, ...)       \
    do {                               \
        if (!(cond)) {                 \
            if (fell_behind()) {       \
                (w)->behind = true;    \
                return 1;              \
            }                          \
            CHECK(false, __VA_ARGS__); \
        }                              \
    } while (0)

/* Verify one dataset (called for every link of every group). */
static herr_t
visit_dataset(hid_t grp, const char *name, const H5L_info2_t *info, void *data)
{
    struct walk *w = data;
    int idx = -1, ds = atoi(name + 1);
    hid_t d, a;

    (void)info;
    d = H5Dopen2(grp, name, H5P_DEFAULT);
    CHECK_CALL(w, d >= 0, "a link %s is visible but the dataset cannot be opened", name);
    if (H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, w->buf) < 0) {
        bool behind = fell_behind(); /* before H5Dclose empties the error stack */
        H5Dclose(d);
        if (behind) {
            w->behind = true;
            return 1;
        }
        CHECK(false, "cannot read %s", name);
    }
    for (int i = 0; i < N; i++)
        CHECK(w->buf[i] == value(ds, i), "%s[%d] = %d, expected %d", name, i, w->buf[i], value(ds, i));
    a = H5Aopen(d, "index", H5P_DEFAULT);
    if (a < 0 || H5Aread(a, H5T_NATIVE_INT, &idx) < 0) {
        bool behind = fell_behind();
        if (a >= 0)
            H5Aclose(a);
        H5Dclose(d);
        if (behind) {
            w->behind = true;
            return 1;
        }
        CHECK(false, "attribute of %s missing", name);
    }
    CHECK(idx == ds, "attribute of %s is %d", name, idx);
    H5Aclose(a);
    H5Dclose(d);
    w->count++;
    return 0;
}

static herr_t
visit_group(hid_t file, const char *name, const H5L_info2_t *info, void *data)
{
    struct walk *w = data;
    hid_t g = H5Gopen2(file, name, H5P_DEFAULT);
    herr_t rc;

    (void)info;
    CHECK_CALL(w, g >= 0, "a link %s is visible but the group cannot be opened", name);
    rc = H5Literate2(g, H5_INDEX_NAME, H5_ITER_INC, NULL, visit_dataset, data);
    w->behind = w->behind || (rc < 0 && fell_behind()); /* before H5Gclose empties the error stack */
    H5Gclose(g);
    if (w->behind)
        return 1;
    CHECK(rc >= 0, "cannot list %s", name);
    return 0;
}

static int
reader(const char *path, int groups, int per_group, int batch)
{
    int total = groups * per_group;
    hid_t file = H5I_INVALID_HID, fapl = H5Pcreate(H5P_FILE_ACCESS);
    double t0 = vfdswmr_now();
    int walks = 0, last = -1, states = 0, behind = 0;
    hid_t root = H5I_INVALID_HID;

    for (;;) {
        CHECK(vfdswmr_now() - t0 < 120, "timed out: saw %d of %d datasets after %d walks", last, total, walks);
        if (file < 0) {
            CHECK(H5Pset_evict_on_close(fapl, true) >= 0, "cannot set evict-on-close");
            H5E_BEGIN_TRY
            {
                file = H5Fopen(path, H5F_ACC_RDONLY, fapl);
            }
            H5E_END_TRY
            if (file < 0) {
                vfdswmr_sleep(0.02);
                continue;
            }
            /* stays open: a reader that fell behind could not open it again */
            CHECK((root = H5Gopen2(file, "/", H5P_DEFAULT)) >= 0, "cannot open the root group");
        }
        struct walk w = {0};
        CHECK(H5Grefresh(root) >= 0, "cannot refresh the root group");
        herr_t rc = H5Literate2(root, H5_INDEX_NAME, H5_ITER_INC, NULL, visit_group, &w);
        if (w.behind) {
            CHECK(++behind < 200, "200 walks in a row fell behind the writer");
            continue;
        }
        CHECK(rc >= 0, "cannot list the root group");
        behind = 0;
        walks++;
        CHECK(w.count % batch == 0 || w.count == total,
              "saw %d datasets: not a multiple of the batch %d -- a state between flushes was published", w.count,
              batch);
        CHECK(w.count >= last, "went back from %d to %d datasets", last, w.count);
        states += w.count != last;
        last = w.count;
        if (last == total)
            break;
    }
    printf("reader: %d walks, %d distinct states, all %d datasets verified\n", walks, states, total);
    H5Pclose(fapl);
    H5Gclose(root);
    return H5Fclose(file) < 0;
}

int
main(int argc, char **argv)
{
    if (argc == 6 && !strcmp(argv[1], "write"))
        return writer(argv[2], atoi(argv[3]), atoi(argv[4]), atoi(argv[5]));
    if (argc == 6 && !strcmp(argv[1], "read"))
        return reader(argv[2], atoi(argv[3]), atoi(argv[4]), atoi(argv[5]));
    fprintf(stderr, "usage: evict write|read FILE GROUPS PER_GROUP BATCH\n");
    return 2;
}
