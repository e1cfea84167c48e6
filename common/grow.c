#include "grow.h"

#include <stdint.h>
#include <stdlib.h>

#include "check.h"

int
vfdswmr_grow(void **arr, size_t *cap, size_t need, size_t elem)
{
    size_t n = *cap ? *cap : 16;
    void *p;

    if (need <= *cap)
        return 0;
    while (n < need) {
        if (n > SIZE_MAX / 2)
            return -1;
        n *= 2;
    }
    if (elem && n > SIZE_MAX / elem)
        return -1;
    if (NULL == (p = realloc(*arr, n * elem)))
        return -1;
    *arr = p;
    *cap = n;
    VFDSWMR_ASSERT(*cap >= need);
    return 0;
}
