"""A plan bound to the bytes it was made from, and the written result proven against them.

Planning reads the checkpoint through check's own source (sources/local.py), which keeps, for each shard, the
identity (device, inode, size, mtime_ns) of the descriptor every read went through, and the bytes of each JSON file.
`stamp_sources` turns those into the plan's stamps: a shard's identity plus a hash of its header (re-read from a file
of that same identity, and parsed to the same header), a JSON file's hash. At apply, under the lock, `BoundSource`
opens each stamped file once and keeps it only if its identity and hash are the planned ones (else StalePlan, with
nothing written): every byte fix copies comes through those descriptors, at offsets their own headers give.
`verify_written` then reads back each staged tensor, located by the staged header, and compares it with its source
range (or its given bytes) before anything is put in place; apply runs it while the shard's fsync writes it out, so
it costs the CPU a read of the page cache, not the disk a second pass.
"""

from __future__ import annotations

import errno
import hashlib
import os
from collections.abc import Iterable, Mapping
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING

from dspark_ckpt.errors import RepairError
from dspark_ckpt.formats.names import MAX_JSON_BYTES
from dspark_ckpt.formats.safetensors_header import MAX_HEADER_SIZE, SafetensorsHeader, parse_header
from dspark_ckpt.repair.fsops import open_regular
from dspark_ckpt.repair.stamps import Identity, SourceStamp
from dspark_ckpt.sources.local import LocalFolder

if TYPE_CHECKING:
    from dspark_ckpt.repair import actions as a

VERIFY_CHUNK = 2**20  # what one comparison holds of each side (small: it stays in the CPU cache)


def changed_since(when: str, names: Iterable[str]) -> RepairError:
    listed = sorted(set(names))
    return RepairError(f"the checkpoint changed {when} ({', '.join(listed[:5])}); nothing was put in place",
                       code="DSP-E070", hint="make sure nothing else writes the checkpoint, then run fix again")


class StalePlan(RepairError):
    """DSP-E070 found before anything was written: the checkpoint is no longer what the plan was made from (another
    fix may have committed meanwhile). The CLI plans again from what is there now; an API caller gets the error."""

    def __init__(self, names: Iterable[str], when: str = "after it was planned") -> None:
        error = changed_since(when, names)
        super().__init__(str(error), code=error.code, hint=error.hint)
        self.names = tuple(sorted(set(names)))


def _identity(st: os.stat_result) -> Identity:
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


def _read_at(fd: int, offset: int, size: int) -> bytes:
    chunks, done = [], 0
    while done < size:
        chunk = os.pread(fd, min(size - done, VERIFY_CHUNK), offset + done)
        if not chunk:
            break
        chunks.append(chunk)
        done += len(chunk)
    return b"".join(chunks)


def read_header_at(fd: int, file_size: int) -> tuple[SafetensorsHeader | None, bytes]:
    """The header of the open shard `fd` and the 8 + N bytes it was parsed from (None: not a valid header)."""
    first = os.pread(fd, 8, 0)
    size = int.from_bytes(first, "little") if len(first) == 8 else -1
    if size < 0 or size > MAX_HEADER_SIZE or 8 + size > file_size:
        return None, first
    prefix = first + _read_at(fd, 8, size)
    return parse_header(prefix, file_size).header, prefix  # lenient: a plan may be made from a flawed header


def _same_header(a_: SafetensorsHeader, b: SafetensorsHeader) -> bool:
    return a_.header_size == b.header_size and a_.entries == b.entries and a_.metadata == b.metadata


def stamp_sources(folder: Path, source: LocalFolder, headers: Mapping[str, SafetensorsHeader],
                  texts: Iterable[str]) -> tuple[SourceStamp, ...]:
    """The stamps of what planning read: each shard whose header it parsed, each JSON file it read (or found
    absent). A shard that is no longer the file planning read raises StalePlan."""
    stamps: list[SourceStamp] = []
    for name in texts:
        raw = source.text_read(name)
        if raw is not None:
            stamps.append(SourceStamp(name, None, hashlib.sha256(raw).hexdigest()))
        elif not os.path.lexists(folder / name):
            stamps.append(SourceStamp(name, None, ""))  # absent, and planned so: it must not appear meanwhile
    for name, planned in headers.items():
        identity = source.identity_read(name)
        if identity is None:
            raise StalePlan([name], "while fix read it")
        fd, st = open_regular(folder / name)
        try:
            header, prefix = read_header_at(fd, st.st_size)
        finally:
            os.close(fd)
        if _identity(st) != identity or header is None or not _same_header(header, planned):
            raise StalePlan([name], "while fix read it")
        stamps.append(SourceStamp(name, identity, hashlib.sha256(prefix).hexdigest()))
    return tuple(stamps)


def _text_digest(path: Path) -> str:
    """sha256 of a JSON file read through one descriptor ("" when absent); a special file raises SpecialFile."""
    try:
        fd, st = open_regular(path)
    except FileNotFoundError:
        return ""
    try:
        return hashlib.sha256(_read_at(fd, 0, min(st.st_size, MAX_JSON_BYTES + 1))).hexdigest()
    finally:
        os.close(fd)


