/*
 * crash_writer: the writer of the crash harness. An ordinary HDF5 program (file access
 * property list from H5Pcreate, so HDF5_DRIVER selects the driver) performing the seeded
 * workload of crash_model.h, operation after operation, until it is killed, reaches
 * --close-after N (then H5Fclose), or --max-ops.
 *
 *   crash_writer --file F --progress P --seed S --mix append|objects|mixed [--swmr]
 *                [--pace-us US] [--close-after N] [--max-ops N]
 *                [--kill-op KIND:NTH:PHASE [--gate G]]
 *                [--earliest] [--resume N [--hold H]]
 *
 * The file is created with H5F_FSPACE_STRATEGY_NONE (README, "Rewriting chunks": chunks of
 * deflated datasets move as they grow, and datasets are deleted, while readers with older
 * snapshots still read them) and libver bounds (latest, latest): a version 3 superblock;
 * --earliest (not with --swmr) leaves HDF5's default bounds: a version 2 superblock (the
 * lowest that holds a file space strategy), whose flags HDF5 does not check, and version 1
 * B-trees for the chunk indexes.
 *
 * --resume N: the file exists, written by a run with the same seed, mix and --swmr that
 * closed after N operations (--close-after N, any driver): open it (H5Fopen, H5F_ACC_RDWR,
 * plus H5F_ACC_SWMR_WRITE with --swmr) and go on with operation N + 1. The progress file
 * starts with "begin N reopen" and, once H5Fopen returned, "flushed N". --hold H: then wait
 * until the file H exists before the first operation.
 *
 * Publishing: without --swmr, H5Fflush after the operations the model marks (batches);
 * with --swmr (H5F_ACC_SWMR_WRITE), H5Dflush after every append and H5Fflush after every
 * other operation (README: object flushes publish only appends safely). Before each flush
 * it appends "begin K HOW" to the progress file and "flushed K" after it (crash_log.h).
 *
 * --kill-op KIND:NTH:PHASE: SIGKILL itself in the NTH operation of KIND (an operation name
 * of crash_model.h or "any") counted from the moment the file --gate exists (at once
 * without --gate); PHASE "mid" between the operation's HDF5 calls (e.g. after H5Dset_extent,
 * before H5Dwrite), "preflush" after the operation, before its flush. It logs
 * "kill K KIND PHASE" first. When the model could not choose KIND for 200 operations in a row
 * since the gate opened, it dies in the next operation of any kind instead ("kill K KIND PHASE
 * instead-of WANTED"). With --close-after and --gate, it waits for the gate before
 * H5Fclose (so that the harness can let readers see the file first, then kill the writer
 * inside H5Fclose).
 *
 * Exit 0 after H5Fclose; 1 with a message on stderr on any HDF5 failure.
 */
#include "crash_log.h"
#include "crash_model.h"

#include "../swmr/swmr_common.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static struct {
    cl_run_t run;
    const char *gate, *hold, *kill_kind, *kill_phase;
    bool swmr, earliest;
    long pace_us, close_after, max_ops, kill_nth, resume;
} opt = {.pace_us = 2000, .close_after = -1, .max_ops = 100000, .resume = -1};

static FILE *progress;
static long kill_count;            /* matching operations since the gate opened */
static bool kill_armed;            /* the current operation is the one to die in */
static long kill_impossible;       /* operations in a row since the gate opened in which KIND could not come */
static char kill_instead[64] = ""; /* KIND could not come for 200 operations: die in any */

static void
usage(void)
{
    fprintf(stderr, "usage: crash_writer --file F --progress P --seed S --mix append|objects|mixed [--swmr]\n"
                    "  [--pace-us US] [--close-after N] [--max-ops N] [--kill-op KIND:NTH:mid|preflush [--gate G]]\n"
                    "  [--earliest] [--resume N [--hold H]]\n");
    exit(2);
}

