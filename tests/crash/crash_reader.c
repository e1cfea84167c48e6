/*
 * crash_reader: a reader of the crash harness. An ordinary HDF5 program (file access
 * property list from H5Pcreate with evict-on-close, so HDF5_DRIVER selects the driver;
 * H5F_ACC_RDONLY, plus H5F_ACC_SWMR_READ with --swmr).
 *
 *   crash_reader --file F --progress P --seen LOG --seed S --mix M [--name R] [--swmr]
 *                [--pause-us US] [--timeout SEC]
 *
 * It opens the file (retrying until it opens) and its root group, then walks it over and
 * over, one snapshot per walk as README says: H5Grefresh the root group once (adopting the
 * newest snapshot), then open everything below afresh (evict-on-close), reading every attribute
 * and every dataset whole, checking each value against the workload's value functions
 * (a wrong value fails at once). The walk must equal the model's state K for some K from
 * the state of its previous walk to the newest state the writer has begun to publish
 * (progress file, read after the walk); anything else fails with the differences. Each
 * walk that shows a state not logged before is appended to the seen log (crash_log.h),
 * fflush'd.
 *
 * A walk that fails because the reader fell behind (the driver's "fell behind" error) proves
 * nothing and is retried; 200 such failures in a row fail. SIGTERM or SIGINT make it finish
 * the current walk, log it and exit 0. Exit 1 with a message on stderr on any failure, or
 * when --timeout seconds (default 300) pass without a signal.
 */
#include "crash_log.h"
#include "crash_model.h"
#include "crash_walk.h"

#include "../swmr/swmr_common.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

static struct {
    cl_run_t run;
    const char *seen, *name;
    bool swmr;
    long pause_us, timeout_s;
} opt = {.name = "reader", .pause_us = 2000, .timeout_s = 300};

static volatile sig_atomic_t stop;

static void
on_signal(int sig)
{
    (void)sig;
    stop = 1;
}

static void
usage(void)
{
    fprintf(stderr, "usage: crash_reader --file F --progress P --seen LOG --seed S --mix M [--name R] [--swmr]\n"
                    "  [--pause-us US] [--timeout SEC]\n");
    exit(2);
}

static void
parse(int argc, char **argv)
{
    static const struct option lo[] = {{"file", 1, 0, 'f'}, {"progress", 1, 0, 'p'}, {"seen", 1, 0, 'l'},
                                       {"seed", 1, 0, 's'}, {"mix", 1, 0, 'm'},      {"name", 1, 0, 'n'},
                                       {"swmr", 0, 0, 'w'}, {"pause-us", 1, 0, 'u'}, {"timeout", 1, 0, 't'},
                                       {0, 0, 0, 0}};
    int c;

    while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
        if (cl_run_opt("crash_reader", c, optarg, &opt.run))
            continue;
        switch (c) {
        case 'l':
            opt.seen = optarg;
            break;
        case 'n':
            opt.name = optarg;
            break;
        case 'w':
            opt.swmr = true;
            break;
        case 'u':
            opt.pause_us = cl_num("crash_reader", "pause-us", optarg, 0, 10000000);
            break;
        case 't':
            opt.timeout_s = cl_num("crash_reader", "timeout", optarg, 1, 36000);
            break;
        default:
            usage();
        }
    }
    if (optind != argc || !opt.run.file || !opt.run.progress || !opt.seen || !opt.run.mix)
        usage();
}

/* Find the state in [m->state, hi] the walk shows; advance *m to it. Returns false (with the
 * differences from the closest candidate in msg) when there is none. */
static bool
match(cm_state_t *m, cm_state_t *scratch, cw_obs_t *obs, int hi, char (*lines)[CM_LINELEN], char *msg, size_t n)
{
    uint64_t want = cm_desc_hash(obs->lines, obs->nlines);
    size_t best = (size_t)-1;
    int best_state = -1;

    *scratch = *m;
    for (;;) {
        size_t nl = cm_describe(scratch, lines), nd;

        if (nl == obs->nlines && cm_desc_hash(lines, nl) == want &&
            !cw_diff(obs->lines, obs->nlines, lines, nl, msg, n, 0)) {
            *m = *scratch;
            return true;
        }
        if ((nd = cw_diff(obs->lines, obs->nlines, lines, nl, NULL, 0, 0)) < best) {
            best = nd;
            best_state = scratch->state;
        }
        if (scratch->state >= hi)
            break;
        cm_advance(scratch);
    }
    /* describe the closest candidate */
    *scratch = *m;
    while (scratch->state < best_state)
        cm_advance(scratch);
    {
        size_t nl = cm_describe(scratch, lines);
        int len = snprintf(msg, n, "closest is state %d (%zu differences):", best_state, best);

        if (len > 0 && (size_t)len < n)
            cw_diff(obs->lines, obs->nlines, lines, nl, msg + len, n - (size_t)len, 12);
    }
    return false;
}

