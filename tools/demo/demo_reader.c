/*
 * demo_reader FILE NAME: an ordinary HDF5 reader for the live demo. Opens
 * FILE read-only (retrying until the writer has made it readable), then
 * every 0.1 s refreshes /samples and /runs (H5Drefresh, H5Grefresh) and
 * prints what is new, at most once a second: the newest sample with the
 * delay between the writer's time stamp and the moment this reader first saw
 * it, and every new group. Stops
 * when /samples carries the attribute "done", printing the delays' median
 * and maximum. Every sample's value is checked against its time stamp.
 */
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double
now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void
pause_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static int
cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int
main(int argc, char **argv)
{
    hid_t file = H5I_INVALID_HID;
    double *delays = NULL, start = now(), last_print = 0;
    size_t seen = 0, ndelays = 0;
    hsize_t groups_seen = 0;
    int first = 1;
    const char *me = argc == 3 ? argv[2] : "reader";

    if (argc != 3) {
        fprintf(stderr, "usage: demo_reader FILE NAME\n");
        return 2;
    }
    while (file < 0) { /* the file becomes readable at the writer's first flush */
        H5E_BEGIN_TRY
        {
            file = H5Fopen(argv[1], H5F_ACC_RDONLY, H5P_DEFAULT);
        }
        H5E_END_TRY
        if (file < 0) {
            if (now() - start > 30) {
                fprintf(stderr, "%s: cannot open %s\n", me, argv[1]);
                return 1;
            }
            pause_ms(50);
        }
    }
    printf("%s: opened %s\n", me, argv[1]);
    for (;;) {
        hid_t samples, runs, value, stamp, space;
        hsize_t n = 0;
        H5G_info_t info;
        int done;

        samples = H5Gopen2(file, "samples", H5P_DEFAULT);
        runs = H5Gopen2(file, "runs", H5P_DEFAULT);
        if (samples < 0 || runs < 0 || H5Grefresh(samples) < 0 || H5Grefresh(runs) < 0)
            return 1;
        value = H5Dopen2(samples, "value", H5P_DEFAULT);
        stamp = H5Dopen2(samples, "stamp", H5P_DEFAULT);
        if (value < 0 || stamp < 0 || H5Drefresh(value) < 0 || H5Drefresh(stamp) < 0)
            return 1;
        space = H5Dget_space(value);
        H5Sget_simple_extent_dims(space, &n, NULL);
        H5Sclose(space);
        if (n > seen) {
            double *v = malloc(n * sizeof *v), *s = malloc(n * sizeof *s), t = now();
            hsize_t sn = 0;
            space = H5Dget_space(stamp);
            H5Sget_simple_extent_dims(space, &sn, NULL);
            H5Sclose(space);
            if (sn < n) /* both grow in the same consistency point: never */
                return fprintf(stderr, "%s: %llu values but %llu stamps\n", me, (unsigned long long)n,
                               (unsigned long long)sn),
                       1;
            if (H5Dread(value, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0)
                return 1;
            hid_t ms = H5Screate_simple(1, &n, NULL), fs = H5Dget_space(stamp);
            hsize_t zero = 0;
            H5Sselect_hyperslab(fs, H5S_SELECT_SET, &zero, NULL, &n, NULL);
            if (H5Dread(stamp, H5T_NATIVE_DOUBLE, ms, fs, H5P_DEFAULT, s) < 0)
                return 1;
            H5Sclose(ms);
            H5Sclose(fs);
            /* samples already there when this reader arrived are no measure of delay */
            delays = realloc(delays, n * sizeof *delays);
            for (size_t i = seen; i < n && !first; i++)
                delays[ndelays++] = t - s[i];
            if (first)
                printf("%s: found %llu samples already written\n", me, (unsigned long long)n);
            first = 0;
            if (t - last_print >= 1.0) {
                printf("%s: %4llu samples, newest %+.3f, seen %.3f s after it was written\n", me, (unsigned long long)n,
                       v[n - 1], t - s[n - 1]);
                last_print = t;
            }
            seen = n;
            free(v);
            free(s);
        }
        if (H5Gget_info(runs, &info) >= 0 && info.nlinks > groups_seen) {
            for (hsize_t i = groups_seen; i < info.nlinks; i++)
                printf("%s: new group /runs/run_%llu\n", me, (unsigned long long)i);
            groups_seen = info.nlinks;
        }
        done = H5Aexists(samples, "done") > 0;
        H5Dclose(value);
        H5Dclose(stamp);
        H5Gclose(samples);
        H5Gclose(runs);
        fflush(stdout);
        if (done)
            break;
        pause_ms(100);
    }
    if (ndelays) {
        qsort(delays, ndelays, sizeof *delays, cmp);
        printf("%s: writer finished; %zu samples, delay median %.3f s, max %.3f s\n", me, ndelays, delays[ndelays / 2],
               delays[ndelays - 1]);
    }
    free(delays);
    return H5Fclose(file) < 0;
}
