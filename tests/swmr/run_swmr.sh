# Harness of the SWMR integration tests (tests/swmr/*.sh); sourced.
# shellcheck shell=bash
#
# Environment:
#   SWMR_PROGS   directory holding swmr_writer and swmr_reader (required)
#   H5DUMP       h5dump to compare the finished file with a plain sec2 run (required)
#   SWMR_MODE    legacy: HDF5's own SWMR (sec2, writer H5F_ACC_SWMR_WRITE, readers
#                        H5F_ACC_RDONLY|H5F_ACC_SWMR_READ); the default
#                vfd:    HDF5_DRIVER=vfd_swmr_writer for the writer and vfd_swmr_reader for
#                        the readers, HDF5_DRIVER_CONFIG=$SWMR_CONFIG (HDF5_PLUGIN_PATH must
#                        name the plugins)
#   SWMR_CONFIG  driver configuration in vfd mode (default 'tick_len=1;max_lag=7')
#   SWMR_TIMEOUT global timeout of one run in seconds (default 120)
#   SWMR_KEEP=1  keep the work directory
#   VFDSWMR_VALGRIND  when set (make check-valgrind), every program runs under it, with
#                fewer steps and longer timeouts
#
# A run: start the writer and the readers in the background (swmr_start), wait for all of
# them under one global timeout (swmr_wait: kills everything and fails when exceeded; kills
# the readers as soon as the writer fails), print each reader's latency line, then compare
# h5dump of the file with that of a plain sec2 run of the same writer (swmr_compare_dump).
set -u

: "${SWMR_PROGS:?set SWMR_PROGS to the directory of swmr_writer and swmr_reader (make check does)}"
: "${H5DUMP:?set H5DUMP to h5dump (make check does)}"
SWMR_MODE=${SWMR_MODE:-legacy}
SWMR_CONFIG=${SWMR_CONFIG:-tick_len=1;max_lag=7}
SWMR_TIMEOUT=${SWMR_TIMEOUT:-120}
SWMR_TEST=$(basename "$0" .sh)
SWMR_VG=${VFDSWMR_VALGRIND:-}
WRITER=$SWMR_PROGS/swmr_writer
READER=$SWMR_PROGS/swmr_reader

fail() { echo "FAIL: $SWMR_TEST [$SWMR_MODE]: $*" >&2; SWMR_FAILED=1; exit 1; }
skip() { echo "SKIP: $SWMR_TEST [$SWMR_MODE]: $*"; exit 77; }
CHECKS=0
ok() { CHECKS=$((CHECKS + 1)); echo "ok $CHECKS - $*"; }
finish() { echo "$SWMR_TEST [$SWMR_MODE]: $CHECKS checks passed"; exit 0; }

case $SWMR_MODE in
legacy | vfd | nfs) ;;
*) fail "SWMR_MODE must be legacy, vfd or nfs, not '$SWMR_MODE'" ;;
esac
# nfs: the writer publishes updater files only (into $RUN/nfs, standing for
# the NFS mount), a vfd_swmr_aux per file keeps a local metadata file in
# $RUN/local, and the readers use that (presume_posix_semantics=0: they wait
# for it). Tests that need more than that skip themselves (skip_in_nfs_mode).
if [ "$SWMR_MODE" = nfs ]; then
    : "${VFDSWMR_AUX:?nfs mode needs VFDSWMR_AUX naming vfd_swmr_aux}"
fi
skip_in_nfs_mode() { [ "$SWMR_MODE" != nfs ] || skip "$*"; }
if [ ! -x "$WRITER" ] || [ ! -x "$READER" ]; then fail "no swmr_writer/swmr_reader in $SWMR_PROGS"; fi
[ -x "$H5DUMP" ] || fail "H5DUMP=$H5DUMP is not executable"
if [ "$SWMR_MODE" != legacy ]; then
    : "${HDF5_PLUGIN_PATH:?vfd mode needs HDF5_PLUGIN_PATH naming the vfd_swmr plugins}"
    # tick length (tenths of a second) for the latency report; the drivers' default is 4
    TICK_LEN=$(printf '%s\n' "$SWMR_CONFIG" | tr ';' '\n' | sed -n 's/^ *tick_len *= *\([0-9]*\) *$/\1/p' | tail -n1)
    TICK_LEN=${TICK_LEN:-4}
    [ "$TICK_LEN" -ge 1 ] 2>/dev/null || TICK_LEN=1 # tick_len=0: ticks end only on request
