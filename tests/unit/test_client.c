/*
 * The client library's setters, and what reaches the HDF5 error stack when a
 * driver selected through them fails. Needs HDF5_PLUGIN_PATH to name the
 * built plugins (make check sets it).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vfdswmr.h"

#include "testdir.h"

static void
path_of(char *out, size_t len, const char *name)
{
    snprintf(out, len, "%s/%s", dir, name);
}

/* Write 1000 integers through `fapl` (or through sec2 when `fapl` is a
 * reader's, which opens files read-only), read them back through plain sec2
 * and, for a reader, through `fapl` too. */
static void
roundtrip(hid_t fapl, const char *name, bool reader)
{
    char path[256];
    int out[1000], in[1000];
    hsize_t n = 1000;
    hid_t file, space, dset, sec2;

    path_of(path, sizeof path, name);
    for (int i = 0; i < 1000; i++)
        out[i] = i * 31 - 7;
    sec2 = H5Pcreate(H5P_FILE_ACCESS);
    assert_true(H5Pset_fapl_sec2(sec2) >= 0);
    file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, reader ? sec2 : fapl);
    assert_true(file >= 0);
    space = H5Screate_simple(1, &n, NULL);
    dset = H5Dcreate2(file, "d", H5T_NATIVE_INT, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    assert_true(dset >= 0);
    assert_true(H5Dwrite(dset, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, out) >= 0);
    H5Dclose(dset);
    H5Sclose(space);
    assert_true(H5Fclose(file) >= 0);

    file = H5Fopen(path, H5F_ACC_RDONLY, reader ? fapl : sec2);
    assert_true(file >= 0);
    dset = H5Dopen2(file, "d", H5P_DEFAULT);
    memset(in, 0, sizeof in);
    assert_true(H5Dread(dset, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, in) >= 0);
    assert_memory_equal(in, out, sizeof out);
    H5Dclose(dset);
    H5Fclose(file);
    H5Pclose(sec2);
}

static void
check_setter(herr_t (*setter)(hid_t, const char *), const char *drv_name, bool reader)
{
    char config[64] = "";
    char name[64];
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);

    assert_true(setter(fapl, "max_lag=5;under=sec2") >= 0);
    assert_int_equal(H5Pget_driver_config_str(fapl, config, sizeof config), strlen("max_lag=5;under=sec2"));
    assert_string_equal(config, "max_lag=5;under=sec2");
    assert_int_equal(H5FDis_driver_registered_by_name(drv_name), 1);
    snprintf(name, sizeof name, "%s.h5", drv_name);
    roundtrip(fapl, name, reader);
    /* No configuration at all means the defaults. */
    assert_true(setter(fapl, NULL) >= 0);
    assert_int_equal(H5Pget_driver_config_str(fapl, config, sizeof config), 0);
    snprintf(name, sizeof name, "%s-defaults.h5", drv_name);
    roundtrip(fapl, name, reader);
    H5Pclose(fapl);
}

static void
test_set_fapl_writer(void **state)
{
    (void)state;
    check_setter(vfdswmr_set_fapl_writer, VFDSWMR_WRITER_NAME, false);
}

static void
test_set_fapl_reader(void **state)
{
    (void)state;
    check_setter(vfdswmr_set_fapl_reader, VFDSWMR_READER_NAME, true);
}

/* Collect every description on the current error stack, one per line. */
static herr_t
collect(unsigned n, const H5E_error2_t *e, void *data)
{
    char *buf = data;
    (void)n;
    strncat(buf, e->desc ? e->desc : "", 4095 - strlen(buf));
    strncat(buf, "\n", 4095 - strlen(buf));
    return 0;
}

static void
current_errors(char *buf)
{
    buf[0] = '\0';
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, collect, buf);
}

static void
test_bad_config_on_error_stack(void **state)
{
    char path[256], errors[4096];
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS), file;

    (void)state;
    path_of(path, sizeof path, "bad.h5");
    assert_true(vfdswmr_set_fapl_writer(fapl, "tick_len=4;max_lag=1") >= 0);
    H5E_BEGIN_TRY
    {
        file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    }
    H5E_END_TRY
    assert_true(file < 0);
    current_errors(errors);
    assert_non_null(strstr(errors, "vfd_swmr_writer: bad configuration (HDF5_DRIVER_CONFIG): max_lag=1: out of "
                                   "range; expected an integer from 3 to 100000 (ticks)\n"));
    assert_int_equal(access(path, F_OK), -1);
    H5Pclose(fapl);
}

