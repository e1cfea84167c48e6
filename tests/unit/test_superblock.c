/*
 * lookup3 (common/lookup3.c) against the published known answers, and the
 * superblock patch (common/superblock.c) against superblocks HDF5 writes:
 * HDF5 itself must accept what the patch produces.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hdf5.h>

#include "le.h"
#include "lookup3.h"
#include "superblock.h"

#include "testdir.h"

static void
test_lookup3_known_answers(void **state)
{
    const char *four = "Four score and seven years ago";

    (void)state;
    assert_int_equal(vfdswmr_hashlittle("", 0, 0), 0xdeadbeefu);
    assert_int_equal(vfdswmr_hashlittle("", 0, 0xdeadbeefu), 0xbd5b7ddeu);
    assert_int_equal(vfdswmr_hashlittle(four, 30, 0), 0x17770551u);
    assert_int_equal(vfdswmr_hashlittle(four, 30, 1), 0xcd628161u);
}

/* Every tail length 0..12 after whole 12-byte blocks, and an unaligned key:
 * the result depends on the bytes only. */
static void
test_lookup3_alignment(void **state)
{
    uint8_t a[64], b[65];

    (void)state;
    for (unsigned i = 0; i < sizeof a; i++)
        a[i] = (uint8_t)(i * 37 + 5);
    memcpy(b + 1, a, sizeof a);
    for (size_t n = 0; n <= sizeof a; n++)
        assert_int_equal(vfdswmr_hashlittle(a, n, 7), vfdswmr_hashlittle(b + 1, n, 7));
    /* Different lengths of the same prefix differ (length is mixed in). */
    assert_int_not_equal(vfdswmr_hashlittle(a, 12, 0), vfdswmr_hashlittle(a, 13, 0));
}

static void
path_of(char *out, size_t len, const char *name)
{
    snprintf(out, len, "%s/%s", dir, name);
}

/* A file with a v3 superblock (O-byte offsets), left open for writing so
 * its superblock carries the consistency flags; its whole content. */
static uint8_t *
open_file_image(const char *name, unsigned o, hid_t *file, size_t *len)
{
    char path[256];
    hid_t fcpl = H5Pcreate(H5P_FILE_CREATE), fapl = H5Pcreate(H5P_FILE_ACCESS), g;

    path_of(path, sizeof path, name);
    assert_true(H5Pset_libver_bounds(fapl, H5F_LIBVER_LATEST, H5F_LIBVER_LATEST) >= 0);
    assert_true(H5Pset_sizes(fcpl, o, o) >= 0);
    *file = H5Fcreate(path, H5F_ACC_TRUNC, fcpl, fapl);
    assert_true(*file >= 0);
    g = H5Gcreate2(*file, "g", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    assert_true(g >= 0);
    H5Gclose(g);
    assert_true(H5Fflush(*file, H5F_SCOPE_GLOBAL) >= 0);
    H5Pclose(fcpl);
    H5Pclose(fapl);
    return slurp(path, len);
}

/* Write img (len bytes, extended with zeros to `size`) as `name`; whether
 * plain HDF5 (sec2) opens it read-only and finds the group "g". */
static int
hdf5_opens(const char *name, const uint8_t *img, size_t len, uint64_t size)
{
    char path[256];
    int fd;
    hid_t file;
    htri_t found = -1;

    path_of(path, sizeof path, name);
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, img, len), (ssize_t)len);
    assert_int_equal(ftruncate(fd, (off_t)size), 0);
    close(fd);
    H5E_BEGIN_TRY
    {
        file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
        if (file >= 0) {
            found = H5Lexists(file, "g", H5P_DEFAULT);
            H5Fclose(file);
        }
    }
    H5E_END_TRY
    return found > 0;
}