else
    TICK_LEN=1
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/swmr-$SWMR_TEST.XXXXXX")
SWMR_PIDS=() SWMR_NAMES=() SWMR_FAILED=0
swmr_cleanup() {
    local pid
    for pid in "${SWMR_PIDS[@]}"; do
        kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null
    done
    if [ "${SWMR_KEEP:-0}" = 1 ] || [ "$SWMR_FAILED" = 1 ]; then
        echo "work directory kept: $WORK"
    else
        rm -rf "$WORK"
    fi
}
trap swmr_cleanup EXIT

# scale N: a step count, smaller under valgrind.
scale() {
    if [ -n "$SWMR_VG" ]; then
        local n=$(($1 / 5))
        [ "$n" -ge 10 ] || n=10
        echo "$n"
    else
        echo "$1"
    fi
}
# Reader timeout (seconds), longer under valgrind.
READER_TIMEOUT=60
[ -z "$SWMR_VG" ] || { READER_TIMEOUT=300; SWMR_TIMEOUT=$((SWMR_TIMEOUT * 4)); }

# Flags of each role in this mode. Legacy SWMR needs H5F_ACC_SWMR_WRITE and
# H5F_ACC_SWMR_READ; the VFD drivers work with or without them.
#   writer_flags swmr|plain   reader_flags swmr|plain
writer_flags() {
    if [ "$SWMR_MODE" = legacy ] || [ "$1" = swmr ]; then echo --swmr; fi
}
reader_flags() {
    echo "--tick-len $TICK_LEN --timeout $READER_TIMEOUT"
    if [ "$SWMR_MODE" = legacy ] || [ "$1" = swmr ]; then echo --swmr; fi
}

# The environment of each role: the driver comes from it and nothing else. Legacy readers
# do not lock the file (HDF5_USE_FILE_LOCKING=FALSE): a reader retrying H5Fopen while the
# writer's H5Fcreate runs would otherwise hold a shared lock at the moment the writer takes
# its exclusive one, and the writer's H5Fcreate fails (errno 11). The VFD drivers must cope
# without that.
role_env() { # role_env writer|reader CMD...
    local role=$1
    shift
    # nfs mode applies to the processes swmr_start runs (SWMR_NFS=1); helper
    # runs outside it (e.g. the zoo's verifier self-test) use the local drivers.
    if [ "$SWMR_MODE" = vfd ] || { [ "$SWMR_MODE" = nfs ] && [ "${SWMR_NFS:-}" != 1 ]; }; then
        ${SWMR_EXEC:-} env HDF5_DRIVER="vfd_swmr_$role" HDF5_DRIVER_CONFIG="$SWMR_CONFIG" "$@"
    elif [ "$SWMR_MODE" = nfs ] && [ "$role" = writer ]; then
        ${SWMR_EXEC:-} env HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="$SWMR_CONFIG;maintain_metadata_file=0;generate_updater_files=1;flush_raw_data=1;md_file_path=$RUN/nfs" "$@"
    elif [ "$SWMR_MODE" = nfs ]; then
        ${SWMR_EXEC:-} env HDF5_DRIVER=vfd_swmr_reader HDF5_DRIVER_CONFIG="$SWMR_CONFIG;md_file_path=$RUN/local;presume_posix_semantics=0;open_timeout=1200" "$@"
    elif [ "$role" = reader ]; then
        ${SWMR_EXEC:-} env -u HDF5_DRIVER -u HDF5_DRIVER_CONFIG HDF5_USE_FILE_LOCKING=FALSE "$@"
    else
        ${SWMR_EXEC:-} env -u HDF5_DRIVER -u HDF5_DRIVER_CONFIG "$@"
    fi
}
plain_env() { env -u HDF5_DRIVER -u HDF5_DRIVER_CONFIG "$@"; }

# Writers in vfd mode create files that never reuse freed space, as the
# README asks of programs that rewrite chunks (compressed chunks grow as they
# are appended to, and HDF5 would put another chunk where the old one was
# while readers with an older snapshot still look there). The reference run
# does the same, so the dumps stay comparable.
SWMR_WRITER_EXTRA=()
[ "$SWMR_MODE" != legacy ] && SWMR_WRITER_EXTRA=(--no-space-reuse)