static hid_t
open_retry(unsigned flags, hid_t fapl, int64_t deadline)
{
    hid_t fid;

    for (;;) {
        H5E_BEGIN_TRY
        {
            fid = H5Fopen(opt.run.file, flags, fapl);
        }
        H5E_END_TRY
        if (fid >= 0)
            return fid;
        if (stop)
            return -1;
        if (now_ns() > deadline) {
            if ((fid = H5Fopen(opt.run.file, flags, fapl)) < 0)
                swmr_h5fail("cannot open %s within %ld s", opt.run.file, opt.timeout_s);
            return fid;
        }
        vfdswmr_sleep(0.005);
    }
}

int
main(int argc, char **argv)
{
    static opts_t msg_opts = {.prog = "crash_reader"};
    struct sigaction sa;
    cm_state_t *m = xcalloc(1, sizeof *m), *scratch = xcalloc(1, sizeof *scratch);
    char(*lines)[CM_LINELEN] = xcalloc(cm_desc_max(), CM_LINELEN);
    cw_obs_t obs = {0};
    cl_progress_t p;
    FILE *seen;
    hid_t fapl, fid;
    unsigned flags;
    int64_t t0 = now_ns(), deadline;
    long walks = 0, logged = 0, lagged = 0, lag_streak = 0;
    int first_state = -1, last_logged = -1;
    static char err[8192], msg[8192];

    swmr_opts = &msg_opts;
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    parse(argc, argv);
    msg_opts.name = opt.name;
    deadline = t0 + (int64_t)opt.timeout_s * 1000000000;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    seen = cl_open_append(opt.seen);
    cl_line(seen, "crash-seen seed=%" PRIu64 " mix=%s reader=%s", opt.run.seed, opt.run.mix->name, opt.name);

    if ((fapl = H5Pcreate(H5P_FILE_ACCESS)) < 0 || H5Pset_evict_on_close(fapl, true) < 0)
        swmr_h5fail("cannot set up the file access property list");
    flags = H5F_ACC_RDONLY | (opt.swmr ? H5F_ACC_SWMR_READ : 0);
    if ((fid = open_retry(flags, fapl, deadline)) < 0) {
        printf("reader %s: stopped before the file could be opened\n", opt.name);
        return 0;
    }
    /* the writer wrote the progress file's header before creating the file */
    cl_progress_read(opt.run.progress, &p);
    if (p.seed != opt.run.seed || strcmp(p.mix, opt.run.mix->name))
        swmr_fail("%s is of seed %" PRIu64 " mix %s, not seed %" PRIu64 " mix %s", opt.run.progress, p.seed, p.mix,
                  opt.run.seed, opt.run.mix->name);
    cm_init(m, opt.run.seed, opt.run.mix, p.swmr);
    /* The root group stays open: a reader whose snapshot the writer released
     * (it fell behind) could not load the root group's header to open it
     * again; H5Grefresh of the open group adopts the newest snapshot first. */
    hid_t root = H5Gopen2(fid, "/", H5P_DEFAULT);
    if (root < 0)
        swmr_h5fail("cannot open the root group");
    while (!stop) {
        cw_result_t rc;

        if (now_ns() > deadline)
            swmr_fail("nobody stopped this reader within %ld s (%ld walks)", opt.timeout_s, walks);
        if (H5Grefresh(root) < 0)
            swmr_h5fail("H5Grefresh of the root group failed");
        rc = cw_walk(root, opt.run.seed, &obs, err, sizeof err);
        if (rc == CW_VALUE)
            swmr_fail("walk %ld: %s", walks + 1, err);
        if (rc == CW_HDF5) {
            if (!strstr(err, "fell behind"))
                swmr_fail("walk %ld: %s", walks + 1, err);
            lagged++;
            if (++lag_streak >= 200)
                swmr_fail("%ld walks in a row fell behind the writer; the last: %s", lag_streak, err);
            continue;
        }
        lag_streak = 0;
        walks++;
        cl_progress_read(opt.run.progress, &p);
        if (!match(m, scratch, &obs, p.last_begin, lines, msg, sizeof msg))
            swmr_fail("walk %ld shows no state of the workload from %d (the previous walk's) to %d (the newest "
                      "the writer began to publish); %s",
                      walks, m->state, p.last_begin, msg);
        if (first_state < 0)
            first_state = m->state;
        if (m->state != last_logged) {
            fprintf(seen, "walk %ld state %d lines %zu\n", walks, m->state, obs.nlines);
            for (size_t i = 0; i < obs.nlines; i++)
                fprintf(seen, "%s\n", obs.lines[i]);
            fprintf(seen, "end %ld\n", walks);
            if (fflush(seen) == EOF || ferror(seen))
                swmr_fail("cannot write %s: %s", opt.seen, strerror(errno));
            last_logged = m->state;
            logged++;
        }
        if (opt.pause_us && !stop)
            vfdswmr_sleep(opt.pause_us * 1e-6);
    }
    printf("reader %s: %ld walks, %ld states logged (%d to %d), %ld walks fell behind, %.2f s\n", opt.name, walks,
           logged, first_state, last_logged, lagged, (double)(now_ns() - t0) / 1e9);
    if (H5Gclose(root) < 0)
        swmr_h5fail("cannot close the root group");
    if (H5Fclose(fid) < 0)
        swmr_h5fail("cannot close %s", opt.run.file);
    H5Pclose(fapl);
    cw_free(&obs);
    fclose(seen);
    free(lines);
    free(m);
    free(scratch);
    return 0;
}
