"""Apply a plan atomically: stage the fixed checkpoint beside the destination, check it, then swap it in at once."""

from __future__ import annotations

import errno
import os
import shutil
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console

from dspark_ckpt.check.analysis import inspect_checkpoint
from dspark_ckpt.errors import RepairError
from dspark_ckpt.formats.safetensors_writer import TensorSpec, encode_header
from dspark_ckpt.model.findings import Finding
from dspark_ckpt.model.report import CheckpointReport
from dspark_ckpt.model.target import TargetVocab
from dspark_ckpt.repair import actions as a
from dspark_ckpt.repair.fsops import (
    atomic_text,
    crash_point,
    exchange,
    fsync_dir,
    open_temp,
    read_only,
    write_all,
)
from dspark_ckpt.repair.lock import fix_lock
from dspark_ckpt.repair.read import fingerprints
from dspark_ckpt.repair.stream import copy_range
from dspark_ckpt.runtimes.selectors import parse_selectors
from dspark_ckpt.sources.local import LocalFolder, is_in_hf_cache

PROGRESS_MIN_BYTES = 256 * 2**20  # copies smaller than this finish before a bar is worth drawing
_NO_LINK = {errno.EXDEV, errno.EPERM, errno.EMLINK, errno.EACCES, errno.ENOTSUP}


class VerificationError(RepairError):
    """The staged result still fails check; it was not put in place."""

    exit_code = 1


@dataclass(slots=True)
class FixResult:
    destination: str
    in_place: bool
    written: list[tuple[str, int]] = field(default_factory=list)  # (file, bytes) written by fix
    copied: list[tuple[str, int]] = field(default_factory=list)  # unchanged files copied (no hard link possible)
    linked: int = 0  # unchanged files hard-linked (no bytes written)
    removed: tuple[str, ...] = ()
    atomic: bool = True  # False only where the folder could not be swapped in one step
    report: CheckpointReport | None = None  # check of the result, for the chosen runtimes
    errors: list[Finding] = field(default_factory=list)  # what check still finds wrong (empty on success)

    @property
    def bytes_written(self) -> int:
        return sum(n for _, n in self.written) + sum(n for _, n in self.copied)


def _refuse(message: str, code: str, hint: str | None = None) -> RepairError:
    return RepairError(message, code=code, hint=hint)


def _unwritable(message: str, hint: str | None = None) -> RepairError:
    return _refuse(message, "DSP-E064", hint)


def out_taken(dest: Path) -> bool:
    return dest.exists() and (not dest.is_dir() or any(dest.iterdir()))


def out_exists(dest: Path, hint: str) -> RepairError:
    return _refuse(f"{dest} already exists and is not an empty folder", "DSP-E065", hint)


def destination_conflict() -> RepairError:
    return RepairError("give exactly one of --out DIR and --in-place", code="DSP-E068",
                       hint="--out DIR writes a new folder, --in-place rewrites the checkpoint; omit both for "
                            "the default, NAME-fixed beside the checkpoint")


def check_destination(source: Path, dest: Path, in_place: bool) -> None:
    if is_in_hf_cache(dest):
        raise _refuse(f"{dest} is inside a Hugging Face cache, whose files are links into shared blobs; "
                      "fix will not write there", "DSP-E063", "write the fixed copy elsewhere with --out DIR")
    if in_place:
        for folder in (dest, dest.parent):
            if read_only(folder):
                raise _unwritable(f"{folder} is read-only; nothing was written",
                                  "an in-place fix writes into the folder and beside it; use --out DIR")
        return
    if out_taken(dest):
        raise out_exists(dest, "choose a new --out folder")
    if dest.resolve() == source.resolve() or source.resolve() in dest.resolve().parents:
        raise _refuse(f"--out {dest} is inside the checkpoint itself", "DSP-E066", "choose a folder outside it")
    if not dest.parent.is_dir() or read_only(dest.parent):
        raise _unwritable(f"cannot create {dest}: {dest.parent} is missing or read-only")


def _clean_stale(dest: Path) -> None:
    """Staging folders left by a killed run (only reachable while holding the lock, so none is live)."""
    prefix = f".{dest.name}.dspark-fix-"
    for entry in os.scandir(dest.parent):
        if entry.name.startswith(prefix) and entry.name.endswith(".tmp"):
            shutil.rmtree(entry.path, ignore_errors=True)


def _copy(src: Path, dst: Path, console: Console | None) -> int:
    size = src.stat().st_size
    with ExitStack() as stack:
        fin = stack.enter_context(open(src, "rb"))
        fout = stack.enter_context(open(dst, "xb"))
        advance = None
        if console is not None and size >= PROGRESS_MIN_BYTES:
            from rich.progress import Progress

            bar = stack.enter_context(Progress(console=console, transient=True))
            task = bar.add_task(f"copying {src.name}", total=size)
            advance = lambda n: bar.advance(task, n)
        copy_range(fin.fileno(), 0, fout.fileno(), size, advance)
        os.fsync(fout.fileno())
    shutil.copystat(src, dst)
    return size


def _populate(src: Path, dst: Path, skip: set[str], follow: bool, result: FixResult, console: Console | None,
              prefix: str = "") -> None:
    """Hard-link (else copy) every file the plan leaves unchanged; links stay links in place, resolve for --out."""
    for entry in os.scandir(src):
        rel, target = prefix + entry.name, dst / entry.name
        if rel in skip:
            continue
        if entry.is_symlink() and not follow:
            os.symlink(os.readlink(entry.path), target)
        elif entry.is_dir(follow_symlinks=follow):
            target.mkdir()
            _populate(Path(entry.path), target, skip, follow, result, console, rel + "/")
        else:
            try:
                os.link(os.path.realpath(entry.path) if follow else entry.path, target)
                result.linked += 1
            except OSError as exc:
                if exc.errno not in _NO_LINK:
                    raise
                result.copied.append((rel, _copy(Path(entry.path), target, console)))


