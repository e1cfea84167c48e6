# Interactive test processes, for integration tests that need a writer or a
# reader at a known point: each process reads commands on a FIFO and answers
# one line per command on another, so every step is a handshake (no sleeps).
# Sourced after lib.sh; replaces its EXIT trap with one that also kills the
# processes still running and runs the hooks in CLEANUP (e.g. an umount).
# shellcheck shell=bash

: "${VFDSWMR_HDF5_SUPP:?run the integration tests through make check}" "${VFDSWMR_HDF5_LSAN:?}"
declare -A PROC_PID PROC_IN PROC_OUT
# How long to wait for one answer (valgrind is slow on a loaded machine).
PROC_TIMEOUT=${PROC_TIMEOUT:-$([ -n "${VFDSWMR_VALGRIND:-}" ] && echo 900 || echo 120)}
CLEANUP=()
ANSWER=
# The prefix for a program that meets failing chunk writes: HDF5 1.14.5
# leaks the buffer of each such chunk (tests/fault/hdf5.supp), a leak that
# valgrind (make check-valgrind) and LeakSanitizer (scripts/build
# --sanitize) are told to ignore -- LeakSanitizer with full stacks, since
# HDF5 has no frame pointers to unwind by. Used as "${FAULTY[@]}" PROGRAM ...
# shellcheck disable=SC2034,SC2206
FAULTY=(env "ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}fast_unwind_on_malloc=0"
    "LSAN_OPTIONS=${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$VFDSWMR_HDF5_LSAN"
    ${VFDSWMR_VALGRIND:+$VFDSWMR_VALGRIND --suppressions=$VFDSWMR_HDF5_SUPP})

# A command to a process that died must fail, not kill the test with SIGPIPE.
trap '' PIPE

proc_cleanup() {
    local name h
    for name in "${!PROC_PID[@]}"; do
        kill -9 "${PROC_PID[$name]}" 2>/dev/null
        wait "${PROC_PID[$name]}" 2>/dev/null
    done
    for h in "${CLEANUP[@]}"; do
        eval "$h"
    done
    rm -rf "$WORK"
}
trap proc_cleanup EXIT

# proc_start NAME CMD...: run CMD (exec'd: its process id is the program's)
# with stdin and stdout on FIFOs and stderr in $WORK/NAME.err.
proc_start() {
    local name=$1 fd
    shift
    rm -f "$WORK/$name.in" "$WORK/$name.out"
    mkfifo "$WORK/$name.in" "$WORK/$name.out"
    (
        # not the ends of the other processes' FIFOs: each must see its own end of input
        for fd in "${PROC_IN[@]}" "${PROC_OUT[@]}"; do
            exec {fd}>&-
        done
        exec "$@" <"$WORK/$name.in" >"$WORK/$name.out" 2>"$WORK/$name.err"
    ) &
    PROC_PID[$name]=$!
    exec {fd}>"$WORK/$name.in"
    PROC_IN[$name]=$fd
    exec {fd}<"$WORK/$name.out"
    PROC_OUT[$name]=$fd
}

# writer_start NAME CONFIG FILE [ROWWRITER_ARGS...]: rowwriter (tests/progs)
# creates FILE through vfd_swmr_writer with CONFIG, as process NAME, and has
# answered "ready 0", or the test fails.
writer_start() {
    local name=$1 config=$2 file=$3
    shift 3
    proc_start "$name" env HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="$config" ${VFDSWMR_VALGRIND:-} \
        "$VFDSWMR_PROGS/rowwriter" "$file" create "$@"
    proc_read "$name"
    [ "$ANSWER" = "ready 0" ] || fail "$file: writer $name not ready: $ANSWER $(proc_err "$name")"
}

# proc_err NAME: the last lines of NAME's stderr, for failure messages.
proc_err() { tail -n 30 "$WORK/$1.err" 2>/dev/null; }

# proc_read NAME: the next answer of NAME into ANSWER.
proc_read() {
    local rc=0
    read -r -t "$PROC_TIMEOUT" ANSWER <&"${PROC_OUT[$1]}" || rc=$?
    [ "$rc" = 0 ] && return
    [ "$rc" -gt 128 ] && fail "$1: no answer within $PROC_TIMEOUT s; its stderr: $(proc_err "$1")"
    proc_end "$1"
    fail "$1 ended (exit status $PROC_STATUS) without answering; its stderr: $(proc_err "$1")"
}

