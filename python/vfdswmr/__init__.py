"""VFD SWMR for h5py: one writer process and many readers on a live HDF5 file.

Pure Python over ctypes: it calls libvfdswmr (the project's client library)
and the libhdf5 that h5py itself uses, so it needs vfd-swmr built against
that same HDF5 (on Debian 13: libhdf5-dev and python3-h5py are both HDF5
1.14.5). Importing it registers two h5py drivers, so each file chooses its
own driver -- unlike HDF5_DRIVER, which applies to every file a process
opens::

    import h5py, vfdswmr
    f = vfdswmr.File("live.h5", "w", config="tick_len=4;max_lag=7", libver="latest")
    # or: h5py.File("live.h5", "w", driver="vfd_swmr_writer", config="...")
    r = vfdswmr.File("live.h5", "r")        # in another process: the reader driver
    vfdswmr.refresh(r)                      # newest snapshot, new top-level objects included
    vfdswmr.status(r).lag                   # ticks behind the writer

The writer makes its changes visible with f.flush() (H5Fflush), with
vfdswmr.end_tick(f), or in SWMR-write mode (f.swmr_mode = True) with
dataset.flush(). See the README's "Python (h5py)" section.

vfdswmr.inspect("live.h5") runs vfd_swmr_inspect --json on a file from
outside (never writing, never locking: no writer or reader is disturbed) and
returns its JSON object as a dict: the writer's state ("running", "died",
...), tick, readers and their lags, what recovery would restore;
verify=True checks every structure and checksum (d["ok"], d["problems"]),
pages=True lists the index, updater=PATH checks updater files
(tools/inspect/vfd_swmr_inspect.1 gives the schema).

Finding the libraries: libvfdswmr is loaded from $VFDSWMR_LIB when set, else
as "libvfdswmr.so.0" through the dynamic linker (LD_LIBRARY_PATH, as
`eval "$(scripts/env)"` sets it, or an installed copy). The driver plugins
are found through HDF5_PLUGIN_PATH, then the directory they were installed
into. inspect() runs $VFDSWMR_INSPECT when set, else vfd_swmr_inspect on
PATH, else the one beside the libvfdswmr loaded: in a build tree
(<build>/client/.libs/) <build>/tools/inspect/vfd_swmr_inspect, in an
installed one (<prefix>/lib/) <prefix>/bin/vfd_swmr_inspect.
"""

import collections
import ctypes
import json
import os
import re
import shutil
import subprocess
import weakref

import h5py

__all__ = ["WRITER", "READER", "File", "end_tick", "disable_end_of_tick", "enable_end_of_tick",
           "refresh", "status", "Status", "driver", "inspect", "VfdSwmrError"]

WRITER = "vfd_swmr_writer"
READER = "vfd_swmr_reader"
_WRITER_STATES = {0: "none", 1: "running", 2: "closed", 3: "died", 4: "failed", 5: "unknown"}

hid_t = ctypes.c_int64
herr_t = ctypes.c_int


class VfdSwmrError(OSError):
    """An HDF5 or vfd-swmr call failed; the message gives HDF5's error stack, innermost reason first."""


class _Status(ctypes.Structure):
    # vfdswmr_status_t in include/vfdswmr.h, field for field
    _fields_ = [("is_writer", ctypes.c_int), ("tick", ctypes.c_ulonglong), ("session", ctypes.c_ulonglong),
                ("eoa", ctypes.c_ulonglong), ("index_entries", ctypes.c_ulonglong),
                ("pages_cached", ctypes.c_ulonglong), ("writer_state", ctypes.c_int),
                ("tick_len", ctypes.c_uint), ("max_lag", ctypes.c_uint), ("writer_tick", ctypes.c_ulonglong)]


Status = collections.namedtuple("Status", "is_writer writer_state tick writer_tick lag tick_len max_lag session eoa")
Status.__doc__ = """What vfdswmr.status() returns.

is_writer     True for the writer's file, False for a reader's
writer_state  "running", "closed" (the file is complete), "died" (the reader keeps
              the last snapshot), "failed" (could not publish), "none" (no writer
              seen), "unknown" (updater files: cannot tell)
tick          the snapshot in use (writer: its last published tick)
writer_tick   the newest tick the writer has published
lag           writer_tick - tick: how many ticks the reader is behind (0 for the writer)
tick_len      the writer's tick length, tenths of a second; max_lag: in ticks
session, eoa  the writer's session id; the end of allocated space in the snapshot"""


