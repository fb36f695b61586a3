"""The recovery record of an in-place fix: what a run killed at any instant leaves, and how the next run finishes it.

An in-place fix never swaps folders (a shell or a reader inside the checkpoint keeps seeing it): it writes the new
files into `.dspark-fix-stage/` inside the checkpoint and then moves each one over its original with one rename.
`.dspark-fix-journal.json` (written atomically, before the stage exists) says which phase the run is in:

- `staging`: the originals are untouched. Recovery rolls back: the stage and the journal are removed.
- `committing` (written once every staged file is complete, fsynced and checked): recovery rolls forward. Each
  file listed in `put` that is still in the stage is renamed into place (a file already moved is no longer
  there), each file in `remove` is deleted, then the stage and the journal go.

So whatever instant a run dies at, the next `fix` or `check` of the folder (holding the lock, so never while the run
is alive) leaves either the original checkpoint or the complete fix, and says which.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from dspark_ckpt.errors import RepairError
from dspark_ckpt.repair.fsops import crash_point, fsync_dir, write_all

JOURNAL_NAME = ".dspark-fix-journal.json"
JOURNAL_TMP = JOURNAL_NAME + ".tmp"
STAGE_NAME = ".dspark-fix-stage"
OWN_NAMES = frozenset({JOURNAL_NAME, JOURNAL_TMP, STAGE_NAME, ".dspark-fix.lock"})  # never part of a checkpoint
STAGING, COMMITTING = "staging", "committing"
_VERSION = 1


@dataclass(frozen=True, slots=True)
class Journal:
    """The in-place fix's journal: the files moved into the checkpoint and removed, for recovery."""

    state: str
    put: tuple[str, ...]  # files moved from the stage into the checkpoint, in this order
    remove: tuple[str, ...]  # files deleted once every new file is in place
    pid: int

    def to_json(self) -> dict[str, Any]:
        return {"version": _VERSION, "tool": "dspark-ckpt fix", "state": self.state, "stage": STAGE_NAME,
                "put": list(self.put), "remove": list(self.remove), "pid": self.pid}


@dataclass(frozen=True, slots=True)
class Recovery:
    """What recovery did to a folder an earlier fix left half-done."""

    folder: str
    completed: bool  # True: rolled forward (the fix is complete); False: rolled back (the original is back)
    files: tuple[str, ...]

    def message(self) -> str:
        if self.completed:
            return (f"{self.folder}: completed a fix that was interrupted while putting its files in place "
                    f"({', '.join(self.files) or 'no file left to move'})")
        return f"{self.folder}: rolled back a fix that was interrupted before changing anything; nothing changed"


def _bad_journal(folder: Path, why: str) -> RepairError:
    return RepairError(f"{folder}: {why}; fix will not guess how to finish an interrupted fix", code="DSP-E080",
                       hint=f"compare {folder / STAGE_NAME} with the checkpoint by hand, then remove both")


def _safe_name(name: object) -> bool:
    if not isinstance(name, str) or not name:
        return False
    pure = PurePosixPath(name)
    return not pure.is_absolute() and ".." not in pure.parts and "\\" not in name


def write(folder: Path, journal: Journal) -> None:
    """Atomically: a temporary file renamed over the journal. `committing` is also made durable (file and folder
    fsynced) before any original is replaced; `staging` need not be: lost in a power cut, it leaves a stage without
    a journal, which recovery removes just the same."""
    tmp = folder / JOURNAL_TMP
    _remove_entry(tmp)
    fd = os.open(tmp, os.O_CREAT | os.O_EXCL | os.O_WRONLY | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        write_all(fd, (json.dumps(journal.to_json(), indent=1) + "\n").encode())
        if journal.state == COMMITTING:
            os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, folder / JOURNAL_NAME)
    if journal.state == COMMITTING:
        fsync_dir(folder)


def read(folder: Path) -> Journal | None:
    path = folder / JOURNAL_NAME
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    if not stat.S_ISREG(st.st_mode) or st.st_size > 16 * 2**20:
        raise _bad_journal(folder, f"{JOURNAL_NAME} is not a regular file of a sane size")
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    try:
        raw = b"".join(iter(lambda: os.read(fd, 2**20), b""))
    finally:
        os.close(fd)
    try:
        doc = json.loads(raw)
        journal = Journal(doc["state"], tuple(doc["put"]), tuple(doc["remove"]), int(doc.get("pid", 0)))
    except (ValueError, KeyError, TypeError, AttributeError):
        raise _bad_journal(folder, f"{JOURNAL_NAME} cannot be read") from None
    if journal.state not in (STAGING, COMMITTING) or not all(map(_safe_name, journal.put + journal.remove)):
        raise _bad_journal(folder, f"{JOURNAL_NAME} names an unknown state or a path outside the checkpoint")
    return journal


