#!/usr/bin/env bash
# shellcheck disable=SC2086 # VFDSWMR_VALGRIND is a command line, split on purpose
# vfd_swmr_inspect (tools/inspect/vfd_swmr_inspect.1) against real sessions,
# its --json output parsed with python3's json module and compared, field
# by field, with what is known without it: what the writer and reader
# processes report (vfdswmr_get_status through tests/progs/rowwriter.c and
# rowreader.c), the bytes of the metadata file, read-mark table, raw-data
# log and updater files decoded here as docs/FORMAT.md gives them, the
# extended attribute user.vfdswmr.md, and what vfd_swmr_recover then does.
#
#   live     a writer (explicit ticks, publish=tick, tick_len so long that
#            its ticker never ends one: nothing changes between commands)
#            and two readers holding snapshots two ticks apart: state,
#            configuration, session, tick, epoch, index, sizes, raw-data
#            log, registered readers, each read mark's tick and lag; --pages
#            and --verify; the tool run again and again while the writer
#            appends and ticks and the readers follow, every run right;
#            the files byte-identical across a run; every row verified
#   died     a writer killed after a flush: state "died", and the recovery
#            the view predicts is what vfd_swmr_recover then does
#   closed   a clean close (metadata file removed: "none"; kept with
#            keep_metadata_file=1: "closed", FINAL); a plain file: "none"
#   verify   --verify of every fixture in tests/fixtures/md: the damaged
#            ones fail (status 1) naming the damaged structure, the sound
#            ones pass (status 0)
#   updater  --updater on a real writer's updater files, then with one
#            removed (missing) and two swapped (out of order)
#   hostile  a FIFO, a symbolic link, truncated metadata files, another
#            file's metadata file: status 1 and one line on stderr (no hang)
#   watch    --watch --json on a writer that ticks (tick_len=1) and
#            appends: one JSON object a line, ticks increasing
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "${VFDSWMR_TESTLIB:?}"
# shellcheck source=procs.sh
. "${VFDSWMR_PROCLIB:?}"

INSPECT=${VFDSWMR_INSPECT:-${VFDSWMR_PROGS%/tests/progs}/tools/inspect/vfd_swmr_inspect}
[ -x "$INSPECT" ] || fail "vfd_swmr_inspect is not built: $INSPECT"
[ -x "$VFDSWMR_RECOVER" ] || fail "the recovery command is not built: $VFDSWMR_RECOVER"
: "${VFDSWMR_FIXTURES:?run through make check}"
# The guard against a hang (status 124 fails the test); nothing waits on it.
if [ -n "${VFDSWMR_VALGRIND:-}" ]; then guard=300; else guard=60; fi

# The checker: decodes the files itself (docs/FORMAT.md) and compares the
# tool's JSON with that, field by field; prints a summary, or every field that
# disagrees (exit status 1).
cat >"$WORK/jcheck.py" <<'PY'
import hashlib
import json
import os
import struct
import sys
import time

errors = []


def bad(msg):
    errors.append(msg)


def load(path):
    with open(path) as fh:
        text = fh.read()
    try:
        return json.loads(text)
    except ValueError as e:
        sys.exit("the tool's output is not JSON (%s): %r" % (e, text[:300]))


def csum(b):
    return struct.unpack("<I", hashlib.sha256(b).digest()[:4])[0]


def eq(what, got, want):
    if got != want or type(got) is not type(want):
        bad("%s: the tool says %r, expected %r" % (what, got, want))


def hdr(md):
    """The metadata file header (docs/FORMAT.md, VHDR), decoded here."""
    with open(md, "rb") as fh:
        b = fh.read(80)
    f = struct.unpack("<4sHHIQQQQQIIQQI", b)
    h = dict(zip("sig version flags page_size session tick index_offset index_length eoa tick_len max_lag hdf5_id "
                 "epoch checksum".split(), f))
    if h["sig"] != b"VHDR" or h["checksum"] != csum(b[:76]):
        sys.exit("%s: no whole header to compare with" % md)
    return h


def idx(md, h):
    """The index the header names (VIDX): entries, ranges, image lengths."""
    with open(md, "rb") as fh:
        fh.seek(h["index_offset"])
        b = fh.read(h["index_length"])
    sig, session, tick, n, m = struct.unpack_from("<4sQQII", b)
    if sig != b"VIDX" or session != h["session"] or tick != h["tick"] or csum(b[:-4]) != struct.unpack_from("<I", b, len(b) - 4)[0]:
        sys.exit("%s: the index does not match its header" % md)
    ents = [struct.unpack_from("<QQIIII", b, 28 + 32 * i) for i in range(n)]
    return n, m, ents


def marks(md):
    """The read-mark table (VRDM): release_below and {slot: mark}."""
    p = md + ".readers"
    if not os.path.exists(p):
        return None
    with open(p, "rb") as fh:
        b = fh.read(64 + 16 * 65536)
    sig, ver, session, rel, nslots = struct.unpack_from("<4sIQQI", b)
    return {"release_below": rel, "session": session,
            "slots": {i: struct.unpack_from("<Q", b, 64 + 16 * i)[0] for i in range(nslots) if 64 + 16 * i + 8 <= len(b)}}


def rawlog(md):
    p = md + ".raw"
    if not os.path.exists(p):
        return None
    with open(p, "rb") as fh:
        b = fh.read(36)
    sig, ver, session, first, last, count = struct.unpack("<4sIQQQI", b)
    return {"first_tick": first, "last_tick": last, "ranges": count}


def xattr_session(h5):
    try:
        v = os.getxattr(h5, "user.vfdswmr.md").decode()
    except OSError:
        return None
    if not v.startswith("vfdswmr-md 1 "):
        return None
    return v.split(" ")[3]


def args_dict(argv):
    return dict(a.split("=", 1) for a in argv)