def _write_shard(source: Path, staging: Path, shard: a.ShardWrite) -> int:
    try:
        return _stream_shard(source, staging, shard)
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror, shard.file) from exc  # name the file being written, not a temp


def _stream_shard(source: Path, staging: Path, shard: a.ShardWrite) -> int:
    header = encode_header([TensorSpec(t.name, t.dtype, t.shape) for t in shard.tensors], shard.metadata)
    fd, tmp = open_temp(staging, shard.file)
    with ExitStack() as stack:
        stack.callback(os.close, fd)
        inputs: dict[str, int] = {}
        write_all(fd, header)
        for t in shard.tensors:
            if t.data is not None:
                write_all(fd, t.data)
                continue
            assert t.source_file is not None
            if t.source_file not in inputs:
                inputs[t.source_file] = os.open(source / t.source_file, os.O_RDONLY)
                stack.callback(os.close, inputs[t.source_file])
            copy_range(inputs[t.source_file], t.source_begin, fd, t.nbytes)
        os.fsync(fd)
    crash_point(f"temp:{shard.file}")
    os.replace(tmp, staging / shard.file)
    crash_point(f"replace:{shard.file}")
    return len(header) + sum(t.nbytes for t in shard.tensors)


def _check(folder: Path, plan: a.FixPlan) -> CheckpointReport:
    runtimes = parse_selectors(list(plan.runtimes))
    return inspect_checkpoint(LocalFolder(folder), target=TargetVocab(plan.target_vocab_size, "fix", omni=plan.target_omni),
                              runtimes=runtimes)


def remaining_errors(report: CheckpointReport, strategy: str | None) -> list[Finding]:
    """Errors check still finds, less those the applied repair leaves by design."""
    accepted = a.ACCEPTED_RESIDUAL.get(strategy or "", frozenset())
    return [f for f in report.findings if f.severity == "error" and f.code not in accepted]


def _verify(staging: Path, plan: a.FixPlan) -> None:
    errors = remaining_errors(_check(staging, plan), plan.strategy)
    if errors:
        shown = "; ".join(f"{f.code} {f.message}" for f in errors[:3])
        raise VerificationError(f"the repaired checkpoint would still fail check ({shown}); it was not put in "
                                "place and nothing was changed", code="DSP504")


def _commit(staging: Path, dest: Path, in_place: bool, changes: a.FileChanges) -> bool:
    if not in_place:
        os.rename(staging, dest)
        return True
    if exchange(staging, dest):
        return True
    # Without an atomic swap, replace file by file in the documented order: shards, then index, then config.
    for name in [s.file for s in changes.shards] + [t.file for t in changes.texts]:
        os.replace(staging / name, dest / name)
    for name in changes.removed:
        (dest / name).unlink(missing_ok=True)
    fsync_dir(dest)
    return False


def apply_fix(plan: a.FixPlan, *, out: Path | None = None, in_place: bool = False,
              console: Console | None = None) -> FixResult:
    """Write the plan's result to `out` (a new folder) or over the checkpoint (`in_place`), all or nothing."""
    if plan.refusal is not None or plan.changes is None or not plan.changes_anything:
        raise RepairError("this plan changes nothing (refused or nothing to repair)", code="DSP-E067")
    if (out is None) == (not in_place):
        raise destination_conflict()
    source = Path(plan.source)
    dest = source if in_place else Path(out).absolute()  # type: ignore[arg-type]
    check_destination(source, dest, in_place)
    try:
        with fix_lock(dest):
            return _apply_locked(plan, plan.changes, source, dest, in_place, console)
    except OSError as exc:
        where = f" ({exc.filename})" if exc.filename else ""
        raise _refuse(f"could not write the fixed checkpoint: {exc.strerror or exc}{where}; the original is "
                      "unchanged", "DSP-E069", "free disk space or fix permissions, then run fix again") from exc


def _apply_locked(plan: a.FixPlan, changes: a.FileChanges, source: Path, dest: Path, in_place: bool,
                  console: Console | None) -> FixResult:
    crash_point("lock")
    _clean_stale(dest)
    if fingerprints(source, [f[0] for f in plan.fingerprints]) != plan.fingerprints:
        raise _refuse("the checkpoint changed after it was planned; nothing was written", "DSP-E070",
                      "run fix again")
    result = FixResult(str(dest), in_place, removed=changes.removed)
    staging = dest.parent / f".{dest.name}.dspark-fix-{os.getpid()}.tmp"
    staging.mkdir()
    committed = False
    try:
        if in_place:
            os.chmod(staging, source.stat().st_mode & 0o7777)
        crash_point("stage-dir")
        _populate(source, staging, set(changes.touched), not in_place, result, console)
        crash_point("linked")
        result.written += [(sh.file, _write_shard(source, staging, sh)) for sh in changes.shards]
        result.written += [(t.file, atomic_text(staging, t.file, t.new)) for t in changes.texts]
        fsync_dir(staging)
        crash_point("fsync-dir")
        _verify(staging, plan)
        crash_point("verified")
        crash_point("commit")
        result.atomic = _commit(staging, dest, in_place, changes)
        committed = True
        crash_point("committed")
        fsync_dir(dest.parent)
    finally:
        if not committed or in_place:
            shutil.rmtree(staging, ignore_errors=True)  # the partial stage, or the swapped-out original
    if in_place:
        crash_point("cleanup")
    result.report = _check(dest, plan)
    result.errors = remaining_errors(result.report, plan.strategy)
    return result