# new_run NAME: a fresh directory $RUN for one run; forgets the processes of the last one.
new_run() {
    RUN=$WORK/$1
    mkdir -p "$RUN"
    SWMR_PIDS=() SWMR_NAMES=()
}

# swmr_start writer|reader NAME ARGS...: start a program in the background, output to
# $RUN/NAME.log.
swmr_start() {
    local role=$1 name=$2 prog
    shift 2
    local extra=()
    if [ "$role" = writer ]; then prog=$WRITER extra=("${SWMR_WRITER_EXTRA[@]}"); else prog=$READER; fi
    [ "$role" = writer ] && [ "$SWMR_MODE" = nfs ] && start_aux "$name" "$@"
    # in a subshell that execs the program: $! is the program's own process
    # shellcheck disable=SC2086
    (SWMR_EXEC="exec" SWMR_NFS=1 role_env "$role" $SWMR_VG "$prog" --name "$name" "$@" "${extra[@]}") >"$RUN/$name.log" 2>&1 &
    SWMR_PIDS+=("$!")
    SWMR_NAMES+=("$name")
    echo "  started $role $name: $(basename "$prog") --name $name $*"
}

# start_aux WRITER-NAME WRITER-ARGS...: in nfs mode, one vfd_swmr_aux per file the writer
# writes (--file/--file2), applying its updater files to $RUN/local.
start_aux() {
    local wname=$1 f lag
    shift
    mkdir -p "$RUN/nfs" "$RUN/local"
    lag=$(printf '%s\n' "$SWMR_CONFIG" | tr ';' '\n' | sed -n 's/^ *max_lag *= *\([0-9]*\) *$/\1/p' | tail -n1)
    while [ $# -gt 0 ]; do
        case $1 in
        --file | --file2)
            f=$(basename "$2")
            # shellcheck disable=SC2086
            $SWMR_VG "$VFDSWMR_AUX" --tick_len "$TICK_LEN" --max_lag "${lag:-7}" --stats \
                --log_file "$RUN/aux-$wname-$f.events" "$RUN/local/$f.md" "$RUN/nfs/$f.md.ud" \
                >"$RUN/aux-$wname-$f.log" 2>&1 &
            SWMR_PIDS+=("$!")
            SWMR_NAMES+=("aux-$wname-$f")
            echo "  started vfd_swmr_aux for $f"
            shift 2 ;;
        *) shift ;;
        esac
    done
}

swmr_pid() { # swmr_pid NAME
    local i
    for i in "${!SWMR_NAMES[@]}"; do
        [ "${SWMR_NAMES[$i]}" = "$1" ] && { echo "${SWMR_PIDS[$i]}"; return; }
    done
}

# progress_step FILE: the last step the writer has announced (-2: no progress file yet).
progress_step() {
    sed -n 's/^step //p' "$1.progress" 2>/dev/null | head -n1 | grep . || echo -2
}

# wait_step FILE STEP: until the writer announced STEP (a handshake, not a sleep).
wait_step() {
    local t0=$SECONDS
    while [ "$(progress_step "$1")" -lt "$2" ]; do
        [ $((SECONDS - t0)) -lt "$SWMR_TIMEOUT" ] || fail "the writer never announced step $2 of $1"
        swmr_any_failed && fail "a process failed while waiting for step $2: $(swmr_failed_logs)"
        sleep 0.02
    done
}

# wait_exit NAME: until process NAME has exited (status collected later by swmr_wait).
wait_exit() {
    local pid t0=$SECONDS
    pid=$(swmr_pid "$1")
    while kill -0 "$pid" 2>/dev/null; do
        [ $((SECONDS - t0)) -lt "$SWMR_TIMEOUT" ] || fail "$1 did not exit within $SWMR_TIMEOUT s"
        sleep 0.02
    done
}

# A process that already exited with a failure: for early aborts.
swmr_any_failed() {
    local i
    for i in "${!SWMR_PIDS[@]}"; do
        grep -q 'FAIL:' "$RUN/${SWMR_NAMES[$i]}.log" 2>/dev/null && return 0
    done
    return 1
}
swmr_failed_logs() {
    local n
    for n in "${SWMR_NAMES[@]}"; do
        grep -h 'FAIL:' "$RUN/$n.log" 2>/dev/null
    done
}