def view(argv):
    """view JSON H5 MD key=value...: the default view of a session whose writer
    is running, or has closed keeping the metadata file (FINAL), or died."""
    j = load(argv[0])
    h5, md = argv[1], argv[2]
    a = args_dict(argv[3:])
    h = hdr(md)
    n, m, ents = idx(md, h)
    st = os.stat(md)
    eq("schema", j.get("schema"), 1)
    eq("file", j.get("file"), h5)
    if not isinstance(j.get("metadata_file"), str) or os.path.realpath(j["metadata_file"]) != os.path.realpath(md):
        bad("metadata_file: the tool says %r, expected %r" % (j.get("metadata_file"), md))
    w = j.get("writer") or {}
    eq("writer.state", w.get("state"), a["state"])
    eq("writer.lock_held", w.get("lock_held"), a["state"] in ("running", "failed"))
    if not isinstance(w.get("message"), str) or not w.get("message"):
        bad("writer.message: %r, expected a text" % (w.get("message"),))
    sess = "%016x" % h["session"]
    eq("session (header of %s)" % md, j.get("session"), sess)
    if a["state"] in ("running", "died"):
        x = xattr_session(h5)
        if x != sess:
            bad("the file's user.vfdswmr.md names session %r, the header %s" % (x, sess))
    if "session" in a:
        eq("session (as the writer reports it)", j.get("session"), a["session"])
    eq("format_version", j.get("format_version"), h["version"])
    eq("page_size", j.get("page_size"), int(a["page_size"]))
    eq("page_size (header)", j.get("page_size"), h["page_size"])
    eq("tick_len", j.get("tick_len"), int(a["tick_len"]))
    eq("max_lag", j.get("max_lag"), int(a["max_lag"]))
    eq("tick (the writer's own status)", j.get("tick"), int(a["tick"]))
    eq("tick (header)", j.get("tick"), h["tick"])
    eq("epoch (header)", j.get("epoch"), h["epoch"])
    if "publish" in a:
        eq("publish", j.get("publish"), a["publish"])
    eq("eoa (header)", j.get("eoa"), h["eoa"])
    eq("index", j.get("index"), {"entries": n, "ranges": m, "offset": h["index_offset"], "bytes": h["index_length"]})
    eq("md_size", j.get("md_size"), st.st_size)
    ps = h["page_size"]
    used_min = 80 + h["index_length"] + sum(e[2] for e in ents)
    used_max = max(int(a.get("reserved", 4)) * ps, 80 + 2 * h["index_length"]) + h["index_length"] + \
        sum((e[2] + ps - 1) // ps * ps for e in ents)
    u = j.get("md_unused_bytes")
    if not isinstance(u, int) or not st.st_size - used_max <= u <= st.st_size - used_min:
        bad("md_unused_bytes: the tool says %r; the file is %d bytes, the newest snapshot uses %d to %d of them"
            % (u, st.st_size, used_min, used_max))
    age = j.get("published_age_s")
    now_age = time.time() - st.st_mtime
    if not isinstance(age, (int, float)) or not -0.5 <= age <= now_age + 0.5:
        bad("published_age_s: the tool says %r; the metadata file was modified %.2f s ago" % (age, now_age))
    eq("rawlog (%s.raw)" % md, j.get("rawlog"), rawlog(md))
    if a["state"] == "died":
        if not isinstance(j.get("recovery"), dict):
            bad("recovery: %r for a writer that died" % (j.get("recovery"),))
    else:
        eq("recovery", j.get("recovery"), None)
    if "readers" in a:
        r = j.get("readers")
        if not isinstance(r, dict):
            bad("readers: %r" % (r,))
        else:
            # readers=: the tick counts (epochs) of the snapshots the readers hold, as the
            # script knows them (= their ticks with publish=tick; the header's epoch when
            # they adopted their snapshot otherwise); the lag is in tick counts
            held = sorted(int(t) for t in a["readers"].split(",")) if a["readers"] else []
            eq("readers.registered", r.get("registered"), int(a.get("registered", len(held))))
            mk = r.get("marked")
            if not isinstance(mk, list):
                bad("readers.marked: %r" % (mk,))
                mk = []
            eq("readers.marked: the tick counts the readers hold", sorted(e.get("epoch") for e in mk), held)
            eq("readers.marked: their lags", sorted(e.get("lag") for e in mk), sorted(h["epoch"] - t for t in held))
            for e in mk:
                eq("readers.marked slot %s: lag" % e.get("slot"), e.get("lag"), h["epoch"] - e.get("epoch", 0))
            eq("readers.unmarked", r.get("unmarked"), int(a.get("unmarked", 0)))
            rel = set(int(x) for x in a.get("released", "").split(",") if x)
            for e in mk:
                eq("readers.marked slot %s: released" % e.get("slot"), e.get("released"), e.get("epoch") in rel)
            t = marks(md)
            if t is None:
                if mk:
                    bad("no read-mark table %s.readers to compare with" % md)
            else:
                eq("readers.release_below (table)", r.get("release_below"), t["release_below"])
                for e in mk:  # released: below what the writer released, as the table says
                    if (e.get("epoch", 0) < t["release_below"]) != (e.get("epoch") in rel):
                        bad("readers.marked slot %s: epoch %r, the table releases below %d, the test expected %s"
                            % (e.get("slot"), e.get("epoch"), t["release_below"], sorted(rel)))
                for e in mk:
                    # the slot's mark is the epoch + 1 of the snapshot held (FORMAT.md)
                    got = t["slots"].get(e.get("slot"))
                    if got != e.get("epoch", -2) + 1:
                        bad("readers.marked slot %s epoch %s: the table's slot holds mark %r" % (e.get("slot"), e.get("epoch"), got))
    if errors:
        sys.exit("\n".join(errors))
    print("state %s, session %s, tick %d, epoch %d, %d entries, readers %s" %
          (a["state"], sess, h["tick"], h["epoch"], n, a.get("readers", "-")))


def died(argv):
    """died JSON RECOVER_OUTPUT: recovery as the tool predicted it against what vfd_swmr_recover did."""
    import re
    j = load(argv[0])
    out = argv[1]
    mo = re.search(r"recovered tick (\d+) of writer session ([0-9a-f]{16}): (\d+) pages \((\d+) bytes of metadata\) "
                   r"written back, end of file (\d+)", out)
    if not mo:
        sys.exit("vfd_swmr_recover did not say what it recovered: %s" % out)
    rec = j.get("recovery") or {}
    eq("recovery.refused", rec.get("refused"), None)
    eq("recovery.tick", rec.get("tick"), int(mo.group(1)))
    eq("session", j.get("session"), mo.group(2))
    eq("recovery.pages", rec.get("pages"), int(mo.group(3)))
    eq("recovery.bytes", rec.get("bytes"), int(mo.group(4)))
    eq("recovery.eoa", rec.get("eoa"), int(mo.group(5)))
    if "vfd_swmr_recover" not in str(rec.get("command")):
        bad("recovery.command: %r does not name vfd_swmr_recover" % (rec.get("command"),))
    if errors:
        sys.exit("\n".join(errors))
    print("tick %s, %s pages, %s bytes, end of file %s" % mo.group(1, 3, 4, 5))


def plain(argv):
    """plain JSON H5 STATE: no live session: a plain file, or one whose writer closed (metadata file removed)."""
    j = load(argv[0])
    eq("schema", j.get("schema"), 1)
    eq("file", j.get("file"), argv[1])
    w = j.get("writer") or {}
    eq("writer.state", w.get("state"), argv[2])
    eq("writer.lock_held", w.get("lock_held"), False)
    for k in ("session", "tick", "epoch", "index", "recovery", "rawlog"):
        eq(k, j.get(k), None)
    if errors:
        sys.exit("\n".join(errors))
    print("state %s, no session" % argv[2])


# fixture -> the structures that may be named as damaged (several where the
# spec leaves it open: a header naming an index that is not there)
HEADER, INDEX = {"header"}, {"index"}
EITHER = {"header", "index"}


def fixture_structures(name):
    if name == "page_checksum":
        return {"image"}
    if name in ("tick_ahead", "tick_mismatch", "session_mismatch", "idx_beyond_eof", "idx_absurd_length",
                "idx_huge_claim", "idx_offset_unaligned", "idx_offset_in_header", "truncated_index"):
        return EITHER
    if name.startswith(("idx_", "count_", "range", "unsorted", "overlap", "entry_")):
        return INDEX
    return HEADER


# The damaged entry of each fixture whose defect is one entry (tests/fixtures/README.md), and
# whether it is one of its ranges; where entries are out of order or overlap, the one after.
BAD_ENTRY = {"unsorted": (2, False), "overlap": (1, False), "entry_zero_length": (0, False),
             "entry_in_page0": (0, False), "entry_offset_overflow": (2, False), "range_first_wrong": (1, False),
             "range_past_image": (0, True), "range_empty": (1, True), "ranges_unsorted": (0, True),
             "range_count_mismatch": (2, False)}


def verify(argv):
    """verify JSON H5 MD FIXTURE: --verify of a damaged fixture."""
    j = load(argv[0])
    h5, md, name = argv[1], argv[2], argv[3]
    eq("schema", j.get("schema"), 1)
    eq("file", j.get("file"), h5)
    eq("ok", j.get("ok"), False)
    probs = j.get("problems")
    if not isinstance(probs, list) or not probs:
        sys.exit("%s: no problem listed: %r" % (name, probs))
    want = fixture_structures(name)
    p = probs[0]
    if p.get("structure") not in want:
        bad("%s: the problem is in structure %r, expected %s (%s)" % (name, p.get("structure"), " or ".join(sorted(want)), p.get("error")))
    if not isinstance(p.get("file"), str) or os.path.realpath(p["file"]) != os.path.realpath(md):
        bad("%s: the problem's file is %r, expected %s" % (name, p.get("file"), md))
    if not isinstance(p.get("error"), str) or not p["error"]:
        bad("%s: no error text: %r" % (name, p.get("error")))
    # byte offsets that are known: the header at 0; the fixtures' index in slot 0 at 80
    # (tests/fixtures/README.md); entry 1's image at metadata page 3 of 512 bytes
    if p.get("structure") == "header":
        eq("%s: header problem offset" % name, p.get("offset"), 0)
    elif p.get("structure") == "index" and name in BAD_ENTRY:
        # an entry (or one of its ranges) at fault: which one, from the README's description
        # of the fixture, at its bytes: entries from 80 + 28, 32 bytes each; ranges after them
        e, is_range = BAD_ENTRY[name]
        eq("%s: index problem entry" % name, p.get("entry"), e)
        n = struct.unpack_from("<I", open(md, "rb").read()[80 + 20:80 + 24])[0]
        ranges_at = 80 + 28 + 32 * n
        o = p.get("offset")
        if is_range and not (isinstance(o, int) and ranges_at <= o < ranges_at + 8 * 64):
            bad("%s: a range's problem at offset %r, the ranges start at %d" % (name, o, ranges_at))
        elif not is_range:
            eq("%s: index problem offset" % name, o, 80 + 28 + 32 * e)
    elif p.get("structure") == "index" and name not in ("idx_beyond_eof", "idx_offset_unaligned", "idx_offset_in_header"):
        eq("%s: index problem offset" % name, p.get("offset"), 80)
    elif p.get("structure") == "image":
        eq("%s: image problem offset" % name, p.get("offset"), 3 * 512)
        eq("%s: image problem entry" % name, p.get("entry"), 1)
    if errors:
        sys.exit("\n".join(errors))
    print("%s: %s at %s: %s" % (name, p["structure"], p.get("offset"), p["error"]))


def verify_ok(argv):
    """verify_ok JSON H5 MD IMAGES: --verify of a sound metadata file."""
    sound(load(argv[0]), argv[1], int(argv[3]))


def updater(argv):
    """updater JSON BASE PRESENT MISSING OUT_OF_ORDER [MAY] (comma lists): --updater against the files
    themselves; MAY: sequences that may be listed out of order, or not."""
    j = load(argv[0])
    base = argv[1]
    lst = [sorted(int(x) for x in s.split(",")) if s else [] for s in argv[2:5]]
    may = [int(x) for x in argv[5].split(",")] if len(argv) > 5 else []
    eq("schema", j.get("schema"), 1)
    if not isinstance(j.get("base"), str) or os.path.realpath(j["base"]) != os.path.realpath(base):
        bad("base: the tool says %r, expected %s" % (j.get("base"), base))
    eq("present", sorted(j.get("present") or []), lst[0])
    eq("missing", sorted(j.get("missing") or []), lst[1])
    eq("missing_count", j.get("missing_count"), len(lst[1]))
    ooo = sorted(j.get("out_of_order") or [])
    if ooo != lst[2] and sorted(set(ooo) - set(may)) != lst[2]:
        bad("out_of_order: the tool says %r, expected %r%s" % (ooo, lst[2], " (and maybe %s)" % may if may else ""))
    eq("ok", j.get("ok"), not lst[1] and not lst[2])
    files = {f.get("sequence"): f for f in j.get("files") or []}
    ticks = []
    eq("files: the sequences listed", sorted(files), lst[0])
    for s in lst[0]:
        p = "%s.%d" % (base, s)
        with open(p, "rb") as fh:
            b = fh.read()
        sig, ver, flags, ps, session, seq, tick, clo, cll, ck = struct.unpack_from("<4sHHIQQQQQI", b)
        f = files.get(s) or {}
        if seq == s and not flags & 1:  # (CREATE_ONLY, sequence 0, carries no tick of its own)
            ticks.append(tick)
        eq("%s: tick" % p, f.get("tick"), tick)
        eq("%s: session" % p, f.get("session"), "%016x" % session)
        eq("%s: bytes" % p, f.get("bytes"), len(b))
        eq("%s: entries" % p, f.get("entries"), struct.unpack_from("<I", b, 56 + 52)[0] if cll else 0)
        names = {"CREATE_ONLY": bool(flags & 1), "FINAL": bool(flags & 2)}
        got = [str(x).upper() for x in f.get("flags") or []]
        for k, v in names.items():
            if (any(k in g for g in got)) != v:
                bad("%s: flags %r, but the header's flags are 0x%x" % (p, f.get("flags"), flags))
    if not lst[1] and not lst[2] and any(b <= a for a, b in zip(ticks, ticks[1:])):
        bad("the writer's updater files do not rise in tick with their sequence: %s" % ticks)
    if errors:
        sys.exit("\n".join(errors))
    print("present %s, missing %s, out of order %s" % tuple(",".join(map(str, x)) or "-" for x in lst[:2] + [ooo]))


def watch(argv):
    """watch OUTPUT FIRST LAST: every line one JSON object, ticks increasing within [FIRST, LAST]."""
    first, last = int(argv[1]), int(argv[2])
    with open(argv[0]) as fh:
        lines = fh.read().splitlines()
    if len(lines) < 2:
        sys.exit("--watch printed %d lines in its window: %r" % (len(lines), lines))
    prev, new_pages = None, 0
    for k, line in enumerate(lines):
        try:
            o = json.loads(line)
        except ValueError as e:
            sys.exit("--watch line %d is not JSON (%s): %r" % (k + 1, e, line))
        eq("line %d: schema" % (k + 1), o.get("schema"), 1)
        eq("line %d: state" % (k + 1), o.get("state"), "running")
        t = o.get("tick")
        if not isinstance(t, int) or not first <= t <= last:
            bad("line %d: tick %r outside what the writer published meanwhile (%d to %d)" % (k + 1, t, first, last))
        elif prev is not None and t <= prev:
            bad("line %d: tick %d after %d" % (k + 1, t, prev))
        if not isinstance(o.get("epoch"), int) or not isinstance(t, int) or o["epoch"] > t:
            bad("line %d: epoch %r (tick %r)" % (k + 1, o.get("epoch"), t))
        iv = o.get("interval_s")
        if k > 0 and (not isinstance(iv, (int, float)) or iv < 0):
            bad("line %d: interval_s %r" % (k + 1, iv))
        if not isinstance(o.get("time"), (int, float)) or abs(o["time"] - time.time()) > 60:
            bad("line %d: time %r" % (k + 1, o.get("time")))
        if not isinstance(o.get("readers"), list):
            bad("line %d: readers %r" % (k + 1, o.get("readers")))
        # pages with an image new since the previous line: none known on the first line (an
        # idle end of tick may publish none; the writer appends the whole time, so some do)
        pub, ent = o.get("published"), o.get("entries")
        if k == 0 and pub is not None:
            bad("line 1: published %r, with no line before" % (pub,))
        elif k > 0 and (not isinstance(pub, int) or not isinstance(ent, int) or not 0 <= pub <= ent):
            bad("line %d: published %r of %r entries" % (k + 1, pub, ent))
        elif k > 0:
            new_pages += pub
        prev = t if isinstance(t, int) else prev
    if new_pages == 0:
        bad("no line says a page was published, while the writer appended all along")
    if errors:
        sys.exit("\n".join(errors))
    print("%d lines, ticks %s to %s, %d pages published" % (len(lines), json.loads(lines[0])["tick"], prev, new_pages))


def pages(argv):
    """pages JSON H5 MD: --pages against the index decoded here."""
    j = load(argv[0])
    h5, md = argv[1], argv[2]
    h = hdr(md)
    n, m, ents = idx(md, h)
    with open(md, "rb") as fh:
        fh.seek(h["index_offset"])
        b = fh.read(h["index_length"])
    ps = h["page_size"]
    eq("schema", j.get("schema"), 1)
    eq("file", j.get("file"), h5)
    if not isinstance(j.get("metadata_file"), str) or os.path.realpath(j["metadata_file"]) != os.path.realpath(md):
        bad("metadata_file: the tool says %r, expected %r" % (j.get("metadata_file"), md))
    eq("session", j.get("session"), "%016x" % h["session"])
    eq("tick", j.get("tick"), h["tick"])
    eq("page_size", j.get("page_size"), ps)
    got = j.get("entries")
    if not isinstance(got, list) or len(got) != n:
        sys.exit("entries: the tool lists %r, the index has %d" % (None if not isinstance(got, list) else len(got), n))
    for i, (hp, mp, ln, ck, rf, nr) in enumerate(ents):
        e = got[i]
        ranges = [list(struct.unpack_from("<II", b, 28 + 32 * n + 8 * k)) for k in range(rf, rf + nr)]
        eq("entry %d: hdf5_page" % i, e.get("hdf5_page"), hp)
        eq("entry %d: hdf5_addr" % i, e.get("hdf5_addr"), hp * ps)
        eq("entry %d: md_offset" % i, e.get("md_offset"), mp * ps)
        eq("entry %d: length" % i, e.get("length"), ln)
        if str(e.get("checksum")).lower() != "%08x" % ck:
            bad("entry %d: checksum: the tool says %r, the index %08x" % (i, e.get("checksum"), ck))
        eq("entry %d: ranges" % i, e.get("ranges"), ranges)
    if errors:
        sys.exit("\n".join(errors))
    print("%d entries, %d ranges, tick %d" % (n, m, h["tick"]))


def verify_live(argv):
    """verify_live JSON H5 MD: --verify of a sound session: every image the index names checked."""
    h = hdr(argv[2])
    n, m, ents = idx(argv[2], h)
    sound(load(argv[0]), argv[1], n)


def sound(j, h5, images):
    """--verify's JSON j of H5 says sound, with IMAGES page images checked."""
    eq("schema", j.get("schema"), 1)
    eq("file", j.get("file"), h5)
    eq("ok", j.get("ok"), True)
    eq("problems", j.get("problems"), [])
    c = j.get("checked") or {}
    eq("checked.header", c.get("header"), 1)
    eq("checked.images", c.get("images"), images)
    if not isinstance(c.get("index"), int) or c["index"] < 1:
        bad("checked.index: %r" % (c.get("index"),))
    if errors:
        sys.exit("\n".join(errors))
    print("ok, %d images checked, %d notes" % (images, len(j.get("notes") or [])))


def running(argv):
    """running JSON H5 SESSION TMIN TMAX: a run while the writer (session SESSION) went from TMIN to TMAX
    and its two readers followed."""
    j = load(argv[0])
    tmin, tmax = int(argv[3]), int(argv[4])
    eq("schema", j.get("schema"), 1)
    eq("file", j.get("file"), argv[1])
    w = j.get("writer") or {}
    eq("writer.state", w.get("state"), "running")
    eq("writer.lock_held", w.get("lock_held"), True)
    eq("session", j.get("session"), argv[2])
    t = j.get("tick")
    if not isinstance(t, int) or not tmin <= t <= tmax:
        bad("tick: %r, not from %d to %d" % (t, tmin, tmax))
        t = tmin
    if not isinstance(j.get("epoch"), int) or j["epoch"] != t:
        bad("epoch %r with tick %r (publish=tick: every tick ends an epoch)" % (j.get("epoch"), t))
    r = j.get("readers") or {}
    eq("readers.registered", r.get("registered"), 2)
    mk = r.get("marked") or []
    eq("readers.marked: how many", len(mk), 2)
    for e in mk:  # publish=tick: tick counts are ticks
        if not isinstance(e.get("epoch"), int) or not 0 < e["epoch"] <= t:
            bad("readers.marked slot %s: tick count %r with the writer at %r" % (e.get("slot"), e.get("epoch"), t))
        elif e.get("lag") != t - e["epoch"]:
            bad("readers.marked slot %s: lag %r, tick count %r with the writer at %r" % (e.get("slot"), e.get("lag"), e["epoch"], t))
    if errors:
        sys.exit("%s: %s" % (argv[0], "\n".join(errors)))
    print("tick %d" % t)


def closed(argv):
    """closed JSON H5 MD TICK: a writer closed keeping its metadata file (FINAL) after publishing TICK."""
    j = load(argv[0])
    h5, md = argv[1], argv[2]
    h = hdr(md)
    n, m, ents = idx(md, h)
    eq("schema", j.get("schema"), 1)
    eq("file", j.get("file"), h5)
    w = j.get("writer") or {}
    eq("writer.state", w.get("state"), "closed")
    eq("writer.lock_held", w.get("lock_held"), False)
    eq("session", j.get("session"), "%016x" % h["session"])
    eq("tick (header)", j.get("tick"), h["tick"])
    if not isinstance(j.get("tick"), int) or j["tick"] < int(argv[3]):
        bad("tick %r below the %s the writer had published before closing" % (j.get("tick"), argv[3]))
    eq("index", j.get("index"), {"entries": n, "ranges": m, "offset": h["index_offset"], "bytes": h["index_length"]})
    eq("index.entries (FINAL: empty)", (j.get("index") or {}).get("entries"), 0)
    eq("recovery", j.get("recovery"), None)
    if errors:
        sys.exit("\n".join(errors))
    print("state closed, session %016x, tick %d, FINAL, empty index" % (h["session"], h["tick"]))


def problem(argv):
    """problem JSON MD STRUCTURE: --verify lists a problem in STRUCTURE of MD."""
    j = load(argv[0])
    eq("ok", j.get("ok"), False)
    ps = [p for p in j.get("problems") or [] if p.get("structure") == argv[2]
          and isinstance(p.get("file"), str) and os.path.realpath(p["file"]) == os.path.realpath(argv[1])]
    if not ps:
        bad("no problem in the %s of %s: %r" % (argv[2], argv[1], j.get("problems")))
    if errors:
        sys.exit("\n".join(errors))
    print("%s: %s" % (argv[2], ps[0].get("error")))


def hdr_epoch(argv):
    """hdr_epoch MD: the tick count (epoch) of the newest snapshot, from the header decoded here."""
    print(hdr(argv[0])["epoch"])


def state(argv):
    """state JSON STATE"""
    j = load(argv[0])
    eq("writer.state", (j.get("writer") or {}).get("state"), argv[1])
    if errors:
        sys.exit("\n".join(errors))
    print("state %s" % argv[1])


{"view": view, "died": died, "plain": plain, "verify": verify, "verify_ok": verify_ok, "updater": updater,
 "watch": watch, "pages": pages, "verify_live": verify_live, "running": running,
 "closed": closed, "state": state, "problem": problem, "hdr_epoch": hdr_epoch}[sys.argv[1]](sys.argv[2:])
PY

# inspect OUT ARGS...: run the tool with ARGS (under the guard), its stdout
# into OUT and its stderr into OUT.err; the exit status into RC.
inspect() {
    local out=$1
    shift
    RC=0
    timeout --foreground "$guard" ${VFDSWMR_VALGRIND:-} "$INSPECT" "$@" >"$out" 2>"$out.err" || RC=$?
    [ "$RC" != 124 ] || fail "vfd_swmr_inspect $*: no answer within $guard s"
}
# inspect_ok OUT ARGS...: as inspect, and the status must be 0.
inspect_ok() {
    inspect "$@"
    [ "$RC" = 0 ] || fail "vfd_swmr_inspect ${*:2}: exit status $RC: $(cat "$1.err")"
}
# jcheck MODE ARGS...: the checker (below) compares the tool's JSON with what
# it decodes itself; what it says into CHECKED, or the test fails with every
# field that disagrees.
jcheck() {
    CHECKED=$(python3 "$WORK/jcheck.py" "$@" 2>&1) || fail "$1 $2: vfd_swmr_inspect disagrees: $CHECKED"
}
# tick_of NAME: the tick process NAME (rowwriter or rowreader) reports
# (vfdswmr_get_status), into TICK.
tick_of() {
    proc_ask "$1" status
    [[ $ANSWER == "status tick="* ]] || fail "$1: status: $ANSWER $(proc_err "$1")"
    TICK=${ANSWER#status tick=}
    TICK=${TICK%% *}
}
# reader_start NAME FILE ROWS: rowreader follows FILE through vfd_swmr_reader
# and has verified ROWS rows.
reader_start() {
    proc_start "$1" env HDF5_DRIVER=vfd_swmr_reader ${VFDSWMR_VALGRIND:-} "$VFDSWMR_PROGS/rowreader" "$2" watch
    proc_read "$1"
    [ "$ANSWER" = "ready $3" ] || fail "reader $1: $ANSWER $(proc_err "$1")"
    proc_expect "$1" "verify $3" "rows $3"
}
# plain_rows FILE ROWS GROUPS: plain HDF5 reads exactly ROWS rows and GROUPS groups.
plain_rows() {
    local out
    out=$(${VFDSWMR_VALGRIND:-} "$VFDSWMR_PROGS/rowreader" "$1" check "$2" "$3" 2>&1) || fail "plain HDF5, $1: $out"
    [ "$out" = "verified $2 rows, 0 more (0 written, 0 unwritten), $3 groups" ] || fail "plain HDF5, $1: $out"
}
# fingerprint FILE...: contents and modification times, to compare before and after a run.
fingerprint() { sha256sum "$@"; stat -c '%n %s %Y.%y' "$@"; }

# --- live: a writer and two readers ------------------------------------------
mkdir "$WORK/live"
f=$WORK/live/live.h5 md=$WORK/live/live.h5.md
tick_len=36000 max_lag=5
live_cfg="tick_len=$tick_len;max_lag=$max_lag;publish=tick"
writer_start w "$live_cfg" "$f"
proc_expect w "append 100" "flushed 100"
proc_expect w tick ticked
inspect_ok "$WORK/j" --json "$f"
tick_of w
jcheck view "$WORK/j" "$f" "$md" state=running tick="$TICK" tick_len=$tick_len max_lag=$max_lag page_size=4096 \
    publish="tick or unknown" readers= registered=0
ok "a writer, no reader: $CHECKED"

reader_start r1 "$f" 100
tick_of r1
t1=$TICK
proc_expect w "append 100" "flushed 200"
proc_expect w tick ticked
proc_expect w "append 100" "flushed 300"
proc_expect w tick ticked
reader_start r2 "$f" 300
tick_of r2
t2=$TICK
proc_expect w "groups 2" "flushed groups 2"
proc_expect w tick ticked
tick_of w
tw=$TICK
if [ "$t1" -ge "$t2" ] || [ "$t2" -ge "$tw" ]; then
    fail "the readers hold ticks $t1 and $t2, the writer is at $tw"
fi
before=$(fingerprint "$f" "$md" "$md.readers")
for _ in 1 2 3; do
    inspect_ok "$WORK/j" --json "$f"
    jcheck view "$WORK/j" "$f" "$md" state=running tick="$tw" tick_len=$tick_len max_lag=$max_lag page_size=4096 \
        publish="tick or unknown" readers="$t1,$t2" registered=2
done
[ "$(fingerprint "$f" "$md" "$md.readers")" = "$before" ] || fail "the HDF5 file or the metadata files changed across the runs"
ok "writer at tick $tw, readers holding ticks $t1 and $t2 (lags $((tw - t1)) and $((tw - t2))), 3 runs: $CHECKED; no file changed"

inspect_ok "$WORK/j" --json --pages "$f"
jcheck pages "$WORK/j" "$f" "$md"
ok "--pages lists the newest index entry for entry: $CHECKED"
inspect_ok "$WORK/j" --json --verify "$f"
jcheck verify_live "$WORK/j" "$f" "$md"
ok "--verify of the live session: $CHECKED"
inspect_ok "$WORK/j" "$f"
[ -s "$WORK/j" ] || fail "the text view printed nothing"
grep -q running "$WORK/j" || fail "the text view does not say running: $(cat "$WORK/j")"
ok "the text view says running ($(wc -l <"$WORK/j") lines)"

# The same with the default publish mode (publish=flush: each flush a new
# tick within the same tick count; the tick count, the epoch, advances only
# at an end of tick, here explicit ones): the read-mark table records tick
# counts, and a reader's lag is counted in them, as max_lag is.
f2=$WORK/live/flush.h5
writer_start wf "tick_len=36000;max_lag=5" "$f2"
proc_expect wf "append 100" "flushed 100"
proc_expect wf tick ticked
proc_expect wf "append 100" "flushed 200"
reader_start rf "$f2" 200
tick_of rf
tf=$TICK
ef=$(python3 "$WORK/jcheck.py" hdr_epoch "$f2.md") # the tick count of the snapshot the reader just adopted
proc_expect wf "append 100" "flushed 300"
proc_expect wf tick ticked
proc_expect wf "append 100" "flushed 400"
proc_expect wf tick ticked
proc_expect wf "append 100" "flushed 500"
tick_of wf
twf=$TICK
ewf=$(python3 "$WORK/jcheck.py" hdr_epoch "$f2.md")
if [ "$tf" -ge "$twf" ] || [ "$((ewf - ef))" != 2 ]; then
    fail "publish=flush: the reader holds tick $tf (count $ef), the writer is at $twf (count $ewf)"
fi
inspect_ok "$WORK/j" --json "$f2"
jcheck view "$WORK/j" "$f2" "$f2.md" state=running tick="$twf" tick_len=36000 max_lag=5 page_size=4096 \
    publish=flush readers="$ef" registered=1
proc_expect rf read "rows 200"
ok "publish=flush: writer at tick $twf (count $ewf), a reader holding tick $tf (count $ef, lag 2): $CHECKED"
proc_expect rf quit closed
proc_end rf
proc_expect wf close closed
proc_end wf
[ "$PROC_STATUS" = 0 ] || fail "writer wf: exit status $PROC_STATUS $(proc_err wf)"

# The readers verify what they hold after the runs, and still hold those ticks.
proc_expect r1 read "rows 100"
proc_expect r2 read "rows 300"
tick_of r1
[ "$TICK" = "$t1" ] || fail "r1 holds tick $TICK after the runs, not $t1"
tick_of r2
[ "$TICK" = "$t2" ] || fail "r2 holds tick $TICK after the runs, not $t2"
ok "after the runs the readers still hold ticks $t1 and $t2 and verify every row of them"

# The tool run without a pause while the writer appends and ticks and the
# readers follow: every run's view is the running session at a tick the
# writer published meanwhile.
session=$(od -An -tx8 -j 12 -N 8 "$md" | tr -d ' ')
(
    n=0
    until [ -e "$WORK/stop" ] || [ ! -d "$WORK" ]; do
        n=$((n + 1))
        rc=0
        timeout --foreground "$guard" ${VFDSWMR_VALGRIND:-} "$INSPECT" --json "$f" >"$WORK/bg.$n" 2>"$WORK/bg.$n.err" || rc=$?
        echo "$rc" >"$WORK/bg.$n.rc"
    done
) &
bg=$!
CLEANUP+=("kill $bg 2>/dev/null")
rows=300 round=0
# at least 20 rounds, and until the tool has run 10 times
while [ $round -lt 20 ] || [ "$(find "$WORK" -maxdepth 1 -name 'bg.*.rc' | wc -l)" -lt 10 ]; do
    round=$((round + 1))
    [ $round -le 5000 ] || fail "the tool did not finish 10 runs in 5000 rounds of appends"
    rows=$((rows + 50))
    proc_expect w "append 50" "flushed $rows"
    proc_expect w tick ticked
    proc_expect r1 "verify $rows" "rows $rows"
    [ $((round % 4)) != 0 ] || proc_expect r2 "verify $rows" "rows $rows"
done
tick_of w
tw2=$TICK
touch "$WORK/stop"
wait $bg
runs=$(find "$WORK" -maxdepth 1 -name 'bg.*.rc' | wc -l)
[ "$runs" -ge 2 ] || fail "only $runs runs of the tool during the appends"
for rcf in "$WORK"/bg.*.rc; do
    o=${rcf%.rc}
    [ "$(cat "$rcf")" = 0 ] || fail "a run during the appends: exit status $(cat "$rcf"): $(cat "$o.err")"
    jcheck running "$o" "$f" "$session" "$tw" "$tw2"
done
ok "$runs runs while the writer went from tick $tw to $tw2: each the running session $session at a tick in between"

proc_expect r1 read "rows $rows"
proc_expect r2 "verify $rows" "rows $rows"
# the readers go first: a close waits for readers of older snapshots, up to
# max_lag ticks of an hour each here (close.c)
for r in r1 r2; do
    proc_expect $r quit closed
    proc_end $r
    [ "$PROC_STATUS" = 0 ] || fail "$r: exit status $PROC_STATUS $(proc_err $r)"
done
proc_expect w close closed
proc_end w
[ "$PROC_STATUS" = 0 ] || fail "writer: exit status $PROC_STATUS $(proc_err w)"
plain_rows "$f" "$rows" 2
ok "writer closed; readers and plain HDF5 read all $rows rows and 2 groups"
inspect_ok "$WORK/j" --json "$f"
jcheck plain "$WORK/j" "$f" none
ok "after a clean close (metadata file removed): $CHECKED"

# --- a reader released: it held its snapshot 20 x max_lag ticks ----------------
# (max_lag=3: released once the writer is 60 ticks past it; explicit ticks)
mkdir "$WORK/rel"
f=$WORK/rel/r.h5 md=$WORK/rel/r.h5.md
writer_start wr "tick_len=36000;max_lag=3;publish=tick" "$f"
proc_expect wr "append 10" "flushed 10"
proc_expect wr tick ticked
reader_start rr "$f" 10
er=$(python3 "$WORK/jcheck.py" hdr_epoch "$md") # publish=tick: the reader's tick is its tick count
tick_of rr
[ "$TICK" = "$er" ] || fail "the reader holds tick $TICK, the header says tick count $er"
for _ in $(seq 65); do proc_expect wr tick ticked; done
tick_of wr
twr=$TICK
inspect_ok "$WORK/j" --json "$f"
jcheck view "$WORK/j" "$f" "$md" state=running tick="$twr" tick_len=36000 max_lag=3 page_size=4096 \
    publish="tick or unknown" readers="$er" registered=1 released="$er"
proc_ask rr read
[ "$ANSWER" = failed ] || fail "the released reader read \"$ANSWER\": $(proc_err rr)"
grep -q 'fell behind' "$WORK/rr.err" || fail "the released reader's read failed without saying it fell behind: $(proc_err rr)"
ok "a reader 65 ticks behind with max_lag=3 is shown released, and its next read fails saying it fell behind: $CHECKED"
proc_expect rr quit closed
proc_end rr
proc_expect wr close closed
proc_end wr

# --- died: a writer killed after a flush --------------------------------------
mkdir "$WORK/died"
f=$WORK/died/d.h5 md=$WORK/died/d.h5.md
writer_start d "tick_len=0;max_lag=4" "$f"
proc_expect d "append 500" "flushed 500"
proc_expect d "groups 3" "flushed groups 3"
proc_expect d "append 250" "flushed 750"
tick_of d
td=$TICK
proc_kill d
inspect_ok "$WORK/j" --json "$f"
jcheck view "$WORK/j" "$f" "$md" state=died tick="$td" tick_len=0 max_lag=4 page_size=4096 publish=flush \
    readers= registered=0
ok "writer killed after its flush at tick $td: $CHECKED"
inspect_ok "$WORK/v" --json --verify "$f"
jcheck verify_live "$WORK/v" "$f" "$md"
ok "--verify of the dead writer's files: $CHECKED"
cp "$WORK/j" "$WORK/died.json"
out=$(${VFDSWMR_VALGRIND:-} "$VFDSWMR_RECOVER" "$f" 2>&1) || fail "vfd_swmr_recover $f: $out"
jcheck died "$WORK/died.json" "$out"
ok "the recovery the view predicted is what vfd_swmr_recover did: $CHECKED"
plain_rows "$f" 750 3
inspect_ok "$WORK/j" --json "$f"
jcheck plain "$WORK/j" "$f" none
ok "recovered (plain HDF5 reads 750 rows and 3 groups): $CHECKED"

# A writer keeping its metadata file in another directory (md_file_path),
# killed while a reader holds an older tick: the tool finds the metadata
# file through the HDF5 file's record (user.vfdswmr.md), through --config,
# and through HDF5_DRIVER_CONFIG; the reader still counts, with its lag.
mkdir "$WORK/died/mdd"
f=$WORK/died/e.h5 md=$WORK/died/mdd/e.h5.md
e_cfg="tick_len=0;max_lag=5;publish=tick;md_file_path=$WORK/died/mdd"
writer_start e "$e_cfg" "$f"
proc_expect e "append 100" "flushed 100"
proc_expect e tick ticked
proc_start re env HDF5_DRIVER=vfd_swmr_reader HDF5_DRIVER_CONFIG="md_file_path=$WORK/died/mdd" ${VFDSWMR_VALGRIND:-} \
    "$VFDSWMR_PROGS/rowreader" "$f" watch
proc_read re
[ "$ANSWER" = "ready 100" ] || fail "reader re: $ANSWER $(proc_err re)"
tick_of re
tr=$TICK
proc_expect e "append 100" "flushed 200"
proc_expect e tick ticked
proc_expect e "append 100" "flushed 300"
proc_expect e tick ticked
tick_of e
te=$TICK
proc_kill e
for how in record config config_missing env; do
    case $how in
    record) inspect_ok "$WORK/j" --json "$f" ;;
    config) inspect_ok "$WORK/j" --json --config "md_file_path=$WORK/died/mdd" "$f" ;;
    # a configuration naming no metadata file that is there: the recorded one, as vfd_swmr_recover does
    config_missing) inspect_ok "$WORK/j" --json --config "md_file_path=$WORK/died/nowhere" "$f" ;;
    env) HDF5_DRIVER=vfd_swmr_writer HDF5_DRIVER_CONFIG="$e_cfg" inspect_ok "$WORK/j" --json "$f" ;;
    esac
    jcheck view "$WORK/j" "$f" "$md" state=died tick="$te" tick_len=0 max_lag=5 page_size=4096 \
        publish="tick or unknown" readers="$tr" registered=1
