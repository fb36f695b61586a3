"""Apply a plan all or nothing: stage the fixed files, check them once, prove the source unchanged, then put them in place.

`--out`: the complete copy is staged beside the destination and renamed onto it in one step. In place: the new files
are staged inside the checkpoint and moved over the originals under a recovery journal (journal.py), so the folder
itself (its inode, a link to it, a shell inside it) stays the same. Either way, one lock per source checkpoint.
"""

from __future__ import annotations

import errno
import os
import shlex
import shutil
import threading
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

from rich.console import Console

from dspark_ckpt.errors import RepairError
from dspark_ckpt.formats.safetensors_writer import TensorSpec, encode_header
from dspark_ckpt.model.codes import ErrorCode
from dspark_ckpt.model.findings import Finding
from dspark_ckpt.model.report import CheckpointReport
from dspark_ckpt.repair import actions as a
from dspark_ckpt.repair import journal
from dspark_ckpt.repair.binding import BoundSource, changed_since, verify_written
from dspark_ckpt.repair.fsops import (
    Ownership,
    SpecialFile,
    crash_point,
    create,
    fsync_dir,
    interrupts_deferred,
    keep_ownership,
    open_regular,
    read_only,
    write_all,
    write_file,
)
from dspark_ckpt.repair.lock import fix_lock, held_by_writer, pid_alive, try_lock
from dspark_ckpt.repair.recheck import StagedCheck, check_staged, committed_report, remaining_errors
from dspark_ckpt.repair.source_tree import TreeEntry, changed, in_hf_cache, scan, special_file, stamp
from dspark_ckpt.repair.stream import copy_range
from dspark_ckpt.sources.base import CONFIG_NAME

VERIFY_WRITTEN = True  # read every written shard back against its sources before the commit (bench_fix.py turns
# it off to measure what it costs)
PROGRESS_MIN_BYTES = 256 * 2**20  # copies smaller than this finish before a bar is worth drawing
_NO_LINK = {errno.EXDEV, errno.EPERM, errno.EMLINK, errno.EACCES, errno.ENOTSUP}
_OUT_STAGING = ".{name}.dspark-fix-{pid}.tmp"


