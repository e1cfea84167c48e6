/*
 * Read marks: the table in which readers on the writer's host say which
 * snapshot they hold, so that the writer keeps what they need however long
 * they take (SQLite's WAL read marks, for VFD SWMR). The file is
 * "<metadata file>.readers"; its layout is in docs/FORMAT.md ("Read-mark
 * table"):
 *
 *   0   "VRDM" | version u32 | session u64 | release_below u64 | nslots u32 |
 *       reserved (36 bytes of zeros)                       64 bytes
 *   64  nslots slots of 16 bytes: tick + 1 (u64, 0: none) | reserved u64
 *
 * A reader owns a slot while it holds an OFD write lock on the slot's
 * reserved 8 bytes (the claim); its tick counts while it also holds one on
 * the tick's 8 bytes, which it takes after clearing what an earlier owner
 * left there. The locks die with the reader, so a crashed reader pins
 * nothing.
 * It writes the tick of each snapshot it adopts into its slot, then checks
 * that the writer had not gone max_lag ticks past that snapshot before the
 * mark was there (from then on the writer sees the mark at every tick).
 * The writer, at every tick, takes the oldest live mark as the oldest
 * snapshot in use and keeps, for it, what max_lag would have kept
 * (vfdswmr_marks_lag). A mark older than VFDSWMR_MARK_RELEASE_FACTOR x
 * max_lag ticks is released: the writer raises release_below past it,
 * before it acts on the release, and the reader's next lag check fails
 * with "released". A reader that opened the file before this writer started
 * holds the file as it was, i.e. the writer's tick 0: it marks tick 0.
 * The table is made by the first reader that needs it, whole under no name
 * and then linked to its name (the loser of a race uses the winner's); the
 * writer looks for it at the beginning of every publish until it has one,
 * so "every publish that begins after the mark sees it" holds as when the
 * writer made it at open (DESIGN.md 6, "Read marks"). A session no reader
 * sees has none.
 *
 * Error contract: functions return 0 (or a count, or their named result),
 * or -1 with errno set; the caller writes the messages. DESIGN.md 4a.
 */
#ifndef VFDSWMR_MDFILE_MARKS_H
#define VFDSWMR_MDFILE_MARKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "format.h"
#include "safefile.h"

/* Slots in a table the writer creates: readers beyond that are not
 * registered and keep the max_lag contract. */
#define VFDSWMR_MARKS_SLOTS 64
/* A registered reader is released once its snapshot is this many times
 * max_lag ticks old: this bounds the metadata file while a reader stalls. */
#define VFDSWMR_MARK_RELEASE_FACTOR 20u

/* The table's name: "<md_path>.readers"; -1 when it does not fit. */
int vfdswmr_marks_name(char *out, size_t len, const char *md_path);

/* Open the table of `session` next to md_path with open(2) `flags`, never
 * through a link, and read its header into *h: the descriptor;
 * VFDSWMR_MARKS_NONE when no table of that session is there (none, not a
 * regular file, a link, another session's or version's); -1 with errno
 * when it cannot be opened or read. */
#define VFDSWMR_MARKS_NONE (-2)
int vfdswmr_marks_open(const char *md_path, uint64_t session, int flags, vfdswmr_markshdr_t *h);

/* ---- writer ---- */
typedef struct vfdswmr_marks vfdswmr_marks_t;

/* At open, before the metadata file has its name: remove whatever is at
 * the table's name (a table of an earlier session). */
void vfdswmr_marks_clear(const char *md_path);
/*
 * The table of `session`, if a reader made it (the first reader that needs
 * one does: vfdswmr_mark_attach). The writer asks at the beginning of every
 * publish until it has one, so every publish that begins after a table got
 * its name honours its marks. 1 with *out; 0 none (whatever else was at the
 * name -- another session's table, a link, not a table, another owner's --
 * is removed, as long as md_id, the writer's metadata file, is at md_path:
 * no reader of this session can be marked in it; a writer whose metadata
 * file lost its name to another session's leaves the name alone); -1 with
 * errno when it cannot be opened or read (the writer cannot tell whose
 * marks it holds).
 */
int vfdswmr_marks_find(const char *md_path, uint64_t session, const vfdswmr_file_id_t *md_id, vfdswmr_marks_t **out);
/* Does m's name still name m (nobody removed or replaced it)? 1 yes, 0 no,
 * -1 with errno when it cannot be told. */
int vfdswmr_marks_named(const vfdswmr_marks_t *m);
/* Release every mark in m (release_below past any tick): its readers'
 * next lag check fails ("released"), before the writer stops honouring
 * m. 0, or -1 with errno. */