done
proc_expect re read "rows 100"
ok "metadata file elsewhere, found by the file's record, --config, a --config naming none there, and HDF5_DRIVER_CONFIG: $CHECKED"
cp "$WORK/j" "$WORK/died.json"
out=$(${VFDSWMR_VALGRIND:-} "$VFDSWMR_RECOVER" "$f" 2>&1) || fail "vfd_swmr_recover $f: $out"
jcheck died "$WORK/died.json" "$out"
ok "and the recovery it predicted is what vfd_swmr_recover did: $CHECKED"
proc_expect re quit closed
proc_end re
plain_rows "$f" 300 0

# --- closed: metadata file kept (FINAL); plain files ----------------------------
mkdir "$WORK/closed"
f=$WORK/closed/k.h5 md=$WORK/closed/k.h5.md
writer_start k "tick_len=0;max_lag=3;keep_metadata_file=1" "$f"
proc_expect k "append 40" "flushed 40"
proc_expect k tick ticked
tick_of k
tk=$TICK
proc_expect k close closed
proc_end k
[ "$PROC_STATUS" = 0 ] || fail "writer: exit status $PROC_STATUS $(proc_err k)"
[ -s "$md" ] || fail "keep_metadata_file=1: no metadata file after the close"
flags=$(od -An -tu2 -j 6 -N 2 "$md" | tr -d ' ')
[ $((flags & 1)) = 1 ] || fail "the kept metadata file's header has flags $flags, not FINAL"
inspect_ok "$WORK/j" --json "$f"
jcheck closed "$WORK/j" "$f" "$md" "$tk"
ok "closed with keep_metadata_file=1 (FINAL header): $CHECKED"
out=$("$VFDSWMR_RECOVER" "$f" 2>&1) || fail "vfd_swmr_recover $f: $out"
[[ $out == *"nothing to recover: its writer closed it cleanly"* ]] || fail "vfd_swmr_recover of the closed file: $out"
plain_rows "$f" 40 0

