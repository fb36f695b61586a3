"""The I/O pieces of apply on real files: streaming byte-range copies, the lock, the crash hook."""

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
from dspark_ckpt.repair.fsops import crash_point
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
    folder = tmp_path / "ckpt"
    folder.mkdir()
    with lk.fix_lock(folder) as held:
        assert held.kernel, "a flock on the folder itself: no lock file"
        assert lk.try_lock(folder) is None
        with pytest.raises(RepairError, match=f"pid {os.getpid()}") as refused:
            with lk.fix_lock(folder):
                pass
        assert refused.value.code == "DSP-E071"
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["ckpt"]
    again = lk.try_lock(folder)
    assert again is not None
    again.release()


def test_lock_of_a_killed_process_is_free_at_once(tmp_path: Path) -> None:
    folder = tmp_path / "ckpt"
    folder.mkdir()
    script = ("import os, signal, sys; from pathlib import Path; from dspark_ckpt.repair.lock import try_lock; "
              "held = try_lock(Path(sys.argv[1])); print(held is not None, flush=True); "
              "os.kill(os.getpid(), signal.SIGKILL)")
    done = subprocess.run([sys.executable, "-c", script, str(folder)], capture_output=True, text=True)
    assert done.returncode == -9 and done.stdout.strip() == "True"
    with lk.fix_lock(folder):
        pass
    assert [p.name for p in folder.iterdir()] == []


def test_fallback_lock_file_of_a_dead_process_is_broken(tmp_path: Path) -> None:
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    path = lk.lock_path(tmp_path)
    path.write_text(json.dumps({"pid": int(dead.stdout)}))
    assert lk.acquire_file(path)
    assert json.loads(path.read_text())["pid"] == os.getpid()
    assert sorted(p.name for p in tmp_path.iterdir()) == [lk.LOCK_NAME]


def test_fallback_empty_lock_is_held_while_fresh_and_broken_when_old(tmp_path: Path) -> None:
    path = lk.lock_path(tmp_path)
    path.write_text("")
    with pytest.raises(RepairError):
        lk.acquire_file(path)
    old = time.time() - lk.EMPTY_LOCK_GRACE_S - 5
    os.utime(path, (old, old))
    lk.acquire_file(path)
    assert json.loads(path.read_text())["pid"] == os.getpid()


@pytest.mark.parametrize("kind", ["folder", "fifo"])
def test_fallback_lock_path_that_is_not_a_file_is_a_clear_error(tmp_path: Path, kind: str) -> None:
    path = lk.lock_path(tmp_path)
    if kind == "folder":
        path.mkdir()
        (path / "keep").write_text("mine")
    else:
        os.mkfifo(path)
    with pytest.raises(RepairError, match="not a regular file") as refused:
        lk.acquire_file(path)  # a FIFO is never opened: this would hang otherwise
    assert refused.value.code == "DSP-E077"
    assert sorted(p.name for p in tmp_path.iterdir()) == [lk.LOCK_NAME], "no stale entry beside it"
    assert kind == "fifo" or (path / "keep").read_text() == "mine"


def test_crash_point_is_inert_without_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DSPARK_CKPT_CRASH_AT", raising=False)
    crash_point("commit")  # returns: this process is still here