class FixInterrupted(KeyboardInterrupt):
    """Ctrl-C during apply, with what it left: nothing changed, or the fix already complete."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(slots=True)
class FixResult:
    """What fix wrote: where, the files written, copied or linked, and those removed."""

    destination: str
    in_place: bool
    written: list[tuple[str, int]] = field(default_factory=list)  # (file, bytes) written by fix
    copied: list[tuple[str, int]] = field(default_factory=list)  # unchanged files copied (no hard link possible)
    linked: int = 0  # unchanged files hard-linked into a --out folder (no bytes written)
    removed: tuple[str, ...] = ()
    atomic: bool = True  # all or nothing: a rename (--out) or the journal (in place); kept for the JSON schema
    report: CheckpointReport | None = None  # check of the result, for the chosen runtimes (recheck.py: run once)
    errors: list[Finding] = field(default_factory=list)  # what check still finds wrong (empty on success)
    via_link: str | None = None  # the checkpoint was given as this link; the folder it points at was fixed
    recovered: str | None = None  # what was done to an earlier fix's leftovers before this one

    @property
    def bytes_written(self) -> int:
        return sum(n for _, n in self.written) + sum(n for _, n in self.copied)


def _refuse(message: str, code: ErrorCode, hint: str | None = None) -> RepairError:
    return RepairError(message, code=code, hint=hint)


def _unwritable(message: str, hint: str | None = None) -> RepairError:
    return _refuse(message, "DSP-E064", hint)


def out_taken(dest: Path) -> bool:
    """Anything but a missing path or an empty real folder (a FIFO or a file there is never opened)."""
    if not os.path.lexists(dest):
        return False
    return not dest.is_dir() or dest.is_symlink() and not os.path.isdir(os.path.realpath(dest)) or any(dest.iterdir())


def out_exists(dest: Path, hint: str) -> RepairError:
    return _refuse(f"{dest} already exists and is not an empty folder", "DSP-E065", hint)


def destination_conflict() -> RepairError:
    return RepairError("give exactly one of --out DIR and --in-place", code="DSP-E068",
                       hint="--out DIR writes a new folder, --in-place rewrites the checkpoint; omit both for "
                            "the default, NAME-fixed beside the checkpoint")


def check_destination(source: Path, dest: Path, in_place: bool) -> None:
    if in_hf_cache(dest):
        raise _refuse(f"{dest} is inside a Hugging Face cache, whose files are links into shared blobs; "
                      "fix will not write there", "DSP-E063", "write the fixed copy elsewhere with --out DIR")
    if in_place:
        if read_only(dest):
            raise _unwritable(f"{dest} is read-only; nothing was written",
                              "an in-place fix writes into the checkpoint folder; use --out DIR")
        return
    if out_taken(dest):
        raise out_exists(dest, "choose a new --out folder")
    real_dest, real_source = Path(os.path.realpath(dest)), Path(os.path.realpath(source))
    if real_dest == real_source or real_source in real_dest.parents:
        raise _refuse(f"--out {dest} is inside the checkpoint itself", "DSP-E066", "choose a folder outside it")
    if not dest.parent.is_dir() or read_only(dest.parent):
        raise _unwritable(f"cannot create {dest}: {dest.parent} is missing or read-only")


def apply_fix(plan: a.FixPlan, *, out: Path | None = None, in_place: bool = False,
              console: Console | None = None) -> FixResult:
    """Write the plan's result to `out` (a new folder) or over the checkpoint (`in_place`), all or nothing."""
    if plan.refusal is not None or plan.changes is None or not plan.changes_anything:
        raise RepairError("this plan changes nothing (refused or nothing to repair)", code="DSP-E067")
    if (out is None) == (not in_place):
        raise destination_conflict()
    given = Path(plan.source)
    if out is not None and os.path.islink(out) and not os.path.exists(out):
        raise _refuse(f"--out {out} is a symlink to {os.readlink(out)}, which does not exist; nothing was written",
                      "DSP-E082", "remove the link or point it at an empty folder, or give a plain path")
    source = Path(os.path.realpath(given))  # a linked checkpoint is fixed where it is; the link keeps pointing at it
    dest = source if in_place else Path(os.path.realpath(Path(out).absolute()))  # type: ignore[arg-type]
    check_destination(source, dest, in_place)
    try:
        result, staged = (_in_place(plan, plan.changes, source, console) if in_place
                          else _to_new_folder(plan, plan.changes, source, dest, console))
    except SpecialFile as exc:
        raise special_file(os.path.relpath(exc.filename, source) if exc.filename else "a file") from exc
    except OSError as exc:
        where = f" ({exc.filename})" if exc.filename else ""
        raise _refuse(f"could not write the fixed checkpoint: {exc.strerror or exc}{where}; the original is "
                      "unchanged", "DSP-E069", "free disk space or fix permissions, then run fix again") from exc
    result.via_link = str(given) if os.path.islink(given) else None
    result.report = committed_report(dest, staged, plan)  # the staged check: the same files, now in place
    result.errors = remaining_errors(result.report, plan.strategy)
    return result


# --- reading the source: every byte from the files the plan was made from (binding.py) ---

def _owner_of(folder: Path, name: str, plan: a.FixPlan) -> Ownership | None:
    """A rewritten file keeps its original's mode and owner; a new one takes a sibling's (a shard's, else config's)."""
    siblings = [f.name for f in plan.fingerprints if f.name.endswith(".safetensors")] if name.endswith(
        ".safetensors") else []
    for candidate in (name, *siblings, CONFIG_NAME):
        try:
            return Ownership.of(os.stat(folder / candidate))
        except OSError:
            continue
    return None


@contextmanager
def _syncing(fd: int) -> Iterator[None]:
    """fsync `fd` in a thread while the block runs (fsync releases the GIL), then wait for it; its error is raised."""
    failed: list[OSError] = []

    def sync() -> None:
        try:
            os.fsync(fd)
        except OSError as exc:
            failed.append(exc)

    worker = threading.Thread(target=sync, name="dspark-fix-fsync", daemon=True)
    worker.start()
    try:
        yield
    finally:
        worker.join()
    if failed:
        raise failed[0]