class _H5EError(ctypes.Structure):
    # H5E_error2_t
    _fields_ = [("cls_id", hid_t), ("maj_num", hid_t), ("min_num", hid_t), ("line", ctypes.c_uint),
                ("func_name", ctypes.c_char_p), ("file_name", ctypes.c_char_p), ("desc", ctypes.c_char_p)]


_WALK_CB = ctypes.CFUNCTYPE(herr_t, ctypes.c_uint, ctypes.POINTER(_H5EError), ctypes.c_void_p)
_HDF5_NAME = re.compile(r"^libhdf5(_serial|_openmpi|_mpich)?(-[0-9a-f]+)?\.so")


def _hdf5_paths():
    """The HDF5 core libraries mapped into this process (h5py loads one)."""
    paths = set()
    with open("/proc/self/maps") as maps:
        for line in maps:
            fields = line.split(None, 5)
            if len(fields) == 6 and _HDF5_NAME.match(os.path.basename(fields[5].strip())):
                paths.add(os.path.realpath(fields[5].strip()))
    return paths


def _load():
    if h5py.version.hdf5_version_tuple < (1, 14, 0):
        raise ImportError("vfdswmr: h5py %s is built on HDF5 %s, which cannot load virtual file driver plugins "
                          "(HDF5 1.14 or later can; on Debian, Debian 13's python3-h5py is built on 1.14.5)"
                          % (h5py.__version__, h5py.version.hdf5_version))
    h5py.h5.get_config()  # h5py's HDF5 is loaded now
    before = _hdf5_paths()
    if len(before) != 1:
        raise ImportError("vfdswmr: cannot tell which HDF5 library h5py uses (found: %s)" % (sorted(before) or "none"))
    hdf5 = ctypes.CDLL(next(iter(before)))
    name = os.environ.get("VFDSWMR_LIB") or "libvfdswmr.so.0"
    try:
        lib = ctypes.CDLL(name)
    except OSError as e:
        raise ImportError("vfdswmr: cannot load libvfdswmr (%s): %s. Set VFDSWMR_LIB to its path, or put its "
                          "directory on LD_LIBRARY_PATH (eval \"$(scripts/env)\" does)" % (name, e)) from None
    after = _hdf5_paths()
    if after != before:
        raise ImportError("vfdswmr: %s uses another HDF5 library (%s) than h5py (%s): build vfd-swmr against the "
                          "HDF5 h5py uses (configure --with-hdf5=PREFIX)"
                          % (name, ", ".join(sorted(after - before)), next(iter(before))))
    for f, args, res in [
            (hdf5.H5Pset_driver_by_name, [hid_t, ctypes.c_char_p, ctypes.c_char_p], herr_t),
            (hdf5.H5Pget_driver, [hid_t], hid_t),
            (hdf5.H5Pset_evict_on_close, [hid_t, ctypes.c_bool], herr_t),
            (hdf5.H5FDis_driver_registered_by_name, [ctypes.c_char_p], ctypes.c_int),
            (hdf5.H5Grefresh, [hid_t], herr_t),
            (hdf5.H5Drefresh, [hid_t], herr_t),
            (hdf5.H5Fget_obj_count, [hid_t, ctypes.c_uint], ctypes.c_ssize_t),
            (hdf5.H5Fget_obj_ids, [hid_t, ctypes.c_uint, ctypes.c_size_t, ctypes.POINTER(hid_t)],
             ctypes.c_ssize_t),
            (hdf5.H5Iget_type, [hid_t], ctypes.c_int),
            (hdf5.H5Ewalk2, [hid_t, ctypes.c_int, _WALK_CB, ctypes.c_void_p], herr_t),
            (hdf5.H5Eclear2, [hid_t], herr_t),
            (lib.vfdswmr_set_fapl_writer, [hid_t, ctypes.c_char_p], herr_t),
            (lib.vfdswmr_set_fapl_reader, [hid_t, ctypes.c_char_p], herr_t),
            (lib.vfdswmr_end_tick, [hid_t], herr_t),
            (lib.vfdswmr_disable_end_of_tick, [hid_t], herr_t),
            (lib.vfdswmr_enable_end_of_tick, [hid_t], herr_t),
            (lib.vfdswmr_refresh, [hid_t], herr_t),
            (lib.vfdswmr_get_status, [hid_t, ctypes.POINTER(_Status)], herr_t)]:
        f.argtypes, f.restype = args, res
    return hdf5, lib