static void
check_real_superblock(unsigned o, const char *name)
{
    size_t len, size = VFDSWMR_SB_V2_SIZE(o);
    hid_t file;
    uint8_t *img = open_file_image(name, o, &file, &len), *sb;
    uint64_t eof, eoa;
    char copy[64];

    assert_true(len >= size);
    assert_int_equal(img[8], 3);
    assert_int_equal(img[9], o);
    assert_int_not_equal(img[11], 0); /* open for writing: flags set */
    /* Our checksum of the unmodified bytes is HDF5's. */
    assert_int_equal(vfdswmr_hashlittle(img, size - 4, 0), (uint32_t)vfdswmr_le_decode(img + size - 4, 4));
    eof = vfdswmr_le_decode(img + 12 + 2 * o, o);
    assert_int_equal(eof, len);

    /* As written, a reader refuses it (the flags say a writer has it open). */
    snprintf(copy, sizeof copy, "%s.asis", name);
    assert_false(hdf5_opens(copy, img, len, len));

    /* Patched, on an exact-size buffer (ASan sees any read past it). */
    eoa = len + 3 * 4096;
    sb = malloc(size);
    memcpy(sb, img, size);
    assert_int_equal(vfdswmr_sb_patch(sb, size, eoa), 1);
    assert_int_equal(sb[11], 0);
    assert_int_equal(vfdswmr_le_decode(sb + 12 + 2 * o, o), eoa);
    assert_int_equal(vfdswmr_hashlittle(sb, size - 4, 0), (uint32_t)vfdswmr_le_decode(sb + size - 4, 4));
    assert_memory_equal(sb, img, 11);                          /* signature, version, sizes untouched */
    assert_memory_equal(sb + 12, img + 12, 2 * o);             /* base, extension */
    assert_memory_equal(sb + 12 + 3 * o, img + 12 + 3 * o, o); /* root group */
    memcpy(img, sb, size);
    snprintf(copy, sizeof copy, "%s.patched", name);
    assert_true(hdf5_opens(copy, img, len, eoa));

    /* A smaller EOA never lowers the stored end of file. */
    assert_int_equal(vfdswmr_sb_patch(sb, size, 16), 1);
    assert_int_equal(vfdswmr_le_decode(sb + 12 + 2 * o, o), eoa);
    free(sb);
    free(img);
    H5Fclose(file);
}

static void
test_patch_v3_offsets_8(void **state)
{
    (void)state;
    check_real_superblock(8, "o8.h5");
}

static void
test_patch_v3_offsets_4(void **state)
{
    (void)state;
    check_real_superblock(4, "o4.h5");
}

