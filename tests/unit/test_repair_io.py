"""The I/O pieces of apply on real files: streaming byte-range copies, the lock file, the crash hook."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dspark_ckpt.errors import RepairError
from dspark_ckpt.repair import lock as lk
from dspark_ckpt.repair.fsops import crash_point, exchange
from dspark_ckpt.repair.stream import CHUNK, copy_range


@pytest.mark.parametrize("kernel", [True, False], ids=["copy_file_range", "buffered"])
def test_copy_range_appends_exact_ranges(tmp_path: Path, kernel: bool) -> None:
    data = os.urandom(CHUNK * 2 + 12345)  # more than one buffer's worth
    (tmp_path / "src").write_bytes(data)
    seen: list[int] = []
    with open(tmp_path / "src", "rb") as src, open(tmp_path / "dst", "wb") as dst:
        dst.write(b"HEAD")
        dst.flush()
        copy_range(src.fileno(), 100, dst.fileno(), len(data) - 200, seen.append, kernel=kernel)
        copy_range(src.fileno(), 0, dst.fileno(), 7, kernel=kernel)
    assert (tmp_path / "dst").read_bytes() == b"HEAD" + data[100:-100] + data[:7]
    assert sum(seen) == len(data) - 200


@pytest.mark.parametrize("kernel", [True, False])
def test_copy_range_past_the_end_is_an_error(tmp_path: Path, kernel: bool) -> None:
    (tmp_path / "src").write_bytes(b"x" * 10)
    with open(tmp_path / "src", "rb") as src, open(tmp_path / "dst", "wb") as dst:
        with pytest.raises(OSError, match="ended"):
            copy_range(src.fileno(), 5, dst.fileno(), 10, kernel=kernel)


def test_lock_is_exclusive_and_released(tmp_path: Path) -> None:
    dest = tmp_path / "ckpt"
    with lk.fix_lock(dest) as path:
        assert json.loads(path.read_text())["pid"] == os.getpid()
        with pytest.raises(RepairError, match=f"pid {os.getpid()}") as held:
            lk.acquire(path)
        assert held.value.code == "DSP-E071"
    assert not lk.lock_path(dest).exists()


def test_lock_of_a_dead_process_is_broken(tmp_path: Path) -> None:
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    path = lk.lock_path(tmp_path / "ckpt")
    path.write_text(json.dumps({"pid": int(dead.stdout)}))
    with lk.fix_lock(tmp_path / "ckpt"):
        assert json.loads(path.read_text())["pid"] == os.getpid()
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_empty_lock_is_held_while_fresh_and_broken_when_old(tmp_path: Path) -> None:
    path = lk.lock_path(tmp_path / "ckpt")
    path.write_text("")
    with pytest.raises(RepairError):
        lk.acquire(path)
    old = time.time() - lk.EMPTY_LOCK_GRACE_S - 5
    os.utime(path, (old, old))
    lk.acquire(path)
    assert json.loads(path.read_text())["pid"] == os.getpid()


def test_crash_point_is_inert_without_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DSPARK_CKPT_CRASH_AT", raising=False)
    crash_point("commit")  # returns: this process is still here


def test_exchange_swaps_two_folders(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "x").write_text("a")
    (tmp_path / "b" / "x").write_text("b")
    if not exchange(tmp_path / "a", tmp_path / "b"):
        pytest.skip("renameat2(RENAME_EXCHANGE) is not available here")
    assert (tmp_path / "a" / "x").read_text() == "b" and (tmp_path / "b" / "x").read_text() == "a"