_hdf5, _lib = _load()
_H5E_DEFAULT = 0
_H5E_WALK_DOWNWARD = 1
_H5F_OBJ_DATASET, _H5F_OBJ_GROUP = 0x0002, 0x0004
_H5I_GROUP, _H5I_DATASET = 2, 5


def _stack():
    """The text of HDF5's error stack (innermost last), which is then cleared."""
    descs = []

    def walk(n, err, data):
        e = err.contents
        descs.append("%s(): %s" % ((e.func_name or b"?").decode(errors="replace"),
                                   (e.desc or b"").decode(errors="replace")))
        return 0
    cb = _WALK_CB(walk)
    _hdf5.H5Ewalk2(_H5E_DEFAULT, _H5E_WALK_DOWNWARD, cb, None)
    _hdf5.H5Eclear2(_H5E_DEFAULT)
    return descs


def _check(rc, what):
    if rc < 0:
        descs = _stack()
        raise VfdSwmrError("%s failed: %s" % (what, " <- ".join(reversed(descs)) if descs else "(no HDF5 error stack)"))
    return rc


def _id(obj):
    """The HDF5 identifier of an h5py object (File, Group, Dataset) or of a low-level h5py id."""
    i = getattr(obj, "id", obj)
    return getattr(i, "id", i)


def _set_writer(plist, config=None):
    _check(_lib.vfdswmr_set_fapl_writer(plist.id, config.encode() if config else None),
           "vfdswmr_set_fapl_writer(%r)" % (config,))


def _set_reader(plist, config=None, evict_on_close=True):
    _check(_lib.vfdswmr_set_fapl_reader(plist.id, config.encode() if config else None),
           "vfdswmr_set_fapl_reader(%r)" % (config,))
    # closed objects leave HDF5's metadata cache, so reopening one (f["data"]) shows the current snapshot
    if evict_on_close:
        _check(_hdf5.H5Pset_evict_on_close(plist.id, True), "H5Pset_evict_on_close")


# h5py.File(name, mode, driver="vfd_swmr_writer", config="...") works once this module is imported.
h5py.register_driver(WRITER, _set_writer)
h5py.register_driver(READER, _set_reader)

# h5py's Dataset objects of read-only files keep their shape (and what is
# derived from it) in _cache_props until their own refresh(); refresh(f)
# must reach every one the program holds. Those created from now on are
# tracked here (weakly: tracking keeps none alive).
_datasets = weakref.WeakSet()
if not getattr(h5py.Dataset.__init__, "_vfdswmr_tracking", False):
    _dataset_init = h5py.Dataset.__init__

    def _tracking_init(self, *args, **kwds):
        _dataset_init(self, *args, **kwds)
        _datasets.add(self)

    _tracking_init._vfdswmr_tracking = True
    h5py.Dataset.__init__ = _tracking_init


def File(name, mode="r", config=None, **kwds):
    """An h5py.File through the reader driver (mode "r") or the writer driver (any other mode),
    for this file only. config: the driver's configuration string (README, "Configuration
    string"), e.g. "tick_len=4;max_lag=7"; readers take tick_len and max_lag from the writer.
    Other keywords go to h5py.File (libver="latest" and swmr=True for h5py's SWMR idiom;
    readers: evict_on_close=False keeps closed objects in HDF5's cache)."""
    drv = READER if mode == "r" else WRITER
    if "driver" in kwds:
        raise TypeError("vfdswmr.File chooses the driver itself (%s for mode %r)" % (drv, mode))
    if drv == WRITER and "evict_on_close" in kwds:
        raise TypeError("evict_on_close is a reader option")
    return h5py.File(name, mode, driver=drv, config=config, **kwds)


