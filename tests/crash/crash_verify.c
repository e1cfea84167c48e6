/*
 * crash_verify: checks a file of the crash harness after the writer died (and after
 * recovery). An ordinary HDF5 program: the file access property list comes from H5Pcreate,
 * so run it with HDF5_DRIVER unset to read the file as plain HDF5 does (the harness does),
 * or with HDF5_DRIVER=vfd_swmr_reader to read the last published snapshot.
 *
 *   crash_verify --file F --progress P --seed S --mix M [--seen LOG]... [--exact K]
 *                [--flushed-kept] [--label TEXT] [--print]
 *
 * It checks that
 *   1. every walk in the seen logs is exactly the model's state it claims (the readers'
 *      records are right);
 *   2. the file opens and every element of every dataset and attribute holds the value the
 *      value functions give (a walk of the whole file, crash_walk.h);
 *   3. the file as a whole is exactly ONE state K of the workload -- nothing of a later,
 *      unpublished operation mixed in, nothing of an earlier one left over -- with
 *      K >= every state a reader saw and K <= the newest state the writer began to publish
 *      (progress file); with --exact, K is that state; with --flushed-kept (the writer
 *      published at every flush: publish=flush), K >= the newest state a flush call
 *      returned for;
 *   4. every object and every element of every walk is in the file with the same values
 *      (a dataset's checksum over the walk's extent recomputed from the file's data), unless
 *      the model deleted or rewrote it between the walk's state and K.
 *
 * Prints "state K" and a summary line
 *   verified state=K objects=O elements=E walks=W seen_objects=SO seen_elements=SE
 * Exit 0 when all holds; 1 with the reason on stderr otherwise; 2 on bad usage.
 */
#include "crash_log.h"
#include "crash_model.h"
#include "crash_walk.h"

#include "../swmr/swmr_common.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SEEN 16

static struct {
    cl_run_t run;
    const char *label, *seen[MAX_SEEN];
    int nseen;
    long exact;
    bool print, flushed_kept;
} opt = {.exact = -1};

static void
usage(void)
{
    fprintf(stderr, "usage: crash_verify --file F --progress P --seed S --mix M [--seen LOG]... [--exact K]\n"
                    "  [--flushed-kept] [--label TEXT] [--print]\n");
    exit(2);
}

static void
parse(int argc, char **argv)
{
    static const struct option lo[] = {{"file", 1, 0, 'f'},  {"progress", 1, 0, 'p'}, {"seed", 1, 0, 's'},
                                       {"mix", 1, 0, 'm'},   {"seen", 1, 0, 'l'},     {"exact", 1, 0, 'e'},
                                       {"label", 1, 0, 'b'}, {"print", 0, 0, 'P'},    {"flushed-kept", 0, 0, 'k'},
                                       {0, 0, 0, 0}};
    int c;

    while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
        if (cl_run_opt("crash_verify", c, optarg, &opt.run))
            continue;
        switch (c) {
        case 'l':
            if (opt.nseen == MAX_SEEN)
                usage();
            opt.seen[opt.nseen++] = optarg;
            break;
        case 'e':
            opt.exact = cl_num("crash_verify", "exact", optarg, 0, 10000000);
            break;
        case 'b':
            opt.label = optarg;
            break;
        case 'k':
            opt.flushed_kept = true;
            break;
        case 'P':
            opt.print = true;
            break;
        default:
            usage();
        }
    }
    if (optind != argc || !opt.run.file || !opt.run.progress || !opt.run.mix)
        usage();
}

static int
cmp_walk_state(const void *a, const void *b)
{
    const cl_walk_t *x = a, *y = b;

    return x->state < y->state ? -1 : x->state > y->state;
}

/* The file's line for attribute "A <path> <name> ..." (prefix up to the name), or NULL. */
static const char *
find_attr_line(const cw_obs_t *obs, const char *walk_line)
{
    char prefix[CM_LINELEN];
    const char *sp = strchr(walk_line + 2, ' ');

    if (!sp || !(sp = strchr(sp + 1, ' ')))
        return NULL;
    snprintf(prefix, sizeof prefix, "%.*s", (int)(sp - walk_line + 1), walk_line);
    for (size_t i = 0; i < obs->nlines; i++)
        if (!strncmp(obs->lines[i], prefix, strlen(prefix)))
            return obs->lines[i];
    return NULL;
}

static bool
has_line(const cw_obs_t *obs, const char *line)
{
    for (size_t i = 0; i < obs->nlines; i++)
        if (!strcmp(obs->lines[i], line))
            return true;
    return false;
}