def pending(folder: Path) -> bool:
    """Cheap: did a fix leave its journal or stage here?"""
    return any(os.path.lexists(folder / n) for n in (JOURNAL_NAME, JOURNAL_TMP, STAGE_NAME))


def _remove_entry(path: Path, *, folder: bool = False) -> None:
    """Remove a leftover of ours: the stage folder (a real one, its tree never followed through links) or a file;
    absent is fine. Anything else under our names was not made by fix and is refused, never removed."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if folder and stat.S_ISDIR(st.st_mode):
        shutil.rmtree(path)
    elif not folder and stat.S_ISREG(st.st_mode):
        os.unlink(path)
    else:
        raise _bad_journal(path.parent, f"{path.name} is in the way: it is not the {'folder' if folder else 'file'} "
                                        "fix makes under that name")


def _parents(folder: Path, names: Sequence[str]) -> list[Path]:
    return list(dict.fromkeys([folder] + [(folder / n).parent for n in names]))


def roll_forward(folder: Path, journal: Journal, step: Callable[[str], None] = crash_point) -> tuple[str, ...]:
    """Move every staged file still in the stage into place, delete the removed ones; idempotent."""
    stage = folder / STAGE_NAME
    moved = []
    for name in journal.put:
        if os.path.lexists(stage / name):
            os.replace(stage / name, folder / name)
            moved.append(name)
            step(f"put:{name}")
    for name in journal.remove:
        if os.path.lexists(folder / name):
            os.unlink(folder / name)
            moved.append(f"{name} (removed)")
    for parent in _parents(folder, journal.put + journal.remove):
        fsync_dir(parent)
    step("committed")
    finish(folder)
    return tuple(moved)


def roll_back(folder: Path) -> None:
    """Before the commit point nothing of the checkpoint was changed: drop the stage and the journal."""
    finish(folder)


def finish(folder: Path) -> None:
    """The stage goes first and the journal last, so a run killed in between is still told what happened. (Not
    fsynced: a journal that comes back after a power cut finds its files in place and finishes at once.)"""
    _remove_entry(folder / STAGE_NAME, folder=True)
    _remove_entry(folder / JOURNAL_TMP)
    _remove_entry(folder / JOURNAL_NAME)


def recover(folder: Path) -> Recovery | None:
    """Finish what a dead fix left in `folder`. The caller holds the folder's lock, so that fix is not running."""
    if not pending(folder):
        return None
    journal = read(folder)
    if journal is not None and journal.state == COMMITTING:
        return Recovery(str(folder), True, roll_forward(folder, journal, step=lambda _: None))
    roll_back(folder)
    return Recovery(str(folder), False, ())


def unfinished(folder: Path) -> RepairError:
    return RepairError(f"{folder}: an interrupted fix left {JOURNAL_NAME} and cannot be finished without write "
                       "access; the files may be a mix of old and new until it is", code="DSP-E079",
                       hint=f"run `dspark-ckpt check {shlex.quote(str(folder))}` as a user who may write it: that completes or "
                            "rolls back the interrupted fix")


def recover_interrupted(folder: Path) -> Recovery | None:
    """Before planning: finish what a dead in-place fix left, under the lock (DSP-E071 while a fix is running)."""
    from dspark_ckpt.repair.fsops import read_only
    from dspark_ckpt.repair.lock import fix_lock

    if not folder.is_dir() or not pending(folder):
        return None
    real = Path(os.path.realpath(folder))
    if read_only(real):
        raise unfinished(folder)
    with fix_lock(real):
        return recover(real)


def note_for_check(folder: Path) -> str:
    """What `check` says (on stderr) about a folder where a fix left its journal: done, in progress, or stuck."""
    from dspark_ckpt.errors import DsparkCkptError
    from dspark_ckpt.repair.fsops import read_only
    from dspark_ckpt.repair.lock import holder, try_lock

    real = Path(os.path.realpath(folder))
    if read_only(real):
        return str(unfinished(folder))
    try:
        held = try_lock(real)
        if held is None:
            pid = holder(real)
            return (f"{folder}: a fix ({f'pid {pid}' if pid else 'another process'}) is writing this checkpoint "
                    "right now; this check may see it half-done")
        try:
            done = recover(real)
        finally:
            held.release()
    except (OSError, DsparkCkptError) as exc:
        return f"{folder}: an interrupted fix left {JOURNAL_NAME}, and finishing it failed: {exc}"
    return done.message() if done is not None else f"{folder}: nothing was left to recover"
