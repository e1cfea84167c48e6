/*
 * vfd_swmr_aux as a process: command line, signals, exit status.
 *
 * Invariants:
 *  - SIGINT and SIGTERM only set a flag; aux_run() looks at it between
 *    updaters, so an updater being applied is always finished first.
 *  - Exit status: 0 after the FINAL updater or on a signal, 1 on a fatal
 *    error (message on stderr), 2 on a usage error.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "aux.h"

static volatile sig_atomic_t stop;

static void
on_signal(int sig)
{
    (void)sig;
    stop = 1;
}

int
main(int argc, char **argv)
{
    struct sigaction sa;
    char err[AUX_ERRLEN];
    aux_opts_t o;
    aux_t *a;
    int rc;

    if (aux_opts_parse(&o, argc, argv, err, sizeof err) < 0) {
        fprintf(stderr, "%s: %s\nTry '%s --help' for more information.\n", AUX_PROG, err, AUX_PROG);
        return 2;
    }
    if (o.help || o.version) {
        (o.help ? aux_usage : aux_version)(stdout);
        return 0;
    }
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal; /* no SA_RESTART: a signal cuts the pause between polls short */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    if (aux_open(&o, &a, err, sizeof err) < 0) {
        fprintf(stderr, "%s: error: %s\n", AUX_PROG, err);
        return 1;
    }
    rc = aux_run(a, &stop, err, sizeof err);
    if (rc != 0)
        fprintf(stderr, "%s: error: %s\n", AUX_PROG, err);
    if (o.stats)
        aux_stats_print(aux_stats(a), stdout);
    aux_close(a);
    return rc;
}