/* Too short, other versions, bad sizes, not HDF5: left alone. */
static void
test_patch_refuses(void **state)
{
    static const uint8_t sig[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
    uint8_t sb[48], before[48];

    (void)state;
    memset(sb, 0x5a, sizeof sb);
    memcpy(sb, sig, 8);
    sb[8] = 3;
    sb[9] = 8;
    sb[10] = 8;
    sb[11] = 1;
    for (size_t n = 0; n < 48; n++) { /* every prefix of a whole superblock is too short */
        uint8_t *exact = malloc(n ? n : 1);
        memcpy(exact, sb, n);
        assert_int_equal(vfdswmr_sb_patch(exact, n, 1u << 20), 0);
        assert_memory_equal(exact, sb, n);
        free(exact);
    }
    memcpy(before, sb, sizeof sb);
    for (unsigned v = 0; v < 8; v++) {
        sb[8] = (uint8_t)v;
        if (v == 2 || v == 3)
            continue;
        assert_int_equal(vfdswmr_sb_patch(sb, sizeof sb, 1u << 20), 0);
    }
    sb[8] = 2;
    for (unsigned o = 0; o < 17; o++) {
        sb[9] = (uint8_t)o;
        if (o == 2 || o == 4 || o == 8)
            continue;
        assert_int_equal(vfdswmr_sb_patch(sb, sizeof sb, 1u << 20), 0);
    }
    sb[9] = 8;
    sb[1] = 'h';
    assert_int_equal(vfdswmr_sb_patch(sb, sizeof sb, 1u << 20), 0);
    sb[1] = 'H';
    sb[8] = 3;
    assert_memory_equal(sb, before, sizeof sb);
    /* 2-byte offsets: 24 bytes are enough. */
    sb[9] = 2;
    assert_int_equal(vfdswmr_sb_patch(sb, VFDSWMR_SB_V2_SIZE(2), 0x12345), 1);
    assert_int_equal(vfdswmr_le_decode(sb + 12 + 4, 2), 0xffff); /* as far as 2 bytes hold */
}

/* A version 0 superblock (HDF5 1.14's default format; 2.x's default is
 * newer, so the bounds are asked for) is not patched. */
static void
test_patch_v0_untouched(void **state)
{
    char path[256];
    hid_t file, fapl = H5Pcreate(H5P_FILE_ACCESS);
    uint8_t buf[96], before[96];
    FILE *fp;

    (void)state;
    path_of(path, sizeof path, "v0.h5");
    assert_true(H5Pset_libver_bounds(fapl, H5F_LIBVER_EARLIEST, H5F_LIBVER_LATEST) >= 0);
    file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    assert_true(file >= 0);
    H5Fclose(file);
    H5Pclose(fapl);
    fp = fopen(path, "rb");
    assert_int_equal(fread(buf, 1, sizeof buf, fp), sizeof buf);
    fclose(fp);
    assert_int_equal(buf[8], 0);
    memcpy(before, buf, sizeof buf);
    assert_int_equal(vfdswmr_sb_patch(buf, sizeof buf, 1u << 30), 0);
    assert_memory_equal(buf, before, sizeof buf);
}

/* A closed file of superblock version `v` (0 to 3) with a group "g"; its
 * whole content. */
static uint8_t *
closed_file_image(const char *name, unsigned v, size_t *len)
{
    char path[256];
    hid_t fcpl = H5Pcreate(H5P_FILE_CREATE), fapl = H5Pcreate(H5P_FILE_ACCESS), file, g;
    uint8_t *img;

    path_of(path, sizeof path, name);
    if (v == 1)
        assert_true(H5Pset_istore_k(fcpl, 64) >= 0); /* a non-default K needs version 1 */
    if (v == 2)
        assert_true(H5Pset_libver_bounds(fapl, H5F_LIBVER_V18, H5F_LIBVER_V18) >= 0);
    if (v == 3)
        assert_true(H5Pset_libver_bounds(fapl, H5F_LIBVER_LATEST, H5F_LIBVER_LATEST) >= 0);
    if (v < 2)
        assert_true(H5Pset_libver_bounds(fapl, H5F_LIBVER_EARLIEST, H5F_LIBVER_V18) >= 0);
    file = H5Fcreate(path, H5F_ACC_TRUNC, fcpl, fapl);
    assert_true(file >= 0);
    g = H5Gcreate2(file, "g", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    assert_true(g >= 0);
    H5Gclose(g);
    H5Fclose(file);
    H5Pclose(fcpl);
    H5Pclose(fapl);
    img = slurp(path, len);
    assert_int_equal(img[8], v);
    return img;
}

/* Whether plain HDF5 opens the file at path with `flags` (H5Fopen). */
static bool
opens_with(const char *path, unsigned flags)
{
    hid_t file;

    H5E_BEGIN_TRY
    {
        file = H5Fopen(path, flags, H5P_DEFAULT);
    }
    H5E_END_TRY
    if (file < 0)
        return false;
    H5Fclose(file);
    return true;
}

/* The seal on every superblock version: plain HDF5 refuses the sealed file
 * in every open mode without changing a byte of it; unsealed, the bytes are
 * HDF5's again and it opens. */
static void
check_seal(unsigned v)
{
    const unsigned modes[] = {H5F_ACC_RDONLY, H5F_ACC_RDWR, H5F_ACC_RDONLY | H5F_ACC_SWMR_READ,
                              H5F_ACC_RDWR | H5F_ACC_SWMR_WRITE};
    char name[32], path[256];
    size_t len;
    uint8_t *img, *sealed, *back;

    snprintf(name, sizeof name, "seal-v%u.h5", v);
    img = closed_file_image(name, v, &len);
    sealed = malloc(len);
    memcpy(sealed, img, len);
    assert_int_equal(vfdswmr_sb_sealed(sealed, len), 0);
    assert_int_equal(vfdswmr_sb_set_seal(sealed, len, true), 1);
    assert_int_equal(vfdswmr_sb_sealed(sealed, len), 1);
    assert_memory_not_equal(sealed, img, len);
    assert_int_equal(sealed[v < 2 ? 20 : 11] & VFDSWMR_SB_SEAL, VFDSWMR_SB_SEAL);
    /* sealing again changes nothing */
    back = malloc(len);
    memcpy(back, sealed, len);
    assert_int_equal(vfdswmr_sb_set_seal(back, len, true), 1);
    assert_memory_equal(back, sealed, len);

    path_of(path, sizeof path, name);
    spill(path, sealed, len);
    for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
        size_t now_len;
        uint8_t *now;
        assert_false(opens_with(path, modes[m]));
        now = slurp(path, &now_len);
        assert_int_equal(now_len, len);
        assert_memory_equal(now, sealed, len); /* refused without a byte changed */
        free(now);
    }

    assert_int_equal(vfdswmr_sb_set_seal(sealed, len, false), 1);
    assert_int_equal(vfdswmr_sb_sealed(sealed, len), 0);
    assert_memory_equal(sealed, img, len);
    spill(path, sealed, len);
    assert_true(opens_with(path, H5F_ACC_RDONLY));
    free(back);
    free(sealed);
    free(img);
}

static void
test_seal_v0(void **state)
{
    (void)state;
    check_seal(0);
}

static void
test_seal_v1(void **state)
{
    (void)state;
    check_seal(1);
}

static void
test_seal_v2(void **state)
{
    (void)state;
    check_seal(2);
}

static void
test_seal_v3(void **state)
{
    (void)state;
    check_seal(3);
}

/* Too short for the flags (and checksum), or not a superblock: nothing
 * changed, and no answer. */
static void
test_seal_refuses(void **state)
{
    size_t len;
    uint8_t *img = closed_file_image("seal-short.h5", 3, &len), *exact;
    size_t need = VFDSWMR_SB_V2_SIZE(8);

    (void)state;
    for (size_t n = 0; n < need; n++) {
        exact = malloc(n ? n : 1);
        memcpy(exact, img, n);
        assert_int_equal(vfdswmr_sb_set_seal(exact, n, true), 0);
        assert_int_equal(vfdswmr_sb_sealed(exact, n), -1);
        assert_memory_equal(exact, img, n);
        free(exact);
    }
    free(img);
    img = closed_file_image("seal-short0.h5", 0, &len);
    for (size_t n = 0; n <= 20 + 3; n++) {
        exact = malloc(n ? n : 1);
        memcpy(exact, img, n);
        assert_int_equal(vfdswmr_sb_set_seal(exact, n, true), 0);
        assert_memory_equal(exact, img, n);
        free(exact);
    }
    img[1] = 'h';
    assert_int_equal(vfdswmr_sb_set_seal(img, len, true), 0);
    assert_int_equal(vfdswmr_sb_sealed(img, len), -1);
    free(img);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lookup3_known_answers),
        cmocka_unit_test(test_lookup3_alignment),
        cmocka_unit_test(test_patch_v3_offsets_8),
        cmocka_unit_test(test_patch_v3_offsets_4),
        cmocka_unit_test(test_patch_refuses),
        cmocka_unit_test(test_patch_v0_untouched),
        cmocka_unit_test(test_seal_v0),
        cmocka_unit_test(test_seal_v1),
        cmocka_unit_test(test_seal_v2),
        cmocka_unit_test(test_seal_v3),
        cmocka_unit_test(test_seal_refuses),
    };
    return cmocka_run_group_tests(tests, testdir_setup, testdir_teardown);
}