int vfdswmr_marks_release_all(vfdswmr_marks_t *m);
/*
 * The lag the writer must keep at tick `tick` (about to be published): at
 * least max_lag, and enough for the oldest live mark, up to `limit` ticks
 * (VFDSWMR_MARK_RELEASE_FACTOR x max_lag; max_lag while closing); marks
 * older than that are released first. *readers gets the number of live
 * marks kept. Never fails: a table that cannot be read counts as no marks
 * (max_lag then protects everyone, as without marks). m may be NULL.
 */
uint32_t vfdswmr_marks_lag(vfdswmr_marks_t *m, uint64_t tick, uint32_t max_lag, uint32_t limit, unsigned *readers);
/* A read-mark slot as the writer sees it. */
typedef enum vfdswmr_slot_t {
    VFDSWMR_SLOT_MARKED = 1,   /* live, with the tick marked in *tick */
    VFDSWMR_SLOT_UNMARKED = 0, /* live but not marked yet (or still clearing an earlier owner's tick) */
    VFDSWMR_SLOT_FREE = -1     /* free, unreadable, or m NULL: nothing to honour */
} vfdswmr_slot_t;
vfdswmr_slot_t vfdswmr_marks_tick(const vfdswmr_marks_t *m, unsigned slot, uint64_t *tick);
/* The same for the table open on fd (vfdswmr_marks_open, read-only is
 * enough), which inspecting tools read without being its writer. */
vfdswmr_slot_t vfdswmr_marks_slot(int fd, unsigned slot, uint64_t *tick);
/* The table's descriptor (the file also holds the kept old bytes, kept.h);
 * -1 when m is NULL. */
int vfdswmr_marks_fd(const vfdswmr_marks_t *m);
/* Remove the table (if its name is still ours) and free m. */
void vfdswmr_marks_close(vfdswmr_marks_t *m);
/* A fork child's copy (common/forked.h): close the child's descriptor and
 * nothing else; vfdswmr_marks_close then only frees. Async-signal-safe. */
void vfdswmr_marks_forget(vfdswmr_marks_t *m);

/* ---- reader ---- */
typedef struct vfdswmr_mark_t {
    int fd; /* the table, or -1: not registered */
    unsigned slot;
    uint64_t session;
    bool created;         /* this reader made the table */
    bool acked;           /* the writer adopted it (its list is there) */
    vfdswmr_file_id_t id; /* the table's file */
} vfdswmr_mark_t;

/* What registering in a read-mark table found. */
typedef enum vfdswmr_attach_t {
    VFDSWMR_ATTACHED = 1,     /* r holds a slot */
    VFDSWMR_ATTACH_NONE = 0,  /* none (and none made), another session's or owner's, full, no locks: max_lag applies */
    VFDSWMR_ATTACH_ERROR = -1 /* errno */
} vfdswmr_attach_t;
/*
 * Register in the table of `session` next to md_path, making it when there
 * is none (md_fd, the metadata file, >= 0: its owner and mode are the
 * table's; a reader that is neither that owner nor root makes none). A
 * reader that made it (r->created) must then check that the writer still
 * runs that session (the metadata file's header: not FINAL, same session,
 * the writer's lock held) and vfdswmr_mark_abandon when it does not: a
 * writer that closed before the table had its name never removes it.
 */
vfdswmr_attach_t vfdswmr_mark_attach(vfdswmr_mark_t *r, const char *md_path, uint64_t session, int md_fd);
/* Detach, removing the table first if r made it (and it is still at its name). */
void vfdswmr_mark_abandon(vfdswmr_mark_t *r, const char *md_path);
/*
 * Has the writer adopted r's table? It writes its kept list there when it
 * does (vfd-swmr-writer: vfdswmr_writer_find_marks), and from then on
 * honours its marks until it releases them all -- which it does before it
 * lets go of a table removed from its name. Until then r's table must be
 * at its name, where the writer's next look finds it: 1 adopted (r->acked,
 * not asked again), 0 not yet but at its name (or cannot be told), -1 no
 * longer at its name -- nothing r marked there is honoured.
 */
int vfdswmr_mark_confirm(vfdswmr_mark_t *r, const char *md_path);
/* Write the tick of the snapshot just adopted into the reader's slot. */
int vfdswmr_mark_set(const vfdswmr_mark_t *r, uint64_t tick);
/* 1 when the writer released marks below `tick` or later ones, 0 not, -1 error. */
int vfdswmr_mark_released(const vfdswmr_mark_t *r, uint64_t tick);
void vfdswmr_mark_detach(vfdswmr_mark_t *r);

#endif