def end_tick(f):
    """Writer: flush the file and publish it to readers now, without waiting for the tick to end."""
    _check(_lib.vfdswmr_end_tick(_id(f)), "vfdswmr_end_tick")


def disable_end_of_tick(f):
    """Writer: hold publication back (around changes that belong together) until enable_end_of_tick."""
    _check(_lib.vfdswmr_disable_end_of_tick(_id(f)), "vfdswmr_disable_end_of_tick")


def enable_end_of_tick(f):
    """Writer: allow publication again (publishes at once if a tick ended meanwhile)."""
    _check(_lib.vfdswmr_enable_end_of_tick(_id(f)), "vfdswmr_enable_end_of_tick")


def refresh(f):
    """Reader: adopt the newest snapshot and show it through the whole file: the root group
    (new and deleted top-level objects) and every group and dataset this process has open in
    the file (new members, new extents) are refreshed, h5py Dataset objects held across the
    call included (their cached shape goes, as Dataset.refresh() does). Objects opened afterwards show the new
    snapshot (with the reader's default evict_on_close). h5py objects stay valid.

    Each refresh of an object adopts the newest snapshot again, so while the writer publishes,
    two open objects may show states one or more ticks apart; open objects afresh after a
    refresh to see one state."""
    if not isinstance(f, (h5py.File, h5py.h5f.FileID)):
        raise TypeError("vfdswmr.refresh takes an h5py.File (or h5py.h5f.FileID), not %s" % type(f).__name__)
    fid = _id(f)
    _check(_lib.vfdswmr_refresh(fid), "vfdswmr_refresh")
    # HDF5 keeps the root group it has read: after vfdswmr_refresh alone a reader that had
    # listed / does not see new top-level objects. H5Grefresh on an identifier of / does.
    root = h5py.h5g.open(f.id if isinstance(f, h5py.File) else f, b"/")
    _check(_hdf5.H5Grefresh(root.id), "H5Grefresh of /")
    types = _H5F_OBJ_DATASET | _H5F_OBJ_GROUP
    n = _check(_hdf5.H5Fget_obj_count(fid, types), "H5Fget_obj_count")
    ids = (hid_t * max(n, 1))()
    n = _check(_hdf5.H5Fget_obj_ids(fid, types, n, ids), "H5Fget_obj_ids")
    for oid in ids[:n]:
        if oid == root.id:
            continue
        kind = _hdf5.H5Iget_type(oid)
        if kind == _H5I_DATASET:
            _check(_hdf5.H5Drefresh(oid), "H5Drefresh")
        elif kind == _H5I_GROUP:
            _check(_hdf5.H5Grefresh(oid), "H5Grefresh")
    for d in list(_datasets):  # h5py's own caches of what changed (shape, ...)
        cache = getattr(d, "_cache_props", None)
        if cache is not None:
            cache.clear()


def status(f):
    """The state of the file's writer and of the snapshot in use, as a Status."""
    st = _Status()
    _check(_lib.vfdswmr_get_status(_id(f), ctypes.byref(st)), "vfdswmr_get_status")
    lag = st.writer_tick - st.tick if not st.is_writer and st.writer_tick > st.tick else 0
    return Status(bool(st.is_writer), _WRITER_STATES.get(st.writer_state, str(st.writer_state)), st.tick,
                  st.writer_tick, lag, st.tick_len, st.max_lag, st.session, st.eoa)


def driver(f):
    """The name of the driver the file was opened with: "vfd_swmr_writer", "vfd_swmr_reader",
    "vfd_chunk_cache", else what h5py's File.driver says. (h5py's File.driver, like HDF5's
    tools, names only HDF5's built-in drivers: plugins show as "unknown" there.)"""
    fapl = f.id.get_access_plist() if isinstance(f, h5py.File) else f.get_access_plist()
    mine = _hdf5.H5Pget_driver(fapl.id)
    for name in (WRITER, READER, "vfd_chunk_cache"):
        if _hdf5.H5FDis_driver_registered_by_name(name.encode()) <= 0:
            continue
        probe = h5py.h5p.create(h5py.h5p.FILE_ACCESS)
        if _hdf5.H5Pset_driver_by_name(probe.id, name.encode(), None) >= 0 and _hdf5.H5Pget_driver(probe.id) == mine:
            return name
        _hdf5.H5Eclear2(_H5E_DEFAULT)
    return f.driver if isinstance(f, h5py.File) else "unknown"