static void
parse(int argc, char **argv)
{
    static const struct option lo[] = {{"file", 1, 0, 'f'},        {"progress", 1, 0, 'p'},
                                       {"seed", 1, 0, 's'},        {"mix", 1, 0, 'm'},
                                       {"swmr", 0, 0, 'w'},        {"pace-us", 1, 0, 'u'},
                                       {"close-after", 1, 0, 'c'}, {"max-ops", 1, 0, 'x'},
                                       {"kill-op", 1, 0, 'k'},     {"gate", 1, 0, 'g'},
                                       {"earliest", 0, 0, 'e'},    {"resume", 1, 0, 'r'},
                                       {"hold", 1, 0, 'H'},        {0, 0, 0, 0}};
    static char kill_buf[64];
    int c;
    char *a, *b;

    while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
        if (cl_run_opt("crash_writer", c, optarg, &opt.run))
            continue;
        switch (c) {
        case 'w':
            opt.swmr = true;
            break;
        case 'u':
            opt.pace_us = cl_num("crash_writer", "pace-us", optarg, 0, 10000000);
            break;
        case 'c':
            opt.close_after = cl_num("crash_writer", "close-after", optarg, 0, 1000000);
            break;
        case 'x':
            opt.max_ops = cl_num("crash_writer", "max-ops", optarg, 1, 1000000);
            break;
        case 'g':
            opt.gate = optarg;
            break;
        case 'e':
            opt.earliest = true;
            break;
        case 'r':
            opt.resume = cl_num("crash_writer", "resume", optarg, 0, 1000000);
            break;
        case 'H':
            opt.hold = optarg;
            break;
        case 'k':
            snprintf(kill_buf, sizeof kill_buf, "%s", optarg);
            if (!(a = strchr(kill_buf, ':')) || !(b = strchr(a + 1, ':')))
                usage();
            *a++ = *b++ = '\0';
            opt.kill_kind = kill_buf;
            opt.kill_nth = cl_num("crash_writer", "kill-op NTH", a, 1, 1000000);
            opt.kill_phase = b;
            if ((strcmp(b, "mid") && strcmp(b, "preflush")) ||
                (strcmp(kill_buf, "any") && cm_op_kind(kill_buf) == OP_NKINDS))
                usage();
            break;
        default:
            usage();
        }
    }
    if (optind != argc || !opt.run.file || !opt.run.progress || !opt.run.mix || (opt.earliest && opt.swmr) ||
        (opt.hold && opt.resume < 0))
        usage();
}

/* --- dying on purpose ------------------------------------------------------------------ */

static bool
exists(const char *path)
{
    struct stat st;

    return stat(path, &st) == 0;
}

static bool
gate_open(void)
{
    return !opt.gate || exists(opt.gate);
}

/* Wait (at most 600 s) until the file at path exists. */
static void
wait_for_file(const char *path)
{
    int64_t deadline = now_ns() + (int64_t)600 * 1000000000;

    while (!exists(path)) {
        if (now_ns() > deadline)
            swmr_fail("%s never appeared", path);
        vfdswmr_sleep(0.002);
    }
}

/* Called before each operation (planned from state s): is this the one to die in? When the
 * model has not been able to choose KIND for 200 operations in a row (a group cannot be created
 * once there are 12 and none may be deleted, for instance), the next operation of any kind. */
static void
arm(const cm_state_t *s, const cm_op_t *op)
{
    kill_armed = false;
    if (!opt.kill_kind || !gate_open())
        return;
    if (!kill_instead[0] && strcmp(opt.kill_kind, "any")) {
        kill_impossible = cm_possible(s, cm_op_kind(opt.kill_kind)) ? 0 : kill_impossible + 1;
        if (kill_impossible >= 200)
            snprintf(kill_instead, sizeof kill_instead, " instead-of %s", opt.kill_kind);
    }
    if (kill_instead[0])
        kill_armed = true;
    else if (!strcmp(opt.kill_kind, "any") || !strcmp(opt.kill_kind, cm_op_name(op->kind)))
        kill_armed = ++kill_count == opt.kill_nth;
}

static void
die_here(const cm_op_t *op, const char *phase)
{
    if (!kill_armed || strcmp(phase, opt.kill_phase))
        return;
    cl_line(progress, "kill %d %s %s%s", op->n, cm_op_name(op->kind), phase, kill_instead);
    kill(getpid(), SIGKILL);
    pause();
}

/* --- operations ------------------------------------------------------------------------- */

static void
write_rows(hid_t did, const cm_dkind_t *k, int id, hsize_t r0, hsize_t r1, const char *path)
{
    hsize_t start[2] = {r0, 0}, count[2] = {r1 - r0, k->cols};
    size_t n = (size_t)(count[0] * count[1]), i = 0;
    int64_t *buf = xcalloc(n, sizeof(int64_t));
    hid_t mspace, fspace;

    for (hsize_t r = r0; r < r1; r++)
        for (hsize_t c = 0; c < k->cols; c++)
            buf[i++] = cm_dvalue(opt.run.seed, id, r, c);
    if ((mspace = H5Screate_simple(k->rank, count, NULL)) < 0 || (fspace = H5Dget_space(did)) < 0 ||
        H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, NULL, count, NULL) < 0 ||
        H5Dwrite(did, H5T_NATIVE_INT64, mspace, fspace, H5P_DEFAULT, buf) < 0)
        swmr_h5fail("cannot write rows %llu..%llu of %s", (unsigned long long)r0, (unsigned long long)r1, path);
    H5Sclose(mspace);
    H5Sclose(fspace);
    free(buf);
}

static void
set_rows(hid_t did, const cm_dkind_t *k, hsize_t rows, const char *path)
{
    hsize_t dims[2] = {rows, k->cols};

    if (H5Dset_extent(did, dims) < 0)
        swmr_h5fail("cannot extend %s to %llu rows", path, (unsigned long long)rows);
}