f=$WORK/closed/plain.h5
env -u HDF5_DRIVER "$VFDSWMR_PROGS/rowwriter" "$f" create <<<"append 10" >/dev/null || fail "cannot make $f"
inspect_ok "$WORK/j" --json "$f"
jcheck plain "$WORK/j" "$f" none
ok "a plain HDF5 file, never opened through the drivers: $CHECKED"
# a reader registered on the shared byte (mdfile/mdlock.h: one that found no
# byte of its own) is seen but cannot be counted: registered is null
coproc HOLD {
    python3 -c 'import fcntl, os, struct, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
fcntl.fcntl(fd, fcntl.F_OFD_SETLK, struct.pack("hhqqi", fcntl.F_RDLCK, os.SEEK_SET, 0x7ffffffffffffff0, 1, 0))
print("locked", flush=True)
sys.stdin.readline()' "$f"
}
read -r -t 60 line <&"${HOLD[0]}" && [ "$line" = locked ] || fail "could not take the shared registration byte of $f"
inspect_ok "$WORK/j" --json "$f"
inspect_ok "$WORK/t" "$f"
echo quit >&"${HOLD[1]}"
wait "$HOLD_PID"
python3 -c 'import json, sys; sys.exit(json.load(open(sys.argv[1]))["readers"]["registered"] is not None)' "$WORK/j" ||
    fail "a reader on the shared byte: registered is not null: $(cat "$WORK/j")"