def _inspect_tool():
    """The vfd_swmr_inspect to run (see the module's docstring), or None."""
    tool = os.environ.get("VFDSWMR_INSPECT")
    if tool:
        return tool
    tool = shutil.which("vfd_swmr_inspect")
    if tool:
        return tool
    libs = set()
    with open("/proc/self/maps") as maps:
        for line in maps:
            fields = line.split(None, 5)
            if len(fields) == 6 and os.path.basename(fields[5].strip()).startswith("libvfdswmr.so"):
                libs.add(os.path.realpath(fields[5].strip()))
    for lib in sorted(libs):
        libdir = os.path.dirname(lib)
        if os.path.basename(libdir) == ".libs" and os.path.basename(os.path.dirname(libdir)) == "client":
            tool = os.path.join(os.path.dirname(os.path.dirname(libdir)), "tools", "inspect", "vfd_swmr_inspect")
        else:
            tool = os.path.join(os.path.dirname(libdir), "bin", "vfd_swmr_inspect")
        if os.access(tool, os.X_OK):
            return tool
    return None


def inspect(path, config=None, verify=False, pages=False, updater=None):
    """Run vfd_swmr_inspect --json on the HDF5 file `path` and return its JSON object as a dict
    (schema: tools/inspect/vfd_swmr_inspect.1). The tool never writes and never takes a lock, so
    a live writer and its readers go on undisturbed. config: the writer's configuration string
    (where its metadata file and updater files are: md_file_path, md_file_name,
    updater_file_path). verify=True: check every structure and checksum; the dict says
    d["ok"] and lists d["problems"] (problems found are returned, not raised). pages=True: the
    newest snapshot's index. updater=PATH: check the updater files of base PATH (a directory:
    the default base name in it); `path` may then be None.

    Raises VfdSwmrError with the tool's message when it cannot run, on a usage error (status
    2), when its output is not one JSON object, and -- for the default view and pages=True --
    when the file cannot be read (status 1; also for verify and updater when the tool could not
    look at the file at all: its dict then has "error"): the exception's `result` is then the
    tool's dict when it printed one (e.g. a dead writer whose recovery would be refused), else
    None."""
    tool = _inspect_tool()
    if tool is None:
        raise VfdSwmrError("vfd_swmr_inspect not found: set VFDSWMR_INSPECT to its path or put it on PATH")
    argv = [tool, "--json"]
    if config is not None:
        argv += ["--config", config]
    if verify:
        argv.append("--verify")
    if pages:
        argv.append("--pages")
    if updater is not None:
        argv += ["--updater", os.fspath(updater)]
    if path is not None:
        argv.append(os.fspath(path))
    try:
        p = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    except OSError as e:
        raise VfdSwmrError("cannot run %s: %s" % (tool, e)) from None
    err = p.stderr.decode(errors="replace").strip()
    try:
        result = json.loads(p.stdout.decode(errors="replace"))
    except ValueError:
        result = None
    if not isinstance(result, dict):
        result = None
    if p.returncode == 0 and result is not None:
        return result
    if p.returncode == 1 and result is not None and "error" not in result and (verify or updater is not None):
        return result
    what = "vfd_swmr_inspect %s" % " ".join(argv[1:])
    if result is None and not (p.returncode in (1, 2) and err):
        msg = "%s: exit status %d, output not a JSON object: %s" % (what, p.returncode, err or p.stdout[:200])
    else:
        msg = err or (result or {}).get("error") or ((result or {}).get("writer") or {}).get("message") or "(no message)"
        msg = "%s: exit status %d: %s" % (what, p.returncode, msg)
    e = VfdSwmrError(msg)
    e.result = result
    raise e
