/*
 * The little-endian codec (common/le.h): byte order, widths 0 to 8, the
 * fixed-width forms, and that nothing past the n bytes is touched.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "le.h"

static void
test_le_byte_order(void **state)
{
    uint8_t b[8];
    static const uint8_t want[8] = {0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01};

    (void)state;
    vfdswmr_le64_encode(b, UINT64_C(0x0102030405060708));
    assert_memory_equal(b, want, 8);
    assert_true(vfdswmr_le64_decode(want) == UINT64_C(0x0102030405060708));
    assert_int_equal(vfdswmr_le32_decode(want), 0x05060708u);
    assert_int_equal(vfdswmr_le16_decode(want), 0x0708u);
    vfdswmr_le32_encode(b, 0xA1B2C3D4u);
    assert_int_equal(b[0], 0xD4);
    assert_int_equal(b[3], 0xA1);
    vfdswmr_le16_encode(b, 0xBEEF);
    assert_int_equal(b[0], 0xEF);
    assert_int_equal(b[1], 0xBE);
}

/* Every width keeps the low 8n bits and writes exactly n bytes. */
static void
test_le_widths(void **state)
{
    const uint64_t v = UINT64_C(0xF1E2D3C4B5A69788);

    (void)state;
    for (unsigned n = 0; n <= 8; n++) {
        uint8_t b[10];
        uint64_t mask = n == 8 ? UINT64_MAX : (UINT64_C(1) << (8 * n)) - 1;

        memset(b, 0x5A, sizeof b);
        vfdswmr_le_encode(b + 1, v, n);
        assert_int_equal(b[0], 0x5A);
        assert_int_equal(b[1 + n], 0x5A);
        assert_true(vfdswmr_le_decode(b + 1, n) == (v & mask));
    }
}

/* Alignment does not matter: the same bytes at every offset. */
static void
test_le_unaligned(void **state)
{
    uint8_t b[16];

    (void)state;
    for (unsigned off = 0; off < 8; off++) {
        memset(b, 0, sizeof b);
        vfdswmr_le64_encode(b + off, UINT64_C(0x1122334455667788));
        assert_int_equal(b[off], 0x88);
        assert_int_equal(b[off + 7], 0x11);
        assert_true(vfdswmr_le64_decode(b + off) == UINT64_C(0x1122334455667788));
    }
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_le_byte_order),
        cmocka_unit_test(test_le_widths),
        cmocka_unit_test(test_le_unaligned),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
