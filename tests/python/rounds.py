"""One writer and one reader of a row file, each in its own process, through the
drivers: the rounds every h5py pairing test runs (h5py_to_c.py, c_to_h5py.py,
h5py_to_h5py.py). Each round: the reader is told to wait for the new rows, then
the writer appends and publishes them; the reader answers once it has read and
checked every row. The time from the writer's answer (its flush returned) to the
reader's answer is the delay, reported and never asserted.
"""
import os

import swmrtest as t

CONFIG = "tick_len=1;max_lag=7"  # a tick is 0.1 s


def run(writer_kind, reader_kind, label):
    work = t.workdir()
    path = os.path.join(work, "rows.h5")
    env = t.python_env()
    w = t.Proc("writer", t.writer_argv(writer_kind, path, CONFIG), env=env, workdir=work)
    r = None
    try:
        if w.read() != "ready 0":
            t.fail("the writer did not get ready: %s" % w.stderr())
        w.expect("tick", "ticked")  # the new file published now: a reader can open it
        r = t.Proc("reader", t.reader_argv(reader_kind, path), env=env, workdir=work)
        got = r.read()
        if got != "ready 0":
            t.fail("the reader answered %r, expected 'ready 0': %s" % (got, r.stderr()))
        t.ok("%s: the reader opened the live file" % label)

        delays = t.Delays(label + " (H5Fflush to rows read)")
        total = 0
        for k in (1, 100, 155, 1000, 3000, 1, 4096):
            total += k
            verify = "follow" if reader_kind == "py" and len(delays.values) % 2 else "verify"
            r.send("%s %d" % (verify, total))
            w.expect("append %d" % k, "flushed %d" % total)
            published = w.answered
            got = r.read()
            if got != "rows %d" % total:
                t.fail("the reader answered %r to %s %d: %s" % (got, verify, total, r.stderr()))
            delays.add(r.answered - published)
        t.ok("%s: %d rows in 7 publishes, every row read back with its value" % (label, total))

        w.expect("start_swmr", "swmr started")
        sdelays = t.Delays(label + " (Dataset.flush in SWMR-write mode to rows read)")
        for k in (7, 300, 2000):
            total += k
            r.send("verify %d" % total)
            w.expect("dappend %d" % k, "dflushed %d" % total)
            published = w.answered
            got = r.read()
            if got != "rows %d" % total:
                t.fail("the reader answered %r to verify %d: %s" % (got, total, r.stderr()))
            sdelays.add(r.answered - published)
        t.ok("%s: SWMR-write mode, Dataset.flush publishes: %d rows, every value right" % (label, total))

        w.expect("groups 5", "flushed groups 5")
        w.expect("tick", "ticked")
        if reader_kind == "py":
            r.expect("groups 5", "groups 5")
        else:  # rowreader checks groups in a one-shot open
            check = t.Proc("check", [os.path.join(t.PROGS, "rowreader"), path, "check", str(total), "5",
                                     "--config", ""], env=env, workdir=work)
            got = check.read()
            if not got.startswith("verified %d rows, 0 more" % total) or not got.endswith(", 5 groups"):
                t.fail("rowreader check answered %r: %s" % (got, check.stderr()))
            if check.end() != 0:
                t.fail("rowreader check failed: %s" % check.stderr())
        t.ok("%s: new groups /groups/g0..g4 seen with their attributes" % label)

        if writer_kind == "py" and reader_kind == "py":
            # New top-level objects: the reader opened the file before they existed;
            # vfdswmr.refresh shows them (HDF5 keeps the root group cached otherwise).
            w.expect("top 3", "flushed top 3")
            r.expect("top 3", "top 3")
            w.expect("top 2", "flushed top 5")
            r.expect("top 5", "top 5")
            t.ok("%s: new top-level groups /t0../t4 (with datasets) seen after vfdswmr.refresh" % label)

        if writer_kind == "py":
            st = w.ask("status")
            fields = dict(kv.split("=") for kv in st.split()[1:])
            if fields["state"] != "running" or fields["writer"] != "1" or fields["lag"] != "0" \
                    or fields["tick"] != fields["writer_tick"] or int(fields["tick"]) < 1:
                t.fail("the h5py writer's status is %r" % st)
            t.ok("%s: the h5py writer's status: running, tick %s" % (label, fields["tick"]))
        if reader_kind == "py":
            st = r.ask("status")
            fields = dict(kv.split("=") for kv in st.split()[1:])
            if fields["state"] != "running" or fields["writer"] != "0" \
                    or int(fields["lag"]) != int(fields["writer_tick"]) - int(fields["tick"]):
                t.fail("the h5py reader's status is %r" % st)
            t.ok("%s: the h5py reader's status: writer running, %s tick(s) behind" % (label, fields["lag"]))

        w.expect("close", "closed")
        if w.end() != 0:
            t.fail("the writer failed: %s" % w.stderr())
        if reader_kind == "py":
            r.expect("verify %d" % total, "rows %d" % total)
            st = r.ask("status")
            if "state=closed" not in st:
                t.fail("after the writer's close the reader's status is %r" % st)
            t.ok("%s: after the writer's close the reader says state=closed" % label)
        r.expect("quit", "closed")
        if r.end() != 0:
            t.fail("the reader failed: %s" % r.stderr())

        # The closed file is an ordinary HDF5 file: plain h5py (sec2) reads every value.
        import h5py
        import numpy as np
        with h5py.File(path, "r") as f:
            v = f["rows"][:]
            want = np.array([t.row_value(i) for i in range(total)], dtype="<i8")
            if len(v) != total or not (v == want).all():
                t.fail("the closed file holds wrong rows (%d of %d)" % (len(v), total))
            # .item(): the C writer's attribute is a 1-element array, h5py's a scalar (NumPy 2.4 will not int() the former)
            if [np.asarray(f["groups/g%d" % k].attrs["n"]).item() for k in range(5)] != list(range(5)):
                t.fail("the closed file's groups are wrong")
        if os.path.exists(path + ".md"):
            t.fail("the metadata file outlived the writer")
        t.ok("%s: the closed file reads back with plain h5py, every row and group" % label)
        delays.report()
        sdelays.report()
    finally:
        w.kill()
        if r:
            r.kill()
        import shutil
        shutil.rmtree(work, ignore_errors=True)