# swmr_wait: wait for every process of the run under the global timeout; print the
# failures' logs and every latency line; return 1 if anything failed.
swmr_wait() {
    local t0=$SECONDS i pid status rc=0 running
    while :; do
        running=0
        for pid in "${SWMR_PIDS[@]}"; do
            kill -0 "$pid" 2>/dev/null && running=1
        done
        [ "$running" = 0 ] && break
        if [ $((SECONDS - t0)) -ge "$SWMR_TIMEOUT" ]; then
            echo "global timeout ($SWMR_TIMEOUT s): killing ${SWMR_NAMES[*]}" >&2
            rc=1
            break
        fi
        # the writer failed: nobody will ever see the last step
        for i in "${!SWMR_NAMES[@]}"; do
            case ${SWMR_NAMES[$i]} in
            w*) if ! kill -0 "${SWMR_PIDS[$i]}" 2>/dev/null && grep -q 'FAIL:' "$RUN/${SWMR_NAMES[$i]}.log"; then
                    echo "writer ${SWMR_NAMES[$i]} failed: stopping the readers" >&2
                    rc=1
                fi ;;
            esac
        done
        [ "$rc" = 0 ] || break
        sleep 0.05
    done
    for pid in "${SWMR_PIDS[@]}"; do
        kill -0 "$pid" 2>/dev/null && kill -TERM "$pid" 2>/dev/null
    done
    for i in "${!SWMR_PIDS[@]}"; do
        wait "${SWMR_PIDS[$i]}"
        status=$?
        if [ "$status" != 0 ]; then
            rc=1
            echo "--- ${SWMR_NAMES[$i]} exited with status $status; its log:" >&2
            tail -n 40 "$RUN/${SWMR_NAMES[$i]}.log" >&2
        fi
    done
    for i in "${!SWMR_NAMES[@]}"; do
        sed -n "s/^latency_ticks /  ${SWMR_NAMES[$i]}: latency_ticks /p" "$RUN/${SWMR_NAMES[$i]}.log"
    done
    return "$rc"
}

# reference FILE WRITER-ARGS...: the same writer under plain sec2, no SWMR, no pause.
reference() {
    local f=$1
    shift
    plain_env "$WRITER" --name reference --file "$f" "$@" "${SWMR_WRITER_EXTRA[@]}" --interval-ms 0 >"$f.log" 2>&1 ||
        { cat "$f.log" >&2; fail "the plain sec2 reference run failed"; }
}

# dump_norm FILE: h5dump with properties, without the file name and object addresses.
dump_norm() {
    plain_env "$H5DUMP" -p "$1" | sed -e '1s/^HDF5 ".*" {$/HDF5 FILE {/' -e 's/OFFSET [0-9][0-9]*/OFFSET -/g'
}

# swmr_compare_dump FILE REFERENCE: h5dump of the file written under SWMR must succeed and
# equal that of the plain sec2 run.
swmr_compare_dump() {
    dump_norm "$1" >"$1.dump" 2>"$1.dump.err" || { cat "$1.dump.err" >&2; fail "h5dump of $1 failed"; }
    dump_norm "$2" >"$2.dump" 2>"$2.dump.err" || { cat "$2.dump.err" >&2; fail "h5dump of the reference $2 failed"; }
    grep -q '^GROUP "/"' "$1.dump" || fail "h5dump of $1 shows no root group"
    if ! cmp -s "$1.dump" "$2.dump"; then
        diff "$2.dump" "$1.dump" | head -n 20 >&2
        fail "h5dump of $1 differs from that of the plain sec2 run $2"
    fi
}

# with_or_without swmr|plain: how a writer of this mode opens, in words.
with_or_without() {
    if [ -n "$(writer_flags "$1")" ]; then echo "with H5F_ACC_SWMR_WRITE"; else echo "without H5F_ACC_SWMR_WRITE"; fi
}

# Writer and reader flags alternate in vfd mode: flip N swmr|plain.
flip() { if [ $(($1 % 2)) = 0 ]; then echo swmr; else echo plain; fi; }

echo "$SWMR_TEST: mode $SWMR_MODE$([ "$SWMR_MODE" != legacy ] && echo ", HDF5_DRIVER_CONFIG='$SWMR_CONFIG'"), work directory $WORK"