# proc_ask NAME COMMAND: send COMMAND, answer into ANSWER.
proc_ask() {
    printf '%s\n' "$2" 2>/dev/null 1>&"${PROC_IN[$1]}" || fail "$1 is gone (command \"$2\"): $(proc_err "$1")"
    proc_read "$1"
}

# proc_expect NAME COMMAND WANT: the answer to COMMAND must be exactly WANT.
proc_expect() {
    proc_ask "$1" "$2"
    [ "$ANSWER" = "$3" ] || fail "$1: \"$2\" answered \"$ANSWER\", expected \"$3\"; its stderr: $(proc_err "$1")"
}

# proc_end NAME: close NAME's input (end of input) and wait; exit status into PROC_STATUS.
proc_end() {
    local pid=${PROC_PID[$1]} in=${PROC_IN[$1]} out=${PROC_OUT[$1]}
    exec {in}>&- {out}<&-
    unset "PROC_PID[$1]" "PROC_IN[$1]" "PROC_OUT[$1]"
    PROC_STATUS=0
    wait "$pid" 2>/dev/null || PROC_STATUS=$? # no job notice ("Killed"): the status tells
}

# proc_kill NAME: SIGKILL NAME (a crash at a known point) and reap it.
proc_kill() {
    kill -9 "${PROC_PID[$1]}"
    proc_end "$1"
    [ "$PROC_STATUS" = 137 ] || fail "$1 was not killed by SIGKILL (status $PROC_STATUS)"
}

# hook_start WHAT OUT CMD...: run CMD in the background (stdout and stderr
# to OUT) and wait until it stops at its test hook (VFDSWMR_TEST_STOP_AT in
# its environment, common/testhook.h); HOOK_PID gets its process id (to
# SIGCONT), HOOK_BG the job's (to wait for). WHAT names it in failures.
hook_start() {
    local what=$1 out=$2 pidfile
    shift 2
    pidfile=$(mktemp "$WORK/hook.XXXXXX")
    sh -c 'echo $$ >"$0"; exec "$@"' "$pidfile" "$@" >"$out" 2>&1 &
    HOOK_BG=$!
    until [ -s "$pidfile" ]; do kill -0 $HOOK_BG 2>/dev/null || fail "$what ended before it started: $(cat "$out")"; done
    HOOK_PID=$(cat "$pidfile")
    until [ "$(awk '{print $3}' "/proc/$HOOK_PID/stat" 2>/dev/null)" = T ]; do
        kill -0 "$HOOK_PID" 2>/dev/null || fail "$what did not stop at its test hook: $(cat "$out")"
        sleep 0.01
    done
}

# stack_check FILE WHAT: the first error stack a row program (rows.h) printed
# to FILE after "WHAT failed" has 1 to 32 entries, as many as H5Eget_num
# reported (HDF5 holds 32; more printed means a stack overran). Its text
# goes into STACK.
stack_check() {
    local printed reported
    STACK=$(awk -v what="$2 failed" '$0 == what {on = 1; next} on {print} on && /^stack entries:/ {exit}' "$1")
    [ -n "$STACK" ] || fail "no error stack after \"$2 failed\" in $1: $(tail -n 20 "$1")"
    printed=$(grep -c '^  #[0-9]*:' <<<"$STACK")
    reported=$(sed -n 's/^stack entries: //p' <<<"$STACK")
    [ "$printed" = "$reported" ] || fail "$2: $printed stack entries printed, H5Eget_num says $reported"
    [ "$printed" -ge 1 ] && [ "$printed" -le 32 ] || fail "$2: $printed stack entries (HDF5 holds 1 to 32)"
}

# stacks_check FILE: every error stack a row program printed to FILE has 1 to
# 32 entries, as many as H5Eget_num reported; prints how many stacks there are.
stacks_check() {
    awk '/^[^ ].* failed$/ {n = 0; on = 1; next}
         on && /^  #[0-9]+:/ {n++}
         on && /^stack entries: / {if (n != $3 || n < 1 || n > 32) {print "a stack of " n " entries (H5Eget_num: " $3 ")"; exit 1}
                                   on = 0; k++}
         END {print k + 0}' "$1"
}