grep -q "^readers: *registered: cannot be counted" "$WORK/t" || fail "a reader on the shared byte: $(cat "$WORK/t")"
inspect_ok "$WORK/j" --json "$f"
jcheck plain "$WORK/j" "$f" none
ok "a reader on the shared registration byte: registered null (text: cannot be counted); counted again once it leaves"
# a name that is not UTF-8: the JSON stays valid, the byte shown as U+FFFD
odd=$WORK/closed/$'x\xffy.h5'
cp "$f" "$odd"
inspect_ok "$WORK/j" --json "$odd"
python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); sys.exit(d["file"].endswith("x\ufffdy.h5") is False)' "$WORK/j" ||
    fail "a file name with the byte 0xff: $(cat "$WORK/j")"
ok "a file name that is not UTF-8: valid JSON, the byte shown as U+FFFD"
# a name made to mislead a terminal (ESC sequence, a newline starting a line of
# its own, the C1 control U+009B, a byte 0xff): the text view writes each such
# byte as \xHH, the JSON escapes the controls, and stderr does the same
odd=$WORK/closed/$'t\e[31mRED\nfake: line\xc2\x9bz\xff.h5'
cp "$f" "$odd"
inspect_ok "$WORK/t" "$odd"
inspect_ok "$WORK/j" --json "$odd"
inspect "$WORK/m" "$odd.gone"
[ "$RC" != 0 ] || fail "a missing file with a hostile name: exit status 0"
python3 - "$WORK/t" "$WORK/j" "$WORK/m.err" "$odd" <<'PY' || fail "a hostile file name: $(od -c "$WORK/t" | head -20)"
import json, re, sys
text, js, err = (open(p, "rb").read() for p in sys.argv[1:4])
name = sys.argv[4].encode("utf-8", "surrogateescape")
def escaped(b):  # the man page's rule; this name has no character outside ASCII to keep
    return b"".join(bytes([c]) if 0x20 <= c < 0x7f else b"\\x%02x" % c for c in b)