def _write_shard(files: BoundSource, out: Path, shard: a.ShardWrite, owner: Ownership | None,
                 console: Console | None = None) -> int:
    header = encode_header([TensorSpec(t.name, t.dtype, t.shape) for t in shard.tensors], shard.metadata)
    path = out / shard.file
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = create(path)
    streamed = sum(t.nbytes for t in shard.tensors if t.data is None)
    try:
        write_all(fd, header)
        with _bar(console, f"writing {shard.file}", streamed) as advance:
            for t in shard.tensors:
                if t.data is not None:
                    write_all(fd, t.data)
                else:
                    assert t.source_file is not None
                    copy_range(files.fd(t.source_file), t.source_begin, fd, t.nbytes, advance)
        keep_ownership(fd, owner)
        with _syncing(fd):  # the read-back runs while the kernel writes the shard out
            if VERIFY_WRITTEN:
                verify_written(files, path, shard)
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror, shard.file) from exc  # name the file being written
    finally:
        os.close(fd)
    return len(header) + sum(t.nbytes for t in shard.tensors)


def _write_changes(files: BoundSource, out: Path, changes: a.FileChanges, plan: a.FixPlan,
                   result: FixResult, console: Console | None = None) -> None:
    """Write every changed file into `out`, each shard read back against its sources (DSP-E084)."""
    for shard in changes.shards:
        owner = _owner_of(files.folder, shard.file, plan)
        result.written.append((shard.file, _write_shard(files, out, shard, owner, console)))
        crash_point(f"write:{shard.file}")
    for text in changes.texts:
        (out / text.file).parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        owner = _owner_of(files.folder, text.file, plan)
        result.written.append((text.file, write_file(out / text.file, text.new.encode("utf-8"), owner)))
        crash_point(f"write:{text.file}")


def _fsync_tree(folder: Path, names: list[str]) -> None:
    for parent in dict.fromkeys([folder] + [(folder / n).parent for n in names]):
        fsync_dir(parent)


# --- in place: stage inside the checkpoint, then move each file over its original under the journal ---

def _stage_for_check(files: BoundSource, stage: Path, changes: a.FileChanges) -> None:
    """Hard links (else copies) of the unchanged files check reads, so the staged result can be checked whole."""
    folder, touched = files.folder, set(changes.touched)
    names = [f.name for f in files.stamps] + sorted(p.name for p in folder.glob("*.safetensors"))
    for name in dict.fromkeys(n for n in names if n not in touched):
        target = stage / name
        target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        real = os.path.realpath(folder / name)
        try:
            os.link(real, target, follow_symlinks=False)
        except FileNotFoundError:
            continue
        except OSError as exc:
            if exc.errno not in _NO_LINK:
                raise
            if files.bound(name):
                _copy_fd(files.fd(name), target, None)
                continue
            fd, st = open_regular(real)  # a JSON file (bound by content: recheck() proves it unchanged)
            try:
                _copy_fd(fd, target, None, st)
            finally:
                os.close(fd)


def _in_place(plan: a.FixPlan, changes: a.FileChanges, folder: Path,
              console: Console | None = None) -> tuple[FixResult, StagedCheck]:
    with fix_lock(folder), ExitStack() as stack:
        crash_point("lock")
        recovered = journal.recover(folder)  # a dead run's leftovers, before comparing with the plan
        files = BoundSource(folder, plan.fingerprints, stack)  # StalePlan here: nothing was written
        result = FixResult(str(folder), True, removed=changes.removed,
                           recovered=recovered.message() if recovered else None)
        record = journal.Journal(journal.STAGING, changes.put_order, changes.removed, os.getpid())
        try:
            journal.write(folder, record)
            crash_point("journal")
            stage = folder / journal.STAGE_NAME
            os.mkdir(stage, 0o700)
            crash_point("stage-dir")
            _stage_for_check(files, stage, changes)
            crash_point("linked")
            _write_changes(files, stage, changes, plan, result, console)
            _fsync_tree(stage, list(changes.put_order))
            crash_point("fsync-dir")
            staged = check_staged(stage, folder, plan)
            crash_point("verified")
            files.recheck()  # nothing else wrote it while fix read it
        except BaseException as exc:
            with interrupts_deferred():
                journal.roll_back(folder)
            if isinstance(exc, KeyboardInterrupt):
                raise FixInterrupted(f"nothing was changed in {folder}; the staged files were removed") from None
            raise
        _commit_in_place(folder, record)
    return result, staged


