/*
 * demo_writer FILE SECONDS: an ordinary HDF5 writer for the live demo. Every
 * 0.2 s it appends a sample to /samples/value and its monotonic time stamp to
 * /samples/stamp and calls H5Fflush; every 2 s it creates a group
 * /runs/run_N with an attribute; at the end it sets the attribute "done" on
 * /samples and closes. The driver comes from the environment.
 */
#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double
now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static hid_t
make_series(hid_t grp, const char *name)
{
    hsize_t zero = 0, unlim = H5S_UNLIMITED, chunk = 64;
    hid_t space = H5Screate_simple(1, &zero, &unlim), dcpl = H5Pcreate(H5P_DATASET_CREATE), d;

    H5Pset_chunk(dcpl, 1, &chunk);
    d = H5Dcreate2(grp, name, H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    H5Pclose(dcpl);
    H5Sclose(space);
    return d;
}

static int
append(hid_t d, hsize_t n, double v)
{
    hsize_t size = n + 1, start = n, one = 1;
    hid_t fs, ms;
    int rc;

    if (H5Dset_extent(d, &size) < 0 || (fs = H5Dget_space(d)) < 0)
        return -1;
    H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, NULL, &one, NULL);
    ms = H5Screate_simple(1, &one, NULL);
    rc = H5Dwrite(d, H5T_NATIVE_DOUBLE, ms, fs, H5P_DEFAULT, &v);
    H5Sclose(ms);
    H5Sclose(fs);
    return rc;
}

int
main(int argc, char **argv)
{
    double seconds = argc == 3 ? atof(argv[2]) : 0, t0 = now(), next_group = 0;
    hid_t file, samples, runs, value, stamp;
    hsize_t n = 0;
    int groups = 0, one = 1;

    if (argc != 3 || seconds <= 0) {
        fprintf(stderr, "usage: demo_writer FILE SECONDS\n");
        return 2;
    }
    if ((file = H5Fcreate(argv[1], H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT)) < 0)
        return 1;
    samples = H5Gcreate2(file, "samples", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    runs = H5Gcreate2(file, "runs", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    value = make_series(samples, "value");
    stamp = make_series(samples, "stamp");
    if (samples < 0 || runs < 0 || value < 0 || stamp < 0 || H5Fflush(file, H5F_SCOPE_GLOBAL) < 0)
        return 1;
    while (now() - t0 < seconds) {
        double t = now() - t0;
        if (t >= next_group) {
            char name[32];
            hid_t g, s = H5Screate(H5S_SCALAR), a;
            snprintf(name, sizeof name, "run_%d", groups);
            g = H5Gcreate2(runs, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
            a = H5Acreate2(g, "started_at_sample", H5T_NATIVE_HSIZE, s, H5P_DEFAULT, H5P_DEFAULT);
            H5Awrite(a, H5T_NATIVE_HSIZE, &n);
            H5Aclose(a);
            H5Sclose(s);
            H5Gclose(g);
            printf("writer: created group /runs/%s\n", name);
            groups++;
            next_group += 2.0;
        }
        if (append(value, n, sin(t)) < 0 || append(stamp, n, now()) < 0 || H5Fflush(file, H5F_SCOPE_GLOBAL) < 0)
            return 1;
        n++;
        if (n % 10 == 0)
            printf("writer: %llu samples written\n", (unsigned long long)n);
        fflush(stdout);
        struct timespec pause = {0, 200 * 1000 * 1000};
        nanosleep(&pause, NULL);
    }
    hid_t s = H5Screate(H5S_SCALAR), a = H5Acreate2(samples, "done", H5T_NATIVE_INT, s, H5P_DEFAULT, H5P_DEFAULT);
    H5Awrite(a, H5T_NATIVE_INT, &one);
    H5Aclose(a);
    H5Sclose(s);
    H5Dclose(value);
    H5Dclose(stamp);
    H5Gclose(samples);
    H5Gclose(runs);
    printf("writer: done, %llu samples, %d groups; closing\n", (unsigned long long)n, groups);
    return H5Fclose(file) < 0;
}