/* A failure inside the lower driver keeps the lower driver's own messages
 * under ours: the error guard must not erase them. */
static void
test_lower_errors_kept(void **state)
{
    char path[256], errors[4096], want[512];
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS), file;

    (void)state;
    path_of(path, sizeof path, "missing.h5");
    assert_true(vfdswmr_set_fapl_reader(fapl, "") >= 0);
    H5E_BEGIN_TRY
    {
        file = H5Fopen(path, H5F_ACC_RDONLY, fapl);
    }
    H5E_END_TRY
    assert_true(file < 0);
    current_errors(errors);
    snprintf(want, sizeof want, "vfd_swmr_reader: the lower driver \"sec2\" cannot open \"%s\"\n", path);
    assert_non_null(strstr(errors, want));
    /* sec2's own report, with the errno text, comes before ours. */
    assert_non_null(strstr(errors, "unable to open file: name = '"));
    assert_true(strstr(errors, "unable to open file: name = '") < strstr(errors, want));
    H5Pclose(fapl);
}

/* Every call that needs one of our drivers, on files open through other
 * drivers (sec2, core): an error naming the problem, never a crash (the
 * handle H5Fget_vfd_handle gives is then the other driver's, not ours). */
static void
test_calls_on_other_drivers(void **state)
{
    char path[256], errors[4096];

    (void)state;
    for (int core = 0; core < 2; core++) {
        hid_t fapl = H5Pcreate(H5P_FILE_ACCESS), file, dset, space;
        hsize_t n = 10;
        vfdswmr_status_t st;
        vfdswmr_chunk_cache_stats_t cs;

        path_of(path, sizeof path, core ? "other-core.h5" : "other-sec2.h5");
        assert_true((core ? H5Pset_fapl_core(fapl, 1 << 16, 0) : H5Pset_fapl_sec2(fapl)) >= 0);
        file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
        assert_true(file >= 0);
        space = H5Screate_simple(1, &n, NULL);
        dset = H5Dcreate2(file, "d", H5T_NATIVE_INT, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        assert_true(dset >= 0);
        H5E_BEGIN_TRY
        {
            assert_true(vfdswmr_get_status(file, &st) < 0);
            current_errors(errors);
            assert_non_null(strstr(errors, "not open through vfd_swmr_writer, vfd_swmr_reader or vfd_chunk_cache"));
            assert_true(vfdswmr_refresh(file) < 0);
            assert_true(vfdswmr_end_tick(file) < 0);
            assert_true(vfdswmr_disable_end_of_tick(file) < 0);
            assert_true(vfdswmr_enable_end_of_tick(file) < 0);
            assert_true(vfdswmr_chunk_cache_configure(file, 1 << 20, 0, ~0ull) < 0);
            assert_true(vfdswmr_chunk_cache_get_stats(file, &cs) < 0);
            assert_true(vfdswmr_chunk_cache_get_stats(dset, &cs) < 0);
            current_errors(errors); /* through a dataset too (the client opens the file's identifier) */
            assert_non_null(strstr(errors, "not open through vfd_swmr_writer, vfd_swmr_reader or vfd_chunk_cache"));
            assert_true(vfdswmr_chunk_cache_reset_stats(file) < 0);
            assert_true(vfdswmr_chunk_cache_set_dataset(dset, 0, 1) < 0);
            assert_true(vfdswmr_chunk_cache_register(dset) < 0);
            assert_true(vfdswmr_chunk_cache_evict(file) < 0);
            assert_true(vfdswmr_chunk_cache_flush_dataset(dset, 1) < 0);
        }
        H5E_END_TRY
        H5Dclose(dset);
        H5Sclose(space);
        assert_true(H5Fclose(file) >= 0);
        H5Pclose(fapl);
    }
}

static void
test_version(void **state)
{
    (void)state;
    assert_string_equal(vfdswmr_version(), PACKAGE_VERSION);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_set_fapl_writer),           cmocka_unit_test(test_set_fapl_reader),
        cmocka_unit_test(test_bad_config_on_error_stack), cmocka_unit_test(test_lower_errors_kept),
        cmocka_unit_test(test_calls_on_other_drivers),    cmocka_unit_test(test_version),
    };
    return cmocka_run_group_tests(tests, testdir_setup, testdir_teardown);
}