int
main(int argc, char **argv)
{
    static opts_t msg_opts = {.prog = "crash_verify"};
    cl_progress_t p;
    cl_seen_t seen = {0};
    cm_state_t *m = xcalloc(1, sizeof *m);
    char(*lines)[CM_LINELEN] = xcalloc(cm_desc_max(), CM_LINELEN);
    cw_obs_t obs = {0};
    static char err[8192], diff[8192];
    hid_t fapl, fid, root;
    int lo = 0, hi, found = -1, best_state = -1;
    const char *lo_who = "nobody";
    size_t best = (size_t)-1;
    long seen_objects = 0, seen_elements = 0, later = 0;
    uint64_t want;

    swmr_opts = &msg_opts;
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    parse(argc, argv);
    msg_opts.name = opt.label ? opt.label : opt.run.file;

    /* what the writer did and what the readers saw */
    cl_progress_read(opt.run.progress, &p);
    if (p.seed != opt.run.seed || strcmp(p.mix, opt.run.mix->name))
        swmr_fail("%s is of seed %" PRIu64 " mix %s, not seed %" PRIu64 " mix %s", opt.run.progress, p.seed, p.mix,
                  opt.run.seed, opt.run.mix->name);
    if ((hi = p.last_begin) < 0)
        swmr_fail("%s: the writer never began to publish anything", opt.run.progress);
    for (int i = 0; i < opt.nseen; i++)
        cl_seen_read(opt.seen[i], &seen);
    if (seen.nwalks && (seen.seed != opt.run.seed || strcmp(seen.mix, opt.run.mix->name)))
        swmr_fail("the seen logs are of seed %" PRIu64 " mix %s", seen.seed, seen.mix);
    if (seen.nwalks) /* qsort(NULL, 0, ...) is undefined */
        qsort(seen.walks, seen.nwalks, sizeof seen.walks[0], cmp_walk_state);
    for (size_t w = 0; w < seen.nwalks; w++)
        if (seen.walks[w].state >= lo) {
            lo = seen.walks[w].state;
            lo_who = seen.walks[w].reader;
        }
    if (opt.flushed_kept && p.last_flushed > lo) {
        lo = p.last_flushed;
        lo_who = "<the writer: its flush of that state had returned>";
    }
    if (lo > hi)
        swmr_fail("reader %s saw state %d, but the writer began to publish only up to state %d", lo_who, lo, hi);

    /* 1. each walk is exactly its state */
    cm_init(m, opt.run.seed, opt.run.mix, p.swmr);
    for (size_t w = 0; w < seen.nwalks; w++) {
        cl_walk_t *wk = &seen.walks[w];
        size_t nl;

        while (m->state < wk->state)
            cm_advance(m);
        nl = cm_describe(m, lines);
        if (cw_diff(wk->lines, wk->nlines, lines, nl, diff, sizeof diff, 12))
            swmr_fail("reader %s's walk %d is not state %d as it claims:%s", wk->reader, wk->walk, wk->state, diff);
    }

    /* 2. the file, read whole */
    if ((fapl = H5Pcreate(H5P_FILE_ACCESS)) < 0)
        swmr_h5fail("cannot create a file access property list");
    if ((fid = H5Fopen(opt.run.file, H5F_ACC_RDONLY, fapl)) < 0) {
        h5_error_string(err, sizeof err);
        swmr_fail("cannot open %s (HDF5_DRIVER %s): %s", opt.run.file,
                  getenv("HDF5_DRIVER") ? getenv("HDF5_DRIVER") : "unset", err);
    }
    if ((root = H5Gopen2(fid, "/", H5P_DEFAULT)) < 0) {
        h5_error_string(err, sizeof err);
        swmr_fail("cannot open the root group of %s: %s", opt.run.file, err);
    }
    switch (cw_walk(root, opt.run.seed, &obs, err, sizeof err)) {
    case CW_OK:
        break;
    case CW_HDF5:
        swmr_fail("%s cannot be read whole: %s", opt.run.file, err);
    case CW_VALUE:
        swmr_fail("%s holds a wrong value: %s", opt.run.file, err);
    }
    if (opt.print)
        for (size_t i = 0; i < obs.nlines; i++)
            printf("%s\n", obs.lines[i]);

    /* 3. exactly one state of the workload, within [lo, hi] */
    want = cm_desc_hash(obs.lines, obs.nlines);
    cm_init(m, opt.run.seed, opt.run.mix, p.swmr);
    for (;;) {
        size_t nl = cm_describe(m, lines), nd;

        if (nl == obs.nlines && cm_desc_hash(lines, nl) == want &&
            !cw_diff(obs.lines, obs.nlines, lines, nl, NULL, 0, 0))
            found = m->state;
        else if (m->state >= lo && (nd = cw_diff(obs.lines, obs.nlines, lines, nl, NULL, 0, 0)) <= best) {
            best = nd;
            best_state = m->state;
        }
        if (m->state >= hi)
            break;
        cm_advance(m);
    }
    if (found < 0 || found < lo) {
        int target = found < 0 ? best_state : lo;

        cm_init(m, opt.run.seed, opt.run.mix, p.swmr);
        while (m->state < target)
            cm_advance(m);
        cw_diff(obs.lines, obs.nlines, lines, cm_describe(m, lines), diff, sizeof diff, 16);
        if (found < 0)
            swmr_fail("%s is no state of the workload from %d (the newest a reader saw) to %d (the newest the "
                      "writer began to publish): it mixes states or lost data; closest is state %d:%s",
                      opt.run.file, lo, hi, best_state, diff);
        swmr_fail("%s is state %d, older than state %d that reader %s saw; compared with that state:%s", opt.run.file,
                  found, lo, lo_who, diff);
    }
    if (opt.exact >= 0 && found != opt.exact) {
        cm_init(m, opt.run.seed, opt.run.mix, p.swmr);
        while (m->state < opt.exact && m->state < hi)
            cm_advance(m);
        cw_diff(obs.lines, obs.nlines, lines, cm_describe(m, lines), diff, sizeof diff, 16);
        swmr_fail("%s is state %d, not state %ld (the last published snapshot); compared with that state:%s",
                  opt.run.file, found, opt.exact, diff);
    }

    /* 4. everything every walk showed is there, or was deleted or rewritten by a later operation */
    for (size_t w = 0; w < seen.nwalks; w++) {
        cl_walk_t *wk = &seen.walks[w];

        for (size_t i = 0; i < wk->nlines; i++) {
            const char *l = wk->lines[i];

            if (l[0] == 'D') {
                char path[CM_PATHLEN], kind[8];
                unsigned long long rows, cols;
                uint64_t sum;
                const cw_dset_t *d;

                if (sscanf(l, "D %63s %7s %llux%llu %" SCNx64, path, kind, &rows, &cols, &sum) != 5)
                    swmr_fail("reader %s, walk %d: malformed line '%s'", wk->reader, wk->walk, l);
                if (!(d = cw_find_dset(&obs, path))) {
                    later++;
                    continue;
                }
                if (d->rows < rows || d->cols != cols)
                    swmr_fail("dataset %s: reader %s saw %llux%llu in walk %d (state %d), the file has %llux%llu", path,
                              wk->reader, rows, cols, wk->walk, wk->state, (unsigned long long)d->rows,
                              (unsigned long long)d->cols);
                if (d->cum[rows] != sum)
                    swmr_fail("dataset %s: the file's first %llu rows differ from what reader %s saw in walk %d "
                              "(checksum %016" PRIx64 ", seen %016" PRIx64 ")",
                              path, rows, wk->reader, wk->walk, d->cum[rows], sum);
                seen_objects++;
                seen_elements += (long)(rows * cols);
            }
            else if (l[0] == 'A') {
                const char *f = find_attr_line(&obs, l);
                int vw, vf, nw, nf;

                if (!f) {
                    later++;
                    continue;
                }
                if (sscanf(strstr(l, " n="), " n=%d v=%d", &nw, &vw) != 2 ||
                    sscanf(strstr(f, " n="), " n=%d v=%d", &nf, &vf) != 2 || nf != nw || vf < vw)
                    swmr_fail("attribute: reader %s saw '%s' in walk %d, the file has '%s'", wk->reader, l, wk->walk,
                              f);
                seen_objects++;
                seen_elements += nw;
            }
            else if (has_line(&obs, l))
                seen_objects++;
            else
                later++;
        }
    }

    printf("state %d\n", found);
    printf("%s: state %d (readers saw up to %d, the writer began to publish up to %d): %ld objects and %ld "
           "elements verified; %zu walks: %ld objects and %ld elements seen are there, %ld gone by later "
           "operations\n",
           msg_opts.name, found, lo, hi, obs.objects, obs.elements, seen.nwalks, seen_objects, seen_elements, later);
    printf("verified state=%d objects=%ld elements=%ld walks=%zu seen_objects=%ld seen_elements=%ld\n", found,
           obs.objects, obs.elements, seen.nwalks, seen_objects, seen_elements);
    if (H5Gclose(root) < 0 || H5Fclose(fid) < 0)
        swmr_h5fail("cannot close %s", opt.run.file);
    H5Pclose(fapl);
    cw_free(&obs);
    cl_seen_free(&seen);
    free(lines);
    free(m);
    return 0;
}
