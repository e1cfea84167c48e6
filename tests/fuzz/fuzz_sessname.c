/*
 * libFuzzer target for vfdswmr_sessname_decode() (the record of a
 * session's metadata file on the HDF5 file, an extended attribute's value).
 *
 * Input: the value, copied to an allocation of exactly its size; the output
 * buffer is VFDSWMR_SESSNAME_MAX + 1 bytes. Invariants checked (abort()
 * otherwise): a value that decodes names an absolute path with no NUL of at
 * most VFDSWMR_SESSNAME_MAX bytes and re-encodes to the same bytes; a failed
 * decode leaves the output empty.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sessname.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char out[VFDSWMR_SESSNAME_MAX + 1], again[VFDSWMR_SESSNAME_VALUE_MAX];
    uint8_t *buf;
    size_t len, n;

    len = size;
    if ((buf = malloc(size ? size : 1)) == NULL)
        abort();
    memcpy(buf, data, size);
    if (vfdswmr_sessname_decode(buf, len, out, sizeof out) == 0) {
        n = strlen(out);
        if (out[0] != '/' || n < 2 || n > VFDSWMR_SESSNAME_MAX)
            abort();
        if (vfdswmr_sessname_encode(out, again, sizeof again) != len || memcmp(again, buf, len) != 0)
            abort();
    }
    else if (out[0] != '\0')
        abort();
    free(buf);
    return 0;
}
