"""The vfdswmr Python helper itself, with real processes (an h5py writer, pywriter.py):
 - a reader before the writer's first flush is told to wait for it (h5py's OSError);
 - the driver is chosen per file: one process reads the live file through the reader
   and writes a result file with plain HDF5 (no HDF5_DRIVER anywhere);
 - h5py.File(..., driver="vfd_swmr_reader") works once vfdswmr is imported;
 - driver names: vfdswmr.driver() names the plugin, h5py's File.driver cannot;
 - status: writer running/closed, tick, lag; end_tick refused on a reader;
 - a bad configuration is refused with the key named.
"""
import os
import subprocess
import sys

import swmrtest as t

t.need_h5py()
import h5py  # noqa: E402
import numpy as np  # noqa: E402
import vfdswmr  # noqa: E402

for var in ("HDF5_DRIVER", "HDF5_DRIVER_CONFIG"):
    if var in os.environ:
        t.fail("%s is set: these tests choose drivers per file" % var)
work = t.workdir()
path = os.path.join(work, "live.h5")
w = t.Proc("writer", t.writer_argv("py", path, "tick_len=1;max_lag=7"), env=t.python_env(), workdir=work)
try:
    # pywriter has created the file and called flush(); published within a tick, or not yet.
    if w.read() != "ready 0":
        t.fail("the writer did not get ready: %s" % w.stderr())

    # A writer that has created its file but not flushed it: an h5py writer of our own,
    # in a child process that waits for a line before its first flush.
    early = os.path.join(work, "early.h5")
    child = t.Proc("early", [sys.executable, "-c", (
        "import sys, vfdswmr\n"
        "f = vfdswmr.File(sys.argv[1], 'w', config='tick_len=1;max_lag=7', libver='latest')\n"
        "print('created', flush=True)\n"
        "sys.stdin.readline()\n"
        "f.create_dataset('x', data=[1, 2, 3]); vfdswmr.end_tick(f)\n"
        "print('published', flush=True)\n"
        "sys.stdin.readline(); f.close()\n"), early], env=t.python_env(), workdir=work)
    if child.read() != "created":
        t.fail("the early writer did not start: %s" % child.stderr())
    try:
        vfdswmr.File(early, "r")
        t.fail("a reader opened a file whose writer had not flushed it")
    except OSError as e:
        if "Wait for the writer's first flush" not in str(e):
            t.fail("h5py's error does not tell to wait for the writer's first flush: %s" % e)
        t.ok("h5py's OSError before the writer's first flush: ...%s" % str(e)[str(e).find("has no published"):][:60])
    child.expect("go", "published")  # end_tick: published when it returns
    with vfdswmr.File(early, "r") as r:
        if list(r["x"][:]) != [1, 2, 3]:
            t.fail("after the first flush the reader reads %r" % list(r["x"][:]))
    child.end()
    t.ok("after the writer's first flush h5py opens the file and reads [1, 2, 3]")

    w.expect("append 1000", "flushed 1000")
    w.expect("tick", "ticked")
    # One process, two files, two drivers: the live file through the reader, a result
    # file written with plain HDF5 (sec2) -- what HDF5_DRIVER cannot do.
    result = os.path.join(work, "result.h5")
    with vfdswmr.File(path, "r") as live, h5py.File(result, "w") as out:
        rows = live["rows"][:]
        out["sum"] = rows.sum(dtype=np.uint64)
        out["n"] = len(rows)
        names = (vfdswmr.driver(live), vfdswmr.driver(out), live.driver, out.driver)
        try:
            vfdswmr.status(out)
            t.fail("vfdswmr.status of a plain sec2 file succeeded")
        except vfdswmr.VfdSwmrError as e:
            if "not open through vfd_swmr_writer, vfd_swmr_reader or vfd_chunk_cache" not in str(e):
                t.fail("vfdswmr.status of a plain file: unclear error: %s" % e)
    if names != ("vfd_swmr_reader", "sec2", "unknown", "sec2"):
        t.fail("driver names (vfdswmr.driver live, result; h5py live, result): %r" % (names,))
    t.ok("vfdswmr.driver names the plugin; h5py's File.driver says 'unknown' (HDF5 gives no plugin names); "
         "status of a plain file is refused")
    want = sum(t.row_value(i) for i in range(1000)) % (1 << 64)
    # The result file is a plain file: a separate plain process reads it (no driver, no helper).
    got = subprocess.run([sys.executable, "-c", "import h5py, sys; f = h5py.File(sys.argv[1]); "
                          "print(int(f['n'][()]), int(f['sum'][()]))", result],
                         capture_output=True, text=True, env={k: v for k, v in os.environ.items()
                                                               if not k.startswith("HDF5_PLUGIN")})
    if got.returncode != 0 or got.stdout.split() != ["1000", str(want)]:
        t.fail("the result file written beside the live one: %r %r" % (got.stdout, got.stderr))
    t.ok("one process read the live file through vfd_swmr_reader and wrote a plain result file")

    with h5py.File(path, "r", driver="vfd_swmr_reader") as live:
        if vfdswmr.driver(live) != "vfd_swmr_reader" or live["rows"].shape != (1000,):
            t.fail("h5py.File(driver='vfd_swmr_reader'): %s, %r" % (vfdswmr.driver(live), live["rows"].shape))
        try:
            vfdswmr.end_tick(live)
            t.fail("end_tick on a reader succeeded")
        except vfdswmr.VfdSwmrError as e:
            if "only the writer" not in str(e):
                t.fail("end_tick on a reader: unclear error: %s" % e)
        st = vfdswmr.status(live)
        if st.is_writer or st.writer_state != "running" or st.tick < 1 or st.lag != st.writer_tick - st.tick:
            t.fail("the reader's status: %r" % (st,))
        held = live["rows"]  # a Dataset object kept across the refresh: h5py caches its shape
        held_before = held[:]
        w.expect("append 10", "flushed 1010")
        w.expect("tick", "ticked")
        w.expect("tick", "ticked")
        st2 = vfdswmr.status(live)
        if st2.tick != st.tick or st2.writer_tick < st.tick + 2 or st2.lag != st2.writer_tick - st2.tick:
            t.fail("the reader's status after two more ticks, before a refresh: %r (before: %r)" % (st2, st))
        vfdswmr.refresh(live)
        st3 = vfdswmr.status(live)
        if st3.tick < st2.writer_tick or live["rows"].shape != (1010,):
            t.fail("after refresh: %r, %r rows" % (st3, live["rows"].shape))
        fresh = live["rows"][:]
        if held.shape != (1010,) or len(held[:]) != 1010 or list(held[:]) != list(fresh) \
                or list(held[:1000]) != list(held_before):
            t.fail("a Dataset held across vfdswmr.refresh: shape %r, %d rows read" % (held.shape, len(held[:])))
    t.ok("h5py.File(driver='vfd_swmr_reader') works; status tells tick %d -> %d, lag %d -> %d after refresh; "
         "a Dataset held across the refresh shows all 1010 rows" % (st2.tick, st3.tick, st2.lag, st3.lag))

    # New top-level objects with HDF5's metadata cache keeping what it read (evict_on_close
    # off): the reader lists the root group, the writer adds /t0; vfdswmr.refresh shows it.
    # (The bare C vfdswmr_refresh moves to the new snapshot but HDF5 keeps the root group it
    # had read: printed, not asserted.)
    with vfdswmr.File(path, "r", evict_on_close=False) as live:
        before = sorted(live)
        w.expect("top 1", "flushed top 1")
        w.expect("tick", "ticked")
        vfdswmr._lib.vfdswmr_refresh(live.id.id)
        bare = "t0" in live
        vfdswmr.refresh(live)
        if before != ["groups", "rows"] or "t0" not in live or live["t0"].attrs["n"] != 0 \
                or list(live["t0/v"][:]) != [0, 1, 2]:
            t.fail("vfdswmr.refresh with evict_on_close=False: before %r, after %r" % (before, sorted(live)))
    t.ok("vfdswmr.refresh shows a new top-level group to a reader that had listed / "
         "(the bare vfdswmr_refresh: %s)" % ("shows it too" if bare else "does not"))

    for config, want in (("tick_len=4;max_lag=2", "max_lag=2"), ("tick_len=x", "tick_len=x"),
                         ("no_such_key=1", "no_such_key")):
        try:
            vfdswmr.File(os.path.join(work, "bad.h5"), "w", config=config)
            t.fail("the bad configuration %r was accepted" % config)
        except (OSError, ValueError) as e:
            if want not in str(e):
                t.fail("the error for %r does not name %r: %s" % (config, want, e))
        if os.path.exists(os.path.join(work, "bad.h5")):
            t.fail("a refused configuration created the file")
    t.ok("bad configurations are refused with the key named, and no file is created")

    w.expect("close", "closed")
    w.end()
    with vfdswmr.File(path, "r") as live:
        st = vfdswmr.status(live)
        if live["rows"].shape != (1010,):
            t.fail("after the writer's close: %r rows" % (live["rows"].shape,))
    t.ok("after the writer's close a reader opens the plain file (writer_state %s)" % st.writer_state)
finally:
    w.kill()
    import shutil
    shutil.rmtree(work, ignore_errors=True)
t.finish()
