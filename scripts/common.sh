# Shared settings for the scripts in this folder; sourced, never run.
# shellcheck shell=bash

VFDSWMR_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# Where the bootstrap keeps what it builds outside the repository (HDF5 1.14).
VFDSWMR_CACHE=${VFDSWMR_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/vfd-swmr}
# The build tree the README's commands use.
VFDSWMR_BUILD=${VFDSWMR_BUILD:-$VFDSWMR_ROOT/build}
HDF5_BOOT_VERSION=1.14.5
# The recipe's revision is part of the directory name: a changed recipe builds
# into a new directory, and a build made by an older checkout (which may be in
# use by it) is never removed or overwritten. Bump it (and HDF5_BOOT_RECIPE)
# whenever the bootstrap's HDF5 build recipe changes. r3: with the high-level
# library (hdf5_hl.h, libhdf5_hl, h5watch).
HDF5_BOOT_REV=r3
HDF5_BOOT_PREFIX=$VFDSWMR_CACHE/hdf5-$HDF5_BOOT_VERSION-$HDF5_BOOT_REV
# Written into $HDF5_BOOT_PREFIX/.complete when a build has finished: a
# directory without it (an interrupted build) is rebuilt.
HDF5_BOOT_RECIPE="shared-only tools hl zlib $HDF5_BOOT_REV"

say() { printf '%s: %s\n' "${0##*/}" "$*" >&2; }
die() { say "error: $*"; exit 1; }

# hdf5_version_ok PREFIX: true when PREFIX holds HDF5 >= 1.14 headers.
hdf5_version_ok() {
    local h="$1/include/H5public.h" maj min
    [ -f "$h" ] || return 1
    maj=$(sed -n 's/^#define H5_VERS_MAJOR[[:space:]]*\([0-9]*\).*/\1/p' "$h")
    min=$(sed -n 's/^#define H5_VERS_MINOR[[:space:]]*\([0-9]*\).*/\1/p' "$h")
    [ -n "$maj" ] && [ -n "$min" ] || return 1
    [ "$maj" -gt 1 ] || { [ "$maj" -eq 1 ] && [ "$min" -ge 14 ]; }
}

# hdf5_usable PREFIX: PREFIX holds HDF5 >= 1.14 headers and a shared library.
hdf5_usable() {
    hdf5_version_ok "$1" && [ -e "$1/lib/libhdf5.so" ]
}

# find_hdf5: print the prefix of an HDF5 >= 1.14 to build against.
# Order: $HDF5_PREFIX, the h5cc on PATH (its directory's parent and the -L
# directories `h5cc -show` names), pkg-config (its prefix and -L
# directories), Debian's serial HDF5 (/usr/lib/<triplet>/hdf5/serial: Debian
# 13's libhdf5-dev), the bootstrap's cache. m4/vfdswmr_hdf5.m4 looks in the
# same places.
find_hdf5() {
    local p cands=() d
    if [ -n "${HDF5_PREFIX:-}" ]; then
        hdf5_usable "$HDF5_PREFIX" && { echo "$HDF5_PREFIX"; return 0; }
        die "HDF5_PREFIX=$HDF5_PREFIX is not an HDF5 >= 1.14 installation with a shared library"
    fi
    if command -v h5cc >/dev/null 2>&1; then
        cands+=("$(cd "$(dirname "$(command -v h5cc)")/.." && pwd)")
        for d in $(HDF5_USE_SHLIB=yes h5cc -show 2>/dev/null | tr ' ' '\n' | sed -n 's/^-L//p'); do
            cands+=("$d" "$(dirname "$d")")
        done
    fi
    if pkg-config --atleast-version=1.14 hdf5 2>/dev/null; then
        p=$(pkg-config --variable=prefix hdf5)
        [ -z "$p" ] || cands+=("$p")
        for d in $(pkg-config --libs-only-L hdf5 | tr ' ' '\n' | sed -n 's/^-L//p'); do
            cands+=("$d" "$(dirname "$d")")
        done
    fi
    d=$(gcc -print-multiarch 2>/dev/null || true)
    [ -z "$d" ] || cands+=("/usr/lib/$d/hdf5/serial")
    for p in "${cands[@]}"; do
        hdf5_usable "$p" && { echo "$p"; return 0; }
    done
    if [ "$(cat "$HDF5_BOOT_PREFIX/.complete" 2>/dev/null)" = "$HDF5_BOOT_RECIPE" ] \
        && hdf5_usable "$HDF5_BOOT_PREFIX"; then
        echo "$HDF5_BOOT_PREFIX"; return 0
    fi
    return 1
}