labels = (b"file", b"metadata file", b"writer", b"readers", b"recovery")
for line in text.split(b"\n")[:-1]:
    assert re.fullmatch(rb"[ -~]*", line), line
    assert line.split(b":")[0] in labels, line  # no line of the name's own
assert text.startswith(b"file:           " + escaped(name) + b"\n"), text
d = json.loads(js)
assert d["file"].endswith("t\x1b[31mRED\nfake: line\u009bz\ufffd.h5"), d["file"]
assert b"\x1b" not in err and b"\x9b" not in err and err.count(b"\n") == 1 and escaped(name) in err, err
PY
ok "a file name with ESC, newline, C1 and 0xff bytes: written as \\xHH in text and on stderr, escaped in JSON"

# --- verify: every metadata file fixture ------------------------------------------
# Each fixture is the metadata file of an HDF5 file that does not exist (its
# header names inode 0x1D5F00D: any file made here would be another file).
fx=$VFDSWMR_FIXTURES/md
n=0
for p in "$fx"/*.md; do
    name=$(basename "$p" .md)
    h=$WORK/fixtures/$name.h5
    inspect "$WORK/j" --json --verify --config "md_file_path=$fx;md_file_name=$name.md" "$h"
    case $name in
    valid | valid_slot1 | valid_reloc)
        [ "$RC" = 0 ] || fail "--verify $name.md: exit status $RC: $(cat "$WORK/j.err") $(cat "$WORK/j")"
        jcheck verify_ok "$WORK/j" "$h" "$p" 3
        ;;
    *)
        [ "$RC" = 1 ] || fail "--verify $name.md: exit status $RC, expected 1: $(cat "$WORK/j.err") $(cat "$WORK/j")"
        jcheck verify "$WORK/j" "$h" "$p" "$name"
        ;;
    esac
    n=$((n + 1))
done
[ "$n" -gt 40 ] || fail "only $n fixtures in $fx"
ok "--verify of $n fixtures: the damaged ones fail naming the damaged structure, the sound ones pass"

# --- updater: a real writer's updater files ---------------------------------------
mkdir "$WORK/ud"
f=$WORK/ud/u.h5 base=$WORK/ud/u.h5.md.ud
writer_start u "tick_len=0;max_lag=3;maintain_metadata_file=0;generate_updater_files=1;updater_keep_ticks=100000" "$f"
rows=0
for round in 1 2 3 4 5; do
    rows=$((rows + 30))
    proc_expect u "append 30" "flushed $rows"
    proc_expect u tick ticked
done
proc_expect u close closed
proc_end u
[ "$PROC_STATUS" = 0 ] || fail "writer: exit status $PROC_STATUS $(proc_err u)"
plain_rows "$f" "$rows" 0
# seqs DIR: the sequence numbers of the updater files in DIR, from their names
seqs() { find "$1" -maxdepth 1 -name 'u.h5.md.ud.*' -printf '%f\n' | sed 's/.*\.//' | sort -n | paste -sd,; }
present=$(seqs "$WORK/ud")
last=${present##*,}
[ "$last" -ge 6 ] || fail "the writer left updater files $present"
inspect_ok "$WORK/j" --json --updater "$base"
jcheck updater "$WORK/j" "$base" "$present" "" ""
ok "--updater $base: $CHECKED"
inspect_ok "$WORK/j" --json --updater "$WORK/ud" "$f"
jcheck updater "$WORK/j" "$base" "$present" "" ""
ok "--updater with the directory and the HDF5 file: $CHECKED"

cp -a "$WORK/ud" "$WORK/gap"
rm "$WORK/gap/u.h5.md.ud.3"
inspect "$WORK/j" --json --updater "$WORK/gap/u.h5.md.ud"
[ "$RC" = 1 ] || fail "--updater with updater 3 removed: exit status $RC, expected 1: $(cat "$WORK/j.err")"
jcheck updater "$WORK/j" "$WORK/gap/u.h5.md.ud" "$(seqs "$WORK/gap")" 3 ""
ok "updater 3 removed: status 1, $CHECKED"

cp -a "$WORK/ud" "$WORK/swap"
mv "$WORK/swap/u.h5.md.ud.2" "$WORK/swap/tmp"
mv "$WORK/swap/u.h5.md.ud.4" "$WORK/swap/u.h5.md.ud.2"
mv "$WORK/swap/tmp" "$WORK/swap/u.h5.md.ud.4"
inspect "$WORK/j" --json --updater "$WORK/swap/u.h5.md.ud"
[ "$RC" = 1 ] || fail "--updater with updaters 2 and 4 swapped: exit status $RC, expected 1: $(cat "$WORK/j.err")"
# out of order: 2 and 4 (their headers name 4 and 2); 3 may be listed too
# (its tick is below that of the file named 2 before it, now 4's: the
# checker made sure above that the writer's ticks rise with the sequence)
# or not (it follows 1, the last file in order); 5 and on follow 4's
jcheck updater "$WORK/j" "$WORK/swap/u.h5.md.ud" "$present" "" 2,4 3
ok "updaters 2 and 4 swapped: status 1, $CHECKED"

cp -a "$WORK/ud" "$WORK/renamed"
mv "$WORK/renamed/u.h5.md.ud.$last" "$WORK/renamed/u.h5.md.ud.$((last + 1))"
inspect "$WORK/j" --json --updater "$WORK/renamed/u.h5.md.ud"
[ "$RC" = 1 ] || fail "--updater with the last updater renamed: exit status $RC, expected 1: $(cat "$WORK/j.err")"
jcheck updater "$WORK/j" "$WORK/renamed/u.h5.md.ud" "$(seqs "$WORK/renamed")" "$last" "$((last + 1))"
ok "updater $last renamed $((last + 1)): status 1, $CHECKED"

# Every updater fixture (tests/fixtures/README.md), alone as u.<its sequence>:
# the sound ones pass, each damaged one fails, listed as an updater problem
# of that file. The sequence comes from the header's bytes (VUDH: at 20).
n=0
for fx in "$VFDSWMR_FIXTURES"/ud/*.ud; do
    name=$(basename "$fx" .ud)
    d=$WORK/udfx/$name
    mkdir -p "$d"
    seq=0
    [ "$(stat -c %s "$fx")" -lt 28 ] || seq=$(od -An -tu8 -j 20 -N 8 "$fx" | tr -d ' ')
    [ "${#seq}" -le 19 ] || seq=0 # a damaged header: any name will do
    cp "$fx" "$d/u.$seq"
    inspect "$WORK/j" --json --updater "$d/u"
    case $name in
    valid | final | create_only)
        [ "$RC" = 0 ] || fail "--updater of the sound fixture $name: exit status $RC: $(cat "$WORK/j") $(cat "$WORK/j.err")"
        ;;
    *)
        [ "$RC" = 1 ] || fail "--updater of the damaged fixture $name: exit status $RC: $(cat "$WORK/j")"
        jcheck problem "$WORK/j" "$d/u.$seq" updater >/dev/null
        ;;
    esac
    n=$((n + 1))
done
[ "$n" -ge 20 ] || fail "only $n updater fixtures in $VFDSWMR_FIXTURES/ud"
ok "--updater of $n updater fixtures: the damaged ones fail naming the file, the sound ones pass"

# --- hostile: things that are not this file's metadata file -----------------------
mkdir "$WORK/h"
# hostile WHAT FILE STRUCTURE: the tool on FILE answers at once with status 1:
# the view (text and JSON) with one line on stderr (the tool's contract: status
# 1 is a message on stderr), --verify with one line on stderr or a problem in
# STRUCTURE of FILE's metadata file.
hostile() { # (no hang: inspect's guard; how fast is measured, not asserted: a loaded machine is slow)
    local what=$1 file=$2 mode
    for mode in "--json" "" "--json --verify"; do
        # shellcheck disable=SC2086
        inspect "$WORK/j" $mode "$file"
        [ "$RC" = 1 ] || fail "$what, vfd_swmr_inspect $mode: exit status $RC, expected 1: $(cat "$WORK/j.err") $(head -c 600 "$WORK/j")"
        [ "$(wc -l <"$WORK/j.err")" = 1 ] && continue
        [ "$mode" = "--json --verify" ] && [ ! -s "$WORK/j.err" ] && jcheck problem "$WORK/j" "$file.md" "$3" && continue
        fail "$what, vfd_swmr_inspect $mode: status 1 without one line on stderr (stderr: \"$(cat "$WORK/j.err")\"; stdout: $(head -c 600 "$WORK/j"))"
    done
    ok "$what: status 1 and \"$(head -n 1 "$WORK/j.err")\""
}
# A dead writer's files, for the cases below.
f=$WORK/h/a.h5
writer_start a "tick_len=0;max_lag=3" "$f"
proc_expect a "append 100" "flushed 100"
proc_kill a
cp "$f.md" "$WORK/h/a.md.copy"
cp "$f" "$WORK/h/a.h5.copy"

p=$WORK/h/fifo.h5
env -u HDF5_DRIVER "$VFDSWMR_PROGS/rowwriter" "$p" create <<<"append 10" >/dev/null || fail "cannot make $p"
mkfifo "$p.md"
hostile "a FIFO as the metadata file" "$p" file
rm "$p.md"
ln -s "$WORK/h/a.md.copy" "$p.md"
hostile "a symbolic link (to a metadata file) as the metadata file" "$p" file
rm "$p.md"
cp "$WORK/h/a.md.copy" "$p.md"
hostile "another HDF5 file's metadata file" "$p" header
rm "$p.md"
# the dead writer's two files copied together (new inodes): sealed, so died, and recovery needs --force
mkdir "$WORK/h/copy"
cp "$WORK/h/a.h5.copy" "$WORK/h/copy/a.h5"
cp "$WORK/h/a.md.copy" "$WORK/h/copy/a.h5.md"
hostile "a dead writer's files copied together" "$WORK/h/copy/a.h5" header
inspect "$WORK/j" --json "$WORK/h/copy/a.h5"
jcheck state "$WORK/j" died
python3 -c 'import json, sys; r = json.load(open(sys.argv[1]))["recovery"]; sys.exit("--force" not in r["refused"])' "$WORK/j" ||
    fail "a dead writer's files copied together: recovery $(cat "$WORK/j")"
out=$("$VFDSWMR_RECOVER" "$WORK/h/copy/a.h5" 2>&1) && fail "vfd_swmr_recover of the copies without --force: $out"
[[ $out == *"--force"* ]] || fail "vfd_swmr_recover of the copies: $out"
ok "a dead writer's files copied together: died, recovery refused and --force named, as vfd_swmr_recover says"

mv "$f.md" "$WORK/h/a.md.moved"
ln -s "$WORK/h/a.md.moved" "$f.md"
hostile "the dead writer's own metadata file through a symbolic link" "$f" file
rm "$f.md"
head -c 50 "$WORK/h/a.md.moved" >"$f.md"
hostile "the dead writer's metadata file cut to 50 bytes" "$f" header
idx_end=$(($(od -An -tu8 -j 28 -N 8 "$WORK/h/a.md.moved") + $(od -An -tu8 -j 36 -N 8 "$WORK/h/a.md.moved")))
head -c $((idx_end - 10)) "$WORK/h/a.md.moved" >"$f.md"
hostile "the dead writer's metadata file cut inside its index" "$f" index
cmp "$f" "$WORK/h/a.h5.copy" || fail "the HDF5 file changed"
mv "$WORK/h/a.md.moved" "$f.md"
inspect_ok "$WORK/j" --json "$f"
jcheck state "$WORK/j" died
ok "the dead writer's metadata file put back: $CHECKED"
# its read-mark table cut short of the slots its header states
cp "$f.md.readers" "$WORK/h/readers.copy"
head -c 100 "$WORK/h/readers.copy" >"$f.md.readers"
inspect "$WORK/j" --json --verify "$f"
[ "$RC" = 1 ] || fail "a read-mark table cut short: --verify exit status $RC: $(cat "$WORK/j")"
jcheck problem "$WORK/j" "$f.md.readers" readers
ok "a read-mark table cut short of its slots: --verify says $CHECKED"
mv "$WORK/h/readers.copy" "$f.md.readers"

# stop_watch WHAT ERRFILE: SIGINT to the watch $wpid; it must end, status 0,
# within PROC_TIMEOUT (else killed, and the test fails)
stop_watch() {
    local i rc=0
    kill -INT $wpid 2>/dev/null
    for ((i = 0; i < PROC_TIMEOUT * 20; i++)); do
        kill -0 $wpid 2>/dev/null || break
        sleep 0.05
    done
    if kill -0 $wpid 2>/dev/null; then
        kill -9 $wpid 2>/dev/null
        fail "$1: still running $PROC_TIMEOUT s after SIGINT"
    fi
    wait $wpid || rc=$?
    [ "$rc" = 0 ] || fail "$1, interrupted: exit status $rc: $(cat "$2")"
}

# --- watch: a writer that ticks -----------------------------------------------------
mkdir "$WORK/watch"
f=$WORK/watch/w.h5
writer_start ww "tick_len=1;max_lag=7" "$f"
proc_expect ww "append 10" "flushed 10"
tick_of ww
tw0=$TICK
# until interrupted: the writer appends until the tool has printed 5 lines
# (no clock in the test: as slow as the machine is), then SIGINT ends it
: >"$WORK/watch.out" # there before the loop below counts its lines
# (the tool itself in the background, no timeout(1) around it: the test's
# SIGINT must reach the tool alone -- coreutils 9.10's timeout exits 124 when
# it forwards one, and a signal to a process group reaches LeakSanitizer's
# tracer at exit, which it deadlocks; stop_watch bounds the wait)
${VFDSWMR_VALGRIND:-} "$INSPECT" --watch --json "$f" >>"$WORK/watch.out" 2>"$WORK/watch.err" &
wpid=$!
rows=10
while kill -0 $wpid 2>/dev/null && [ "$(wc -l <"$WORK/watch.out")" -lt 5 ]; do
    [ $rows -lt 200000 ] || fail "--watch printed $(wc -l <"$WORK/watch.out") lines in 20000 appends"
    rows=$((rows + 10))
    proc_expect ww "append 10" "flushed $rows"
done
stop_watch "--watch --json" "$WORK/watch.err"
tick_of ww
tw1=$TICK
jcheck watch "$WORK/watch.out" "$tw0" "$tw1"
ok "--watch --json while the writer went from tick $tw0 to $tw1, then SIGINT: $CHECKED"
# for a time: it ends by itself
inspect_ok "$WORK/watch.out" --watch 1 "$f"
[ -s "$WORK/watch.out" ] || fail "--watch 1 printed nothing"
ok "--watch 1 ends by itself after $(wc -l <"$WORK/watch.out") lines"
proc_expect ww close closed
proc_end ww
[ "$PROC_STATUS" = 0 ] || fail "writer: exit status $PROC_STATUS $(proc_err ww)"
plain_rows "$f" "$rows" 0
ok "the writer closed; plain HDF5 reads its $rows rows"

# --- watch: the file removed and made again by a new writer ----------------------
# a watch started on the closed file (state none) follows the new session
# (handshake: the watch's own output, read until it says what is waited for)
wait_watch() { # wait_watch FILE TEXT: until FILE holds TEXT, or PROC_TIMEOUT
    local i
    for ((i = 0; i < PROC_TIMEOUT * 20; i++)); do
        grep -qF "$2" "$1" && return 0
        kill -0 $wpid 2>/dev/null || fail "--watch ended: $(cat "$1") $(cat "$1.err")"
        sleep 0.05
    done
    fail "--watch never printed $2: $(cat "$1")"
}
: >"$WORK/watch2.out"
${VFDSWMR_VALGRIND:-} "$INSPECT" --watch --json "$f" >>"$WORK/watch2.out" 2>"$WORK/watch2.out.err" &
wpid=$!
wait_watch "$WORK/watch2.out" '"state": "none"'
rm "$f"
writer_start w2 "tick_len=36000;max_lag=3" "$f"
proc_expect w2 "append 10" "flushed 10"
s2=$(od -An -tx8 -j 12 -N 8 "$f.md" | tr -d ' ')
wait_watch "$WORK/watch2.out" "\"state\": \"running\", \"session\": \"$s2\""
stop_watch "--watch across a new writer" "$WORK/watch2.out.err"
proc_expect w2 close closed
proc_end w2
ok "--watch on a closed file follows it through its removal and a new writer's session $s2"

# --- usage ------------------------------------------------------------------------
# a file that is not there: JSON readers get an object with the reason
inspect "$WORK/j" --json "$WORK/nothere.h5"
[ "$RC" = 1 ] || fail "a missing file: exit status $RC"
python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); sys.exit(not d["error"].startswith("cannot open"))' "$WORK/j" ||
    fail "a missing file: $(cat "$WORK/j")"
[ "$(wc -l <"$WORK/j.err")" = 1 ] || fail "a missing file: stderr $(cat "$WORK/j.err")"
ok "a missing file: status 1, {\"error\": ...} and one line on stderr"
inspect "$WORK/j" --no-such-option "$WORK/watch/w.h5"
[ "$RC" = 2 ] || fail "an unknown option: exit status $RC, expected 2"
inspect "$WORK/j"
[ "$RC" = 2 ] || fail "no file: exit status $RC, expected 2"
ok "usage errors: status 2"
finish