class BoundSource:
    """Every stamped shard opened once (closed with `stack`), kept only while it is the planned one."""

    def __init__(self, folder: Path, stamps: tuple[SourceStamp, ...], stack: ExitStack) -> None:
        self.folder, self.stamps = folder, stamps
        self._fds: dict[str, int] = {}
        self._headers: dict[str, SafetensorsHeader] = {}
        stale = [s.name for s in stamps if not self._bind(s, stack)]
        if stale:
            raise StalePlan(stale)

    def _bind(self, stamp: SourceStamp, stack: ExitStack) -> bool:
        path = self.folder / stamp.name
        if stamp.identity is None:
            return _text_digest(path) == stamp.digest
        try:
            fd, st = open_regular(path)
        except FileNotFoundError:
            return False
        stack.callback(os.close, fd)
        if _identity(st) != stamp.identity:
            return False
        header, prefix = read_header_at(fd, st.st_size)
        if header is None or hashlib.sha256(prefix).hexdigest() != stamp.digest:
            return False
        self._fds[stamp.name], self._headers[stamp.name] = fd, header
        return True

    def bound(self, name: str) -> bool:
        return name in self._fds

    def fd(self, name: str) -> int:
        if name not in self._fds:
            raise StalePlan([name], "since it was planned: fix did not read this file when planning")
        return self._fds[name]

    def header(self, name: str) -> SafetensorsHeader:
        self.fd(name)
        return self._headers[name]

    def recheck(self, when: str = "while fix read it") -> None:
        """Still the planned files: each open shard unchanged (size, mtime), each path still that file, each JSON file
        the same bytes. Else StalePlan: nothing is put in place."""
        stale = []
        for stamp in self.stamps:
            path = self.folder / stamp.name
            if stamp.identity is None:
                if _text_digest(path) != stamp.digest:
                    stale.append(stamp.name)
                continue
            try:
                now = _identity(os.stat(path))
            except FileNotFoundError:
                now = None
            if now != stamp.identity or _identity(os.fstat(self._fds[stamp.name])) != stamp.identity:
                stale.append(stamp.name)
        if stale:
            raise changed_since(when, stale)


# --- the written result, read back ---

def _mismatch(file: str, tensor: str, why: str) -> RepairError:
    return RepairError(f"{file}: {tensor} as written {why}; nothing was put in place", code="DSP-E084",
                       hint="run fix again; if it recurs, report it with the checkpoint's headers")


class _Comparer:
    """Byte ranges compared through two reused buffers (no allocation per chunk, and bytearray equality is one
    memcmp); a hole in a sparse source is compared with zeros without reading it."""

    def __init__(self) -> None:
        self._left, self._right = bytearray(VERIFY_CHUNK), bytearray(VERIFY_CHUNK)
        self._zeros = bytes(VERIFY_CHUNK)

    @staticmethod
    def _fill(fd: int, at: int, n: int, buf: bytearray) -> bool:
        view, done = memoryview(buf), 0
        while done < n:
            got = os.preadv(fd, [view[done:n]], at + done)
            if got <= 0:
                return False
            done += got
        return True

    @staticmethod
    def _equal(mine: bytearray, theirs: bytes | bytearray, n: int) -> bool:
        return mine == theirs if n == VERIFY_CHUNK else mine[:n] == theirs[:n]  # only a range's last chunk slices

    @staticmethod
    def _data_from(fd: int, at: int) -> int:
        """The next offset at or after `at` that holds data: the file's end after its last data, `at` itself
        where the file system cannot tell."""
        try:
            return os.lseek(fd, at, os.SEEK_DATA)
        except OSError as exc:
            return os.fstat(fd).st_size if exc.errno == errno.ENXIO else at

    def same(self, written: int, written_at: int, source: int, source_at: int, nbytes: int) -> bool:
        done, data = 0, -1
        while done < nbytes:
            n = min(VERIFY_CHUNK, nbytes - done)
            if not self._fill(written, written_at + done, n, self._left):
                return False
            if data < source_at + done:
                data = self._data_from(source, source_at + done)
            if data >= source_at + done + n:  # a hole in the source: zeros
                if not self._equal(self._left, self._zeros, n):
                    return False
            elif not self._fill(source, source_at + done, n, self._right) or \
                    not self._equal(self._left, self._right, n):
                return False
            done += n
        return True

    def given(self, written: int, at: int, data: bytes) -> bool:
        for done in range(0, len(data), VERIFY_CHUNK):
            n = min(VERIFY_CHUNK, len(data) - done)
            if not self._fill(written, at + done, n, self._left) or self._left[:n] != data[done:done + n]:
                return False
        return True


def verify_written(bound: BoundSource, path: Path, shard: a.ShardWrite) -> int:
    """The staged shard at `path`, re-read from disk: its header is the planned one, and every tensor's bytes equal
    their source range (located by the source's own header, as bound) or the bytes the plan gives. Returns the bytes
    compared; a difference raises DSP-E084 before anything is put in place."""
    compared, compare = 0, _Comparer()
    fd, st = open_regular(path)
    try:
        written, _ = read_header_at(fd, st.st_size)
        if written is None:
            raise _mismatch(shard.file, "the header", "cannot be read back")
        for t in shard.tensors:
            entry = written.get(t.name)
            if entry is None or (entry.dtype, entry.shape, entry.nbytes) != (t.dtype, t.shape, t.nbytes):
                raise _mismatch(shard.file, t.name, "is not in the header as planned")
            at = written.data_start + entry.begin
            if t.data is not None:
                same = compare.given(fd, at, t.data)
            else:
                assert t.source_file is not None
                source = bound.header(t.source_file)
                origin = source.get(t.source_tensor)
                if origin is None or source.data_start + origin.begin != t.source_begin or t.nbytes > origin.nbytes:
                    raise _mismatch(shard.file, t.name, f"has no such source range in {t.source_file}")
                same = compare.same(fd, at, bound.fd(t.source_file), t.source_begin, t.nbytes)
            if not same:
                raise _mismatch(shard.file, t.name, f"differs from its source bytes ({t.nbytes:,} bytes)")
            compared += t.nbytes
    finally:
        os.close(fd)
    return compared
