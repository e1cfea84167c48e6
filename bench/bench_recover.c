/*
 * bench_recover DIR RECOVER: peak memory and time of crash recovery
 * (`vfd_swmr_recover`, the program RECOVER) on metadata files made in DIR:
 *  - honest: a writer session that published M bytes of metadata in 4 KiB
 *    pages (the metadata file writer of the drivers, mdfile/), killed
 *    before it closed, for M = 1 MiB and 1 GiB; the HDF5 file is as long as
 *    the snapshot (a sparse file of that size);
 *  - crafted: a sparse metadata file whose index states 8 images of 2 GiB
 *    (wrong checksums), and one whose index names 2^21 pages of 4 KiB whose
 *    images are holes (valid checksums, the last one wrong): what an
 *    attacker or a damaged disk hands recovery.
 * For each: the command's exit status, wall time and peak RSS (wait4), and
 * what it printed first. Prints a Markdown table. Not a test: it never
 * fails on a number.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "checksum.h"
#include "clock.h"
#include "craftmd.h"
#include "format.h"
#include "io.h"
#include "mdwriter.h"

#define PS 4096u

static void
die(const char *what)
{
    fprintf(stderr, "bench_recover: %s: %s\n", what, strerror(errno));
    exit(1);
}

static void
make_hdf5(const char *h5, uint64_t size)
{
    int fd = open(h5, O_RDWR | O_CREAT | O_TRUNC, 0644);

    if (fd < 0 || ftruncate(fd, (off_t)size) < 0 || close(fd) < 0)
        die(h5);
}

static uint64_t
inode_of(const char *path)
{
    struct stat st;

    if (stat(path, &st) < 0)
        die(path);
    return (uint64_t)st.st_ino;
}

/* A session that published `pages` pages of metadata, 8192 a tick, and
 * died (the metadata file stays). */
static void
honest(const char *h5, const char *md, uint64_t pages)
{
    static uint8_t img[PS];
    static const vfdswmr_mdrange_t whole = {0, PS};
    enum { BATCH = 8192 };
    vfdswmr_mdchange_t *c = calloc(BATCH, sizeof *c);
    vfdswmr_mdw_opts_t o = {.page_size = PS, .reserved_pages = 2, .max_lag = 3, .md_path = md, .tick_len = 1};
    vfdswmr_mdw_t *w;
    char err[VFDSWMR_MDW_ERRLEN];

    make_hdf5(h5, (pages + 1) * PS);
    o.hdf5_id = inode_of(h5);
    unlink(md);
    if (c == NULL || vfdswmr_mdw_open(&o, &w, err, sizeof err) < 0 || vfdswmr_mdw_link(w, false, err, sizeof err) < 0) {
        fprintf(stderr, "bench_recover: %s\n", c ? err : "out of memory");
        exit(1);
    }
    memset(img, 0x5a, sizeof img);
    for (uint64_t first = 1; first <= pages; first += BATCH) {
        size_t n = 0;
        for (uint64_t p = first; p <= pages && n < BATCH; p++)
            c[n++] = (vfdswmr_mdchange_t){.hdf5_page = p, .length = PS, .image = img, .ranges = &whole, .nranges = 1};
        if (vfdswmr_mdw_publish(w, (pages + 1) * PS, c, n, NULL, 0, 0, err, sizeof err) < 0) {
            fprintf(stderr, "bench_recover: %s\n", err);
            exit(1);
        }
    }
    if (vfdswmr_mdw_close(w, true, err, sizeof err) < 0) { /* "crash": the metadata file stays */
        fprintf(stderr, "bench_recover: %s\n", err);
        exit(1);
    }
    free(c);
}

/* A metadata file made by hand (tests/unit/craftmd.h): n entries of `len`
 * bytes each, images that are holes, checksums of that many zeros (the
 * last one wrong) or all wrong; the HDF5 file as long as it says. */
static void
crafted(const char *h5, const char *md, uint32_t n, uint32_t len, bool zero_sums)
{
    uint8_t *zeros = zero_sums ? calloc(1, len) : NULL;
    uint32_t sum = 0x12345678;
    uint64_t eoa;

    if (zero_sums) {
        if (zeros == NULL)
            die("out of memory");
        sum = vfdswmr_checksum(zeros, len);
        free(zeros);
    }
    make_hdf5(h5, (1 + n * vfdswmr_pages(len, PS)) * PS);
    if (craft_md(md, PS, n, len, sum, sum ^ 1, inode_of(h5), &eoa) < 0)
        die(md);
}

/* Run `RECOVER h5`, print one row. */
static void
run(const char *prog, const char *h5, const char *md, const char *what)
{
    char out[4096], first[160] = "";
    struct rusage ru;
    struct stat st;
    double t0 = vfdswmr_now(), t;
    int status, fd;
    pid_t pid;
    FILE *f;

    snprintf(out, sizeof out, "%s.out", md);
    if (stat(md, &st) < 0)
        die(md);
    if ((pid = fork()) == 0) {
        if ((fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644)) < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
            _exit(127);
        execl(prog, prog, h5, (char *)NULL);
        _exit(127);
    }
    if (pid < 0 || wait4(pid, &status, 0, &ru) != pid)
        die("wait4");
    t = vfdswmr_now() - t0;
    if ((f = fopen(out, "r")) != NULL) {
        if (fgets(first, sizeof first, f) == NULL)
            first[0] = '\0';
        fclose(f);
    }
    first[strcspn(first, "\n")] = '\0';
    for (char *c = first; *c; c++)
        if (*c == '|')
            *c = '/';
    printf("| %s | %.1f MiB (%.1f MiB on disk) | %d | %.2f | %.1f | %s |\n", what, st.st_size / 1048576.0,
           st.st_blocks * 512 / 1048576.0, WIFEXITED(status) ? WEXITSTATUS(status) : -1, t, ru.ru_maxrss / 1024.0,
           first);
    unlink(out);
    unlink(md);
    unlink(h5);
}

int
main(int argc, char **argv)
{
    char h5[4096], md[4200];

    if (argc != 3) {
        fprintf(stderr, "usage: bench_recover DIR RECOVER_PROGRAM\n");
        return 2;
    }
    snprintf(h5, sizeof h5, "%s/bench_recover.h5", argv[1]);
    snprintf(md, sizeof md, "%s.md", h5);
    printf("| case | metadata file | exit | seconds | peak RSS MiB | first line printed |\n");
    printf("| --- | ---: | ---: | ---: | ---: | --- |\n");
    honest(h5, md, 256);
    run(argv[2], h5, md, "honest, 1 MiB of metadata (256 pages)");
    honest(h5, md, 262144);
    run(argv[2], h5, md, "honest, 1 GiB of metadata (262,144 pages)");
    crafted(h5, md, 8, 1u << 31, false);
    run(argv[2], h5, md, "crafted: 8 images of 2 GiB, holes, wrong checksums");
    crafted(h5, md, 1u << 21, PS, true);
    run(argv[2], h5, md, "crafted: 2^21 images of 4 KiB, holes, valid checksums but the last");
    return 0;
}