static hid_t
create_dataset(hid_t fid, const cm_op_t *op)
{
    const cm_dkind_t *k = &cm_dkinds[op->dkind];
    hsize_t dims[2] = {0, k->cols},
            maxdims[2] = {k->fixed ? CM_FIXED_ROWS : H5S_UNLIMITED, k->unlim2 ? H5S_UNLIMITED : k->cols};
    int64_t fill = SWMR_FILL;
    hid_t space, dcpl, did;

    if ((space = H5Screate_simple(k->rank, dims, maxdims)) < 0 || (dcpl = H5Pcreate(H5P_DATASET_CREATE)) < 0 ||
        H5Pset_chunk(dcpl, k->rank, k->chunk) < 0 || H5Pset_fill_value(dcpl, H5T_NATIVE_INT64, &fill) < 0 ||
        (k->deflate && H5Pset_deflate(dcpl, 6) < 0))
        swmr_h5fail("cannot set up dataset %s", op->path);
    if ((did = H5Dcreate2(fid, op->path, H5T_STD_I64LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT)) < 0)
        swmr_h5fail("cannot create dataset %s", op->path);
    H5Pclose(dcpl);
    H5Sclose(space);
    return did;
}

static void
write_attr(hid_t aid, const cm_op_t *op, int id, int len)
{
    int64_t v[16];

    for (int k = 0; k < len; k++)
        v[k] = cm_avalue(opt.run.seed, id, k, op->n);
    if (H5Awrite(aid, H5T_NATIVE_INT64, v) < 0)
        swmr_h5fail("cannot write attribute %s of %s", op->name, op->path);
}

