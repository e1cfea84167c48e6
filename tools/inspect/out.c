/* JSON output and problem lists for vfd_swmr_inspect; see inspect.h. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "inspect.h"

/* The length of the well-formed UTF-8 sequence at p (RFC 3629: no
 * overlong forms, no surrogates, at most U+10FFFF), or 0. */
static size_t
utf8_len(const unsigned char *p)
{
    unsigned c = p[0];
    size_t n = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
    uint32_t v = c & (0x7f >> n);

    if (c < 0xc2 || c > 0xf4)
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xc0) != 0x80) /* also stops at the NUL */
            return 0;
        v = v << 6 | (p[i] & 0x3f);
    }
    if ((n == 3 && (v < 0x800 || (v >= 0xd800 && v <= 0xdfff))) || (n == 4 && (v < 0x10000 || v > 0x10ffff)))
        return 0;
    return n;
}

/* Is the UTF-8 sequence at p a C1 control (U+0080..U+009F)? */
static bool
c1_control(const unsigned char *p)
{
    return p[0] == 0xc2 && p[1] >= 0x80 && p[1] < 0xa0;
}

/* A JSON string: quotes, backslashes and control characters (C0, DEL, C1) escaped; a
 * byte that is not part of well-formed UTF-8 (a file name in another
 * encoding) becomes U+FFFD, so that the output is always valid JSON. */
void
out_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        size_t n;
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p < 0x20 || *p == 0x7f)
            fprintf(f, "\\u%04x", *p);
        else if (*p < 0x80)
            fputc(*p, f);
        else if (c1_control(p))
            fprintf(f, "\\u%04x", p++[1]);
        else if ((n = utf8_len(p)) > 0) {
            fwrite(p, 1, n, f);
            p += n - 1;
        }
        else
            fputs("\\ufffd", f);
    }
    fputc('"', f);
}

void
out_text(FILE *f, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        size_t n;
        if (*p < 0x20 || *p == 0x7f)
            fprintf(f, "\\x%02x", *p);
        else if (*p < 0x80)
            fputc(*p, f);
        else if (!c1_control(p) && (n = utf8_len(p)) > 0) {
            fwrite(p, 1, n, f);
            p += n - 1;
        }
        else
            fprintf(f, "\\x%02x", *p);
    }
}

void
out_line(FILE *f, const char *fmt, ...)
{
    va_list ap, again;
    char *buf;
    int n;

    va_start(ap, fmt);
    va_copy(again, ap);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n >= 0 && (buf = malloc((size_t)n + 1)) != NULL) {
        vsnprintf(buf, (size_t)n + 1, fmt, again);
        out_text(f, buf);
        free(buf);
    }
    else
        fputs("(out of memory)", f);
    va_end(again);
    fputc('\n', f);
}

void
out_begin(FILE *f, const insp_opts_t *o, const insp_t *s)
{
    fputs("{\"schema\": 1, \"file\": ", f);
    out_str(f, o->file);
    fputs(", \"metadata_file\": ", f);
    if (s->md_fd >= 0)
        out_str(f, s->md_path);
    else
        fputs("null", f);
}

void
out_session(FILE *f, uint64_t session)
{
    fprintf(f, "\"%016" PRIx64 "\"", session);
}

void
list_add(insp_list_t *l, const char *file, const char *structure, uint64_t offset, int64_t entry, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 16;
        insp_problem_t *v = realloc(l->v, cap * sizeof *v);
        if (v == NULL) {
            fprintf(stderr, PROG ": out of memory\n");
            exit(1);
        }
        l->v = v;
        l->cap = cap;
    }
    insp_problem_t *p = &l->v[l->n];
    *p = (insp_problem_t){strdup(file), structure, offset, entry, strdup(buf)};
    if (p->file == NULL || p->error == NULL) {
        fprintf(stderr, PROG ": out of memory\n");
        exit(1);
    }
    l->n++;
}

void
list_json(FILE *f, const insp_list_t *l)
{
    fputc('[', f);
    for (size_t i = 0; i < l->n; i++) {
        const insp_problem_t *p = &l->v[i];
        fprintf(f, "%s{\"file\": ", i ? ", " : "");
        out_str(f, p->file);
        fprintf(f, ", \"structure\": \"%s\", \"offset\": %" PRIu64 ", \"entry\": ", p->structure, p->offset);
        if (p->entry < 0)
            fputs("null", f);
        else
            fprintf(f, "%" PRId64, p->entry);
        fputs(", \"error\": ", f);
        out_str(f, p->error);
        fputc('}', f);
    }
    fputc(']', f);
}

void
list_text(FILE *f, const char *label, const insp_list_t *l)
{
    for (size_t i = 0; i < l->n; i++) {
        const insp_problem_t *p = &l->v[i];
        char entry[40] = "";
        if (p->entry >= 0)
            snprintf(entry, sizeof entry, " (entry %" PRId64 ")", p->entry);
        out_line(f, "%s: %s: %s at offset %" PRIu64 "%s: %s", label, p->file, p->structure, p->offset, entry, p->error);
    }
}

void
list_free(insp_list_t *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->v[i].file);
        free(l->v[i].error);
    }
    free(l->v);
    *l = (insp_list_t){0};
}
