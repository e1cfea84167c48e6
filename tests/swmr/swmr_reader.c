/*
 * swmr_reader: a reader of the SWMR integration tests. An ordinary HDF5 program: it opens the
 * file with H5F_ACC_RDONLY (plus H5F_ACC_SWMR_READ with --swmr) and a file access property
 * list from H5Pcreate(H5P_FILE_ACCESS) (evict-on-close with --evict-on-close), so the driver
 * is whatever HDF5_DRIVER / HDF5_DRIVER_CONFIG select.
 *
 * It retries H5Fopen until the file exists and opens (so it may start before the writer),
 * then loops until it has seen the state after step --last-step (default: the last step):
 *
 *  append/grow: H5Drefresh, H5Dget_space, H5Dread of every dataset, and a check of every
 *    element against the model of the writer's schedule (swmr_common.h, "expected-state
 *    model"): the observation must be the state after some step u, no earlier than the step
 *    seen before, at most one step past the step the writer has announced in FILE.progress;
 *    only elements written by step u itself may still show their previous value, only
 *    in-place writes of later steps may show early, and no element ever goes back.
 *  zoo: H5Grefresh of the root group, read the stage marker, verify the whole file against
 *    that stage (every object present or absent as the stage says, link storage compact or
 *    dense, attribute storage, every value), refreshing every object before reading it;
 *    then refresh the root again and re-read the marker. An inconsistency while the marker
 *    moved is a view straddling two stages: try again. An inconsistency with an unchanged
 *    marker fails (unless --lenient). With --ack-id it acknowledges every verified stage.
 *
 * At the end it prints
 *   latency_ticks p50=.. p99=.. max=.. n=..
 * over the steps the writer published after this reader was ready: the time from the
 * writer's flush (FILE.progress) to this reader first seeing the step, in ticks of
 * --tick-len tenths of a second. Exit status 0 when every check passed; 1 with a message
 * on stderr otherwise (after HDF5's error stack where that helps).
 */
#include "swmr_common.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const dspec_t *d;
    model_t mo, scratch;
    hid_t did;
    int64_t *obs;
    hsize_t dims[3];
    int complete; /* 1: all of step mo.m visible */
    int transitions;
} rds_t;

static opts_t o;
static int64_t t_start, t_ready, deadline;
static int64_t *seen_ns; /* [steps]: when this reader first saw each step */
static long polls;

/* --- common ------------------------------------------------------------------------------------- */

/* Open the file and its root group, retrying until both succeed: the file may not exist
 * yet, or exist without a root group yet (only the superblock is written at H5Fcreate). */
static hid_t
open_file_retry(unsigned flags, hid_t fapl, long *attempts, hid_t *root)
{
    hid_t fid = -1;

    for (*attempts = 1;; ++*attempts) {
        H5E_BEGIN_TRY
        {
            if ((fid = H5Fopen(o.file[0], flags, fapl)) >= 0 && (*root = H5Gopen2(fid, "/", H5P_DEFAULT)) < 0) {
                H5Fclose(fid);
                fid = -1;
            }
        }
        H5E_END_TRY
        if (fid >= 0)
            return fid;
        if (now_ns() > deadline) {
            /* once more, with the error stack printed */
            if ((fid = H5Fopen(o.file[0], flags, fapl)) < 0)
                swmr_h5fail("cannot open %s within %.0f s (%ld attempts)", o.file[0], o.timeout_s, *attempts);
            if ((*root = H5Gopen2(fid, "/", H5P_DEFAULT)) < 0)
                swmr_h5fail("cannot open the root group of %s within %.0f s (%ld attempts)", o.file[0], o.timeout_s,
                            *attempts);
            return fid;
        }
        vfdswmr_sleep(0.002);
    }
}

static int
progress_step(progress_t *p)
{
    if (!progress_read(o.progress[0], p, o.steps))
        return -1;
    return p->step;
}

static int
cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

    return x < y ? -1 : x > y;
}

/* Wait until the writer has announced step last (so that its flush time is known), then
 * print the latency line. */
static void
report_latency(const char *unit)
{
    progress_t p = {0};
    int64_t *lat = xcalloc((size_t)o.steps, sizeof(int64_t));
    int n = 0, step = -1;
    double tick_ns = o.tick_len * 1e8;

    while ((step = progress_step(&p)) < o.last_step) {
        if (now_ns() > deadline)
            swmr_fail("saw %s %d, but the writer never announced it (progress: %d)", unit, o.last_step, step);
        vfdswmr_sleep(0.001);
    }
    for (int s = 0; s <= o.last_step; s++) {
        if (!p.pub_ns[s] || !seen_ns[s] || p.pub_ns[s] < t_ready)
            continue;
        lat[n++] = seen_ns[s] > p.pub_ns[s] ? seen_ns[s] - p.pub_ns[s] : 0;
    }
    qsort(lat, (size_t)n, sizeof lat[0], cmp_i64);
    if (n) {
        /* nearest rank: the ceil(q * n)-th smallest */
        size_t i50 = ((size_t)n * 50 + 99) / 100 - 1, i99 = ((size_t)n * 99 + 99) / 100 - 1;

        printf("latency_ticks p50=%.3f p99=%.3f max=%.3f n=%d\n", lat[i50] / tick_ns, lat[i99] / tick_ns,
               lat[n - 1] / tick_ns, n);
        printf("latency_ms p50=%.3f p99=%.3f max=%.3f (tick_len=%d)\n", lat[i50] / 1e6, lat[i99] / 1e6,
               lat[n - 1] / 1e6, o.tick_len);
        if (o.max_latency_ticks > 0 && lat[n - 1] / tick_ns > o.max_latency_ticks)
            swmr_fail("latency %.3f ticks exceeds the bound of %.0f ticks", lat[n - 1] / tick_ns, o.max_latency_ticks);
    }
    else
        printf("latency_ticks p50=- p99=- max=- n=0 (nothing published while this reader read)\n");
    free(lat);
    progress_free(&p);
}

