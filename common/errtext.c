/* Messages into the caller's text (errtext.h). */
#include "errtext.h"

#include <stdarg.h>
#include <stdio.h>

int
vfdswmr_errtext(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;

    if (err == NULL || errlen == 0)
        return -1;
    va_start(ap, fmt);
    if (vsnprintf(err, errlen, fmt, ap) < 0)
        err[0] = '\0';
    va_end(ap);
    return -1;
}