def _commit_in_place(folder: Path, record: journal.Journal) -> None:
    try:
        with interrupts_deferred():
            journal.write(folder, replace(record, state=journal.COMMITTING))
            crash_point("commit")
            try:
                journal.roll_forward(folder, record)
            except OSError as exc:
                raise _refuse(f"could not finish putting the fix in place ({exc.strerror or exc}"
                              f"{f': {exc.filename}' if exc.filename else ''}); {journal.JOURNAL_NAME} records "
                              "what is left, and the next fix or check of the folder completes it", "DSP-E081",
                              f"free disk space or fix permissions, then run `dspark-ckpt check {shlex.quote(str(folder))}`") from exc
    except KeyboardInterrupt:
        raise FixInterrupted(f"the fix of {folder} was already complete when the interrupt came") from None


@contextmanager
def _bar(console: Console | None, label: str, total: int) -> Iterator[Callable[[int], None] | None]:
    """A byte progress bar for one long copy (the caller's console: stderr on a terminal, None otherwise or with -q)."""
    if console is None or total < PROGRESS_MIN_BYTES:
        yield None
        return
    from rich.progress import Progress

    with Progress(console=console, transient=True) as bar:
        task = bar.add_task(label, total=total)
        yield lambda n: bar.advance(task, n)


# --- --out: a complete copy staged beside the destination, renamed onto it in one step ---

def _copy_fd(fd: int, dst: Path, console: Console | None, st: os.stat_result | None = None) -> int:
    st = st or os.fstat(fd)
    with ExitStack() as stack:
        out = create(dst)
        stack.callback(os.close, out)
        advance = None
        if console is not None and st.st_size >= PROGRESS_MIN_BYTES:
            from rich.progress import Progress

            bar = stack.enter_context(Progress(console=console, transient=True))
            task = bar.add_task(f"copying {dst.name}", total=st.st_size)
            advance = lambda n: bar.advance(task, n)
        copy_range(fd, 0, out, st.st_size, advance)
        keep_ownership(out, Ownership.of(st))
        os.utime(out, ns=(st.st_atime_ns, st.st_mtime_ns))
        os.fsync(out)
    return st.st_size


def _populate(entries: list[TreeEntry], out: Path, changes: a.FileChanges, result: FixResult,
              console: Console | None) -> None:
    """Hard-link (else copy) every file the plan leaves unchanged, with its mode and owner; folders get theirs last
    (a read-only folder must first be filled)."""
    skip = set(changes.touched)
    folders: list[tuple[Path, os.stat_result]] = []
    for e in entries:
        target = out / e.rel
        if e.rel in skip:
            continue
        if e.kind == "dir":
            target.mkdir(mode=0o700)
            folders.append((target, e.st))
        elif e.kind == "link":
            os.symlink(e.real, target)
        else:
            _place(e, target, result, console)
    for target, st in reversed(folders):
        keep_ownership(target, Ownership.of(st))


def _place(e: TreeEntry, target: Path, result: FixResult, console: Console | None) -> None:
    try:
        os.link(e.real, target, follow_symlinks=False)
    except OSError as exc:
        if exc.errno not in _NO_LINK:
            raise
    else:
        if stamp(os.lstat(target)) != stamp(e.st):
            raise changed_since("while fix read it", [e.rel])
        result.linked += 1
        return
    fd, st = open_regular(e.real)
    try:
        if stamp(st) != stamp(e.st):
            raise changed_since("while fix read it", [e.rel])
        result.copied.append((e.rel, _copy_fd(fd, target, console, st)))
    finally:
        os.close(fd)


