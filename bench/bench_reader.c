/* Reader overhead on a closed file: open it, read every dataset whole, close,
 * once through sec2 and once through vfd_swmr_reader (tick_len=1, max_lag=3,
 * no writer running, so the reader reads the HDF5 file directly after finding
 * no metadata file) -- and then through vfd_swmr_reader while a writer
 * process holds the file open without changing it (the reader registers,
 * reads through the writer's snapshot, the list of kept old bytes after
 * every read from the HDF5 file, and the lag check). Two files, written with
 * sec2 beforehand:
 *   large  10 datasets of N x 1000 x 1000 int32, chunk 1 x 1000 x 1000 (W1 shape)
 *   small  1000 datasets of 3200 int32, chunk 256 (W2 shape)
 * Page cache warm (one discarded pass each); R alternating repetitions, medians,
 * ratio reader / sec2.   bench_reader [-n planes] [-r reps] FILEDIR OUTDIR  (4, 11)
 *                        bench_reader --writer FILE   (internal: the idle writer) */
#include "bench_h5.h"

/* The idle writer: open FILE read-write, say so, wait for the end of input. */
static int
writer_main(const char *path)
{
    hid_t fapl = bwriter_fapl(CFG_VFD_DISK, 1, 3, NULL), f = H5Fopen(path, H5F_ACC_RDWR, fapl);
    char c;

    BCHECK(f);
    printf("open\n");
    fflush(stdout);
    while (read(0, &c, 1) > 0)
        ;
    BCHECK(H5Fclose(f));
    H5Pclose(fapl);
    return 0;
}

typedef struct writer_t {
    pid_t pid;
    int in; /* its standard input: closing it ends it */
} writer_t;

static writer_t
writer_start(const char *self, const char *path)
{
    char *argv[] = {(char *)self, "--writer", (char *)path, NULL}, line[16] = {0};
    int from;
    writer_t w;

    w.pid = bspawn_piped(argv, &w.in, &from);
    if (read(from, line, sizeof line - 1) <= 0 || strncmp(line, "open", 4) != 0)
        bdie("the writer did not open %s", path);
    close(from);
    return w;
}

static void
writer_stop(writer_t w)
{
    int st;

    close(w.in);
    if (waitpid(w.pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
        bdie("the writer failed");
}

static void
make_file(const char *path, int large, int n)
{
    bremove(path);
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    BCHECK(f);
    int nd = large ? 10 : 1000, rank = large ? 3 : 1;
    hsize_t dims[3] = {large ? (hsize_t)n : 3200, 1000, 1000}, chunk[3] = {large ? 1 : 256, 1000, 1000};
    size_t total = large ? (size_t)n * 1000000u : 3200;
    int *buf = malloc(total * sizeof *buf);
    if (!buf)
        bdie("out of memory");
    for (size_t i = 0; i < total; i++)
        buf[i] = (int)i;
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    BCHECK(H5Pset_chunk(dcpl, rank, chunk));
    hid_t sp = H5Screate_simple(rank, dims, NULL);
    for (int i = 0; i < nd; i++) {
        char name[32];
        snprintf(name, sizeof name, "d%05d", i);
        hid_t d = H5Dcreate2(f, name, H5T_NATIVE_INT32, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
        BCHECK(d);
        BCHECK(H5Dwrite(d, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf));
        H5Dclose(d);
    }
    H5Sclose(sp);
    H5Pclose(dcpl);
    H5Fclose(f);
    free(buf);
}

static double
read_all(const char *path, enum bcfg c, int large, int n, int *buf)
{
    hid_t fapl = breader_fapl(c, 1, 3);
    double t0 = vfdswmr_now();
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, fapl);
    BCHECK(f);
    int nd = large ? 10 : 1000;
    long long sum = 0;
    for (int i = 0; i < nd; i++) {
        char name[32];
        snprintf(name, sizeof name, "d%05d", i);
        hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
        BCHECK(d);
        BCHECK(H5Dread(d, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf));
        sum += buf[large ? (size_t)n * 1000000u - 1 : 3199];
        H5Dclose(d);
    }
    BCHECK(H5Fclose(f));
    double t = vfdswmr_now() - t0;
    H5Pclose(fapl);
    if (sum != (long long)nd * (large ? n * 1000000 - 1 : 3199))
        bdie("wrong data read from %s", path);
    return t;
}

int
main(int argc, char **argv)
{
    int n = 4, reps = 11, opt;
    if (argc == 3 && strcmp(argv[1], "--writer") == 0)
        return writer_main(argv[2]);
    while ((opt = getopt(argc, argv, "n:r:")) != -1) {
        switch (opt) {
        case 'n':
            n = atoi(optarg);
            break;
        case 'r':
            reps = atoi(optarg);
            break;
        default:
            bdie("usage: bench_reader [-n planes] [-r reps] FILEDIR OUTDIR");
        }
    }
    if (argc - optind != 2 || n < 1 || n > 2000 || reps < 1 || reps > 100)
        bdie("usage: bench_reader [-n planes] [-r reps] FILEDIR OUTDIR");
    int *buf = malloc((size_t)n * 1000000u * sizeof *buf);
    if (!buf)
        bdie("out of memory");
    FILE *csv = bcsv(argv[optind + 1], "reader.csv", "file,sec2_s,reader_s,ratio,live_s,live_ratio");
    printf("Open, read every dataset whole, close; page cache warm; median of %d alternating runs (sec2 and the\n"
           "reader on the closed file), then %d runs while a writer holds the file open, idle.\n\n",
           reps, reps);
    printf("| file | sec2 s | vfd_swmr_reader s | reader / sec2 | reader, writer idle s | that / sec2 |\n"
           "| --- | ---: | ---: | ---: | ---: | ---: |\n");
    for (int large = 1; large >= 0; large--) {
        char path[4096];
        BFMT(path, "%s/bench_reader_%s.h5", argv[optind], large ? "large" : "small");
        make_file(path, large, n);
        double ts[100], tr[100];
        read_all(path, CFG_SEC2, large, n, buf);
        read_all(path, CFG_VFD_DISK, large, n, buf);
        for (int r = 0; r < reps; r++) {
            ts[r] = read_all(path, CFG_SEC2, large, n, buf);
            tr[r] = read_all(path, CFG_VFD_DISK, large, n, buf);
        }
        writer_t w = writer_start(argv[0], path);
        double tl[100];
        read_all(path, CFG_VFD_DISK, large, n, buf);
        for (int r = 0; r < reps; r++)
            tl[r] = read_all(path, CFG_VFD_DISK, large, n, buf);
        writer_stop(w);
        double ms = bmedian(ts, (size_t)reps), mr = bmedian(tr, (size_t)reps), ml = bmedian(tl, (size_t)reps);
        char label[64];
        if (large)
            snprintf(label, sizeof label, "10 x %d x 1000 x 1000 int32", n);
        else
            snprintf(label, sizeof label, "1000 x 3200 int32");
        printf("| %s | %.4f | %.4f | %.3f | %.4f | %.3f |\n", label, ms, mr, mr / ms, ml, ml / ms);
        fprintf(csv, "\"%s\",%.6f,%.6f,%.4f,%.6f,%.4f\n", label, ms, mr, mr / ms, ml, ml / ms);
        bremove(path);
    }
    printf("\n");
    fclose(csv);
    free(buf);
    return 0;
}
