/*
 * libFuzzer target for vfdswmr_sessname_decode() (the record of a
 * session on the HDF5 file, an extended attribute's value).
 *
 * Input: the value, copied to an allocation of exactly its size. Invariants
 * checked (abort() otherwise): a value that decodes names an absolute path
 * with no NUL of at most VFDSWMR_SESSNAME_MAX bytes and re-encodes to the
 * same bytes; a failed decode leaves the record all zero.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sessname.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const vfdswmr_sessname_t zero;
    char again[VFDSWMR_SESSNAME_VALUE_MAX];
    vfdswmr_sessname_t r;
    uint8_t *buf;
    size_t n;

    if ((buf = malloc(size ? size : 1)) == NULL)
        abort();
    memcpy(buf, data, size);
    if (vfdswmr_sessname_decode(buf, size, &r) == 0) {
        n = strnlen(r.path, sizeof r.path);
        if (n == sizeof r.path || r.path[0] != '/' || n < 2 || n > VFDSWMR_SESSNAME_MAX)
            abort();
        if (vfdswmr_sessname_encode(&r, again, sizeof again) != size || memcmp(again, buf, size) != 0)
            abort();
    }
    else if (memcmp(&r, &zero, sizeof r) != 0)
        abort();
    free(buf);
    return 0;
}
