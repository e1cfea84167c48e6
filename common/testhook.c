/* Test hooks (testhook.h). */
#include "testhook.h"

#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#ifdef VFDSWMR_INVARIANTS
/* Is this the k-th call at `where` that the variable `var` (<where>:<k>) names? */
static bool
test_point(const char *var, const char *where, long *count)
{
    const char *spec = getenv(var);
    size_t n = strlen(where);

    return spec != NULL && strncmp(spec, where, n) == 0 && spec[n] == ':' && ++*count == strtol(spec + n + 1, NULL, 10);
}

void
vfdswmr_test_kill_point(const char *where)
{
    static long kills, stops;

    if (test_point("VFDSWMR_TEST_KILL_AT", where, &kills))
        raise(SIGKILL);
    if (test_point("VFDSWMR_TEST_STOP_AT", where, &stops))
        raise(SIGSTOP);
}

bool
vfdswmr_test_flag(const char *name)
{
    const char *p = getenv("VFDSWMR_TEST_FLAGS");
    size_t n = strlen(name);

    while (p && *p) {
        size_t len = strcspn(p, ",");
        if (len == n && strncmp(p, name, n) == 0)
            return true;
        p += len + (p[len] == ',');
    }
    return false;
}
#endif
