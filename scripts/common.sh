# Shared settings for the scripts in this folder; sourced, never run.
# shellcheck shell=bash

VFDSWMR_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# Where the bootstrap keeps what it builds outside the repository (HDF5 1.14).
VFDSWMR_CACHE=${VFDSWMR_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/vfd-swmr}
# The build tree the README's commands use.
VFDSWMR_BUILD=${VFDSWMR_BUILD:-$VFDSWMR_ROOT/build}
HDF5_BOOT_VERSION=1.14.5
HDF5_BOOT_PREFIX=$VFDSWMR_CACHE/hdf5-$HDF5_BOOT_VERSION
# Changes whenever the bootstrap's HDF5 build recipe changes, so an older
# cached build is rebuilt instead of reused.
HDF5_BOOT_RECIPE="shared-only tools zlib r2"

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

# find_hdf5: print the prefix of an HDF5 >= 1.14 to build against.
# Order: $HDF5_PREFIX, the h5cc on PATH, pkg-config, the bootstrap's cache.
find_hdf5() {
    local p
    if [ -n "${HDF5_PREFIX:-}" ]; then
        hdf5_version_ok "$HDF5_PREFIX" && { echo "$HDF5_PREFIX"; return 0; }
        die "HDF5_PREFIX=$HDF5_PREFIX is not an HDF5 >= 1.14 installation"
    fi
    if command -v h5cc >/dev/null 2>&1; then
        p=$(cd "$(dirname "$(command -v h5cc)")/.." && pwd)
        hdf5_version_ok "$p" && { echo "$p"; return 0; }
    fi
    if pkg-config --atleast-version=1.14 hdf5 2>/dev/null; then
        p=$(pkg-config --variable=prefix hdf5)
        hdf5_version_ok "$p" && { echo "$p"; return 0; }
    fi
    if [ "$(cat "$HDF5_BOOT_PREFIX/.complete" 2>/dev/null)" = "$HDF5_BOOT_RECIPE" ] \
        && hdf5_version_ok "$HDF5_BOOT_PREFIX"; then
        echo "$HDF5_BOOT_PREFIX"; return 0
    fi
    return 1
}
