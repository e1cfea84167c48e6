/* Create-write-close of a small file: sec2 against vfd_swmr_writer with no
 * reader (H5Fclose writes everything at once), with one idle reader
 * attached (it holds an older snapshot: H5Fclose keeps publishing until
 * every page has been in the index max_lag ticks) and with one reader that
 * refreshes every 5 ms (H5Fclose ends once it holds the close's snapshot). Each cycle: H5Fcreate, one 1000-int dataset written, H5Fflush,
 * [a reader process opens the file through vfd_swmr_reader], H5Fclose. The
 * medians of the whole cycle and of H5Fclose alone are reported, with
 * tick_len=1;max_lag=3 (0.1 s ticks) like the other benchmarks.
 *   bench_close [-n cycles] FILEDIR OUTDIR      (default 30 cycles, 8 with a reader)
 *   bench_close --reader|--follower FILE        (internal: the attached reader) */
#include "bench_h5.h"

#include <poll.h>

enum mode { M_SEC2, M_VFD, M_VFD_READER, M_VFD_FOLLOWER, M_N };
static const char *const mode_name[M_N] = {"sec2", "vfd_swmr_writer, no reader",
                                           "vfd_swmr_writer, 1 idle reader attached",
                                           "vfd_swmr_writer, 1 reader refreshing every 5 ms"};

/* The reader process: open, say so, wait for end of input (refreshing
 * every 5 ms when following), close. */
static int
reader_main(const char *path, int follow)
{
    hid_t fapl = breader_fapl(CFG_VFD_DISK, 1, 3), f = H5Fopen(path, H5F_ACC_RDONLY, fapl), d;
    struct pollfd in = {.fd = 0, .events = POLLIN};
    char c;

    BCHECK(f);
    BCHECK(d = H5Dopen2(f, "d", H5P_DEFAULT));
    printf("attached\n");
    fflush(stdout);
    for (;;) {
        if (poll(&in, 1, 5) > 0 && read(0, &c, 1) <= 0)
            break;
        if (follow)
            BCHECK(H5Drefresh(d));
    }
    H5Dclose(d);
    H5Fclose(f);
    H5Pclose(fapl);
    return 0;
}

struct run {
    enum mode m;
    const char *dir, *self;
    int cycles;
};
struct times {
    double cycle[64], close[64];
};

static void
cycles(void *ctx, void *out)
{
    const struct run *r = ctx;
    struct times *t = out;
    char path[4200];
    int v[1000];
    hsize_t n = 1000;

    for (int i = 0; i < 1000; i++)
        v[i] = i;
    BFMT(path, "%s/bench_close.h5", r->dir);
    for (int c = 0; c < r->cycles; c++) {
        bremove(path);
        hid_t fapl = bwriter_fapl(r->m == M_SEC2 ? CFG_SEC2 : CFG_VFD_DISK, 1, 3, NULL);
        double t0 = vfdswmr_now();
        hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl), sp = H5Screate_simple(1, &n, NULL);
        hid_t d = H5Dcreate2(f, "d", H5T_NATIVE_INT, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        BCHECK(d);
        BCHECK(H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v));
        H5Dclose(d);
        H5Sclose(sp);
        BCHECK(H5Fflush(f, H5F_SCOPE_GLOBAL));
        double excluded = 0;
        pid_t pid = -1;
        int to = -1, from = -1;
        if (r->m >= M_VFD_READER) { /* not timed: the reader's start */
            double e0 = vfdswmr_now();
            vfdswmr_sleep(0.25); /* the flush published (0.1 s ticks) */
            char *argv[] = {(char *)r->self, r->m == M_VFD_READER ? "--reader" : "--follower", path, NULL},
                 line[32] = "";
            pid = bspawn_piped(argv, &to, &from);
            if (read(from, line, sizeof line - 1) <= 0 || strncmp(line, "attached", 8) != 0)
                bdie("the reader did not attach");
            excluded = vfdswmr_now() - e0;
        }
        double c0 = vfdswmr_now();
        BCHECK(H5Fclose(f));
        double c1 = vfdswmr_now();
        H5Pclose(fapl);
        t->close[c] = c1 - c0;
        t->cycle[c] = c1 - t0 - excluded;
        if (pid > 0) {
            close(to);
            close(from);
            waitpid(pid, NULL, 0);
        }
    }
    bremove(path);
}

int
main(int argc, char **argv)
{
    int n = 30, opt;

    if (argc == 3 && (!strcmp(argv[1], "--reader") || !strcmp(argv[1], "--follower")))
        return reader_main(argv[2], !strcmp(argv[1], "--follower"));
    while ((opt = getopt(argc, argv, "n:")) != -1)
        if (opt == 'n')
            n = atoi(optarg);
    if (optind + 2 != argc || n < 1 || n > 64)
        bdie("usage: bench_close [-n cycles (1-64)] FILEDIR OUTDIR");
    bmkdir(argv[optind]);
    FILE *csv = bcsv(argv[optind + 1], "close.csv", "mode,cycle_ms,close_ms");
    double base_cycle = 0, base_close = 0;
    printf("| mode | cycles | create-write-close, median | H5Fclose, median | cycle / sec2 |\n");
    printf("| --- | ---: | ---: | ---: | ---: |\n");
    for (int m = 0; m < M_N; m++) {
        struct run r = {m, argv[optind], argv[0], m >= M_VFD_READER ? (n < 8 ? n : 8) : n};
        struct times t;
        bisolated(cycles, &r, &t, sizeof t);
        for (int c = 0; c < r.cycles; c++)
            fprintf(csv, "%s,%.3f,%.3f\n", mode_name[m], t.cycle[c] * 1e3, t.close[c] * 1e3);
        double cyc = bmedian(t.cycle, (size_t)r.cycles), cl = bmedian(t.close, (size_t)r.cycles);
        if (m == M_SEC2) {
            base_cycle = cyc;
            base_close = cl;
        }
        printf("| %s | %d | %.0f us | %.0f us | %.2fx |\n", mode_name[m], r.cycles, cyc * 1e6, cl * 1e6,
               cyc / base_cycle);
    }
    printf("\nsec2's H5Fclose: %.0f us.\n", base_close * 1e6);
    fclose(csv);
    return 0;
}