@contextmanager
def _source_lock(source: Path) -> Iterator[None]:
    """The lock an in-place fix of the source takes, shared: fixes that only read the source run together, none
    beside one that writes it. What a dead in-place fix left is finished first, under the exclusive lock. A source
    nobody may write (read-only, an HF cache) cannot be fixed in place, so it is only locked where the kernel lock
    needs no file."""
    writable = not read_only(source) and not in_hf_cache(source)
    if journal.pending(source):
        if read_only(source):
            raise journal.unfinished(source)
        with fix_lock(source, writable=writable):
            journal.recover(source)
    with fix_lock(source, writable=writable, shared=True):
        if journal.pending(source):  # an in-place fix that died between our two locks: its own lock is gone too
            raise journal.unfinished(source) if read_only(source) else held_by_writer(source)
        yield


def _clean_stale_out(dest: Path) -> None:
    """Staging folders of killed runs into the same destination: a live run holds a lock on its own."""
    prefix, suffix = f".{dest.name}.dspark-fix-", ".tmp"
    for entry in os.scandir(dest.parent):
        if not (entry.name.startswith(prefix) and entry.name.endswith(suffix)) or not entry.is_dir(
                follow_symlinks=False):
            continue
        try:
            held = try_lock(Path(entry.path), writable=False)
        except OSError:
            continue  # not ours to open (another user's run): left alone
        if held is None:
            continue
        pid = entry.name[len(prefix):-len(suffix)]
        # Lockable is not enough: a live run makes its folder, then locks it. Only a folder whose run is gone is
        # removed (a reused pid leaves a dead run's folder in place: harmless, never someone's live copy).
        dead = not (pid.isdigit() and pid_alive(int(pid)))
        held.release()
        if dead:
            shutil.rmtree(entry.path, ignore_errors=True)


def _to_new_folder(plan: a.FixPlan, changes: a.FileChanges, source: Path, dest: Path,
                   console: Console | None) -> tuple[FixResult, StagedCheck]:
    entries = scan(source)  # links leaving the checkpoint and special files are refused before anything exists
    with _source_lock(source), ExitStack() as stack:
        crash_point("lock")
        files = BoundSource(source, plan.fingerprints, stack)  # StalePlan here: nothing was written
        _clean_stale_out(dest)
        result = FixResult(str(dest), False, removed=changes.removed)
        staging = dest.parent / _OUT_STAGING.format(name=dest.name, pid=os.getpid())
        os.mkdir(staging, 0o700)
        own = try_lock(staging, writable=False)  # tells a later run this staging folder is live
        committed = False
        try:
            crash_point("stage-dir")
            _populate(entries, staging, changes, result, console)
            crash_point("linked")
            _write_changes(files, staging, changes, plan, result, console)
            _fsync_tree(staging, list(changes.put_order))
            crash_point("fsync-dir")
            staged = check_staged(staging, dest, plan)
            crash_point("verified")
            files.recheck()
            if moved := changed(entries):
                raise changed_since("while fix read it", moved)
            keep_ownership(staging, Ownership.of(source.stat()))
            crash_point("commit")
            with interrupts_deferred():
                _rename_onto(staging, dest)
                committed = True
                crash_point("committed")
                fsync_dir(dest.parent)
        except BaseException as exc:
            if not committed:
                with interrupts_deferred():
                    shutil.rmtree(staging, ignore_errors=True)
            if isinstance(exc, KeyboardInterrupt):
                raise FixInterrupted(f"the fixed copy {dest} was complete when the interrupt came" if committed
                                     else f"nothing was written to {dest}; the staged copy was removed") from None
            raise
        finally:
            if own is not None:
                own.release()
    return result, staged


def _rename_onto(staging: Path, dest: Path) -> None:
    try:
        os.rename(staging, dest)  # onto a missing path or an empty folder, in one step
    except OSError as exc:
        if exc.errno in (errno.ENOTEMPTY, errno.EEXIST, errno.ENOTDIR, errno.EISDIR):
            raise out_exists(dest, "another process wrote it while fix ran; choose a new --out folder") from exc
        raise