/* Perform one operation. Returns the dataset of an append (still open, for H5Dflush), or -1. */
static hid_t
perform(hid_t fid, const cm_state_t *s, const cm_op_t *op)
{
    hid_t id, space, obj;

    switch (op->kind) {
    case OP_APPEND: {
        const cm_dkind_t *k = &cm_dkinds[s->obj[op->obj].dkind];

        if ((id = H5Dopen2(fid, op->path, H5P_DEFAULT)) < 0)
            swmr_h5fail("cannot open dataset %s", op->path);
        set_rows(id, k, op->rows1, op->path);
        die_here(op, "mid");
        write_rows(id, k, s->obj[op->obj].id, op->rows0, op->rows1, op->path);
        return id;
    }
    case OP_GCREATE:
        if ((id = H5Gcreate2(fid, op->path, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) < 0)
            swmr_h5fail("cannot create group %s", op->path);
        die_here(op, "mid");
        if (H5Gclose(id) < 0)
            swmr_h5fail("cannot close group %s", op->path);
        break;
    case OP_DCREATE:
        id = create_dataset(fid, op);
        die_here(op, "mid");
        if (op->rows1) {
            set_rows(id, &cm_dkinds[op->dkind], op->rows1, op->path);
            write_rows(id, &cm_dkinds[op->dkind], op->n, 0, op->rows1, op->path);
        }
        if (H5Dclose(id) < 0)
            swmr_h5fail("cannot close dataset %s", op->path);
        break;
    case OP_GDELETE:
    case OP_DDELETE:
        if (H5Ldelete(fid, op->path, H5P_DEFAULT) < 0)
            swmr_h5fail("cannot delete %s", op->path);
        die_here(op, "mid");
        break;
    case OP_ACREATE: {
        hsize_t n = (hsize_t)op->alen;

        /* on the open object: H5Awrite of an attribute from H5Acreate_by_name fails in HDF5 1.14.5
             * ("can't locate open attribute?") */
        if ((obj = H5Oopen(fid, op->path, H5P_DEFAULT)) < 0 || (space = H5Screate_simple(1, &n, NULL)) < 0 ||
            (id = H5Acreate2(obj, op->name, H5T_STD_I64LE, space, H5P_DEFAULT, H5P_DEFAULT)) < 0)
            swmr_h5fail("cannot create attribute %s of %s", op->name, op->path);
        die_here(op, "mid");
        write_attr(id, op, op->n, op->alen);
        if (H5Aclose(id) < 0 || H5Oclose(obj) < 0)
            swmr_h5fail("cannot close attribute %s of %s", op->name, op->path);
        H5Sclose(space);
        break;
    }
    case OP_AWRITE:
        if ((obj = H5Oopen(fid, op->path, H5P_DEFAULT)) < 0 || (id = H5Aopen(obj, op->name, H5P_DEFAULT)) < 0)
            swmr_h5fail("cannot open attribute %s of %s", op->name, op->path);
        write_attr(id, op, s->attr[op->attr].id, s->attr[op->attr].len);
        die_here(op, "mid");
        if (H5Aclose(id) < 0 || H5Oclose(obj) < 0)
            swmr_h5fail("cannot close attribute %s of %s", op->name, op->path);
        break;
    case OP_ADELETE:
        if (H5Adelete_by_name(fid, op->path, op->name, H5P_DEFAULT) < 0)
            swmr_h5fail("cannot delete attribute %s of %s", op->name, op->path);
        die_here(op, "mid");
        break;
    default:
        swmr_fail("internal error: operation kind %d", (int)op->kind);
    }
    return -1;
}

static void
fflush_file(hid_t fid, int state)
{
    cl_line(progress, "begin %d fflush", state);
    if (H5Fflush(fid, H5F_SCOPE_GLOBAL) < 0)
        swmr_h5fail("H5Fflush of state %d failed", state);
    cl_line(progress, "flushed %d", state);
}

int
main(int argc, char **argv)
{
    static opts_t msg_opts = {.prog = "crash_writer", .name = "writer"};
    cm_state_t *s = xcalloc(1, sizeof *s);
    hid_t fapl, fcpl, fid;
    unsigned flags;
    long n;
    int64_t t0 = now_ns();

    swmr_opts = &msg_opts;
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL); /* failures print the stack through swmr_h5fail */
    parse(argc, argv);
    cm_init(s, opt.run.seed, opt.run.mix, opt.swmr);
    progress = cl_open_append(opt.run.progress);
    cl_line(progress, "crash-progress seed=%" PRIu64 " mix=%s swmr=%d", opt.run.seed, opt.run.mix->name, opt.swmr);
    if ((fapl = H5Pcreate(H5P_FILE_ACCESS)) < 0 ||
        (!opt.earliest && H5Pset_libver_bounds(fapl, H5F_LIBVER_LATEST, H5F_LIBVER_LATEST) < 0) ||
        (fcpl = H5Pcreate(H5P_FILE_CREATE)) < 0 || H5Pset_file_space_strategy(fcpl, H5F_FSPACE_STRATEGY_NONE, 0, 1) < 0)
        swmr_h5fail("cannot set up the property lists");
    if (opt.resume >= 0) {
        flags = H5F_ACC_RDWR | (opt.swmr ? H5F_ACC_SWMR_WRITE : 0);
        for (n = 0; n < opt.resume; n++)
            cm_advance(s);
        cl_line(progress, "begin %d reopen", s->state);
        if ((fid = H5Fopen(opt.run.file, flags, fapl)) < 0)
            swmr_h5fail("cannot open %s (flags 0x%x)", opt.run.file, flags);
        cl_line(progress, "flushed %d", s->state);
        if (opt.hold)
            wait_for_file(opt.hold);
    }
    else {
        flags = H5F_ACC_TRUNC | (opt.swmr ? H5F_ACC_SWMR_WRITE : 0);
        if ((fid = H5Fcreate(opt.run.file, flags, fcpl, fapl)) < 0)
            swmr_h5fail("cannot create %s (flags 0x%x)", opt.run.file, flags);
        fflush_file(fid, 0);
    }
    H5Pclose(fcpl);
    H5Pclose(fapl);

    for (n = s->state + 1; n <= opt.max_ops && (opt.close_after < 0 || n <= opt.close_after); n++) {
        cm_op_t op;
        hid_t did;

        cm_next(s, &op);
        arm(s, &op);
        did = perform(fid, s, &op);
        cm_apply(s, &op);
        die_here(&op, "preflush");
        if (opt.swmr && did >= 0) {
            cl_line(progress, "begin %d dflush", op.n);
            if (H5Dflush(did) < 0)
                swmr_h5fail("H5Dflush of %s (state %d) failed", op.path, op.n);
            cl_line(progress, "flushed %d", op.n);
        }
        if (did >= 0 && H5Dclose(did) < 0)
            swmr_h5fail("cannot close dataset %s", op.path);
        if (opt.swmr ? op.kind != OP_APPEND || op.flush : op.flush)
            fflush_file(fid, op.n);
        if (opt.pace_us)
            vfdswmr_sleep(opt.pace_us * 1e-6);
    }
    if (opt.gate && opt.close_after >= 0) /* the harness opens the gate when readers have seen enough */
        wait_for_file(opt.gate);
    cl_line(progress, "begin %d close", s->state);
    if (H5Fclose(fid) < 0)
        swmr_h5fail("H5Fclose failed (state %d)", s->state);
    cl_line(progress, "closed %d", s->state);
    printf("writer: %d operations (%s mix, seed %" PRIu64 ", %s), closed after %.2f s\n", s->state, opt.run.mix->name,
           opt.run.seed, opt.swmr ? "H5F_ACC_SWMR_WRITE" : "no SWMR-write flag", (double)(now_ns() - t0) / 1e9);
    free(s);
    fclose(progress);
    return 0;
}