/* --- append and grow --------------------------------------------------------------------------- */

/* Unusable polls: torn observations (both modes), reads the driver refused because this reader
 * fell behind (both modes), and, with --tolerate-transient, other failed reads
 * and misfits. Each is retried at the next poll; too many in a row fail. */
#define MAX_BAD_STREAK 100
static long torn_polls, transient_polls, bad_streak;
static char bad_msg[1024];

/* Did the driver refuse a read because this reader fell behind (its snapshot
 * released, e.g. by a closing writer, on a slow machine)? Such a poll proves
 * nothing; the next one refreshes to the newest snapshot. */
static bool
released(const char *h5_errors)
{
    return strstr(h5_errors, "fell behind") != NULL;
}

static void bad_poll(bool torn, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
bad_poll(bool torn, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(bad_msg, sizeof bad_msg, fmt, ap);
    va_end(ap);
    if (torn)
        torn_polls++;
    else
        transient_polls++;
    if (++bad_streak >= MAX_BAD_STREAK)
        swmr_fail("poll %ld: %ld unusable observations in a row (torn or failed reads); the last: %s", polls,
                  bad_streak, bad_msg);
}

static void
describe_states(rds_t *r, char *buf, size_t n)
{
    size_t len = 0;

    buf[0] = '\0';
    for (int i = 0; i < o.ndsets && len < n; i++) {
        int w = snprintf(buf + len, n - len, "%s%s: step %d%s extent [%llu,%llu,%llu]", i ? "; " : "", r[i].d->name,
                         r[i].mo.m, r[i].complete ? "" : " (incomplete)", (unsigned long long)r[i].dims[0],
                         (unsigned long long)r[i].dims[1], (unsigned long long)r[i].dims[2]);
        if (w > 0)
            len += (size_t)w;
    }
}

static void
run_data(hid_t fid, hid_t root)
{
    rds_t *r = xcalloc((size_t)o.ndsets, sizeof *r);
    progress_t p = {0};
    char msg[2048], states[2048];
    int announced = -1, overall = -1, distinct = 0, last_overall = -2;
    bool bad;

    for (int i = 0; i < o.ndsets; i++) {
        r[i].d = &o.dsets[i];
        r[i].did = -1;
        model_init(&r[i].mo, &o, r[i].d);
        r[i].obs = xcalloc(box_elems(3, r[i].d->box), sizeof(int64_t));
    }
    for (;;) {
        bool all_open = true;

        polls++;
        for (int i = 0; i < o.ndsets; i++) {
            if (r[i].did >= 0)
                continue;
            H5E_BEGIN_TRY
            {
                r[i].did = H5Dopen2(fid, r[i].d->name, H5P_DEFAULT);
            }
            H5E_END_TRY
            if (r[i].did < 0) {
                all_open = false;
                continue;
            }
            if (check_dataset(r[i].did, r[i].d, msg, sizeof msg) < 0)
                swmr_fail("%s", msg);
        }
        if (!all_open) {
            herr_t rc;

            /* not visible yet: objects created after we opened need a refresh of their parent */
            H5E_BEGIN_TRY
            {
                rc = H5Grefresh(root);
            }
            H5E_END_TRY
            if (rc < 0)
                transient_polls++;
            if (now_ns() > deadline) {
                size_t len = 0;

                msg[0] = '\0';
                for (int i = 0; i < o.ndsets; i++)
                    if (r[i].did < 0 && len < sizeof msg)
                        len += (size_t)snprintf(msg + len, sizeof msg - len, " %s", r[i].d->name);
                swmr_fail("these datasets never appeared in %s within %.0f s (H5Dopen2 after H5Grefresh of "
                          "the root group):%s",
                          o.file[0], o.timeout_s, msg);
            }
            vfdswmr_sleep((o.poll_us > 1000 ? o.poll_us : 1000) * 1e-6);
            continue;
        }
        if (!t_ready)
            t_ready = now_ns();
        bad = false;
        for (int i = 0; i < o.ndsets && !bad; i++) {
            hid_t space;
            int rank = -1;
            herr_t rc;

            r[i].dims[0] = r[i].dims[1] = r[i].dims[2] = 1;
            if (o.tolerate_transient) {
                H5E_BEGIN_TRY
                {
                    rc = H5Drefresh(r[i].did);
                }
                H5E_END_TRY
            }
            else
                rc = H5Drefresh(r[i].did);
            if (rc < 0) {
                h5_error_string(msg, sizeof msg);
                if (!o.tolerate_transient && !released(msg))
                    swmr_h5fail("H5Drefresh of %s failed", r[i].d->name);
                bad_poll(false, "H5Drefresh of %s failed: %s", r[i].d->name, msg);
                bad = true;
                break;
            }
            if ((space = H5Dget_space(r[i].did)) < 0 || (rank = H5Sget_simple_extent_dims(space, r[i].dims, NULL)) < 0)
                swmr_h5fail("cannot get the extent of %s", r[i].d->name);
            H5Sclose(space);
            if (rank != r[i].d->rank)
                swmr_fail("dataset %s has rank %d, expected %d", r[i].d->name, rank, r[i].d->rank);
            for (int k = 0; k < rank; k++)
                if (r[i].dims[k] > r[i].d->box[k])
                    swmr_fail("dataset %s: extent %llu in dimension %d exceeds %llu, the largest of "
                              "the whole schedule",
                              r[i].d->name, (unsigned long long)r[i].dims[k], k, (unsigned long long)r[i].d->box[k]);
            if (!box_elems(rank, r[i].dims))
                continue;
            if (o.tolerate_transient) {
                H5E_BEGIN_TRY
                {
                    rc = H5Dread(r[i].did, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, r[i].obs);
                }
                H5E_END_TRY
            }
            else
                rc = H5Dread(r[i].did, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, r[i].obs);
            if (rc < 0) {
                h5_error_string(msg, sizeof msg);
                if (!o.tolerate_transient && !released(msg))
                    swmr_h5fail("H5Dread of %s failed (extent [%llu,%llu,%llu])", r[i].d->name,
                                (unsigned long long)r[i].dims[0], (unsigned long long)r[i].dims[1],
                                (unsigned long long)r[i].dims[2]);
                bad_poll(false, "H5Dread of %s failed: %s", r[i].d->name, msg);
                bad = true;
            }
        }
        if (bad) {
            if (o.poll_us)
                vfdswmr_sleep(o.poll_us * 1e-6);
            continue;
        }
        /* read after the data: what we saw was written at most one step past this */
        announced = progress_step(&p);
        overall = o.steps;
        for (int i = 0; i < o.ndsets; i++) {
            mismatch_t mm;
            int before = r[i].mo.m, was = r[i].complete;
            int limit = announced + 1 < o.steps - 1 ? announced + 1 : o.steps - 1;
            int rc = model_match(&r[i].mo, &r[i].scratch, r[i].dims, r[i].obs, limit, &mm);

            if (rc == -2 || (rc == -1 && o.tolerate_transient)) {
                /* unusable observation of this dataset: keep its state */
                describe_mismatch(&r[i].mo, &mm, msg, sizeof msg);
                bad_poll(rc == -2, "%s", msg);
                bad = true;
                rc = r[i].complete;
            }
            else if (rc < 0) {
                char again[160] = "";

                describe_mismatch(&r[i].mo, &mm, msg, sizeof msg);
                if (mm.mismatch) {
                    /* diagnosis: read once more, without a refresh: a transient (torn) read or not? */
                    size_t k = (size_t)((mm.idx[0] * r[i].dims[1] + mm.idx[1]) * (r[i].d->rank < 3 ? 1 : r[i].dims[2]) +
                                        mm.idx[2]);
                    int64_t *buf = xcalloc(box_elems(r[i].d->rank, r[i].dims), sizeof(int64_t));

                    if (H5Dread(r[i].did, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) >= 0)
                        snprintf(again, sizeof again, "; read again at once: %" PRId64 "%s", buf[k],
                                 buf[k] == r[i].obs[k] ? " (the same)" : " (changed)");
                    free(buf);
                }
                swmr_fail("poll %ld: %s (previously seen: step %d%s; writer announced step %d%s)%s", polls, msg, before,
                          was ? "" : " incomplete", announced, p.done ? ", done" : "", again);
            }
            r[i].complete = rc;
            if (r[i].mo.m != before || rc != was)
                r[i].transitions++;
            if ((rc ? r[i].mo.m : r[i].mo.m - 1) < overall)
                overall = rc ? r[i].mo.m : r[i].mo.m - 1;
        }
        if (!bad)
            bad_streak = 0;
        if (overall != last_overall) {
            int64_t t = now_ns();

            distinct++;
            for (int s = overall; s >= 0 && !seen_ns[s]; s--)
                seen_ns[s] = t;
            last_overall = overall;
        }
        if (overall >= o.last_step)
            break;
        if (now_ns() > deadline) {
            describe_states(r, states, sizeof states);
            swmr_fail("timeout after %.0f s waiting for step %d: last seen %s; writer announced step %d%s", o.timeout_s,
                      o.last_step, states, announced, p.done ? " and closed the file" : "");
        }
        if (o.poll_us)
            vfdswmr_sleep(o.poll_us * 1e-6);
    }
    describe_states(r, states, sizeof states);
    printf("reader %s: OK: %s; %ld polls, %d distinct states seen, %ld torn polls, %ld transient "
           "failures%s%s\n",
           o.name, states, polls, distinct, torn_polls, transient_polls, bad_msg[0] ? "; the last: " : "", bad_msg);
    report_latency("step");
    for (int i = 0; i < o.ndsets; i++) {
        if (H5Dclose(r[i].did) < 0)
            swmr_h5fail("cannot close %s", r[i].d->name);
        model_free(&r[i].mo);
        model_free(&r[i].scratch);
        free(r[i].obs);
    }
    free(r);
    progress_free(&p);
}

/* --- the zoo ------------------------------------------------------------------------------------- */

/* Verification of one stage: the first problem found ends it. */
typedef struct {
    hid_t fid;
    int k;
    bool bad;
    char msg[2048];
} vx_t;

static bool vfail(vx_t *vx, bool h5, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static bool
vfail(vx_t *vx, bool h5, const char *fmt, ...)
{
    va_list ap;
    size_t len;

    if (vx->bad)
        return false;
    vx->bad = true;
    va_start(ap, fmt);
    vsnprintf(vx->msg, sizeof vx->msg, fmt, ap);
    va_end(ap);
    if (h5 && (len = strlen(vx->msg)) < sizeof vx->msg - 16) {
        snprintf(vx->msg + len, sizeof vx->msg - len, " [HDF5: ");
        len = strlen(vx->msg);
        h5_error_string(vx->msg + len, sizeof vx->msg - len - 1);
        strcat(vx->msg, "]");
    }
    return false;
}

#define V(cond, ...)  ((cond) ? true : vfail(vx, false, __VA_ARGS__))
#define VH(cond, ...) ((cond) ? true : vfail(vx, true, __VA_ARGS__))

static bool
in(int k, int lo, int hi)
{
    return k >= lo && k <= hi;
}

typedef struct {
    char names[64][32];
    H5L_type_t types[64];
    int n;
} names_t;

static herr_t
link_cb(hid_t g, const char *name, const H5L_info2_t *info, void *data)
{
    names_t *nm = data;

    (void)g;
    if (nm->n < 64) {
        snprintf(nm->names[nm->n], sizeof nm->names[0], "%s", name);
        nm->types[nm->n++] = info->type;
    }
    return 0;
}

static herr_t
attr_cb(hid_t loc, const char *name, const H5A_info_t *info, void *data)
{
    names_t *nm = data;

    (void)loc;
    (void)info;
    if (nm->n < 64)
        snprintf(nm->names[nm->n++], sizeof nm->names[0], "%s", name);
    return 0;
}

static int
cmp_name(const void *a, const void *b)
{
    return strcmp(a, b);
}

/* The exact set of names (sorted) must be `want`. */
static bool
same_names(vx_t *vx, const char *what, names_t *got, names_t *want)
{
    qsort(got->names, (size_t)got->n, sizeof got->names[0], cmp_name);
    qsort(want->names, (size_t)want->n, sizeof want->names[0], cmp_name);
    for (int i = 0, j = 0; i < got->n || j < want->n;) {
        int c = i == got->n ? 1 : j == want->n ? -1 : strcmp(got->names[i], want->names[j]);

        if (c < 0)
            return V(false, "%s: unexpected %s", what, got->names[i]);
        if (c > 0)
            return V(false, "%s: %s is missing", what, want->names[j]);
        i++, j++;
    }
    return true;
}

static void add_name(names_t *nm, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
add_name(names_t *nm, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(nm->names[nm->n++], sizeof nm->names[0], fmt, ap);
    va_end(ap);
}

static bool
check_links(vx_t *vx, hid_t g, const char *path, names_t *want)
{
    names_t got = {0};
    char what[96];

    if (!VH(H5Literate2(g, H5_INDEX_NAME, H5_ITER_INC, NULL, link_cb, &got) >= 0, "%s: H5Literate2 failed", path))
        return false;
    snprintf(what, sizeof what, "links of %s", path);
    return same_names(vx, what, &got, want);
}

static bool
check_attr_names(vx_t *vx, hid_t obj, const char *path, names_t *want)
{
    names_t got = {0};
    char what[96];

    if (!VH(H5Aiterate2(obj, H5_INDEX_NAME, H5_ITER_INC, NULL, attr_cb, &got) >= 0, "%s: H5Aiterate2 failed", path))
        return false;
    snprintf(what, sizeof what, "attributes of %s", path);
    return same_names(vx, what, &got, want);
}

static bool
check_group_storage(vx_t *vx, hid_t g, const char *path, hsize_t nlinks, bool dense)
{
    H5G_info_t gi;

    if (!VH(H5Gget_info(g, &gi) >= 0, "%s: H5Gget_info failed", path))
        return false;
    if (!V(gi.nlinks == nlinks, "%s has %llu links, expected %llu", path, (unsigned long long)gi.nlinks,
           (unsigned long long)nlinks))
        return false;
    return V(gi.storage_type == (dense ? H5G_STORAGE_TYPE_DENSE : H5G_STORAGE_TYPE_COMPACT),
             "%s: link storage type %d, expected %s", path, (int)gi.storage_type, dense ? "dense" : "compact");
}

static bool
check_attr_storage(vx_t *vx, hid_t obj, const char *path, hsize_t nattrs, bool dense)
{
    H5O_native_info_t ni;
    H5O_info2_t oi;

    if (!VH(H5Oget_info3(obj, &oi, H5O_INFO_NUM_ATTRS) >= 0 &&
                H5Oget_native_info(obj, &ni, H5O_NATIVE_INFO_META_SIZE) >= 0,
            "%s: cannot get object info", path))
        return false;
    if (!V(oi.num_attrs == nattrs, "%s has %llu attributes, expected %llu", path, (unsigned long long)oi.num_attrs,
           (unsigned long long)nattrs))
        return false;
    return V((ni.meta_size.attr.index_size > 0) == dense, "%s: attribute storage is %s, expected %s", path,
             ni.meta_size.attr.index_size > 0 ? "dense" : "compact", dense ? "dense" : "compact");
}

/* Open an object by path, refresh it, and check its type. */
static hid_t
open_refreshed(vx_t *vx, hid_t loc, const char *path, H5O_type_t type)
{
    hid_t id;
    H5O_info2_t oi;
    herr_t rc;

    if (!VH((id = H5Oopen(loc, path, H5P_DEFAULT)) >= 0, "cannot open %s", path))
        return -1;
    switch (H5Iget_type(id)) {
    case H5I_GROUP:
        rc = H5Grefresh(id);
        break;
    case H5I_DATASET:
        rc = H5Drefresh(id);
        break;
    case H5I_DATATYPE:
        rc = H5Trefresh(id);
        break;
    default:
        rc = H5Orefresh(id);
        break;
    }
    if (!VH(rc >= 0, "cannot refresh %s", path) ||
        !VH(H5Oget_info3(id, &oi, H5O_INFO_BASIC) >= 0, "cannot get info of %s", path) ||
        !V(oi.type == type, "%s is an object of type %d, expected %d", path, (int)oi.type, (int)type)) {
        H5Oclose(id);
        return -1;
    }
    return id;
}

static bool
same_object(vx_t *vx, hid_t fid, const char *a, const char *b)
{
    H5O_info2_t ia, ib;
    int cmp = 1;

    if (!VH(H5Oget_info_by_name3(fid, a, &ia, H5O_INFO_BASIC, H5P_DEFAULT) >= 0 &&
                H5Oget_info_by_name3(fid, b, &ib, H5O_INFO_BASIC, H5P_DEFAULT) >= 0 &&
                H5Otoken_cmp(fid, &ia.token, &ib.token, &cmp) >= 0,
            "cannot compare %s and %s", a, b))
        return false;
    return V(cmp == 0, "%s and %s are not the same object", a, b);
}

static bool
check_soft(vx_t *vx, hid_t g, const char *path, const char *name, const char *target)
{
    H5L_info2_t li;
    char val[64] = "";

    if (!VH(H5Lget_info2(g, name, &li, H5P_DEFAULT) >= 0, "%s/%s: H5Lget_info2 failed", path, name) ||
        !V(li.type == H5L_TYPE_SOFT, "%s/%s is not a soft link", path, name) ||
        !VH(H5Lget_val(g, name, val, sizeof val, H5P_DEFAULT) >= 0, "%s/%s: H5Lget_val failed", path, name))
        return false;
    return V(!strcmp(val, target), "%s/%s points to '%s', expected '%s'", path, name, val, target);
}

/* Read a whole dataset (already refreshed) and compare its layout, type, extent and data. */
static bool
check_data(vx_t *vx, hid_t did, const char *path, hid_t ftype, hid_t mtype, int rank, const hsize_t *dims,
           H5D_layout_t layout, const void *want, size_t size)
{
    hid_t type = -1, space = -1, dcpl = -1;
    hsize_t got[2] = {0, 0};
    void *buf = NULL;
    bool ok = false;
    int r;

    if (!VH((type = H5Dget_type(did)) >= 0 && (space = H5Dget_space(did)) >= 0 &&
                (dcpl = H5Dget_create_plist(did)) >= 0,
            "%s: cannot get type, space, properties", path))
        goto out;
    if (!V(H5Tequal(type, ftype) > 0, "%s has the wrong datatype", path))
        goto out;
    r = H5Sget_simple_extent_dims(space, got, NULL);
    if (!V(r == rank && got[0] == dims[0] && (rank < 2 || got[1] == dims[1]), "%s has the wrong extent", path))
        goto out;
    if (!V(H5Pget_layout(dcpl) == layout, "%s has layout %d, expected %d", path, (int)H5Pget_layout(dcpl), (int)layout))
        goto out;
    buf = xcalloc(size, 1);
    if (!VH(H5Dread(did, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) >= 0, "%s: H5Dread failed", path))
        goto out;
    ok = V(!memcmp(buf, want, size), "%s: data differ from what stage %d wrote", path, vx->k);
out:
    free(buf);
    if (type >= 0)
        H5Tclose(type);
    if (space >= 0)
        H5Sclose(space);
    if (dcpl >= 0)
        H5Pclose(dcpl);
    return ok;
}

static bool
verify_g1(vx_t *vx, int k)
{
    hid_t g = open_refreshed(vx, vx->fid, "/g1", H5O_TYPE_GROUP);
    names_t want = {0}, wanta = {0};
    int nchild = in(k, 2, 8) ? ZOO_NCHILD : in(k, 9, 12) ? ZOO_NKEEP : 0;
    bool ok = false;

    if (g < 0)
        return false;
    for (int i = 0; i < nchild; i++)
        add_name(&want, "c%02d", i);
    if (in(k, 7, 10))
        add_name(&want, "soft_contig");
    if (in(k, 7, 11))
        add_name(&want, "dangling");
    if (!check_links(vx, g, "/g1", &want) || !check_group_storage(vx, g, "/g1", (hsize_t)want.n, in(k, 2, 8)))
        goto out;
    for (int i = 0; i < nchild; i++) {
        char path[32];
        hid_t c;

        snprintf(path, sizeof path, "/g1/c%02d", i);
        if ((c = open_refreshed(vx, vx->fid, path, H5O_TYPE_GROUP)) < 0)
            goto out;
        H5G_info_t gi;
        bool fine = VH(H5Gget_info(c, &gi) >= 0, "%s: H5Gget_info failed", path) &&
                    V(gi.nlinks == 0, "%s has %llu links, expected none", path, (unsigned long long)gi.nlinks);
        H5Oclose(c);
        if (!fine)
            goto out;
    }
    if (in(k, 7, 10) && (!check_soft(vx, g, "/g1", "soft_contig", "/d_contig") ||
                         !same_object(vx, vx->fid, "/g1/soft_contig", "/d_contig")))
        goto out;
    if (in(k, 7, 11)) {
        htri_t e;

        if (!check_soft(vx, g, "/g1", "dangling", "/nowhere"))
            goto out;
        H5E_BEGIN_TRY
        {
            e = H5Oexists_by_name(g, "dangling", H5P_DEFAULT);
        }
        H5E_END_TRY
        if (!V(e <= 0, "/g1/dangling resolves to an object"))
            goto out;
    }
    /* attributes */
    if (k >= 5) {
        add_name(&wanta, "a0");
        if (k <= 9)
            add_name(&wanta, "a1");
        add_name(&wanta, "a2");
        add_name(&wanta, "a3");
        add_name(&wanta, "title");
    }
    if (in(k, 8, 11))
        add_name(&wanta, "t");
    if (!check_attr_names(vx, g, "/g1", &wanta) || !check_attr_storage(vx, g, "/g1", (hsize_t)wanta.n, false))
        goto out;
    for (int a = 0; a < 4 && k >= 5; a++) {
        int32_t v[3] = {0, 0, 0};
        char name[16];
        hid_t aid;
        bool fine;

        if (a == 1 && k > 9)
            continue;
        snprintf(name, sizeof name, "a%d", a);
        if (!VH((aid = H5Aopen(g, name, H5P_DEFAULT)) >= 0, "cannot open /g1@%s", name))
            goto out;
        fine = VH(H5Aread(aid, H5T_NATIVE_INT32, v) >= 0, "cannot read /g1@%s", name) &&
               V(v[0] == zoo_attr_a(a, 0) && v[1] == zoo_attr_a(a, 1) && v[2] == zoo_attr_a(a, 2),
                 "/g1@%s = {%d,%d,%d}, wrong", name, v[0], v[1], v[2]);
        H5Aclose(aid);
        if (!fine)
            goto out;
    }
    if (k >= 5) {
        hid_t aid, t = H5Tcopy(H5T_C_S1), space = -1;
        char *s = NULL;
        bool fine;

        H5Tset_size(t, H5T_VARIABLE);
        if (!VH((aid = H5Aopen(g, "title", H5P_DEFAULT)) >= 0, "cannot open /g1@title")) {
            H5Tclose(t);
            goto out;
        }
        fine = VH(H5Aread(aid, t, &s) >= 0, "cannot read /g1@title") &&
               V(s && !strcmp(s, ZOO_TITLE), "/g1@title = '%s', wrong", s ? s : "(null)");
        if (s && (space = H5Aget_space(aid)) >= 0) {
            H5Treclaim(t, space, H5P_DEFAULT, &s);
            H5Sclose(space);
        }
        H5Aclose(aid);
        H5Tclose(t);
        if (!fine)
            goto out;
    }
    if (in(k, 8, 11)) {
        hid_t aid, at = -1, mt = zoo_pair_type();
        zoo_pair_t v = {0, 0};
        bool fine;

        if (!VH((aid = H5Aopen(g, "t", H5P_DEFAULT)) >= 0, "cannot open /g1@t")) {
            H5Tclose(mt);
            goto out;
        }
        fine = VH((at = H5Aget_type(aid)) >= 0, "cannot get the type of /g1@t") &&
               V(H5Tcommitted(at) > 0, "/g1@t's type is not the committed datatype") &&
               VH(H5Aread(aid, mt, &v) >= 0, "cannot read /g1@t") &&
               V(v.a == 7 && v.b == 0.5, "/g1@t = {%d, %g}, expected {7, 0.5}", v.a, v.b);
        if (at >= 0)
            H5Tclose(at);
        H5Tclose(mt);
        H5Aclose(aid);
        if (!fine)
            goto out;
    }
    ok = true;
out:
    H5Oclose(g);
    return ok;
}

static bool
verify_chunked(vx_t *vx, int k)
{
    hid_t d = open_refreshed(vx, vx->fid, "/d_chunked", H5O_TYPE_DATASET), dcpl = -1;
    hsize_t dims[2] = {ZOO_CHUNKED_0, ZOO_CHUNKED_1}, chunk[2] = {0, 0};
    int64_t want[ZOO_CHUNKED_0 * ZOO_CHUNKED_1];
    names_t wanta = {0};
    unsigned maxc = 0, mind = 0;
    int na = in(k, 6, 9) ? ZOO_NBATTR : k >= 10 ? ZOO_NBKEEP : 0;
    bool ok = false;

    if (d < 0)
        return false;
    for (hsize_t a = 0; a < dims[0]; a++)
        for (hsize_t b = 0; b < dims[1]; b++) {
            hsize_t idx[3] = {a, b, 0};

            want[a * dims[1] + b] = swmr_value(o.seed, ZOO_ID_CHUNKED, idx, 4);
        }
    if (!check_data(vx, d, "/d_chunked", H5T_STD_I64LE, H5T_NATIVE_INT64, 2, dims, H5D_CHUNKED, want, sizeof want))
        goto out;
    if (!VH((dcpl = H5Dget_create_plist(d)) >= 0, "/d_chunked: no creation properties") ||
        !V(H5Pget_chunk(dcpl, 2, chunk) == 2 && chunk[0] == 5 && chunk[1] == 6, "/d_chunked: wrong chunk") ||
        !V(H5Pget_nfilters(dcpl) == 1, "/d_chunked: expected one filter (deflate)") ||
        !VH(H5Pget_attr_phase_change(dcpl, &maxc, &mind) >= 0, "/d_chunked: no attribute phase change") ||
        !V(maxc == 6 && mind == 4, "/d_chunked: attribute phase change %u/%u, expected 6/4", maxc, mind))
        goto out;
    for (int a = 0; a < na; a++)
        add_name(&wanta, "b%02d", a);
    if (!check_attr_names(vx, d, "/d_chunked", &wanta) ||
        !check_attr_storage(vx, d, "/d_chunked", (hsize_t)na, in(k, 6, 9)))
        goto out;
    for (int a = 0; a < na; a++) {
        double v[2] = {-1, -1};
        char name[16];
        hid_t aid;
        bool fine;

        snprintf(name, sizeof name, "b%02d", a);
        if (!VH((aid = H5Aopen(d, name, H5P_DEFAULT)) >= 0, "cannot open /d_chunked@%s", name))
            goto out;
        fine = VH(H5Aread(aid, H5T_NATIVE_DOUBLE, v) >= 0, "cannot read /d_chunked@%s", name) &&
               V(v[0] == a && v[1] == a * 0.5, "/d_chunked@%s = {%g,%g}, wrong", name, v[0], v[1]);
        H5Aclose(aid);
        if (!fine)
            goto out;
    }
    ok = true;
out:
    if (dcpl >= 0)
        H5Pclose(dcpl);
    H5Oclose(d);
    return ok;
}

static bool
verify_simple_dataset(vx_t *vx, const char *path, int which)
{
    hid_t d = open_refreshed(vx, vx->fid, path, H5O_TYPE_DATASET);
    bool ok;

    if (d < 0)
        return false;
    if (which == 0) {
        int32_t v[ZOO_CONTIG_N];
        hsize_t n = ZOO_CONTIG_N;

        for (int i = 0; i < ZOO_CONTIG_N; i++)
            v[i] = zoo_contig(i);
        ok = check_data(vx, d, path, H5T_STD_I32LE, H5T_NATIVE_INT32, 1, &n, H5D_CONTIGUOUS, v, sizeof v);
    }
    else if (which == 1) {
        int16_t v[ZOO_COMPACT_N];
        hsize_t n = ZOO_COMPACT_N;

        for (int i = 0; i < ZOO_COMPACT_N; i++)
            v[i] = zoo_compact(i);
        ok = check_data(vx, d, path, H5T_STD_I16LE, H5T_NATIVE_INT16, 1, &n, H5D_COMPACT, v, sizeof v);
    }
    else if (which == 2) {
        zoo_pair_t v[ZOO_TYPED_N];
        hsize_t n = ZOO_TYPED_N;
        hid_t ft = zoo_pair_file_type(), mt = zoo_pair_type(), t;

        memset(v, 0, sizeof v); /* padding */
        for (int i = 0; i < ZOO_TYPED_N; i++) {
            v[i].a = i;
            v[i].b = i * 1.5;
        }
        ok = check_data(vx, d, path, ft, mt, 1, &n, H5D_CONTIGUOUS, v, sizeof v);
        if (ok) {
            t = H5Dget_type(d);
            ok = V(t >= 0 && H5Tcommitted(t) > 0, "%s: its datatype is not committed", path);
            if (t >= 0)
                H5Tclose(t);
        }
        H5Tclose(ft);
        H5Tclose(mt);
    }
    else {
        int64_t v[ZOO_G2D_N];
        hsize_t n = ZOO_G2D_N;

        for (int i = 0; i < ZOO_G2D_N; i++) {
            hsize_t idx[3] = {(hsize_t)i, 0, 0};

            v[i] = swmr_value(o.seed, ZOO_ID_G2D, idx, 14);
        }
        ok = check_data(vx, d, path, H5T_STD_I64LE, H5T_NATIVE_INT64, 1, &n, H5D_CHUNKED, v, sizeof v);
    }
    H5Oclose(d);
    return ok;
}

/* Verify that the file is exactly in stage k (k == -1: the empty file after setup). */
static bool
zoo_verify(vx_t *vx, hid_t root, int k)
{
    names_t want = {0}, wanta = {0};
    hid_t id;

    if (k >= 0)
        add_name(&wanta, "stage");
    if (!check_attr_names(vx, root, "/", &wanta))
        return false;
    if (in(k, 1, 12))
        add_name(&want, "g1");
    if (k >= 3)
        add_name(&want, "d_contig");
    if (in(k, 3, 10))
        add_name(&want, "d_compact");
    if (k >= 4)
        add_name(&want, "d_chunked");
    if (in(k, 7, 10))
        add_name(&want, "hard_c00");
    if (in(k, 8, 11)) {
        add_name(&want, "dtype");
        add_name(&want, "d_typed");
    }
    if (k >= 14)
        add_name(&want, "g2");
    if (!check_links(vx, root, "/", &want))
        return false;
    if (in(k, 1, 12) && !verify_g1(vx, k))
        return false;
    if (k >= 3 && !verify_simple_dataset(vx, "/d_contig", 0))
        return false;
    if (in(k, 3, 10) && !verify_simple_dataset(vx, "/d_compact", 1))
        return false;
    if (k >= 4 && !verify_chunked(vx, k))
        return false;
    if (in(k, 7, 10)) {
        if ((id = open_refreshed(vx, vx->fid, "/hard_c00", H5O_TYPE_GROUP)) < 0)
            return false;
        H5Oclose(id);
        if (!same_object(vx, vx->fid, "/hard_c00", "/g1/c00"))
            return false;
    }
    if (in(k, 8, 11)) {
        hid_t ft = zoo_pair_file_type();
        bool ok;

        if ((id = open_refreshed(vx, vx->fid, "/dtype", H5O_TYPE_NAMED_DATATYPE)) < 0) {
            H5Tclose(ft);
            return false;
        }
        ok = V(H5Tequal(id, ft) > 0, "/dtype is not the compound {a: i32le, b: f64le}");
        H5Oclose(id);
        H5Tclose(ft);
        if (!ok || !verify_simple_dataset(vx, "/d_typed", 2))
            return false;
    }
    if (k >= 14) {
        names_t w2 = {0};
        bool ok;

        if ((id = open_refreshed(vx, vx->fid, "/g2", H5O_TYPE_GROUP)) < 0)
            return false;
        for (int i = 0; i < ZOO_NG2; i++)
            add_name(&w2, "e%02d", i);
        add_name(&w2, "d");
        ok = check_links(vx, id, "/g2", &w2) && check_group_storage(vx, id, "/g2", ZOO_NG2 + 1, true);
        for (int i = 0; ok && i < ZOO_NG2; i++) {
            char path[16];
            hid_t c;

            snprintf(path, sizeof path, "/g2/e%02d", i);
            if ((c = open_refreshed(vx, vx->fid, path, H5O_TYPE_GROUP)) < 0)
                ok = false;
            else
                H5Oclose(c);
        }
        H5Oclose(id);
        if (!ok || !verify_simple_dataset(vx, "/g2/d", 3))
            return false;
    }
    return true;
}

/* The stage marker: -1 when absent (file just set up), -3 when it cannot be read. */
static int
read_marker(hid_t root)
{
    int32_t v = -3;
    htri_t e;
    hid_t aid;

    H5E_BEGIN_TRY
    {
        if (H5Grefresh(root) < 0)
            v = -3;
        else if ((e = H5Aexists(root, "stage")) == 0)
            v = -1;
        else if (e < 0 || (aid = H5Aopen(root, "stage", H5P_DEFAULT)) < 0)
            v = -3;
        else {
            if (H5Aread(aid, H5T_NATIVE_INT32, &v) < 0)
                v = -3;
            H5Aclose(aid);
        }
    }
    H5E_END_TRY
    return v;
}

static void
run_zoo(hid_t fid, hid_t root)
{
    progress_t p = {0};
    vx_t vx;
    int last = -2, seen = 0, announced = -1, m1, m2;
    long straddles = 0, inconsistent = 0, unreadable = 0;
    char lastmsg[2048] = "";

    t_ready = now_ns();
    for (;;) {
        bool good;

        polls++;
        memset(&vx, 0, sizeof vx);
        vx.fid = fid;
        m1 = read_marker(root);
        if (m1 < -1) {
            unreadable++;
            good = false;
            snprintf(vx.msg, sizeof vx.msg, "cannot read the stage marker");
        }
        else {
            vx.k = m1;
            H5E_BEGIN_TRY
            {
                good = zoo_verify(&vx, root, m1);
            }
            H5E_END_TRY
        }
        m2 = read_marker(root);
        announced = progress_step(&p);
        if (good) {
            if (m1 < last)
                swmr_fail("poll %ld: the file went back from stage %d to stage %d", polls, last, m1);
            if (m1 > announced + 1)
                swmr_fail("poll %ld: stage %d is visible but the writer announced only stage %d", polls, m1, announced);
            if (m1 > last) {
                int64_t t = now_ns();

                for (int s = m1; s >= 0 && !seen_ns[s]; s--)
                    seen_ns[s] = t;
                if (m1 >= 0)
                    seen++;
                last = m1;
                if (o.ack_id >= 0)
                    ack_write(o.file[0], o.ack_id, last, false);
            }
            if (last >= o.last_step)
                break;
        }
        else if (m1 >= -1 && m1 == m2) {
            inconsistent++;
            snprintf(lastmsg, sizeof lastmsg, "%s", vx.msg);
            if (!o.lenient) {
                if (o.ack_id >= 0)
                    ack_write(o.file[0], o.ack_id, last, true);
                swmr_fail("poll %ld: the file is not in stage %d (its marker, unchanged while verifying: "
                          "\"%s\"): %s (writer announced stage %d)",
                          polls, m1, m1 >= 0 ? zoo_stage_text[m1] : "empty file", vx.msg, announced);
            }
        }
        else {
            straddles++;
            snprintf(lastmsg, sizeof lastmsg, "marker %d -> %d: %.1900s", m1, m2, vx.msg);
        }
        if (now_ns() > deadline) {
            if (o.ack_id >= 0)
                ack_write(o.file[0], o.ack_id, last, true);
            swmr_fail("timeout after %.0f s waiting for stage %d: last verified stage %d; writer announced "
                      "stage %d%s; last problem: %s",
                      o.timeout_s, o.last_step, last, announced, p.done ? " and closed the file" : "",
                      lastmsg[0] ? lastmsg : "none");
        }
        if (o.poll_us)
            vfdswmr_sleep(o.poll_us * 1e-6);
    }
    printf("reader %s: OK: zoo stage %d verified; stages_seen=%d/%d; %ld polls, %ld straddling views, "
           "%ld inconsistent views (lenient), %ld unreadable markers\n",
           o.name, last, seen, o.last_step + 1, polls, straddles, inconsistent, unreadable);
    progress_free(&p);
    report_latency("stage");
}

int
main(int argc, char **argv)
{
    hid_t fapl, fid, root = -1;
    unsigned flags;
    long attempts;

    swmr_parse(&o, argc, argv, false);
    if (o.nfiles != 1)
        swmr_fail("a reader reads one file");
    t_start = now_ns();
    deadline = t_start + (int64_t)(o.timeout_s * 1e9);
    seen_ns = xcalloc((size_t)o.steps, sizeof(int64_t));
    if ((fapl = H5Pcreate(H5P_FILE_ACCESS)) < 0 || (o.evict_on_close && H5Pset_evict_on_close(fapl, true) < 0))
        swmr_h5fail("cannot set up the file access property list");
    flags = H5F_ACC_RDONLY | (o.swmr ? H5F_ACC_SWMR_READ : 0);
    fid = open_file_retry(flags, fapl, &attempts, &root);
    if (attempts > 1)
        swmr_msg("opened %s after %ld attempts (%.2f s)", o.file[0], attempts, (double)(now_ns() - t_start) / 1e9);
    if (o.workload == W_ZOO && o.check_stage != -99) {
        /* self-test of the verifier: is the file exactly in stage check_stage? */
        vx_t vx;
        bool good;

        memset(&vx, 0, sizeof vx);
        vx.fid = fid;
        vx.k = o.check_stage;
        H5E_BEGIN_TRY
        {
            good = zoo_verify(&vx, root, o.check_stage);
        }
        H5E_END_TRY
        if (!good) {
            printf("not stage %d: %s\n", o.check_stage, vx.msg);
            return 1;
        }
        printf("stage %d\n", o.check_stage);
    }
    else if (o.workload == W_ZOO)
        run_zoo(fid, root);
    else
        run_data(fid, root);
    if (H5Gclose(root) < 0 || H5Fclose(fid) < 0)
        swmr_h5fail("cannot close %s", o.file[0]);
    H5Pclose(fapl);
    free(seen_ns);
    return 0;
}
