/*
 * The configuration strings of the test-only driver plugins (vfd_fault,
 * vfd_latency): key=value pairs separated by ';', blanks around keys and
 * values ignored, '\' escapes the next character of a value. Header-only
 * (static functions): each plugin is one shared object of its own.
 */
#ifndef VFDSWMR_TESTS_FAULT_KV_H
#define VFDSWMR_TESTS_FAULT_KV_H

#include <stdio.h>
#include <string.h>

/* Copy [p, end) into out (outlen bytes), trimming blanks and resolving
 * backslash escapes. Returns 0, or -1 when it does not fit. */
static int
kv_unescape(const char *p, const char *end, char *out, size_t outlen)
{
    size_t n = 0;

    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
        p++;
    while (end > p && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\n' || end[-1] == '\r') &&
           !(end - p >= 2 && end[-2] == '\\'))
        end--;
    for (; p < end; p++) {
        if (*p == '\\' && p + 1 < end)
            p++;
        if (n + 1 >= outlen)
            return -1;
        out[n++] = *p;
    }
    out[n] = '\0';
    return 0;
}

/*
 * The next segment of the string at *p (advanced past it): 1 with key and
 * val filled (key "" for an empty segment, which callers skip), 0 at the end
 * of the string, -1 with a message in err ("expected key=value at ...",
 * "KEY: value too long").
 */
static int
kv_next(const char **p, char *key, size_t keylen, char *val, size_t vallen, char *err, size_t errlen)
{
    const char *s = *p, *end = s, *eq;

    if (!*s)
        return 0;
    while (*end && *end != ';')
        end += end[0] == '\\' && end[1] ? 2 : 1;
    for (eq = s; eq < end && *eq != '='; eq++)
        ;
    if (kv_unescape(s, eq, key, keylen) < 0 || (eq == end) != !key[0]) {
        snprintf(err, errlen, "expected key=value at \"%.*s\"", (int)(end - s), s);
        return -1;
    }
    val[0] = '\0';
    if (eq < end && kv_unescape(eq + 1, end, val, vallen) < 0) {
        snprintf(err, errlen, "%s: value too long", key);
        return -1;
    }
    *p = *end ? end + 1 : end;
    return 1;
}

#endif
