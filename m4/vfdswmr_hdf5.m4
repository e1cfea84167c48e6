# VFDSWMR_CHECK_HDF5
# Find an HDF5 >= 1.14.0 with the public VFD plugin API. Looks, in order, at
# --with-hdf5=PREFIX, the h5cc on PATH (its directory's parent, and the -L
# directories `h5cc -show` names), pkg-config's hdf5 (its prefix, and the -L
# directories it names), Debian's serial HDF5 (/usr/lib/<triplet>/hdf5/serial,
# which has include/ and lib/ links: Debian 13's libhdf5-dev is HDF5 1.14.5),
# and the prefixes scripts/bootstrap builds into. A candidate is a directory
# with include/H5public.h and lib/libhdf5.so. Substitutes HDF5_PREFIX,
# HDF5_CPPFLAGS, HDF5_LDFLAGS (with an rpath, so tests and tools find the
# library) and HDF5_LIBS.
AC_DEFUN([VFDSWMR_CHECK_HDF5], [
AC_ARG_WITH([hdf5],
    [AS_HELP_STRING([--with-hdf5=PREFIX], [HDF5 >= 1.14.0 installation to build against])],
    [], [with_hdf5=auto])
vfdswmr_hdf5_candidates=
AS_IF([test "x$with_hdf5" != xauto && test "x$with_hdf5" != xyes],
    [vfdswmr_hdf5_candidates="$with_hdf5"],
    [vfdswmr_Ldirs=
     AS_IF([test -n "`command -v h5cc 2>/dev/null`"],
        [vfdswmr_hdf5_candidates="`dirname \`dirname \\\`command -v h5cc\\\`\``"
         vfdswmr_Ldirs=`HDF5_USE_SHLIB=yes h5cc -show 2>/dev/null | tr ' ' '\n' | sed -n 's/^-L//p'`])
     vfdswmr_pc=`$PKG_CONFIG --variable=prefix hdf5 2>/dev/null`
     AS_IF([test -n "$vfdswmr_pc"], [vfdswmr_hdf5_candidates="$vfdswmr_hdf5_candidates $vfdswmr_pc"])
     vfdswmr_Ldirs="$vfdswmr_Ldirs `$PKG_CONFIG --libs-only-L hdf5 2>/dev/null | tr ' ' '\n' | sed -n 's/^-L//p'`"
     for vfdswmr_d in $vfdswmr_Ldirs; do
         vfdswmr_hdf5_candidates="$vfdswmr_hdf5_candidates $vfdswmr_d `dirname $vfdswmr_d`"
     done
     vfdswmr_triplet=`$CC -print-multiarch 2>/dev/null`
     AS_IF([test -n "$vfdswmr_triplet"],
        [vfdswmr_hdf5_candidates="$vfdswmr_hdf5_candidates /usr/lib/$vfdswmr_triplet/hdf5/serial"])
     vfdswmr_cache="${VFDSWMR_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/vfd-swmr}"
     vfdswmr_hdf5_candidates="$vfdswmr_hdf5_candidates $vfdswmr_cache/hdf5-1.14.5-r3 $vfdswmr_cache/hdf5-1.14.5"])
HDF5_PREFIX=
vfdswmr_tried=
for vfdswmr_p in $vfdswmr_hdf5_candidates; do
    dnl the same directory once; directories without HDF5's header and library are not compiled against
    case " $vfdswmr_tried " in *" $vfdswmr_p "*) continue ;; esac
    vfdswmr_tried="$vfdswmr_tried $vfdswmr_p"
    AS_IF([test "x$with_hdf5" = xauto || test "x$with_hdf5" = xyes],
        [test -f "$vfdswmr_p/include/H5public.h" && test -e "$vfdswmr_p/lib/libhdf5.so" || continue])
    AC_MSG_CHECKING([for HDF5 >= 1.14 with the VFD plugin API in $vfdswmr_p])
    vfdswmr_save_CPPFLAGS=$CPPFLAGS
    vfdswmr_save_LDFLAGS=$LDFLAGS
    vfdswmr_save_LIBS=$LIBS
    CPPFLAGS="$CPPFLAGS -I$vfdswmr_p/include"
    LDFLAGS="$LDFLAGS -L$vfdswmr_p/lib -Wl,-rpath,$vfdswmr_p/lib"
    LIBS="-lhdf5 $LIBS"
    AC_LINK_IFELSE([AC_LANG_PROGRAM([[
#include <hdf5.h>
#include <H5FDdevelop.h>
#include <H5PLextern.h>
#if H5_VERS_MAJOR < 1 || (H5_VERS_MAJOR == 1 && H5_VERS_MINOR < 14)
#error "HDF5 older than 1.14"
#endif
]], [[return H5Pset_driver_by_name(H5P_DEFAULT, "sec2", 0) < 0 && H5FDis_driver_registered_by_name("x") < 0;]])],
        [HDF5_PREFIX=$vfdswmr_p])
    CPPFLAGS=$vfdswmr_save_CPPFLAGS
    LDFLAGS=$vfdswmr_save_LDFLAGS
    LIBS=$vfdswmr_save_LIBS
    AS_IF([test -n "$HDF5_PREFIX"], [AC_MSG_RESULT([yes]); break], [AC_MSG_RESULT([no])])
done
AS_IF([test -z "$HDF5_PREFIX"],
    [AC_MSG_ERROR([HDF5 >= 1.14.0 not found (looked in:$vfdswmr_tried). Run scripts/bootstrap to build it, or pass --with-hdf5=PREFIX.])])
AC_SUBST([HDF5_PREFIX])
AC_SUBST([HDF5_CPPFLAGS], ["-I$HDF5_PREFIX/include"])
AC_SUBST([HDF5_LDFLAGS], ["-L$HDF5_PREFIX/lib -Wl,-rpath,$HDF5_PREFIX/lib"])
AC_SUBST([HDF5_LIBS], ["-lhdf5"])
])
